// What the user ran, why it failed, which repository (issue 25, items 1-3):
// real git (a submodule, a git alias, a shell alias, a dashed command, a
// hook, failing commands, two repositories) through a real trace2d, asked
// through trace2ctl as a user would.

#include <unistd.h>

#include <gtest/gtest.h>
#include <simdjson.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tests/e2e/daemon_fixture.hpp"

namespace trace2d::test {
namespace {

using Rows = std::vector<std::map<std::string, std::string>>;

// A JSON array of objects as text cells (null as "", numbers as text).
Rows json_rows(const std::string& text) {
  simdjson::dom::parser parser;
  simdjson::dom::array array;
  Rows rows;
  if (parser.parse(text).get(array) != simdjson::SUCCESS) {
    ADD_FAILURE() << "not a JSON array: " << text;
    return rows;
  }
  for (simdjson::dom::element element : array) {
    auto& row = rows.emplace_back();
    simdjson::dom::object object;
    if (element.get_object().get(object) != simdjson::SUCCESS) {
      ADD_FAILURE() << "not an object: " << simdjson::minify(element);
      continue;
    }
    for (auto field : object) {
      std::string value;
      switch (field.value.type()) {
        case simdjson::dom::element_type::STRING: value = std::string(field.value.get_string().value()); break;
        case simdjson::dom::element_type::NULL_VALUE: break;
        default: value = simdjson::minify(field.value); break;
      }
      row[std::string(field.key)] = value;
    }
  }
  return rows;
}

std::multiset<std::string> column(const Rows& rows, const std::string& name) {
  std::multiset<std::string> values;
  for (const auto& row : rows) {
    values.insert(row.count(name) != 0 ? row.at(name) : "(missing)");
  }
  return values;
}

class Answers : public ::testing::Test {
 protected:
  void SetUp() override {
    m_alpha = make_repo(m_dir, "alpha", 3);
    m_beta = make_repo(m_dir, "beta", 3);
    const std::string lib = make_repo(m_dir, "lib", 2);
    // Untraced setup: aliases, a nickname for beta, a pre-commit hook whose git is git's, not the user's.
    ASSERT_EQ(run_git(m_alpha, {"config", "alias.st", "status"}).exit_code, 0);
    ASSERT_EQ(run_git(m_alpha, {"config", "alias.hi", "!git rev-parse --short HEAD"}).exit_code, 0);
    ASSERT_EQ(run_git(m_beta, {"config", "otel.trace2.nickname", "beta-nick"}).exit_code, 0);
    const std::filesystem::path hook = std::filesystem::path(m_alpha) / ".git/hooks/pre-commit";
    write_file(hook, "#!/bin/sh\ngit diff --cached --quiet --exit-code >/dev/null || true\n");
    ::chmod(hook.c_str(), 0755);

    m_daemon = std::make_unique<RunningDaemon>(m_dir);
    const std::map<std::string, std::string> trace{{"GIT_TRACE2_EVENT", m_daemon->git_target()},
                                                   {"GIT_TRACE2_CONFIG_PARAMS", "otel.trace2.nickname"}};
    const auto git = [&](const std::string& repo, const std::vector<std::string>& args, int code = 0) {
      const ProcessResult r = run_git(repo, args, trace);
      EXPECT_EQ(r.exit_code, code) << "git " << args.front() << ": " << r.err;
      ++m_user_commands;
    };
    git(m_alpha, {"-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "lib"});
    git(m_alpha, {"submodule", "status"});
    git(m_alpha, {"st"});
    git(m_alpha, {"hi"});
    git(m_alpha, {"commit", "-qm", "with lib"});
    git(m_alpha, {"checkout", "nope"}, 1);
    git(m_beta, {"status", "--short"});
    git(m_beta, {"log", "nope"}, 128);
    ASSERT_TRUE(wait_until([&] {
      const ProcessResult running = ctl(db(), {"--format", "tsv", "sql",
                                               "SELECT count(*) FROM sessions WHERE status = 'running'"});
      const ProcessResult typed = ctl(db(), {"--format", "json", "sessions"});
      return running.exit_code == 0 && running.out.ends_with("\n0\n") &&
             json_rows(typed.out).size() == static_cast<std::size_t>(m_user_commands);
    }));
  }

  [[nodiscard]] const std::string& db() const { return m_daemon->db_path(); }

  Rows query(std::vector<std::string> args) {
    args.insert(args.begin(), {"--format", "json"});
    const ProcessResult r = ctl(db(), args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    return json_rows(r.out);
  }

  TempDir m_dir;
  std::string m_alpha;
  std::string m_beta;
  std::unique_ptr<RunningDaemon> m_daemon;
  int m_user_commands = 0;
};

const std::multiset<std::string> k_typed{"submodule", "submodule", "st", "hi", "commit", "checkout", "status", "log"};

TEST_F(Answers, ListingsShowWhatTheUserRanUnderItsName) {
  const Rows sessions = query({"sessions"});
  EXPECT_EQ(column(sessions, "command"), k_typed);
  const Rows all = query({"sessions", "--all", "--limit", "0"});
  EXPECT_GT(all.size(), sessions.size() + 5) << "submodule scripts, the alias's git, the hook's git";
  const auto every = column(all, "command");
  for (const char* internal : {"submodule--helper", "rev-parse", "diff"}) {
    EXPECT_EQ(column(sessions, "command").count(internal), 0u) << internal;
    EXPECT_GT(every.count(internal), 0u) << internal;
  }
  // git's own names stay in cmd_name: the last one each process sent.
  EXPECT_EQ(column(all, "cmd_name").count("_run_dashed_"), 2u) << "submodule twice";
  EXPECT_EQ(column(sessions, "cmd_name").count("_run_git_alias_"), 1u);
  EXPECT_EQ(column(sessions, "cmd_name").count("_run_shell_alias_"), 1u);

  // stats and top: the same commands, by the same names.
  std::multiset<std::string> stats_names;
  for (const auto& row : query({"stats"})) {
    for (int i = 0; i < std::stoi(row.at("runs")); ++i) {
      stats_names.insert(row.at("command"));
    }
  }
  EXPECT_EQ(stats_names, k_typed);
  EXPECT_EQ(column(query({"top", "--limit", "100"}), "command"), k_typed);
  EXPECT_GT(query({"stats", "--all"}).size(), query({"stats"}).size());

  // --cmd by the name shown, the raw name, or several.
  EXPECT_EQ(query({"sessions", "--cmd", "submodule"}).size(), 2u);
  EXPECT_EQ(column(query({"sessions", "--cmd", "st"}), "command"), std::multiset<std::string>{"st"});
  EXPECT_EQ(query({"sessions", "--cmd", "st,hi"}).size(), 2u);
  EXPECT_EQ(query({"sessions", "--cmd", "st", "--cmd", "hi", "--cmd", "checkout"}).size(), 3u);
  EXPECT_EQ(query({"sessions", "--cmd", "_run_dashed_"}).size(), 2u) << "submodule twice";
  EXPECT_EQ(query({"top", "--cmd", "submodule"}).size(), 2u);

  // The table says it too, and how to see everything.
  const ProcessResult table = ctl(db(), {"sessions"});
  EXPECT_NE(table.out.find(" submodule "), std::string::npos) << table.out;
  EXPECT_EQ(table.out.find("_run_dashed_"), std::string::npos) << table.out;
  const ProcessResult help = ctl(db(), {"sessions", "--help"});
  EXPECT_NE(help.out.find("--all"), std::string::npos) << help.out;
}

TEST_F(Answers, EveryFailedRunSaysWhy) {
  const Rows failed = query({"sessions", "--failed"});
  ASSERT_EQ(column(failed, "command"), (std::multiset<std::string>{"checkout", "log"}));
  for (const auto& row : failed) {
    const std::string& reason = row.at("reason");
    if (row.at("command") == "checkout") {
      EXPECT_EQ(reason, "pathspec 'nope' did not match any file(s) known to git");
    } else {
      EXPECT_NE(reason.find("unknown revision"), std::string::npos) << reason;
    }
    // show and tree say it as well.
    const ProcessResult show = ctl(db(), {"show", row.at("sid")});
    EXPECT_NE(show.out.find("reason"), std::string::npos) << show.out;
    EXPECT_NE(show.out.find(reason), std::string::npos) << show.out;
    const ProcessResult tree = ctl(db(), {"tree", row.at("sid")});
    EXPECT_NE(tree.out.find(reason), std::string::npos) << tree.out;
    // tree --json carries it on the process, as the listing has it.
    const ProcessResult tree_json = ctl(db(), {"--json", "tree", row.at("sid")});
    simdjson::dom::parser parser;
    simdjson::dom::object doc;
    ASSERT_EQ(parser.parse(tree_json.out).get(doc), simdjson::SUCCESS) << tree_json.out;
    simdjson::dom::object top = doc["processes"].get_array().value().at(0).get_object().value();
    EXPECT_EQ(std::string_view(top["sid"].get_string().value()), row.at("sid"));
    EXPECT_EQ(std::string_view(top["reason"].get_string().value()), reason) << tree_json.out;
  }
  const ProcessResult table = ctl(db(), {"sessions", "--failed"});
  EXPECT_NE(table.out.find("pathspec 'nope' did not match"), std::string::npos) << table.out;
  // --all shows git's own failures too, each with its reason or exit code.
  for (const auto& row : query({"sessions", "--failed", "--all", "--limit", "0"})) {
    EXPECT_FALSE(row.at("reason").empty()) << row.at("sid");
  }
  // A successful run has none, and show says which alias it was.
  const Rows alias = query({"sessions", "--cmd", "st"});
  ASSERT_EQ(alias.size(), 1u);
  const ProcessResult show = ctl(db(), {"show", alias.front().at("sid")});
  EXPECT_NE(show.out.find("alias_expands_to"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("status"), std::string::npos) << show.out;
}

TEST_F(Answers, RepositoriesAreAColumnAFilterAndAGrouping) {
  const Rows sessions = query({"sessions"});
  std::multiset<std::string> expected;
  for (int i = 0; i < 6; ++i) {
    expected.insert(m_alpha);
  }
  expected.insert("beta-nick");
  expected.insert("beta-nick");
  EXPECT_EQ(column(sessions, "repository"), expected) << "a submodule's and an alias's repository from their children";

  EXPECT_EQ(query({"sessions", "--repo", m_alpha}).size(), 6u);
  EXPECT_EQ(query({"sessions", "--repo", "alpha"}).size(), 6u) << "the path's end, as the table shows it";
  EXPECT_EQ(column(query({"sessions", "--repo", "beta-nick"}), "command"),
            (std::multiset<std::string>{"status", "log"}));
  EXPECT_EQ(query({"top", "--repo", "beta-nick"}).size(), 2u);
  EXPECT_EQ(query({"sessions", "--repo", "nowhere"}).size(), 0u);

  const ProcessResult table = ctl(db(), {"sessions"});
  EXPECT_NE(table.out.find(" alpha "), std::string::npos) << "shortened to be unique\n" << table.out;
  EXPECT_NE(table.out.find(" beta-nick "), std::string::npos) << table.out;

  std::map<std::pair<std::string, std::string>, std::pair<std::string, std::string>> by;
  for (const auto& row : query({"stats", "--by", "repo,cmd"})) {
    by[{row.at("repository"), row.at("command")}] = {row.at("runs"), row.at("failures")};
  }
  EXPECT_EQ(by.size(), 7u);
  EXPECT_EQ(by[std::make_pair(m_alpha, std::string("submodule"))], std::make_pair(std::string("2"), std::string("0")));
  EXPECT_EQ(by[std::make_pair(m_alpha, std::string("checkout"))], std::make_pair(std::string("1"), std::string("1")));
  EXPECT_EQ(by[std::make_pair(std::string("beta-nick"), std::string("log"))],
            std::make_pair(std::string("1"), std::string("1")));
  EXPECT_EQ(column(query({"stats", "--by", "repo"}), "repository"),
            (std::multiset<std::string>{m_alpha, "beta-nick"}));
  const Rows top = query({"top", "--by", "repo,cmd"});
  EXPECT_EQ(top.size(), 7u);
  const Rows versions = query({"stats", "--by", "version"});
  ASSERT_EQ(versions.size(), 1u);
  EXPECT_EQ(versions.front().at("runs"), "8");

  const ProcessResult bad = ctl(db(), {"stats", "--by", "repo,colour"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("colour"), std::string::npos) << bad.err;
}

// git sends no worktree for a bare repository: a server's upload-pack and
// receive-pack, a gc run by --git-dir. Their repository is the one their
// argv names, in every listing, filter and grouping.
TEST(BareRepositoryAnswers, ServerCommandsAndGitDirRunsAreInTheBareRepository) {
  TempDir dir;
  const std::string work = make_repo(dir, "work", 2);
  const std::string bare = dir.file("srv.git");
  ASSERT_EQ(run_git(dir.path(), {"clone", "-q", "--bare", work, bare}).exit_code, 0);
  ASSERT_EQ(run_git(work, {"remote", "add", "origin", bare}).exit_code, 0);
  write_file(std::filesystem::path(work) / "file1.txt", "pushed\n");
  ASSERT_EQ(run_git(work, {"commit", "-qam", "to push"}).exit_code, 0);
  RunningDaemon daemon(dir);
  const std::map<std::string, std::string> trace{{"GIT_TRACE2_EVENT", daemon.git_target()}};
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"push", "-q", "origin", "main"}, std::vector<std::string>{"fetch", "-q", "origin"},
        std::vector<std::string>{"--git-dir=" + bare, "count-objects"}}) {
    const ProcessResult r = run_git(work, args, trace);
    ASSERT_EQ(r.exit_code, 0) << args.front() << ": " << r.err;
  }
  ASSERT_TRUE(wait_for_sessions(daemon.db_path(), 5));  // push, receive-pack, fetch, upload-pack, count-objects

  const ProcessResult all = ctl(daemon.db_path(), {"--format", "json", "sessions", "--all", "--limit", "0"});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  std::map<std::string, std::set<std::string>> repositories;  // by command
  for (const auto& row : json_rows(all.out)) {
    repositories[row.at("command")].insert(row.at("repository"));
  }
  EXPECT_EQ(repositories["receive-pack"], std::set<std::string>{bare}) << all.out;
  EXPECT_EQ(repositories["upload-pack"], std::set<std::string>{bare}) << all.out;
  EXPECT_EQ(repositories["count-objects"], std::set<std::string>{bare}) << all.out;
  EXPECT_EQ(repositories["push"], std::set<std::string>{work}) << all.out;
  EXPECT_EQ(repositories["fetch"], std::set<std::string>{work}) << all.out;

  const ProcessResult filtered = ctl(daemon.db_path(), {"--format", "json", "sessions", "--all", "--repo", "srv.git"});
  ASSERT_EQ(filtered.exit_code, 0) << filtered.err;
  std::multiset<std::string> in_bare;
  for (const auto& row : json_rows(filtered.out)) {
    if (row.at("command") != "pack-objects" && row.at("command") != "unpack-objects" &&
        row.at("command") != "rev-list" && row.at("command") != "gc" && row.at("command") != "for-each-ref") {
      in_bare.insert(row.at("command"));
    }
  }
  EXPECT_EQ(in_bare, (std::multiset<std::string>{"receive-pack", "upload-pack", "count-objects"})) << filtered.out;
  const ProcessResult stats = ctl(daemon.db_path(), {"--format", "json", "stats", "--by", "repo"});
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  EXPECT_EQ(column(json_rows(stats.out), "repository"), (std::multiset<std::string>{work, bare})) << stats.out;
}

// Brief mode (trace2.eventBrief): git's child_start has no time, so which
// child ran a hook's or shell alias's git cannot be read from the clock.
// The tree puts it under the only child that claims no session.
TEST(BriefModeAnswers, AHooksAndAShellAliassGitsAreUnderTheChildThatRanThem) {
  TempDir dir;
  const std::string repo = make_repo(dir, "repo", 2);
  ASSERT_EQ(run_git(repo, {"config", "alias.both", "!git rev-parse --short HEAD && git diff --quiet"}).exit_code, 0);
  const std::filesystem::path hook = std::filesystem::path(repo) / ".git/hooks/pre-commit";
  write_file(hook, "#!/bin/sh\ngit diff --cached --name-only >/dev/null\n");
  ::chmod(hook.c_str(), 0755);
  write_file(std::filesystem::path(repo) / "file1.txt", "changed\n");
  RunningDaemon daemon(dir);
  const std::map<std::string, std::string> trace{{"GIT_TRACE2_EVENT", daemon.git_target()},
                                                 {"GIT_TRACE2_EVENT_BRIEF", "1"}};
  ASSERT_EQ(run_git(repo, {"commit", "-qam", "brief"}, trace).exit_code, 0);
  ASSERT_EQ(run_git(repo, {"both"}, trace).exit_code, 0);
  ASSERT_TRUE(wait_until([&] {
    return open_db(daemon.db_path()).query_int("SELECT count(*) FROM sessions WHERE status = 'complete'").value_or(0) >=
           5;
  }));
  db::Database db = open_db(daemon.db_path());
  ASSERT_EQ(db.query_int("SELECT count(*) FROM children WHERE t_start IS NOT NULL"), 0);  // brief indeed
  // Each top-level run's tree (the commit's, then the alias's): the
  // placement of each process a child ran, in tree order.
  std::vector<std::string> tops;
  db::Statement top_sids = db.prepare("SELECT sid FROM sessions WHERE parent_sid IS NULL ORDER BY id");
  while (top_sids.step()) {
    tops.emplace_back(top_sids.column_text(0));
  }
  ASSERT_EQ(tops.size(), 2U);
  for (const auto& [sid, expected] : std::vector<std::pair<std::string, std::string>>{
           {tops[0], "diff child_window"}, {tops[1], "rev-parse child_window, diff child_window"}}) {
    const ProcessResult tree = ctl(daemon.db_path(), {"tree", sid});
    ASSERT_EQ(tree.exit_code, 0) << tree.err;
    const ProcessResult tree_json = ctl(daemon.db_path(), {"--json", "tree", sid});
    ASSERT_EQ(tree_json.exit_code, 0) << tree_json.err;
    std::string placements;
    for (std::size_t at = tree_json.out.find("\"placed_by\":\""); at != std::string::npos;
         at = tree_json.out.find("\"placed_by\":\"", at + 1)) {
      const std::size_t begin = at + 13;
      const std::string how = tree_json.out.substr(begin, tree_json.out.find('"', begin) - begin);
      const std::size_t cmd = tree_json.out.rfind("\"cmd_name\":\"", at);
      const std::string name = tree_json.out.substr(cmd + 12, tree_json.out.find('"', cmd + 12) - cmd - 12);
      if (how != "root" && how != "child_sid") {
        placements += (placements.empty() ? "" : ", ") + name + " " + how;
      }
    }
    EXPECT_EQ(placements, expected) << tree.out << tree_json.out;
  }
}

TEST_F(Answers, AUserReadingOnlyTheirOwnSessionsGetsTheSameAnswers) {
  // As the query service runs trace2ctl for a user not in the group.
  const std::string only = "--only-uid=" + std::to_string(::getuid());
  const auto restricted = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {only, "--format", "json"});
    const ProcessResult r = ctl(db(), args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json_rows(r.out);
  };
  EXPECT_EQ(column(restricted({"sessions"}), "command"), k_typed);
  EXPECT_EQ(column(restricted({"sessions", "--failed"}), "reason"), column(query({"sessions", "--failed"}), "reason"));
  EXPECT_EQ(column(restricted({"sessions", "--repo", "beta-nick"}), "command"),
            (std::multiset<std::string>{"status", "log"}));
  EXPECT_EQ(restricted({"stats", "--by", "repo,cmd"}).size(), 7u);
  const Rows sql = restricted({"sql", "SELECT t2_display_name(cmd_name, argv) AS name FROM sessions"
                                      " WHERE cmd_name = '_run_git_alias_'"});
  EXPECT_EQ(column(sql, "name"), std::multiset<std::string>{"st"});
}

}  // namespace
}  // namespace trace2d::test
