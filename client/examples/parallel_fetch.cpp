// parallel-fetch: clones (or, when already cloned, fetches) a set of
// repositories with a pool of threads, instrumented with trace2d's client.
//
//   parallel-fetch [--jobs N] [--chatter N] [--print-sid] DEST SOURCE...
//
// With GIT_TRACE2_EVENT pointing at trace2d, the run is one session with a
// region per repository, and every git it runs is a child session under it:
// `git clone`/`git fetch` through the library's child helper, and
// `git count-objects` spawned by the program itself (posix_spawnp), stitched
// by the exported GIT_TRACE2_PARENT_SID alone. --chatter adds N tiny regions per
// repository (a chatty program, for tests of the bounded queue).

#include <trace2d/client.hpp>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace t2 = trace2d::client;

namespace {

struct Settings {
  int jobs = 4;
  int chatter = 0;
  bool print_sid = false;
  std::string dest;
  std::vector<std::string> sources;
};

bool parse(int argc, char** argv, Settings& s) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if ((arg == "--jobs" || arg == "--chatter") && i + 1 < argc) {
      (arg == "--jobs" ? s.jobs : s.chatter) = std::atoi(argv[++i]);
    } else if (arg == "--print-sid") {
      s.print_sid = true;
    } else if (s.dest.empty()) {
      s.dest = arg;
    } else {
      s.sources.push_back(arg);
    }
  }
  return !s.dest.empty() && !s.sources.empty() && s.jobs > 0;
}

// posix_spawnp with stdout to /dev/null and the inherited environment.
pid_t spawn_quietly(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const auto& a : args) {
    argv.push_back(const_cast<char*>(a.c_str()));
  }
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = -1;
  if (posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ) != 0) {
    pid = -1;
  }
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

// Work shared by the pool: the next repository to take, and the failures.
class Work {
 public:
  explicit Work(const Settings& settings) : m_settings(settings) {}

  void run_worker() {
    t2::Thread thread("worker");  // thread_start ... thread_exit, "thNN:worker"
    for (std::size_t i = m_next++; i < m_settings.sources.size(); i = m_next++) {
      update(m_settings.sources[i]);
    }
  }

  [[nodiscard]] int failures() const { return m_failures; }

 private:
  void update(const std::string& source) {
    static t2::Timer git_timer("parallel-fetch", "git", /*per_thread=*/true);
    static t2::Counter repos("parallel-fetch", "repos");
    const std::string name = std::filesystem::path(source).filename().string();
    const std::string target = (std::filesystem::path(m_settings.dest) / name).string();
    t2::Region region("parallel-fetch", "repo", name);

    t2::ChildOptions as_git;  // C++17: no designated initializers
    as_git.child_class = "git";
    t2::ChildResult result;
    {
      t2::Timer::Scope timing(git_timer);
      if (std::filesystem::exists(target)) {
        t2::Region fetch("parallel-fetch", "fetch");
        result = t2::run_child({"git", "-C", target, "fetch", "-q", "origin"}, as_git);
      } else {
        t2::Region clone("parallel-fetch", "clone");
        result = t2::run_child({"git", "clone", "-q", source, target}, as_git);
      }
    }
    for (int i = 0; i < m_settings.chatter; ++i) {
      t2::Region step("scan", "step");
    }
    t2::data("parallel-fetch", "git_code", result.code);
    if (result.code != 0) {
      t2::error("git failed for " + source, "git failed for %s");
      ++m_failures;
      return;
    }
    // A child the program starts itself, without the helper: the library
    // only wraps it in child_start/child_exit, and git finds its parent in
    // the inherited GIT_TRACE2_PARENT_SID.
    const std::vector<std::string> argv = {"git", "-C", target, "count-objects", "-v"};
    t2::Child child(argv, as_git);
    const pid_t pid = spawn_quietly(argv);
    int status = 0;
    if (pid > 0) {
      ::waitpid(pid, &status, 0);
    }
    child.finish(pid, pid > 0 ? t2::child_code(status) : -1);
    repos.add();
  }

  const Settings& m_settings;
  std::atomic<std::size_t> m_next{0};
  std::atomic<int> m_failures{0};
};

}  // namespace

int main(int argc, char** argv) {
  Settings settings;
  if (!parse(argc, argv, settings)) {
    std::fprintf(stderr,
                 "usage: parallel-fetch [--jobs N] [--chatter N] [--print-sid] DEST SOURCE...\n");
    return 2;
  }
  t2::Options options;
  options.version = "1.0";  // sent as version.exe, where git sends its own version
  t2::start(argc, argv, options);  // GIT_TRACE2_EVENT decides
  t2::def_param("parallel-fetch.jobs", std::to_string(settings.jobs));
  t2::cmd_mode(settings.sources.size() == 1 ? "single" : "pool");
  std::filesystem::create_directories(settings.dest);

  Work work(settings);
  {
    t2::Region pool("parallel-fetch", "pool");
    std::vector<std::thread> threads;
    for (int i = 0; i < settings.jobs; ++i) {
      threads.emplace_back([&work] { work.run_worker(); });
    }
    for (auto& t : threads) {
      t.join();
    }
  }
  t2::data_json("parallel-fetch", "summary",
                "{\"repos\":" + std::to_string(settings.sources.size()) +
                    ",\"failed\":" + std::to_string(work.failures()) + "}");
  if (settings.print_sid) {
    std::printf("sid %s\n", std::string(t2::sid()).c_str());
  }
  return t2::exit(work.failures() == 0 ? 0 : 1);
}
