// Threads, fork and fatal signals, each in a real emitter process.

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <vector>

#include "tests/client/client_support.hpp"

namespace trace2d::test {
namespace {

TEST(ClientThreads, EightThreadsEmitEverythingWithTheirOwnNesting) {
  TempDir dir;
  constexpr int k_threads = 8;
  constexpr int k_iterations = 150;
  const EmitterRun run = run_emitter(dir, CLIENT_EMITTER_BIN,
                                     {"--queue-bytes", "67108864", "threads",
                                      std::to_string(k_threads), std::to_string(k_iterations)},
                                     {{"GIT_TRACE2_EVENT_NESTING", "3"}});
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  expect_parser_accepts(run.lines);

  // Per thread: thread_start, 150 x (enter, enter, data, leave, leave), thread_exit.
  std::map<std::string, std::vector<std::string>> by_thread;
  for (const auto& line : run.lines) {
    by_thread[string_field(line, "thread")].push_back(line);
  }
  by_thread.erase("main");
  ASSERT_EQ(by_thread.size(), static_cast<std::size_t>(k_threads));
  std::set<std::string> ids;
  for (const auto& [thread, lines] : by_thread) {
    ASSERT_EQ(thread.rfind("th", 0), 0u) << thread;
    EXPECT_EQ(thread.substr(4), ":worker") << thread;
    ids.insert(thread.substr(0, 4));
    ASSERT_EQ(lines.size(), 2u + 5u * k_iterations) << thread;
    EXPECT_EQ(string_field(lines.front(), "event"), "thread_start");
    EXPECT_EQ(string_field(lines.back(), "event"), "thread_exit");
    // Replay the region stack: each enter and leave at its own depth.
    std::vector<std::string> stack;
    for (std::size_t i = 1; i + 1 < lines.size(); ++i) {
      const std::string event = string_field(lines[i], "event");
      const std::string nesting = raw_field(lines[i], "nesting");
      if (event == "region_enter") {
        EXPECT_EQ(nesting, std::to_string(stack.size() + 1)) << lines[i];
        stack.push_back(string_field(lines[i], "label"));
      } else if (event == "region_leave") {
        ASSERT_FALSE(stack.empty()) << lines[i];
        EXPECT_EQ(string_field(lines[i], "label"), stack.back()) << lines[i];
        stack.pop_back();
        EXPECT_EQ(nesting, std::to_string(stack.size() + 1)) << lines[i];
      } else {
        EXPECT_EQ(event, "data");
        EXPECT_EQ(nesting, "3") << lines[i];
      }
    }
    EXPECT_TRUE(stack.empty());
  }
  EXPECT_EQ(ids.size(), static_cast<std::size_t>(k_threads)) << "thread names are unique";
  EXPECT_TRUE(with_event(run.lines, "data").size() ==
              static_cast<std::size_t>(k_threads * k_iterations));
}

// The child of a fork() writes nothing with the parent's SID, whatever it
// emits; the parent's session stays whole.
void expect_parent_intact(const EmitterRun& run) {
  std::vector<std::string> parent;
  for (const auto& line : run.lines) {
    if (string_field(line, "sid") == run.sid) {
      parent.push_back(line);
    }
  }
  ASSERT_FALSE(parent.empty());
  for (const auto& line : parent) {
    EXPECT_EQ(line.find("child-region"), std::string::npos) << line;
    EXPECT_EQ(line.find("in-child"), std::string::npos) << line;
  }
  EXPECT_EQ(with_event(parent, "atexit").size(), 1u);
  EXPECT_EQ(string_field(parent.back(), "event"), "atexit");
  EXPECT_EQ(raw_field(parent.back(), "code"), "0");
  const auto data = with_event(parent, "data");
  ASSERT_EQ(data.size(), 1u);
  EXPECT_EQ(string_field(data[0], "value"), "7") << "the child ran and exited 7";
}

TEST(ClientFork, ChildOfForkWritesNothing) {
  TempDir dir;
  const EmitterRun run = run_emitter(dir, CLIENT_EMITTER_BIN, {"fork"});
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  expect_parser_accepts(run.lines);
  expect_parent_intact(run);
  for (const auto& line : run.lines) {
    EXPECT_EQ(string_field(line, "sid"), run.sid) << "no other session: " << line;
  }
}

TEST(ClientFork, ChildMayStartItsOwnSessionUnderTheParent) {
  TempDir dir;
  const EmitterRun run = run_emitter(dir, CLIENT_EMITTER_BIN, {"fork-restart"});
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  expect_parser_accepts(run.lines);
  expect_parent_intact(run);
  std::vector<std::string> child;
  for (const auto& line : run.lines) {
    if (string_field(line, "sid") != run.sid) {
      child.push_back(line);
    }
  }
  ASSERT_FALSE(child.empty());
  const std::string child_sid = string_field(child.front(), "sid");
  EXPECT_EQ(child_sid.rfind(run.sid + "/", 0), 0u) << child_sid;
  EXPECT_EQ(string_field(child.front(), "event"), "version");
  EXPECT_EQ(with_event(child, "region_enter").size(), 1u);
  EXPECT_EQ(string_field(child.back(), "event"), "atexit");
  EXPECT_EQ(raw_field(child.back(), "code"), "7");
}

TEST(ClientSignals, FatalSignalSendsASignalEventAndStillKills) {
  TempDir dir;
  const EmitterRun run = run_emitter(dir, CLIENT_EMITTER_BIN, {"signal-term"});
  EXPECT_EQ(run.result.term_signal, SIGTERM);
  expect_parser_accepts(run.lines);
  ASSERT_GE(run.lines.size(), 4u);
  EXPECT_EQ(string_field(run.lines.back(), "event"), "signal");
  EXPECT_EQ(raw_field(run.lines.back(), "signo"), std::to_string(SIGTERM));
  EXPECT_EQ(with_event(run.lines, "region_enter").size(), 1u) << "queued events come first";
  EXPECT_TRUE(with_event(run.lines, "atexit").empty());
}

TEST(ClientSignals, ASocketTheCollectorClosedNeverRaisesSigpipe) {
  TempDir dir;
  // A listener that accepts nothing and is then closed: writes fail with EPIPE.
  const std::string socket_path = dir.file("gone.sock");
  ProcessSpec listener;
  listener.argv = {"python3", "-c",
                   "import socket,sys,time\n"
                   "s=socket.socket(socket.AF_UNIX)\ns.bind(sys.argv[1])\ns.listen(8)\n"
                   "print('ready',flush=True)\nc,_=s.accept()\nc.close()\ntime.sleep(5)\n",
                   socket_path};
  Process server(listener);
  ASSERT_TRUE(wait_until([&] { return server.out_so_far().find("ready") != std::string::npos; }));
  const EmitterRun run = run_emitter(dir, CLIENT_EMITTER_BIN, {"spam", "20000"},
                                     {{"GIT_TRACE2_EVENT", "af_unix:stream:" + socket_path}});
  EXPECT_EQ(run.result.term_signal, 0);
  EXPECT_EQ(run.result.exit_code, 0) << run.result.err;
  EXPECT_TRUE(run.result.err.empty()) << run.result.err;
}

}  // namespace
}  // namespace trace2d::test
