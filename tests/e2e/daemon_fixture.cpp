#include "tests/e2e/daemon_fixture.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <stdexcept>

namespace trace2d::test {
namespace {

const std::vector<std::string> k_trace_variables = {
    "GIT_TRACE2", "GIT_TRACE2_EVENT", "GIT_TRACE2_PERF", "GIT_TRACE2_PARENT_SID",
    "GIT_TRACE2_PARENT_NAME", "GIT_TRACE2_EVENT_NESTING", "GIT_TRACE2_EVENT_BRIEF",
    "GIT_TRACE2_BRIEF", "GIT_TRACE2_CONFIG_PARAMS", "GIT_TRACE2_ENV_VARS", "GIT_TRACE2_MAX_FILES",
    "GIT_TRACE2_DST_DEBUG"};

}  // namespace

RunningDaemon::RunningDaemon(const TempDir& dir, std::vector<std::string> extra_args,
                             std::optional<rlim_t> max_open_files)
    : m_socket(dir.file("t.sock")), m_dgram_socket(dir.file("d.sock")), m_db(dir.file("t.db")) {
  ProcessSpec spec;
  spec.max_open_files = max_open_files;
  spec.argv = {TRACE2D_BIN, "--socket", m_socket, "--dgram-socket", m_dgram_socket, "--db", m_db};
  // Never the machine's /etc/trace2d/trace2d.toml: each test is on its own.
  if (std::find(extra_args.begin(), extra_args.end(), "--config") == extra_args.end()) {
    spec.argv.insert(spec.argv.end(), {"--config", ""});
  }
  if (std::find(extra_args.begin(), extra_args.end(), "--shutdown-grace-ms") == extra_args.end()) {
    spec.argv.insert(spec.argv.end(), {"--shutdown-grace-ms", "300"});
  }
  spec.argv.insert(spec.argv.end(), extra_args.begin(), extra_args.end());
  m_process = std::make_unique<Process>(spec);
  const bool ready = wait_until(
      [&] { return m_process->out_so_far().find("GIT_TRACE2_EVENT=") != std::string::npos || !m_process->running(); },
      std::chrono::seconds(20));
  const std::string out = m_process->out_so_far();
  if (!ready || out.find("GIT_TRACE2_EVENT=af_unix:stream:" + m_socket + "\n") == std::string::npos) {
    const ProcessResult result = m_process->wait(std::chrono::seconds(1));
    throw std::runtime_error("trace2d did not start (exit " + std::to_string(result.exit_code) +
                             ", signal " + std::to_string(result.term_signal) + "): " + result.err);
  }
}

RunningDaemon::~RunningDaemon() {
  if (!m_result && m_process) {
    m_process->signal(SIGKILL);
  }
}

ProcessResult RunningDaemon::stop(std::chrono::milliseconds timeout) {
  if (!m_result) {
    m_process->signal(SIGTERM);
    m_result = m_process->wait(timeout);
  }
  return *m_result;
}

int metrics_port(RunningDaemon& daemon) {
  const std::regex served("metrics: serving http://127\\.0\\.0\\.1:([0-9]+)/metrics");
  std::smatch match;
  std::string err;
  EXPECT_TRUE(wait_until([&] {
    err = daemon.process().err_so_far();
    return std::regex_search(err, match, served);
  })) << err;
  return match.empty() ? 0 : std::stoi(match[1]);
}

ProcessSpec git_spec(const std::string& cwd, const std::vector<std::string>& args,
                     std::map<std::string, std::string> env) {
  ProcessSpec spec;
  spec.argv = {"git"};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.cwd = cwd;
  for (const auto& name : k_trace_variables) {
    if (env.count(name) == 0) {
      spec.unset_env.push_back(name);
    }
  }
  env.emplace("GIT_CONFIG_NOSYSTEM", "1");
  env.emplace("GIT_CONFIG_GLOBAL", "/dev/null");
  env.emplace("GIT_AUTHOR_NAME", "trace2d test");
  env.emplace("GIT_AUTHOR_EMAIL", "test@example.com");
  env.emplace("GIT_COMMITTER_NAME", "trace2d test");
  env.emplace("GIT_COMMITTER_EMAIL", "test@example.com");
  spec.env = std::move(env);
  return spec;
}

ProcessResult run_git(const std::string& cwd, const std::vector<std::string>& args,
                      std::map<std::string, std::string> env) {
  return run_process(git_spec(cwd, args, std::move(env)), std::chrono::seconds(120));
}

ProcessResult ctl(const std::string& db, std::vector<std::string> args) {
  ProcessSpec spec;
  spec.argv = {TRACE2CTL_BIN, "--db", db};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  return run_process(spec);
}

bool wait_for_sessions(const std::string& db, int count) {
  return wait_until([&] {
    const ProcessResult r = ctl(db, {"--format", "tsv", "sql",
                                     "SELECT count(*), coalesce(sum(status = 'running'), 0) FROM sessions"});
    const auto tab = r.out.find('\t', r.out.find('\n') + 1);
    return r.exit_code == 0 && tab != std::string::npos &&
           std::stoi(r.out.substr(r.out.find('\n') + 1)) >= count && r.out.substr(tab + 1) == "0\n";
  });
}

std::string make_repo(const TempDir& dir, const std::string& name, int files) {
  const std::string path = dir.file(name);
  std::filesystem::create_directories(path);
  auto ok = [](const ProcessResult& r) {
    if (r.exit_code != 0) {
      throw std::runtime_error("git failed: " + r.err);
    }
  };
  ok(run_git(path, {"init", "-q", "-b", "main"}));
  for (int i = 0; i < files; ++i) {
    write_file(std::filesystem::path(path) / ("file" + std::to_string(i) + ".txt"),
               "content " + std::to_string(i) + "\n");
  }
  ok(run_git(path, {"add", "-A"}));
  ok(run_git(path, {"commit", "-qm", "initial"}));
  write_file(std::filesystem::path(path) / "file0.txt", "changed\n");
  ok(run_git(path, {"commit", "-qam", "second"}));
  settle_repo(path);
  return path;
}

std::string clone_behind(const TempDir& dir) {
  const std::string upstream = make_repo(dir, "upstream");
  const std::string clone = dir.file("clone");
  if (const ProcessResult cloned = run_git(dir.path(), {"clone", "-q", upstream, clone}); cloned.exit_code != 0) {
    throw std::runtime_error("git clone failed: " + cloned.err);
  }
  write_file(std::filesystem::path(upstream) / "new.txt", "new\n");
  for (const std::vector<std::string>& args : {std::vector<std::string>{"add", "new.txt"},
                                               std::vector<std::string>{"commit", "-qm", "new"}}) {
    if (const ProcessResult r = run_git(upstream, args); r.exit_code != 0) {
      throw std::runtime_error("git failed: " + r.err);
    }
  }
  settle_repo(clone);
  return clone;
}

void settle_repo(const std::string& path) {
  // Files as old as the index are "racily clean": each git run re-checks
  // them and may rewrite the index, so identical commands would send
  // different events. Back-date the files and refresh the index once.
  const auto an_hour_ago = std::filesystem::file_time_type::clock::now() - std::chrono::hours(1);
  for (const auto& entry : std::filesystem::recursive_directory_iterator(path)) {
    if (entry.is_regular_file() && entry.path().string().find("/.git/") == std::string::npos) {
      std::filesystem::last_write_time(entry.path(), an_hour_ago);
    }
  }
  run_git(path, {"update-index", "-q", "--really-refresh"});
  run_git(path, {"status", "--porcelain"});
}

namespace {

std::string sid_of(const std::string& line) {
  const std::string key = "\"sid\":\"";
  const auto start = line.find(key);
  if (start == std::string::npos) {
    return {};
  }
  const auto begin = start + key.size();
  return line.substr(begin, line.find('"', begin) - begin);
}

}  // namespace

std::map<std::string, long> count_events_in_trace_dir(const std::string& dir) {
  std::map<std::string, long> counts;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::ifstream in(entry.path());
    std::string line;
    while (std::getline(in, line)) {
      ++counts[sid_of(line)];
    }
  }
  return counts;
}

db::Database open_db(const std::string& path) {
  db::Database db(path, db::OpenMode::read_only);
  db.set_busy_timeout(5000);
  return db;
}

std::int64_t query_count(const std::string& db_path, const std::string& sql) {
  return open_db(db_path).query_int(sql).value_or(-1);
}

long status_kib(pid_t pid, const std::string& field) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind(field + ":", 0) == 0) {
      return std::stol(line.substr(field.size() + 1));
    }
  }
  return -1;
}

long open_fds(pid_t pid) {
  const std::string dir = "/proc/" + std::to_string(pid) + "/fd";
  return std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator());
}

std::map<std::string, long> count_events_in_db(const std::string& db_path) {
  db::Database db = open_db(db_path);
  db::Statement stmt = db.prepare("SELECT sid, count(*) FROM events GROUP BY sid");
  std::map<std::string, long> counts;
  while (stmt.step()) {
    counts[std::string(stmt.column_text(0))] = stmt.column_int(1);
  }
  return counts;
}

std::map<std::string, long> by_shape(const std::map<std::string, long>& counts) {
  // Key: depth and rank among SIDs of that depth in start-time order (SID
  // components start with their UTC start time, so sorting SIDs sorts them).
  std::map<std::string, long> shaped;
  std::map<std::size_t, int> rank;
  for (const auto& [sid, count] : counts) {
    const auto depth = static_cast<std::size_t>(std::count(sid.begin(), sid.end(), '/'));
    shaped["depth " + std::to_string(depth) + " #" + std::to_string(rank[depth]++)] = count;
  }
  return shaped;
}

}  // namespace trace2d::test
