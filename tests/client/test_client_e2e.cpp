// The example program (client/examples/parallel_fetch.cpp) with the real
// trace2d and the real git: its session is stored whole, and every git it
// runs, through the library's child helper or spawned by itself, is a
// session whose parent is the example's.

#include <gtest/gtest.h>

#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "tests/client/client_e2e_support.hpp"
#include "tests/client/client_support.hpp"
#include "tests/support/sanitizers.hpp"

namespace trace2d::test {
namespace {

class ClientE2e : public ExampleFixture {};

TEST_F(ClientE2e, ExampleSessionIsCompleteAndItsGitsAreItsChildren) {
  RunningDaemon daemon(m_dir);
  const ExampleRun run = run_example("dest", daemon.git_target());
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  ASSERT_FALSE(run.sid.empty());
  const long expected_events = events_written_to_a_file("dest-twin");
  ASSERT_EQ(daemon.stop().exit_code, 0);

  db::Database db = open_db(daemon.db_path());
  db::Statement s = db.prepare(
      "SELECT status, cmd_name, exit_code, exe, evt, source, peer_pid, depth, event_count, "
      "hierarchy,"
      " elapsed FROM sessions WHERE sid = ?");
  s.bind_text(1, run.sid);
  ASSERT_TRUE(s.step()) << "no session " << run.sid;
  EXPECT_EQ(s.column_text(0), "complete");
  EXPECT_EQ(s.column_text(1), "parallel-fetch");
  EXPECT_EQ(s.column_int(2), 0);
  EXPECT_EQ(s.column_text(3), "1.0");  // Options::version, as git's exe is its version
  EXPECT_EQ(s.column_text(4), "4");
  EXPECT_EQ(s.column_text(5), "stream");
  EXPECT_EQ(s.column_int(6), pid_in_sid(run.sid));
  EXPECT_EQ(s.column_int(7), 0);
  EXPECT_EQ(s.column_int(8), expected_events) << "every event the library wrote is stored";
  EXPECT_EQ(s.column_text(9), "parallel-fetch");
  EXPECT_GT(s.column_double(10), 0.0);

  // Its own events: the children it reported, its threads and regions.
  EXPECT_EQ(
      count(db, "SELECT count(*) FROM events WHERE sid = ?1 AND event = 'child_start'", run.sid),
      6);
  EXPECT_EQ(count(db,
                  "SELECT count(*) FROM events WHERE sid = ?1 AND event = 'child_exit'"
                  " AND json_extract(json, '$.code') = 0 AND json_extract(json, '$.pid') > 0",
                  run.sid),
            6);
  EXPECT_EQ(
      count(db, "SELECT count(*) FROM events WHERE sid = ?1 AND event = 'thread_start'", run.sid),
      2);
  EXPECT_EQ(
      count(db, "SELECT count(*) FROM events WHERE sid = ?1 AND event = 'region_enter'", run.sid),
      count(db, "SELECT count(*) FROM events WHERE sid = ?1 AND event = 'region_leave'", run.sid));
  EXPECT_EQ(count(db,
                  "SELECT count(*) FROM events WHERE sid = ?1 AND event IN ('timer', 'counter', "
                  "'th_timer')",
                  run.sid),
            4);
  EXPECT_EQ(count(db, "SELECT count(*) FROM problems WHERE sid = ?1", run.sid), 0);
  EXPECT_EQ(db.query_int("SELECT count(*) FROM rejects"), 0);

  // The gits: three clones through run_child(), three count-objects that
  // the program spawned itself; all direct children of its session.
  EXPECT_EQ(count(db, "SELECT count(*) FROM sessions WHERE parent_sid = ?1", run.sid), 6);
  EXPECT_EQ(count(db,
                  "SELECT count(*) FROM sessions WHERE parent_sid = ?1 AND cmd_name = 'clone'"
                  " AND hierarchy = 'parallel-fetch/clone' AND status = 'complete'",
                  run.sid),
            3);
  EXPECT_EQ(
      count(db,
            "SELECT count(*) FROM sessions WHERE parent_sid = ?1 AND cmd_name = 'count-objects'"
            " AND status = 'complete'",
            run.sid),
      3);
  // Each reported child is the session of the process with that pid.
  EXPECT_EQ(count(db,
                  "SELECT count(*) FROM events e WHERE e.sid = ?1 AND e.event = 'child_exit'"
                  " AND EXISTS (SELECT 1 FROM sessions c WHERE c.parent_sid = e.sid"
                  " AND c.peer_pid = json_extract(e.json, '$.pid'))",
                  run.sid),
            6);
  EXPECT_GE(count(db, "SELECT count(*) FROM sessions WHERE root_sid = ?1 AND depth = 2", run.sid),
            3)
      << "the clones' upload-packs are grandchildren";
}

TEST_F(ClientE2e, SecondRunFetchesAndIsStitchedTheSameWay) {
  RunningDaemon daemon(m_dir);
  ASSERT_EQ(run_example("dest", daemon.git_target()).result.exit_code, 0);
  const ExampleRun again = run_example("dest", daemon.git_target());
  ASSERT_EQ(again.result.exit_code, 0) << again.result.err;
  ASSERT_EQ(daemon.stop().exit_code, 0);
  db::Database db = open_db(daemon.db_path());
  EXPECT_EQ(count(db, "SELECT count(*) FROM sessions WHERE parent_sid = ?1 AND cmd_name = 'fetch'",
                  again.sid),
            3);
  EXPECT_EQ(
      count(db, "SELECT count(*) FROM sessions WHERE sid = ?1 AND cmd_mode = 'pool'", again.sid),
      1);
}

// The library over trace2d's datagram socket: one event per datagram.
TEST_F(ClientE2e, DatagramTargetStoresTheWholeSession) {
  RunningDaemon daemon(m_dir);
  TempDir twin;
  const EmitterRun file = run_emitter(twin, CLIENT_EMITTER_BIN, {"all", twin.file("env.txt")});
  ASSERT_EQ(file.result.exit_code, 0);
  const EmitterRun dgram =
      run_emitter(m_dir, CLIENT_EMITTER_BIN, {"all", m_dir.file("env.txt")},
                  {{"GIT_TRACE2_EVENT", "af_unix:dgram:" + daemon.dgram_socket_path()}});
  ASSERT_EQ(dgram.result.exit_code, 0) << dgram.result.err;
  ASSERT_FALSE(dgram.sid.empty());
  ASSERT_EQ(daemon.stop().exit_code, 0);
  db::Database db = open_db(daemon.db_path());
  EXPECT_EQ(count(db,
                  "SELECT count(*) FROM sessions WHERE sid = ?1 AND status = 'complete'"
                  " AND source = 'dgram' AND cmd_name = 'sub'",
                  dgram.sid),
            1);
  EXPECT_EQ(count(db, "SELECT event_count FROM sessions WHERE sid = ?1", dgram.sid),
            static_cast<long>(file.lines.size()));
  EXPECT_EQ(count(db, "SELECT count(*) FROM problems WHERE sid = ?1", dgram.sid), 0);
}

// A burst over the datagram socket, with a queue that holds it all: the
// collector's queue holds ten datagrams (net.unix.max_dgram_qlen), and the
// library waited a fixed 5 ms whenever it was full, 2,000 lines a second:
// a third of a burst of 6,000 was lost at exit. It waits for the socket to
// have room.
TEST_F(ClientE2e, ABurstOverTheDatagramSocketIsStoredWhole) {
  RunningDaemon daemon(m_dir);
  std::vector<std::string> args = {"--queue-bytes", "67108864", "spam", "3000"};
  if (k_sanitized) {  // a sanitized trace2d reads slower: more patience at exit, as below
    args.insert(args.begin(), {"--exit-flush-ms", "5000"});
  }
  const EmitterRun run = run_emitter(m_dir, CLIENT_EMITTER_BIN, args,
                                     {{"GIT_TRACE2_EVENT", "af_unix:dgram:" + daemon.dgram_socket_path()}});
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  ASSERT_FALSE(run.sid.empty());
  ASSERT_EQ(daemon.stop().exit_code, 0);
  db::Database db = open_db(daemon.db_path());
  EXPECT_EQ(
      count(db, "SELECT count(*) FROM events WHERE sid = ?1 AND event IN ('region_enter', 'region_leave')", run.sid),
      6000);
  EXPECT_EQ(
      count(db, "SELECT count(*) FROM sessions WHERE sid = ?1 AND status = 'complete' AND source = 'dgram'", run.sid),
      1);
  EXPECT_EQ(count(db, "SELECT count(*) FROM data WHERE sid = ?1 AND key = 'dropped_events'", run.sid), 0);
}

// Issue 24, finding 2: a chatty program alone on the host (120,000 region
// lines in well under a second, through the library, with a queue large
// enough to hold them) loses no line: its exit waits while trace2d takes
// the queue, as git's would, so every line is stored, the session is whole
// (lines_lost 0, nothing dropped for its uid) and the library counted no
// drop.
TEST_F(ClientE2e, AChattyProgramAloneLosesNoLine) {
  RunningDaemon daemon(m_dir);
  // A sanitized trace2d pauses a sender whose share is full for longer than
  // the library's default patience with a collector that took nothing yet
  // (100 ms): there the program is given more (the optimised build runs the
  // defaults).
  std::vector<std::string> args = {"--queue-bytes", "67108864", "spam", "60000"};
  if (k_sanitized) {
    args.insert(args.begin(), {"--exit-flush-ms", "5000"});
  }
  const EmitterRun run = run_emitter(m_dir, CLIENT_EMITTER_BIN, args, {{"GIT_TRACE2_EVENT", daemon.git_target()}});
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  ASSERT_FALSE(run.sid.empty());
  ASSERT_EQ(daemon.stop().exit_code, 0);
  db::Database db = open_db(daemon.db_path());
  const long stored = count(
      db, "SELECT count(*) FROM events WHERE sid = ?1 AND event IN ('region_enter', 'region_leave')", run.sid);
  const long dropped_by_library = count(db,
                                        "SELECT coalesce(sum(CAST(value AS INTEGER)), 0) FROM data"
                                        " WHERE sid = ?1 AND category = 'trace2d' AND key = 'dropped_events'",
                                        run.sid);
  std::cout << "[ measured ] 60,000 region pairs emitted in "
            << std::stod(stdout_value(run.result.out, "elapsed_ns")) / 1e9 << " s: " << stored
            << " region lines stored, " << dropped_by_library << " dropped by the library and counted" << std::endl;
  EXPECT_EQ(stored, 120000) << "every line is stored";
  EXPECT_EQ(dropped_by_library, 0);
  EXPECT_EQ(count(db, "SELECT count(*) FROM sessions WHERE sid = ?1 AND status = 'complete' AND lines_lost = 0",
                  run.sid),
            1);
  EXPECT_EQ(db.query_int("SELECT coalesce(sum(dropped), 0) FROM uid_stats"), 0);
}

// Each child_start of the example links to the session of the git it started.
TEST_F(ClientE2e, ChildrenTableLinksTheExamplesChildren) {
  RunningDaemon daemon(m_dir);
  const ExampleRun run = run_example("dest", daemon.git_target());
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  ASSERT_EQ(daemon.stop().exit_code, 0);
  db::Database db = open_db(daemon.db_path());
  EXPECT_EQ(count(db, "SELECT count(*) FROM children WHERE sid = ?1", run.sid), 6);
  EXPECT_EQ(count(db,
                  "SELECT count(*) FROM children ch JOIN sessions c ON c.sid = ch.child_sid"
                  " WHERE ch.sid = ?1 AND c.parent_sid = ?1 AND c.peer_pid = ch.pid",
                  run.sid),
            6);
}

// `trace2ctl tree` shows the gits nested under the example.
TEST_F(ClientE2e, TreeShowsTheGitsUnderTheExample) {
  RunningDaemon daemon(m_dir);
  const ExampleRun run = run_example("dest", daemon.git_target());
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  ASSERT_EQ(daemon.stop().exit_code, 0);
  ProcessSpec tree;
  tree.argv = {TRACE2CTL_BIN, "--db", daemon.db_path(), "tree", run.sid};
  const ProcessResult shown = run_process(tree);
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  // The example's line, then for each child it reported its child_start
  // entry, and under that, more indented, the git session with that pid.
  const std::vector<std::string> lines = split_lines(shown.out);
  const auto root =
      find_line(lines, 0, {"parallel-fetch", "[pid " + std::to_string(pid_in_sid(run.sid))});
  ASSERT_TRUE(root) << shown.out;
  db::Database db = open_db(daemon.db_path());
  db::Statement children = db.prepare(
      "SELECT json_extract(e.json, '$.child_id'), c.peer_pid, c.cmd_name FROM events e"
      " JOIN sessions c ON c.parent_sid = e.sid AND c.peer_pid = json_extract(e.json, '$.pid')"
      " WHERE e.sid = ?1 AND e.event = 'child_exit'");
  children.bind_text(1, run.sid);
  int shown_children = 0;
  while (children.step()) {
    const std::string id = std::to_string(children.column_int(0));
    const std::string pid = std::to_string(children.column_int(1));
    const std::string name(children.column_text(2));
    const auto entry = find_line(lines, *root + 1, {"child " + id + " ", "pid " + pid});
    ASSERT_TRUE(entry) << "child " << id << " not shown:\n" << shown.out;
    const auto session = find_line(lines, *entry + 1, {name, "[pid " + pid});
    ASSERT_TRUE(session) << name << " " << pid << " not shown:\n" << shown.out;
    EXPECT_GT(indentation(lines[*entry]), indentation(lines[*root]));
    EXPECT_GT(indentation(lines[*session]), indentation(lines[*entry])) << lines[*session];
    ++shown_children;
  }
  EXPECT_EQ(shown_children, 6);
}

// Guards that end out of order (client/README.md, "Region guards"): each
// region is stored once, closed, and nests where the program entered it;
// `tree` draws each once. trace2d had closed the regions above the one
// left first as unclosed, and their own leaves made them a second time.
TEST_F(ClientE2e, RegionsLeftOutOfOrderAreStoredAndDrawnOnceWhereTheyNest) {
  RunningDaemon daemon(m_dir);
  const EmitterRun heap =
      run_emitter(m_dir, CLIENT_EMITTER_1_1_BIN, {"guards-heap"}, {{"GIT_TRACE2_EVENT", daemon.git_target()}});
  ASSERT_EQ(heap.result.exit_code, 0) << heap.result.err;
  const EmitterRun worker =
      run_emitter(m_dir, CLIENT_EMITTER_1_1_BIN, {"guards-worker"}, {{"GIT_TRACE2_EVENT", daemon.git_target()}});
  ASSERT_EQ(worker.result.exit_code, 0) << worker.result.err;
  ASSERT_EQ(daemon.stop().exit_code, 0);
  db::Database db = open_db(daemon.db_path());
  // label -> the enclosing region's label ("" at top level), closed ones only.
  const auto nesting = [&](const std::string& sid) {
    std::map<std::string, std::string> parents;
    db::Statement regions = db.prepare(
        "SELECT r.label, coalesce(p.label, ''), r.elapsed IS NOT NULL FROM regions r"
        " LEFT JOIN regions p ON p.id = r.parent_region WHERE r.sid = ?1");
    regions.bind_text(1, sid);
    int rows = 0;
    while (regions.step()) {
      ++rows;
      EXPECT_EQ(regions.column_int(2), 1) << regions.column_text(0) << " is not closed";
      parents[std::string(regions.column_text(0))] = regions.column_text(1);
    }
    EXPECT_EQ(rows, static_cast<int>(parents.size())) << "a region stored twice in " << sid;
    return parents;
  };
  const std::map<std::string, std::string> heap_expected = {{"a", ""}, {"b", "a"}, {"c", "b"}};
  EXPECT_EQ(nesting(heap.sid), heap_expected);
  const std::map<std::string, std::string> worker_expected = {{"download", ""}, {"unpack", "download"}};
  EXPECT_EQ(nesting(worker.sid), worker_expected);

  const auto tree = [&](const std::string& sid) {
    ProcessSpec spec;
    spec.argv = {TRACE2CTL_BIN, "--db", daemon.db_path(), "tree", sid};
    const ProcessResult shown = run_process(spec);
    EXPECT_EQ(shown.exit_code, 0) << shown.err;
    return shown.out;
  };
  const auto times_shown = [](const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
      ++n;
    }
    return n;
  };
  const std::string heap_tree = tree(heap.sid);
  for (const char* region : {"guards:a", "guards:b", "guards:c"}) {
    EXPECT_EQ(times_shown(heap_tree, region), 1U) << region << "\n" << heap_tree;
  }
  const std::string worker_tree = tree(worker.sid);
  EXPECT_EQ(times_shown(worker_tree, "job:download"), 1U) << worker_tree;
  EXPECT_EQ(times_shown(worker_tree, "job:unpack"), 1U) << worker_tree;
  EXPECT_EQ(worker_tree.find("unclosed"), std::string::npos) << worker_tree;
  // git ran inside unpack: drawn below it, deeper.
  const std::vector<std::string> lines = split_lines(worker_tree);
  const auto unpack = find_line(lines, 0, {"job:unpack"});
  ASSERT_TRUE(unpack) << worker_tree;
  const auto git = find_line(lines, *unpack + 1, {"version"});
  ASSERT_TRUE(git) << worker_tree;
  EXPECT_GT(indentation(lines[*git]), indentation(lines[*unpack])) << worker_tree;
}

// A flood of data fills the library's queue faster than trace2d takes it
// (drops are counted), then a git runs as a child: its child_start and
// child_exit arrive both or neither, never the exit alone, which showed as
// a blank `child 0:` entry, or a child that never ended (1 to 3 of 4 runs before the
// queue kept room for them).
TEST_F(ClientE2e, AFloodOfDataNeverCutsAChildsStartFromItsExit) {
  RunningDaemon daemon(m_dir);
  std::vector<std::string> sids;
  for (int i = 0; i < 4; ++i) {
    const EmitterRun run =
        run_emitter(m_dir, CLIENT_EMITTER_1_1_BIN, {"flood-child"}, {{"GIT_TRACE2_EVENT", daemon.git_target()}});
    ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
    sids.push_back(run.sid);
  }
  ASSERT_EQ(daemon.stop().exit_code, 0);
  db::Database db = open_db(daemon.db_path());
  for (const std::string& sid : sids) {
    const long starts = count(db, "SELECT count(*) FROM events WHERE sid = ?1 AND event = 'child_start'", sid);
    const long exits = count(db, "SELECT count(*) FROM events WHERE sid = ?1 AND event = 'child_exit'", sid);
    EXPECT_EQ(starts, exits) << sid;
    EXPECT_LE(starts, 1) << sid;
    // What the queue dropped is counted, whatever it was.
    const long data = count(db, "SELECT count(*) FROM data WHERE sid = ?1 AND category = 'flood'", sid);
    const long dropped = count(db,
                               "SELECT coalesce(sum(CAST(value AS INTEGER)), 0) FROM data WHERE sid = ?1"
                               " AND category = 'trace2d' AND key = 'dropped_events'",
                               sid);
    EXPECT_EQ(data + dropped + 2 * starts, 20000 + 2) << sid;
  }
}

// A wrapper that execs git: its own session is stored complete (the code
// is unknown, -1: git's session has it) and git's session is its child.
TEST_F(ClientE2e, AWrapperThatExecsGitIsCompleteAndGitIsItsChild) {
  RunningDaemon daemon(m_dir);
  const EmitterRun run = run_emitter(m_dir, CLIENT_EMITTER_BIN, {"exec", "git", "version"},
                                     {{"GIT_TRACE2_EVENT", daemon.git_target()}});
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  ASSERT_FALSE(run.sid.empty());
  ASSERT_EQ(daemon.stop().exit_code, 0);
  db::Database db = open_db(daemon.db_path());
  EXPECT_EQ(count(db,
                  "SELECT count(*) FROM sessions WHERE sid = ?1 AND status = 'complete'"
                  " AND exit_code = -1",
                  run.sid),
            1);
  EXPECT_EQ(count(db, "SELECT count(*) FROM events WHERE sid = ?1 AND event = 'exec'", run.sid), 1);
  db::Statement git = db.prepare(
      "SELECT status, exit_code, peer_pid FROM sessions WHERE parent_sid = ? AND cmd_name = 'version'");
  git.bind_text(1, run.sid);
  ASSERT_TRUE(git.step()) << "git's session is not under the wrapper's";
  EXPECT_EQ(git.column_text(0), "complete");
  EXPECT_EQ(git.column_int(1), 0);
  EXPECT_EQ(git.column_int(2), pid_in_sid(run.sid)) << "the same process, after exec";
  EXPECT_EQ(count(db, "SELECT count(*) FROM problems WHERE sid = ?1", run.sid), 0);
  // Not a failed run (the wrapper exited 0 as git did): not listed as one,
  // not counted as one, not marked as one in its tree.
  EXPECT_EQ(db.query_int("SELECT count(*) FROM command_stats WHERE failures > 0"), 0);
  const auto trace2ctl = [&](std::vector<std::string> args) {
    ProcessSpec spec;
    spec.argv = {TRACE2CTL_BIN, "--db", daemon.db_path()};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    const ProcessResult r = run_process(spec);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  };
  EXPECT_EQ(trace2ctl({"--format", "tsv", "sessions", "--failed"}).find(run.sid), std::string::npos);
  // command, runs, failures, incomplete, ...
  const std::string stats = trace2ctl({"--format", "tsv", "stats"});
  EXPECT_NE(stats.find("\nclient-emitter\t1\t0\t0\t"), std::string::npos) << stats;
  EXPECT_NE(stats.find("\nversion\t1\t0\t0\t"), std::string::npos) << stats;
  const std::string tree = trace2ctl({"tree", run.sid});
  EXPECT_EQ(tree.find("exit code -1"), std::string::npos) << tree;
}

// SIGKILLed right after start(): nothing more is sent, and the session its
// first lines opened is stored incomplete when the connection closes. The
// writer lingered 2 ms before its first write, and such a program left no
// session at all.
TEST_F(ClientE2e, AProgramKilledRightAfterStartLeavesAnIncompleteSession) {
  RunningDaemon daemon(m_dir);
  std::vector<std::string> sids;
  for (int i = 0; i < 5; ++i) {
    const EmitterRun run =
        run_emitter(m_dir, CLIENT_EMITTER_BIN, {"sigkill"}, {{"GIT_TRACE2_EVENT", daemon.git_target()}});
    EXPECT_EQ(run.result.term_signal, SIGKILL) << run.result.err;
    ASSERT_FALSE(run.sid.empty());
    sids.push_back(run.sid);
  }
  ASSERT_EQ(daemon.stop().exit_code, 0);
  db::Database db = open_db(daemon.db_path());
  for (const std::string& sid : sids) {
    EXPECT_EQ(count(db, "SELECT count(*) FROM sessions WHERE sid = ?1 AND status = 'incomplete'", sid), 1) << sid;
  }
}

// A forked child that starts its own session and ends it with shutdown()
// before _exit(): stored complete, with its code, under its parent.
TEST_F(ClientE2e, AForkedChildThatShutsDownBeforeExitIsStoredComplete) {
  RunningDaemon daemon(m_dir);
  const EmitterRun run = run_emitter(m_dir, CLIENT_EMITTER_BIN, {"fork-exit", "shutdown"},
                                     {{"GIT_TRACE2_EVENT", daemon.git_target()}});
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  const std::string child_sid = stdout_value(run.result.out, "child_sid");
  ASSERT_FALSE(child_sid.empty()) << run.result.out;
  ASSERT_EQ(daemon.stop().exit_code, 0);
  db::Database db = open_db(daemon.db_path());
  db::Statement s =
      db.prepare("SELECT status, exit_code, parent_sid, event_count FROM sessions WHERE sid = ?");
  s.bind_text(1, child_sid);
  ASSERT_TRUE(s.step()) << "no session for the forked child";
  EXPECT_EQ(s.column_text(0), "complete");
  EXPECT_EQ(s.column_int(1), 3);
  EXPECT_EQ(s.column_text(2), run.sid);
  EXPECT_EQ(s.column_int(3), 8)
      << "version start cmd_ancestry cmd_name region_enter region_leave exit atexit";
}

// exit(5) through git's idiom (TRACE2D_WRAP_EXIT, from C) is stored as 5,
// and the exit event names the exit() call's file and line.
TEST_F(ClientE2e, ExitFiveThroughTheExitWrapperIsStoredAsFive) {
  RunningDaemon daemon(m_dir);
  const EmitterRun run = run_emitter(m_dir, CLIENT_EXIT_WRAPPED_BIN, {"5"},
                                     {{"GIT_TRACE2_EVENT", daemon.git_target()}});
  ASSERT_EQ(run.result.exit_code, 5) << run.result.err;
  ASSERT_FALSE(run.sid.empty());
  ASSERT_EQ(daemon.stop().exit_code, 0);
  db::Database db = open_db(daemon.db_path());
  EXPECT_EQ(count(db,
                  "SELECT count(*) FROM sessions WHERE sid = ?1 AND status = 'complete'"
                  " AND exit_code = 5",
                  run.sid),
            1);
  db::Statement exit_event = db.prepare(
      "SELECT json_extract(json, '$.file'), json_extract(json, '$.line') FROM events"
      " WHERE sid = ? AND event = 'exit'");
  exit_event.bind_text(1, run.sid);
  ASSERT_TRUE(exit_event.step());
  const std::string file(exit_event.column_text(0));
  EXPECT_NE(file.find("exit_wrapped.c"), std::string::npos) << file;
  EXPECT_EQ(std::to_string(exit_event.column_int(1)), stdout_value(run.result.out, "exit_line"));
}

// exit(5) without the library's exit is stored as 5, not 0.
TEST_F(ClientE2e, ExitFiveWithoutTheLibrarysExitIsStoredAsFive) {
  RunningDaemon daemon(m_dir);
  const EmitterRun run = run_emitter(m_dir, CLIENT_EMITTER_BIN, {"exit-code", "5"},
                                     {{"GIT_TRACE2_EVENT", daemon.git_target()}});
  ASSERT_EQ(run.result.exit_code, 5) << run.result.err;
  ASSERT_EQ(daemon.stop().exit_code, 0);
  db::Database db = open_db(daemon.db_path());
  EXPECT_EQ(count(db,
                  "SELECT count(*) FROM sessions WHERE sid = ?1 AND status = 'complete'"
                  " AND exit_code = 5",
                  run.sid),
            1);
}

// A child run with std::system() is reported with pid 0 (unknown), as the
// README prescribes: trace2ctl tree shows it ran, with its code, and the
// git session it started under it.
TEST_F(ClientE2e, TreeShowsASystemChildWithItsCodeAndItsGitUnderIt) {
  RunningDaemon daemon(m_dir);
  const EmitterRun run = run_emitter(m_dir, CLIENT_EMITTER_BIN, {"system", "git version >/dev/null"},
                                     {{"GIT_TRACE2_EVENT", daemon.git_target()}});
  ASSERT_EQ(run.result.exit_code, 0) << run.result.err;
  ASSERT_EQ(daemon.stop().exit_code, 0);
  ProcessSpec tree;
  tree.argv = {TRACE2CTL_BIN, "--db", daemon.db_path(), "tree", run.sid};
  const ProcessResult shown = run_process(tree);
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  const std::vector<std::string> lines = split_lines(shown.out);
  const auto entry = find_line(lines, 0, {"child 0:", "git version"});
  ASSERT_TRUE(entry) << shown.out;
  EXPECT_NE(lines[*entry].find("[shell, exit 0]"), std::string::npos) << lines[*entry];
  EXPECT_EQ(lines[*entry].find("not started"), std::string::npos) << lines[*entry];
  EXPECT_EQ(lines[*entry].find("pid 0"), std::string::npos) << "an unknown pid is not shown";
  const auto git = find_line(lines, *entry + 1, {"version", "[pid "});
  ASSERT_TRUE(git) << shown.out;
  EXPECT_GT(indentation(lines[*git]), indentation(lines[*entry])) << shown.out;
}

}  // namespace
}  // namespace trace2d::test
