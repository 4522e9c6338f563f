// What trace2d keeps out of its database and who it lets flood it: URL
// passwords, payload-supplied identities, one user's flood; file modes and
// logs; and retention keeping the database within its bounds.

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include "tests/e2e/daemon_fixture.hpp"
#include "tests/support/socket_client.hpp"

namespace trace2d::test {
namespace {

// Every text the database holds about events, in one string to search.
std::string everything_stored(const std::string& db_path) {
  db::Database db = open_db(db_path);
  std::string all;
  for (const char* sql : {"SELECT group_concat(json, '\n') FROM events",
                          "SELECT group_concat(CAST(raw AS TEXT), '\n') FROM events WHERE raw IS NOT NULL",
                          "SELECT group_concat(argv, '\n') FROM sessions", "SELECT group_concat(argv, '\n') FROM children",
                          "SELECT group_concat(CAST(raw AS TEXT), '\n') FROM rejects"}) {
    all += db.query_text(sql).value_or("") + "\n";
  }
  return all;
}

TEST(Security, UrlPasswordsNeverReachTheDatabase) {
  TempDir dir;
  RunningDaemon daemon(dir);
  const std::string repo = make_repo(dir, "repo");
  ASSERT_EQ(run_git(repo, {"remote", "add", "origin", "https://bob:hunter2@127.0.0.1:9/r.git"}).exit_code, 0);
  const std::map<std::string, std::string> env = {{"GIT_TRACE2_EVENT", daemon.git_target()},
                                                  {"GIT_TRACE2_CONFIG_PARAMS", "remote.*.url"}};
  // git before 2.43.1 writes the URL as typed: in argv, in the remote
  // helper's argv, and in def_param.
  run_git(repo, {"ls-remote", "https://alice:s3cret@127.0.0.1:9/none.git"}, env);
  run_git(repo, {"fetch", "origin"}, env);
  // Issue 24, finding 9: a token as the user name, and passwords with '@',
  // a space, '?' and '#' (git takes them as typed), also inside a longer
  // argument.
  run_git(repo, {"ls-remote", "http://ghp_T0KENuser@127.0.0.1:9/t.git"}, env);
  run_git(repo, {"ls-remote", "https://carol:p@ss w?rd#1@127.0.0.1:9/x.git"}, env);
  run_git(repo, {"-c", "remote.other.url=https://dave:pa55?word@127.0.0.1:9/y.git", "ls-remote", "other"}, env);
  run_git(repo, {"ls-remote", "https://oauth2:glpatSECRET@127.0.0.1:9/z.git"}, env);
  const ProcessResult stopped = daemon.stop();
  ASSERT_EQ(stopped.exit_code, 0) << stopped.err;

  const std::string stored = everything_stored(daemon.db_path());
  for (const char* secret : {"s3cret", "hunter2", "ghp_T0KENuser", "ss w?rd", "w?rd#1", "pa55", "glpatSECRET",
                             "alice", "bob:", "carol", "dave"}) {
    EXPECT_EQ(stored.find(secret), std::string::npos) << secret;
  }
  EXPECT_NE(stored.find("https://<redacted>@127.0.0.1:9/none.git"), std::string::npos);
  EXPECT_NE(stored.find("https://<redacted>@127.0.0.1:9/r.git"), std::string::npos);
  EXPECT_NE(stored.find("http://<redacted>@127.0.0.1:9/t.git"), std::string::npos);
  EXPECT_NE(stored.find("https://<redacted>@127.0.0.1:9/x.git"), std::string::npos);
  EXPECT_NE(stored.find("remote.other.url=https://<redacted>@127.0.0.1:9/y.git"), std::string::npos);
  EXPECT_NE(stored.find("https://oauth2:<redacted>@127.0.0.1:9/z.git"), std::string::npos);
  db::Database db = open_db(daemon.db_path());
  EXPECT_GE(db.query_int("SELECT count(*) FROM params WHERE value LIKE '%<redacted>%'").value_or(0), 1);
  // The summary columns too: sessions.argv and children.argv.
  EXPECT_EQ(db.query_int("SELECT count(*) FROM sessions WHERE argv LIKE '%ghp_%' OR argv LIKE '%carol%'"), 0);
  EXPECT_GE(db.query_int("SELECT count(*) FROM sessions WHERE argv LIKE '%<redacted>@127.0.0.1:9/t.git%'").value_or(0),
            1);
  for (const char* secret : {"s3cret", "ghp_T0KENuser", "w?rd"}) {
    EXPECT_EQ(stopped.err.find(secret), std::string::npos) << secret;
  }
}

TEST(Security, RedactionCanBeTurnedOff) {
  TempDir dir;
  RunningDaemon daemon(dir, {"--no-redact-url-credentials"});
  {
    SocketClient client(daemon.socket_path());
    ASSERT_TRUE(client.send(R"({"event":"start","sid":"plain","argv":["git","clone","https://a:pw@h/r"]})"
                            "\n"));
  }
  ASSERT_EQ(daemon.stop().exit_code, 0);
  EXPECT_NE(everything_stored(daemon.db_path()).find("https://a:pw@h/r"), std::string::npos);
}

TEST(Security, IdentityComesFromTheKernelNotThePayload) {
  TempDir dir;
  RunningDaemon daemon(dir);
  {
    SocketClient client(daemon.socket_path());
    ASSERT_TRUE(client.send(
        R"({"event":"version","sid":"liar","peer_pid":1,"peer_uid":0,"pid":1,"uid":0,"evt":"3","exe":"x"})"
        "\n"));
  }
  ASSERT_EQ(daemon.stop().exit_code, 0);
  db::Database db = open_db(daemon.db_path());
  EXPECT_EQ(db.query_int("SELECT peer_pid FROM sessions"), static_cast<std::int64_t>(::getpid()));
  EXPECT_EQ(db.query_int("SELECT peer_uid FROM sessions"), static_cast<std::int64_t>(::getuid()));
}

// The rate valve is work-conserving (issue 24): a flood past its rate
// (100 lines/s here) loses nothing while the pipeline has room for it, and
// every line is still counted per uid. (Before, the valve cut this flood
// to its burst whatever the load: 200-odd of 1,000 lines stored.) What the
// valve drops under pressure, and how that shows, is
// Fairness.UnderPressureOnlyTheFloodingUidLosesAndTheTotalsAgree.
TEST(Security, AFloodPastTheRateValveLosesNothingWhileThePipelineHasRoom) {
  constexpr int k_flood = 1000;
  constexpr int k_rate = 100;  // lines per second, bursts of two seconds
  TempDir dir;
  ::chmod(dir.path().c_str(), 0755);  // another user must reach the socket
  RunningDaemon daemon(dir, {"--per-uid-rate", std::to_string(k_rate)});
  {
    SocketClient client(daemon.socket_path());
    for (int i = 0; i < k_flood; ++i) {
      ASSERT_TRUE(client.send(event_line("flood", i == 0 ? "version" : "data", i)));
    }
  }
  const bool other_user = ::geteuid() == 0;
  if (other_user) {
    // A second user, sending meanwhile, gets through whole.
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      if (::setgid(65534) != 0 || ::setuid(65534) != 0) {
        ::_exit(3);
      }
      try {
        SocketClient client(daemon.socket_path());
        for (int i = 0; i < 50; ++i) {
          if (!client.send(event_line("polite", i == 0 ? "version" : "data", i))) {
            ::_exit(2);
          }
        }
      } catch (...) {
        ::_exit(1);
      }
      ::_exit(0);
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));  // a uid_stats report
  ASSERT_EQ(daemon.stop().exit_code, 0);
  db::Database db = open_db(daemon.db_path());
  EXPECT_EQ(db.query_int("SELECT count(*) FROM events WHERE sid = 'flood'"), k_flood);
  EXPECT_EQ(db.query_int("SELECT lines_lost FROM sessions WHERE sid = 'flood'"), 0);
  const auto uid = static_cast<std::int64_t>(::getuid());
  EXPECT_EQ(db.query_int("SELECT lines FROM uid_stats WHERE uid = " + std::to_string(uid)), k_flood);
  EXPECT_EQ(db.query_int("SELECT dropped FROM uid_stats WHERE uid = " + std::to_string(uid)), 0);
  EXPECT_EQ(db.query_int("SELECT count(*) FROM rejects"), 0);
  if (other_user) {
    EXPECT_EQ(db.query_int("SELECT count(*) FROM events WHERE sid = 'polite'"), 50);
    EXPECT_EQ(db.query_int("SELECT peer_uid FROM sessions WHERE sid = 'polite'"), 65534);
    EXPECT_EQ(db.query_int("SELECT dropped FROM uid_stats WHERE uid = 65534"), 0);
  }
}

TEST(Security, FilesAreCreatedWithTheirDocumentedModes) {
  TempDir dir;
  RunningDaemon daemon(dir, {"--socket-mode", "0660"});
  struct stat st {};
  ASSERT_EQ(::stat(daemon.db_path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
  ASSERT_EQ(::stat(daemon.socket_path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0660u);
  ASSERT_EQ(::stat(daemon.dgram_socket_path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0666u);
  EXPECT_EQ(daemon.stop().exit_code, 0);
}

TEST(Security, LogsDoNotCarryPayloadsAtInfoLevel) {
  TempDir dir;
  RunningDaemon daemon(dir);
  {
    SocketClient client(daemon.socket_path());
    ASSERT_TRUE(client.send(event_line("marker-SECRET-PAYLOAD", "version")));
    ASSERT_TRUE(client.send("garbage with SECRET-PAYLOAD inside\n"));
    ASSERT_TRUE(client.send(std::string(5 * 1024 * 1024, 'S') + "ECRET-PAYLOAD\n"));
  }
  const ProcessResult stopped = daemon.stop();
  ASSERT_EQ(stopped.exit_code, 0);
  EXPECT_EQ(stopped.err.find("SECRET-PAYLOAD"), std::string::npos) << stopped.err;
}

// `count` closed sessions, bulk-1000 on, of 50 events of some 2 KB each.
bool send_bulk_sessions(RunningDaemon& daemon, int count) {
  for (int s = 0; s < count; ++s) {
    SocketClient client(daemon.socket_path());
    const std::string sid = "bulk-" + std::to_string(1000 + s);
    std::string burst;
    for (int i = 0; i < 50; ++i) {
      std::string line = event_line(sid, "data", i);
      line.insert(line.size() - 2, ",\"pad\":\"" + std::string(2000, 'p') + "\"");
      burst += line;
    }
    burst += event_line(sid, "atexit", 50);
    if (!client.send(burst)) {
      return false;
    }
  }
  return true;
}

TEST(Security, RetentionKeepsTheDatabaseWithinItsSize) {
  constexpr std::int64_t k_bound = 2 * 1024 * 1024;
  TempDir dir;
  RunningDaemon daemon(dir, {"--retention-max-db-bytes", std::to_string(k_bound)});
  // Five times the bound, in closed sessions.
  ASSERT_TRUE(send_bulk_sessions(daemon, 100));
  const auto used = [&] {
    db::Database db = open_db(daemon.db_path());
    return (db.query_int("PRAGMA page_count").value_or(0) - db.query_int("PRAGMA freelist_count").value_or(0)) *
           db.query_int("PRAGMA page_size").value_or(0);
  };
  // Everything arrived (the last session is whole), then the size came down.
  ASSERT_TRUE(wait_until([&] {
    return open_db(daemon.db_path()).query_int("SELECT event_count FROM sessions WHERE sid = 'bulk-1099'") ==
           std::optional<std::int64_t>(51);
  }, std::chrono::seconds(30)));
  ASSERT_TRUE(wait_until([&] { return used() <= k_bound; }, std::chrono::seconds(30))) << used();
  const ProcessResult stopped = daemon.stop();
  ASSERT_EQ(stopped.exit_code, 0);
  db::Database db = open_db(daemon.db_path());
  EXPECT_EQ(db.query_text("PRAGMA integrity_check"), "ok");
  // What went is counted and said: the status row (and `status`), the log.
  const std::int64_t gone = 100 - db.query_int("SELECT count(*) FROM sessions WHERE sid LIKE 'bulk-%'").value_or(0);
  ASSERT_GT(gone, 0);
  EXPECT_EQ(db.query_int("SELECT retention_sessions_deleted FROM daemon_status"), gone);
  EXPECT_EQ(db.query_int("SELECT retention_events_deleted FROM daemon_status"), gone * 51);
  const std::int64_t in_use = db.query_int("SELECT db_used_bytes FROM daemon_status").value_or(0);
  EXPECT_GT(in_use, 0);
  EXPECT_LE(in_use, db.query_int("SELECT db_bytes FROM daemon_status").value_or(0));
  const ProcessResult status = ctl(daemon.db_path(), {"status"});
  EXPECT_NE(status.out.find("retention: " + std::to_string(gone) + " sessions (" + std::to_string(gone * 51) +
                            " events) and 0 rejected lines deleted since start"),
            std::string::npos)
      << status.out;
  EXPECT_NE(status.out.find(" of pages in use)"), std::string::npos) << status.out;
  EXPECT_NE(stopped.err.find("retention: deleted "), std::string::npos) << stopped.err;
  // The newest sessions stayed, whole; the oldest went first.
  EXPECT_EQ(db.query_int("SELECT event_count FROM sessions WHERE sid = 'bulk-1099'"), 51);
  EXPECT_EQ(db.query_int("SELECT count(*) FROM sessions WHERE sid = 'bulk-1000'"), 0);
  EXPECT_EQ(db.query_int("SELECT count(*) FROM sessions s WHERE event_count !="
                         " (SELECT count(*) FROM event_store e WHERE e.session = s.id)"),
            0);
}

// Once nothing comes for a second, retention frees its headroom under the
// bound (room a burst fills without deleting), and the file keeps it.
TEST(Security, OnceIngestIsQuietRetentionFreesItsHeadroomWithinTheFile) {
  constexpr std::int64_t k_bound = 2 * 1024 * 1024;
  TempDir dir;
  RunningDaemon daemon(dir, {"--retention-max-db-bytes", std::to_string(k_bound), "--retention-headroom-percent", "25"});
  ASSERT_TRUE(send_bulk_sessions(daemon, 60));
  ASSERT_TRUE(wait_until([&] {
    return open_db(daemon.db_path()).query_int("SELECT event_count FROM sessions WHERE sid = 'bulk-1059'") ==
           std::optional<std::int64_t>(51);
  }, std::chrono::seconds(30)));
  struct Pages {
    std::int64_t used = 0;
    std::int64_t file = 0;
  };
  const auto pages = [&] {
    db::Database db = open_db(daemon.db_path());
    const std::int64_t size = db.query_int("PRAGMA page_size").value_or(0);
    const std::int64_t count = db.query_int("PRAGMA page_count").value_or(0);
    return Pages{(count - db.query_int("PRAGMA freelist_count").value_or(0)) * size, count * size};
  };
  ASSERT_TRUE(wait_until([&] { return pages().used <= k_bound / 4 * 3; }, std::chrono::seconds(30)))
      << pages().used;
  const Pages quiet = pages();
  EXPECT_LE(quiet.file, k_bound);
  EXPECT_GE(quiet.file - quiet.used, k_bound / 8);  // the freed pages stay in the file
  ASSERT_EQ(daemon.stop().exit_code, 0);
  db::Database db = open_db(daemon.db_path());
  EXPECT_EQ(db.query_text("PRAGMA integrity_check"), "ok");
  EXPECT_EQ(db.query_int("SELECT event_count FROM sessions WHERE sid = 'bulk-1059'"), 51);
  EXPECT_EQ(db.query_int("SELECT count(*) FROM sessions WHERE sid = 'bulk-1000'"), 0);
  EXPECT_EQ(db.query_int("SELECT count(*) FROM event_store WHERE session NOT IN (SELECT id FROM sessions)"), 0);
}

}  // namespace
}  // namespace trace2d::test
