// What the user ran (model/command_identity.hpp): display names, top-level
// sessions, failure reasons, and the listing flags built on them
// (--all, --cmd a,b, --repo, --by), on databases built for the test.

#include <signal.h>

#include <gtest/gtest.h>
#include <simdjson.h>

#include <set>
#include <string>
#include <vector>

#include "ctl/commands/session_columns.hpp"
#include "db/sqlite.hpp"
#include "model/command_identity.hpp"
#include "tests/ctl/sample_database.hpp"

namespace trace2d::test {
namespace {

using model::display_name;

TEST(CommandIdentity, DisplayNamesAreWhatTheUserTyped) {
  // As git 2.39 sends them (see the header).
  EXPECT_EQ(display_name("_run_dashed_", {"git", "submodule", "status"}), "submodule");
  EXPECT_EQ(display_name("_run_git_alias_", {"git", "st"}), "st");
  EXPECT_EQ(display_name("_run_shell_alias_", {"git", "-c", "alias.sh=!echo hi", "sh"}), "sh");
  EXPECT_EQ(display_name("_query_", {"git", "--exec-path"}), "--exec-path");
  EXPECT_EQ(display_name("_query_", {"git", "--list-cmds=main,others"}), "--list-cmds");
  // git's options before the command, with their values as separate words or not.
  EXPECT_EQ(display_name("_run_dashed_", {"git", "-C", "/src", "--git-dir", "x.git", "--no-pager", "lfs", "pull"}),
            "lfs");
  EXPECT_EQ(display_name("_run_dashed_", {"git", "--work-tree=/w", "-p", "st"}), "st");
  // Others as they are; nothing to go by: git's name.
  EXPECT_EQ(display_name("status", {"git", "st"}), "status");
  EXPECT_EQ(display_name("_run_dashed_", {"git", "-c", "a=b"}), "_run_dashed_");
  EXPECT_EQ(display_name("_run_dashed_", {}), "_run_dashed_");
  EXPECT_EQ(model::display_name_from_json("_run_git_alias_", R"(["git","co","main"])"), "co");
  EXPECT_EQ(model::display_name_from_json("_run_git_alias_", "not json"), "_run_git_alias_");
  // No cmd_name: git stopped before naming the command (a bad -C or
  // --git-dir); the user still ran `status`. Not so for what is not git.
  EXPECT_EQ(display_name("", {"git", "-C", "/nowhere", "status"}), "status");
  EXPECT_EQ(display_name("", {"/usr/bin/git", "--git-dir=/nope", "status", "-s"}), "status");
  EXPECT_EQ(display_name("", {"git"}), "");
  EXPECT_EQ(display_name("", {"git-upload-pack", "/srv/repo.git"}), "");
  EXPECT_EQ(display_name("", {"ide", "build"}), "");
  EXPECT_EQ(model::display_name_from_json("", R"(["git","-C","/nowhere","log"])"), "log");
}

TEST(CommandIdentity, GitProcessesAreToldFromOtherProducers) {
  EXPECT_TRUE(model::is_git_process("2.39.5", {"git", "status"}));
  EXPECT_TRUE(model::is_git_process("2.45.1.windows.1", {"C:\\Program Files\\Git\\cmd\\git.exe", "status"}));
  EXPECT_TRUE(model::is_git_process("2.39.5", {"/usr/lib/git-core/git", "status"}));
  EXPECT_TRUE(model::is_git_process("2.39.5", {"git-upload-pack", "/srv/r.git"}));
  EXPECT_FALSE(model::is_git_process("my-ide", {"my-ide", "--sync"})) << "the client library sends the program";
  EXPECT_FALSE(model::is_git_process("2.39.5", {"bash", "-c", "git status"}));
  EXPECT_FALSE(model::is_git_process("", {"git"}));
  EXPECT_FALSE(model::is_git_process_json("2.39.5", ""));
}

TEST(CommandIdentity, ARepositoryNamedInArgvStandsInForAWorktreeGitDidNotSend) {
  using model::repository_in_argv;
  // Server commands in a bare repository (as git 2.39 runs them: no def_repo).
  EXPECT_EQ(repository_in_argv({"git-upload-pack", "/srv/r.git"}), "/srv/r.git");
  EXPECT_EQ(repository_in_argv({"git-receive-pack", "/srv/r.git"}), "/srv/r.git");
  EXPECT_EQ(repository_in_argv({"git", "upload-pack", "--stateless-rpc", "--advertise-refs", "/srv/r.git"}),
            "/srv/r.git");
  EXPECT_EQ(repository_in_argv({"/usr/lib/git-core/git", "-C", "/srv", "upload-archive", "r.git"}), "/srv/r.git");
  EXPECT_EQ(repository_in_argv({"git-upload-pack", "r.git"}), "r.git") << "relative to sshd's home: as typed";
  EXPECT_EQ(repository_in_argv({"git-upload-pack", "--strict"}), "");
  // git's options, each seen from the -C before it.
  EXPECT_EQ(repository_in_argv({"/usr/lib/git-core/git", "--git-dir=/srv/r.git", "for-each-ref"}), "/srv/r.git");
  EXPECT_EQ(repository_in_argv({"git", "-C", "/srv", "--git-dir", "r.git", "gc"}), "/srv/r.git");
  EXPECT_EQ(repository_in_argv({"git", "-C", "/a", "-C", "b", "-C", "", "status"}), "/a/b");
  EXPECT_EQ(repository_in_argv({"git", "-C", "/a", "-C", "/b", "status"}), "/b");
  EXPECT_EQ(repository_in_argv({"git", "--git-dir=/g", "--work-tree=/w", "status"}), "/w");
  // Options after the command are the command's; other programs name none.
  EXPECT_EQ(repository_in_argv({"git", "log", "-C", "/x"}), "");
  EXPECT_EQ(repository_in_argv({"git", "clone", "/srv/r.git"}), "");
  EXPECT_EQ(repository_in_argv({"git-remote-https", "origin", "https://h/r"}), "");
  EXPECT_EQ(repository_in_argv({"ide", "-C", "/x"}), "");
  EXPECT_EQ(repository_in_argv({"git", "-C"}), "");
  EXPECT_EQ(repository_in_argv({}), "");
  EXPECT_EQ(model::repository_in_argv_json(R"(["git-receive-pack","/srv/r.git"])"), "/srv/r.git");
  EXPECT_EQ(model::repository_in_argv_json(""), "");
}

TEST(CommandIdentity, FailureReasons) {
  EXPECT_EQ(model::failure_reason(1, std::nullopt, "complete", "pathspec 'nope' did not match any file(s) known to git"),
            "pathspec 'nope' did not match any file(s) known to git");
  EXPECT_EQ(model::failure_reason(128, std::nullopt, "complete", "ambiguous argument 'x'\nUse '--' to separate"),
            "ambiguous argument 'x'") << "the first line";
  EXPECT_EQ(model::failure_reason(std::nullopt, SIGPIPE, "complete", std::nullopt), "killed by SIGPIPE");
  EXPECT_EQ(model::failure_reason(std::nullopt, SIGPIPE, "complete", "write error"), "killed by SIGPIPE: write error");
  EXPECT_EQ(model::failure_reason(3, std::nullopt, "complete", std::nullopt), "exit code 3, no error message");
  EXPECT_EQ(model::failure_reason(std::nullopt, std::nullopt, "incomplete", std::nullopt),
            "never finished (killed, or its events were lost)");
  EXPECT_EQ(model::failure_reason(0, std::nullopt, "complete", "warning-like error"), "");
  EXPECT_EQ(model::failure_reason(std::nullopt, std::nullopt, "running", std::nullopt), "");
  EXPECT_EQ(model::signal_name(SIGKILL), "SIGKILL");
  EXPECT_EQ(model::signal_name(999), "signal 999");
}

TEST(CommandIdentity, SqlFunctionsAgreeWithTheCpp) {
  db::Database db(":memory:", db::OpenMode::read_write_create);
  model::register_sql_functions(db);
  EXPECT_EQ(db.query_text(R"(SELECT t2_display_name('_run_dashed_', '["git","submodule","status"]'))"), "submodule");
  EXPECT_EQ(db.query_text("SELECT t2_display_name('fetch', NULL)"), "fetch");
  EXPECT_EQ(db.query_int("SELECT t2_display_name(NULL, '[]') IS NULL"), 1);
  EXPECT_EQ(db.query_int("SELECT t2_display_name(NULL, NULL) IS NULL"), 1);
  EXPECT_EQ(db.query_text(R"(SELECT t2_display_name(NULL, '["git","-C","/nowhere","status"]'))"), "status");
  EXPECT_EQ(db.query_int(R"(SELECT t2_is_git('2.39.5', '["git","status"]'))"), 1);
  EXPECT_EQ(db.query_int(R"(SELECT t2_is_git('ide', '["ide"]'))"), 0);
  EXPECT_EQ(db.query_int("SELECT t2_is_git(NULL, NULL)"), 0);
  EXPECT_EQ(db.query_text(R"(SELECT t2_argv_repository('["git-upload-pack","/srv/r.git"]'))"), "/srv/r.git");
  EXPECT_EQ(db.query_int(R"(SELECT t2_argv_repository('["git","status"]') IS NULL)"), 1);
  EXPECT_EQ(db.query_int("SELECT t2_argv_repository(NULL) IS NULL"), 1);
}

TEST(CommandIdentity, ShortestUniquePaths) {
  const auto shown = ctl::shortest_unique_paths({"/home/a/src/app", "/home/b/src/app", "/home/a/lib", "/x"});
  EXPECT_EQ(shown.at("/home/a/src/app"), "a/src/app");
  EXPECT_EQ(shown.at("/home/b/src/app"), "b/src/app");
  EXPECT_EQ(shown.at("/home/a/lib"), "lib");
  EXPECT_EQ(shown.at("/x"), "/x");
  EXPECT_EQ(ctl::shortest_unique_paths({"/srv/app", "/app"}).at("/srv/app"), "/srv/app")
      << "not a name another path ends with";
}

// A tree as git makes it: `git st` (an alias) in /w/one whose child git
// status opened the repository; a top-level `git hi` under an IDE's
// session (the client library); a fetch in /w/two with a nickname.
class ListingFlags : public ::testing::Test {
 protected:
  void SetUp() override {
    m_db.writer().exec(
        "DELETE FROM sessions;"
        "INSERT INTO sessions (id, sid, parent_sid, root_sid, depth, exe, argv, cmd_name, worktree, nickname,"
        " exit_code, elapsed, status, source, start_time, first_received, last_received, time_base_us) VALUES"
        " (1, 'A', NULL, 'A', 0, '2.39.5', '[\"git\",\"st\"]', '_run_git_alias_', NULL, NULL, 0, 0.5, 'complete',"
        "  'stream', '2026-01-01T00:00:01Z', '2026-01-01T00:00:01Z', '2026-01-01T00:00:01Z', 0),"
        " (2, 'A/B', 'A', 'A', 1, '2.39.5', '[\"git\",\"status\"]', 'status', '/w/one', NULL, 0, 0.4, 'complete',"
        "  'stream', '2026-01-01T00:00:02Z', '2026-01-01T00:00:02Z', '2026-01-01T00:00:02Z', 0),"
        " (3, 'IDE', NULL, 'IDE', 0, 'my-ide', '[\"my-ide\"]', 'sync', NULL, NULL, 0, 2.0, 'complete',"
        "  'stream', '2026-01-01T00:00:03Z', '2026-01-01T00:00:03Z', '2026-01-01T00:00:03Z', 0),"
        " (4, 'IDE/C', 'IDE', 'IDE', 1, '2.39.5', '[\"git\",\"fetch\"]', 'fetch', '/w/two', 'two-nick', 1, 1.0,"
        "  'complete', 'stream', '2026-01-01T00:00:04Z', '2026-01-01T00:00:04Z', '2026-01-01T00:00:04Z', 0)");
  }

  std::multiset<std::string> field(std::vector<std::string> args, const std::string& name) {
    args.insert(args.begin(), {"--db", m_db.path(), "--format", "json"});
    const ProcessResult result = run_ctl(args);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    simdjson::dom::parser parser;
    simdjson::dom::array rows;
    std::multiset<std::string> values;
    if (parser.parse(result.out).get(rows) != simdjson::SUCCESS) {
      ADD_FAILURE() << result.out;
      return values;
    }
    for (simdjson::dom::element row : rows) {
      simdjson::dom::element value;
      if (row[name].get(value) != simdjson::SUCCESS) {
        values.insert("(missing)");
      } else if (value.is_string()) {
        values.insert(std::string(value.get_string().value()));
      } else {
        values.insert(value.is_null() ? "null" : simdjson::to_string(value));
      }
    }
    return values;
  }

  SampleDatabase m_db;
};

using Names = std::multiset<std::string>;

TEST_F(ListingFlags, TopLevelByDefaultEverythingWithAll) {
  EXPECT_EQ(field({"sessions"}, "command"), (Names{"st", "sync", "fetch"})) << "a git under an IDE is the user's";
  EXPECT_EQ(field({"sessions", "--all"}, "command"), (Names{"st", "status", "sync", "fetch"}));
  EXPECT_EQ(field({"top"}, "command"), (Names{"st", "sync", "fetch"}));
  EXPECT_EQ(field({"stats"}, "command"), (Names{"st", "sync", "fetch"}));
  EXPECT_EQ(field({"sessions", "--failed"}, "reason"), Names{"exit code 1, no error message"});
}

TEST_F(ListingFlags, CmdTakesDisplayNamesRawNamesAndSeveral) {
  EXPECT_EQ(field({"sessions", "--cmd", "st"}, "sid"), Names{"A"});
  EXPECT_EQ(field({"sessions", "--cmd", "_run_git_alias_"}, "sid"), Names{"A"});
  EXPECT_EQ(field({"sessions", "--cmd", "st,fetch"}, "sid"), (Names{"A", "IDE/C"}));
  EXPECT_EQ(field({"sessions", "--cmd", "st", "--cmd", "sync"}, "sid"), (Names{"A", "IDE"}));
  EXPECT_EQ(field({"sessions", "--cmd", "status"}, "sid"), Names{}) << "git's, not the user's";
  EXPECT_EQ(field({"sessions", "--cmd", "status", "--all"}, "sid"), Names{"A/B"});
  EXPECT_EQ(field({"sessions", "--cmd", "it's"}, "sid"), Names{}) << "a quote is a value, not SQL";
}

TEST_F(ListingFlags, RepositoryColumnFilterAndGroups) {
  EXPECT_EQ(field({"sessions"}, "repository"), (Names{"/w/one", "two-nick", "two-nick"}))
      << "the alias's repository is its child's, and so the IDE's";
  EXPECT_EQ(field({"sessions", "--repo", "/w/one"}, "sid"), Names{"A"});
  EXPECT_EQ(field({"sessions", "--repo", "one"}, "sid"), Names{"A"});
  EXPECT_EQ(field({"sessions", "--repo", "two-nick"}, "sid"), (Names{"IDE", "IDE/C"}));
  EXPECT_EQ(field({"sessions", "--repo", "/w"}, "sid"), Names{});
  EXPECT_EQ(field({"stats", "--by", "repo,cmd"}, "repository"), (Names{"/w/one", "two-nick", "two-nick"}));
  EXPECT_EQ(field({"stats", "--by", "repo"}, "runs"), (Names{"1", "2"}));
  EXPECT_EQ(field({"stats", "--by", "nickname"}, "nickname"), (Names{"null", "two-nick"}));
  EXPECT_EQ(field({"stats", "--by", "version"}, "version"), (Names{"2.39.5", "my-ide"}));
  EXPECT_EQ(field({"top", "--by", "version"}, "sid"), (Names{"IDE/C", "IDE"})) << "the slowest of each";
  EXPECT_EQ(field({"top", "--by", "uid"}, "runs"), Names{"3"});
  const ProcessResult table = run_ctl({"--db", m_db.path(), "sessions"});
  EXPECT_NE(table.out.find(" one "), std::string::npos) << table.out;
  for (const std::string by : {"repo,repo", "cmd,nope", ""}) {
    const ProcessResult bad = run_ctl({"--db", m_db.path(), "stats", "--by", by});
    EXPECT_EQ(bad.exit_code, 2) << by;
  }
}

// A bare repository's processes send no worktree: a push's receive-pack
// whose post-receive hook checks out into /var/www, `git -C` into a
// worktree's subdirectory for an alias, and a gc by --git-dir.
TEST(RepositoryColumn, ArgvNamesTheRepositoriesOfProcessesThatSentNone) {
  SampleDatabase db;
  db.writer().exec(
      "DELETE FROM sessions;"
      "INSERT INTO sessions (id, sid, parent_sid, root_sid, depth, exe, argv, cmd_name, worktree, status, source,"
      " start_time, first_received, last_received, time_base_us) VALUES"
      " (1, 'R', NULL, 'R', 0, '2.39.5', '[\"git-receive-pack\",\"/srv/r.git\"]', 'receive-pack', NULL,"
      "  'complete', 'stream', '2026-01-01T00:00:01Z', '2026-01-01T00:00:01Z', '2026-01-01T00:00:01Z', 0),"
      " (2, 'R/H', 'R', 'R', 1, '2.39.5', '[\"git\",\"--work-tree=/var/www\",\"checkout\",\"-f\"]',"
      "  'checkout', '/var/www', 'complete', 'stream', '2026-01-01T00:00:02Z', '2026-01-01T00:00:02Z',"
      "  '2026-01-01T00:00:02Z', 0),"
      " (3, 'S', NULL, 'S', 0, '2.39.5', '[\"git\",\"-C\",\"/w/one/sub\",\"st\"]', '_run_git_alias_', NULL,"
      "  'complete', 'stream', '2026-01-01T00:00:03Z', '2026-01-01T00:00:03Z', '2026-01-01T00:00:03Z', 0),"
      " (4, 'S/T', 'S', 'S', 1, '2.39.5', '[\"git\",\"status\"]', 'status', '/w/one', 'complete', 'stream',"
      "  '2026-01-01T00:00:04Z', '2026-01-01T00:00:04Z', '2026-01-01T00:00:04Z', 0),"
      " (5, 'G', NULL, 'G', 0, '2.39.5', '[\"git\",\"--git-dir=/srv/g.git\",\"gc\"]', 'gc', NULL,"
      "  'complete', 'stream', '2026-01-01T00:00:05Z', '2026-01-01T00:00:05Z', '2026-01-01T00:00:05Z', 0)");
  const ProcessResult listed =
      run_ctl({"--db", db.path(), "--format", "tsv", "sql",
               "SELECT s.sid, " + model::worktree_sql("s") + " AS repository FROM sessions s ORDER BY s.sid"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_EQ(listed.out, "sid\trepository\nG\t/srv/g.git\nR\t/srv/r.git\nR/H\t/var/www\nS\t/w/one\nS/T\t/w/one\n");
  const ProcessResult by_repo = run_ctl({"--db", db.path(), "--format", "tsv", "sessions", "--repo", "r.git"});
  ASSERT_EQ(by_repo.exit_code, 0) << by_repo.err;
  EXPECT_NE(by_repo.out.find("receive-pack"), std::string::npos) << by_repo.out;
  EXPECT_EQ(by_repo.out.find("checkout"), std::string::npos) << by_repo.out;
}

}  // namespace
}  // namespace trace2d::test
