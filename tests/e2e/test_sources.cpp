// Every way git delivers events stores the same thing: the same git workload
// over the stream socket, the datagram socket, a bare `af_unix:` path that is
// a datagram socket (git's EPROTOTYPE fallback), and a watched directory.

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>

#include "tests/e2e/daemon_fixture.hpp"
#include "proto/sid.hpp"

namespace trace2d::test {
namespace {

// A workload of several shapes: a plain command, a shell alias (two
// processes), and a fetch (children and a grandchild).
struct Workload {
  std::string repo;
  std::string clone;
};

Workload make_workload(const TempDir& dir, const std::string& name) {
  Workload w;
  const std::string upstream = make_repo(dir, name + "-upstream");
  w.clone = dir.file(name + "-clone");
  EXPECT_EQ(run_git(dir.path(), {"clone", "-q", upstream, w.clone}).exit_code, 0);
  write_file(std::filesystem::path(upstream) / "new.txt", "new\n");
  EXPECT_EQ(run_git(upstream, {"add", "new.txt"}).exit_code, 0);
  EXPECT_EQ(run_git(upstream, {"commit", "-qm", "new"}).exit_code, 0);
  EXPECT_EQ(run_git(w.clone, {"config", "alias.st", "!git status --short"}).exit_code, 0);
  settle_repo(w.clone);
  w.repo = w.clone;
  return w;
}

void run_workload(const Workload& w, const std::map<std::string, std::string>& env) {
  EXPECT_EQ(run_git(w.repo, {"status"}, env).exit_code, 0);
  EXPECT_EQ(run_git(w.repo, {"st"}, env).exit_code, 0);
  EXPECT_EQ(run_git(w.repo, {"fetch", "--no-auto-gc", "origin"}, env).exit_code, 0);
}

std::map<std::string, long> counts_for_source(const std::string& db_path, const std::string& source) {
  db::Database db = open_db(db_path);
  db::Statement stmt = db.prepare("SELECT sid, event_count FROM sessions WHERE source = ?");
  stmt.bind_text(1, source);
  std::map<std::string, long> counts;
  while (stmt.step()) {
    counts[std::string(stmt.column_text(0))] = stmt.column_int(1);
  }
  return counts;
}

TEST(Sources, EveryTransportStoresTheSameSessions) {
  TempDir dir;
  const std::string watched = dir.file("traces");
  std::filesystem::create_directories(watched);
  RunningDaemon daemon(dir, {"--watch", watched});

  const std::string reference_dir = dir.file("reference");
  std::filesystem::create_directories(reference_dir);
  run_workload(make_workload(dir, "ref"), {{"GIT_TRACE2_EVENT", reference_dir}});
  const auto reference = by_shape(count_events_in_trace_dir(reference_dir));
  ASSERT_GE(reference.size(), 6u);

  run_workload(make_workload(dir, "stream"), {{"GIT_TRACE2_EVENT", daemon.git_target()}});
  run_workload(make_workload(dir, "dgram"), {{"GIT_TRACE2_EVENT", "af_unix:dgram:" + daemon.dgram_socket_path()}});
  run_workload(make_workload(dir, "bare"), {{"GIT_TRACE2_EVENT", "af_unix:" + daemon.dgram_socket_path()}});
  const std::string db = daemon.db_path();
  // The directory is ingested and emptied behind git's back.
  ASSERT_TRUE(wait_until([&] { return std::filesystem::is_empty(watched); }));
  run_workload(make_workload(dir, "dir"), {{"GIT_TRACE2_EVENT", watched}});
  ASSERT_TRUE(wait_until([&] { return std::filesystem::is_empty(watched); }));

  const ProcessResult stopped = daemon.stop();
  ASSERT_EQ(stopped.exit_code, 0) << stopped.err;

  EXPECT_EQ(by_shape(counts_for_source(db, "stream")), reference);
  EXPECT_EQ(by_shape(counts_for_source(db, "dir")), reference);
  // dgram holds two runs (af_unix:dgram: and the bare fallback): compare each
  // run's sessions by the top-level SID they belong to.
  const auto dgram = counts_for_source(db, "dgram");
  std::map<std::string, std::map<std::string, long>> by_root;
  for (const auto& [sid, count] : dgram) {
    by_root[sid.substr(0, sid.find('/'))][sid] = count;
  }
  std::map<std::string, long> dgram_run_a;
  std::map<std::string, long> dgram_run_b;
  // Three commands per run: the first three roots (by time) are run A.
  int index = 0;
  for (const auto& [root, sessions] : by_root) {
    (index++ < 3 ? dgram_run_a : dgram_run_b).insert(sessions.begin(), sessions.end());
  }
  EXPECT_EQ(by_shape(dgram_run_a), reference);
  EXPECT_EQ(by_shape(dgram_run_b), reference);

  db::Database check = open_db(db);
  EXPECT_EQ(check.query_int("SELECT count(*) FROM sessions WHERE status != 'complete'"), 0);
  EXPECT_EQ(check.query_int("SELECT count(*) FROM rejects"), 0);
  // The kernel tells who sent each datagram, as it does for stream peers.
  EXPECT_EQ(check.query_int("SELECT count(*) FROM sessions WHERE source = 'dgram' AND peer_pid IS NULL"), 0);
  db::Statement peers = check.prepare("SELECT sid, peer_pid FROM sessions WHERE source = 'dgram' AND depth = 0");
  int checked = 0;
  while (peers.step()) {
    const std::string sid(peers.column_text(0));
    EXPECT_EQ(peers.column_int(1), proto::sid_pid(sid).value_or(-1)) << sid;
    ++checked;
  }
  EXPECT_EQ(checked, 6);
  EXPECT_EQ(check.query_int("SELECT count(*) FROM file_offsets WHERE finished = 0"), 0);
}

}  // namespace
}  // namespace trace2d::test
