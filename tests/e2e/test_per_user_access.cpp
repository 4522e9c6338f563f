// Per-user access (issue 24 item 3, issue 26 finding 7): trace2d runs as
// root with its database 0640; root and `nobody` each run the real git. As
// nobody (not in the group), every trace2ctl command goes through trace2d's
// query service and shows nobody's sessions and none of root's; the ways to
// widen the view are refused; root still reads everything directly.

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/e2e/daemon_fixture.hpp"

namespace trace2d::test {
namespace {

std::set<std::string> sids_of(db::Database& db, const std::string& where) {
  std::set<std::string> sids;
  db::Statement stmt = db.prepare("SELECT sid FROM sessions WHERE " + where);
  while (stmt.step()) {
    sids.emplace(stmt.column_text(0));
  }
  return sids;
}

std::string last_line(const std::string& text) {
  std::string trimmed = text;
  while (!trimmed.empty() && trimmed.back() == '\n') {
    trimmed.pop_back();
  }
  const std::size_t start = trimmed.rfind('\n');
  return start == std::string::npos ? trimmed : trimmed.substr(start + 1);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class PerUserAccess : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) {
      GTEST_SKIP() << "needs root to run git and trace2ctl as another user";
    }
    m_user = nobody();
    // The test directory traversable (the sockets must be reachable), the
    // database itself not readable by others, as trace2d creates it.
    std::filesystem::permissions(m_dir.path(), std::filesystem::perms(0755));
    m_home = m_dir.file("nobody-home");
    std::filesystem::create_directories(m_home);
    ASSERT_EQ(::chown(m_home.c_str(), m_user.uid, m_user.gid), 0);
    m_daemon.emplace(m_dir, std::vector<std::string>{"--query-trace2ctl", TRACE2CTL_BIN});
    struct stat st {};
    ASSERT_EQ(::stat(m_daemon->db_path().c_str(), &st), 0);
    ASSERT_EQ(st.st_mode & 0007, 0U) << "the database must not be readable by others";

    const std::map<std::string, std::string> trace{{"GIT_TRACE2_EVENT", m_daemon->git_target()}};
    const std::string repo = make_repo(m_dir, "root-repo", 3);
    ASSERT_EQ(run_git(repo, {"status"}, trace).exit_code, 0);
    ASSERT_EQ(run_git(repo, {"log", "-1"}, trace).exit_code, 0);
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"init", "-q", "mine"}, std::vector<std::string>{"-C", "mine", "status"}}) {
      ProcessSpec spec = git_spec(m_home, args, trace);
      spec.env["HOME"] = m_home;
      spec.run_as = m_user;
      const ProcessResult r = run_process(spec);
      ASSERT_EQ(r.exit_code, 0) << r.err;
    }
    ASSERT_TRUE(wait_until([&] {
      db::Database db = open_db(m_daemon->db_path());
      return sids_of(db, "peer_uid = " + std::to_string(m_user.uid) + " AND status = 'complete'").size() >= 2 &&
             sids_of(db, "peer_uid = 0 AND status = 'complete'").size() >= 2;
    }));
    db::Database db = open_db(m_daemon->db_path());
    m_mine = sids_of(db, "peer_uid = " + std::to_string(m_user.uid));
    m_theirs = sids_of(db, "peer_uid IS NOT " + std::to_string(m_user.uid));
    ASSERT_FALSE(m_mine.empty());
    ASSERT_FALSE(m_theirs.empty());
  }

  ProcessResult ctl_as_user(std::vector<std::string> args, std::map<std::string, std::string> env = {}) {
    ProcessSpec spec;
    spec.argv = {TRACE2CTL_BIN, "--db", m_daemon->db_path()};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    spec.env = {{"TRACE2CTL_QUERY_SOCKET", m_dir.file("trace2ctl.sock")}, {"HOME", m_home}};
    for (auto& [k, v] : env) {
      spec.env[k] = v;
    }
    spec.cwd = m_home;
    spec.run_as = m_user;
    return run_process(spec);
  }

  void expect_only_mine(const std::string& text, const std::string& what) {
    for (const std::string& sid : m_theirs) {
      EXPECT_EQ(text.find(sid), std::string::npos) << what << " shows root's " << sid << ":\n" << text;
    }
  }

  TempDir m_dir;
  RunAs m_user;
  std::string m_home;
  std::optional<RunningDaemon> m_daemon;
  std::set<std::string> m_mine;
  std::set<std::string> m_theirs;
};

TEST_F(PerUserAccess, EveryCommandShowsTheUsersOwnSessionsOnly) {
  const std::string my_sid = *m_mine.begin();
  const std::string their_sid = *m_theirs.begin();

  ProcessResult r = ctl_as_user({"sessions", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const std::string& sid : m_mine) {
    EXPECT_NE(r.out.find(sid), std::string::npos) << sid << " missing from:\n" << r.out;
  }
  expect_only_mine(r.out, "sessions");

  r = ctl_as_user({"sql", "SELECT count(*) FROM sessions"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(std::to_string(m_mine.size())), std::string::npos) << r.out;
  r = ctl_as_user({"--format", "tsv", "sql", "SELECT count(*) FROM sessions"});
  EXPECT_EQ(last_line(r.out), std::to_string(m_mine.size())) << r.out;

  r = ctl_as_user({"show", my_sid, "--format", "json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(my_sid), std::string::npos) << r.out;
  r = ctl_as_user({"show", their_sid});
  EXPECT_NE(r.exit_code, 0) << r.out;
  expect_only_mine(r.out, "show of root's session");

  r = ctl_as_user({"tree", my_sid});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("git"), std::string::npos) << r.out;
  r = ctl_as_user({"tree", their_sid, "--format", "json"});
  EXPECT_NE(r.exit_code, 0) << r.out;
  expect_only_mine(r.out, "tree of root's session");

  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"top", "--format", "json"}, std::vector<std::string>{"stats", "--format", "json"},
        std::vector<std::string>{"status", "--format", "json"}}) {
    r = ctl_as_user(args);
    EXPECT_EQ(r.exit_code, 0) << args[0] << ": " << r.err;
    expect_only_mine(r.out, args[0]);
    // Only root ran `git log`.
    EXPECT_EQ(r.out.find("\"log\""), std::string::npos) << args[0] << ":\n" << r.out;
  }

  // Files are created by the user's trace2ctl, with the user's rights.
  const std::string html = m_home + "/report.html";
  r = ctl_as_user({"report", "--html", html});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("wrote " + html + ":"), std::string::npos) << r.out;
  struct stat st {};
  ASSERT_EQ(::stat(html.c_str(), &st), 0) << r.err;
  EXPECT_EQ(st.st_uid, m_user.uid);
  EXPECT_GT(st.st_size, 1000);
  expect_only_mine(read_file(html), "report");
  for (const auto& entry : std::filesystem::directory_iterator(m_home)) {
    EXPECT_EQ(entry.path().string().find(".tmp-"), std::string::npos) << entry.path();
  }

  const std::string exported = m_home + "/trace.json";
  r = ctl_as_user({"export", my_sid, "-o", exported});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(::stat(exported.c_str(), &st), 0) << r.err;
  EXPECT_EQ(st.st_uid, m_user.uid);
  EXPECT_NE(read_file(exported).find("git"), std::string::npos);
  r = ctl_as_user({"export", their_sid, "-o", m_home + "/theirs.json"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_FALSE(std::filesystem::exists(m_home + "/theirs.json"));
  r = ctl_as_user({"export", my_sid});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  expect_only_mine(r.out, "export");

  // Root, who may read the file, still sees everyone's.
  r = ctl(m_daemon->db_path(), {"--format", "tsv", "sql", "SELECT count(*) FROM sessions"});
  EXPECT_EQ(last_line(r.out), std::to_string(m_mine.size() + m_theirs.size())) << r.out << r.err;
}

TEST_F(PerUserAccess, WaysToWidenTheViewAreRefused) {
  const char* const refused[] = {
      "ATTACH '/etc/passwd' AS x",
      "SELECT * FROM store.sessions",
      "SELECT * FROM names",
      "SELECT count(*) FROM names WHERE text LIKE '%'",
      "PRAGMA database_list",
      "SELECT * FROM pragma_database_list",
      "SELECT sql FROM sqlite_temp_master",
      "EXPLAIN QUERY PLAN SELECT * FROM sessions",
      "WITH events AS (SELECT * FROM names) SELECT * FROM events",
      "SELECT sql FROM sqlite_temp_schema",
      "SELECT * FROM file_offsets_x",
      "CREATE TEMP VIEW v AS SELECT 1",
  };
  for (const char* sql : refused) {
    const ProcessResult r = ctl_as_user({"sql", sql});
    EXPECT_EQ(r.exit_code, 1) << sql << ":\n" << r.out;
    expect_only_mine(r.out, sql);
  }
  // What a user may read of the schema holds nothing of root's.
  for (const char* sql : {"SELECT * FROM main.sqlite_schema", "SELECT * FROM events", "SELECT * FROM regions",
                          "SELECT * FROM rejects", "SELECT * FROM uid_stats"}) {
    const ProcessResult r = ctl_as_user({"--format", "tsv", "sql", sql});
    EXPECT_EQ(r.exit_code, 0) << sql << ": " << r.err;
    expect_only_mine(r.out, sql);
  }
  const ProcessResult uids = ctl_as_user({"--format", "tsv", "sql", "SELECT DISTINCT peer_uid FROM sessions"});
  EXPECT_EQ(last_line(uids.out), std::to_string(m_user.uid)) << uids.out;

  // Options that would widen it, or make the service touch files: refused,
  // saying why (another's uid was once sent to read the database, and told
  // to start the service that was running).
  const ProcessResult timeout = ctl_as_user({"sessions", "--timeout", "0"});
  EXPECT_EQ(timeout.exit_code, 1) << timeout.out;
  EXPECT_NE(timeout.err.find("sets --timeout itself"), std::string::npos) << timeout.err;
  expect_only_mine(timeout.out, "--timeout");
  for (const std::vector<std::string>& args : {std::vector<std::string>{"--only-uid", "0", "sessions"},
                                               std::vector<std::string>{"sessions", "--only-uid=0"}}) {
    const ProcessResult r = ctl_as_user(args);
    EXPECT_EQ(r.exit_code, 2) << args[0] << ":\n" << r.out;
    EXPECT_NE(r.err.find("you may read only your own sessions (uid " + std::to_string(m_user.uid) + ")"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(r.err.find("must run"), std::string::npos) << r.err;
    expect_only_mine(r.out, args[0]);
  }
  // One's own uid is what the service shows anyway.
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--format", "tsv", "--only-uid", std::to_string(m_user.uid), "sql",
                                 "SELECT DISTINCT peer_uid FROM sessions"},
        std::vector<std::string>{"--format", "tsv", "sql", "--only-uid=" + std::to_string(m_user.uid),
                                 "SELECT DISTINCT peer_uid FROM sessions"}}) {
    const ProcessResult own = ctl_as_user(args);
    EXPECT_EQ(own.exit_code, 0) << own.err;
    EXPECT_EQ(last_line(own.out), std::to_string(m_user.uid)) << own.out;
  }
  // A file the user may not read stays unread: --db elsewhere is answered
  // by the service for its own database only.
  ProcessSpec other;
  other.argv = {TRACE2CTL_BIN, "--db", "/etc/shadow", "sessions"};
  other.env = {{"TRACE2CTL_QUERY_SOCKET", m_dir.file("trace2ctl.sock")}};
  other.run_as = m_user;
  const ProcessResult shadow = run_process(other);
  EXPECT_EQ(shadow.exit_code, 1);
  EXPECT_NE(shadow.err.find("answers for the database"), std::string::npos) << shadow.err;
  EXPECT_EQ(shadow.out, "");
}

TEST_F(PerUserAccess, WithoutTheServiceTheErrorSaysWhatToDo) {
  const ProcessResult r =
      ctl_as_user({"sessions"}, {{"TRACE2CTL_QUERY_SOCKET", m_dir.file("no-such.sock")}});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("Permission denied"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("usermod -aG trace2d"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("sudo"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("query service"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("TRACE2CTL_QUERY_SOCKET"), std::string::npos) << "where a hand-run trace2d answers\n" << r.err;
  EXPECT_EQ(r.out, "");
}

}  // namespace
}  // namespace trace2d::test
