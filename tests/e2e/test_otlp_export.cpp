// `trace2ctl export --format otlp-json` on process trees the real git sent
// to a running trace2d: checked with the official OTLP definitions and ids
// computed independently (tests/otlp/otlp_check.js).

#include <gtest/gtest.h>
#include <simdjson.h>

#include <signal.h>

#include <filesystem>
#include <map>
#include <string>

#include "tests/e2e/daemon_fixture.hpp"

namespace trace2d::test {
namespace {

// The SID of the top session of `cmd_name`, once every session is finished.
std::string finished_root(const std::string& db, const std::string& cmd_name, long sessions) {
  std::string sid;
  EXPECT_TRUE(wait_until([&] {
    db::Database check = open_db(db);
    if (check.query_int("SELECT count(*) FROM sessions WHERE status = 'running'").value_or(1) != 0 ||
        check.query_int("SELECT count(*) FROM sessions").value_or(0) < sessions) {
      return false;
    }
    sid = check.query_text("SELECT sid FROM sessions WHERE depth = 0 AND cmd_name = '" + cmd_name + "'").value_or("");
    return !sid.empty();
  })) << cmd_name;
  return sid;
}

struct CheckedSpan {
  std::string name;
  std::string type;
  std::string parent;
  std::int64_t status = 0;
  std::string message;
  std::string nickname;
  std::string detail;
  std::string regions;  // trace2d.summary.regions
  std::string exe;        // trace2.exec.exe
  std::string placed_by;  // trace2d.placed_by
};

// Exports `sid` as OTLP/JSON and checks it; the spans by name.
std::vector<CheckedSpan> export_and_check(const TempDir& dir, const std::string& db, const std::string& sid,
                                         const std::vector<std::string>& rules = {}) {
  const std::string file = dir.file("tree.json");
  std::vector<std::string> args{"export", "--format", "otlp-json", sid, "-o", file};
  args.insert(args.end(), rules.begin(), rules.end());
  const ProcessResult exported = ctl(db, args);
  EXPECT_EQ(exported.exit_code, 0) << exported.err;
  ProcessSpec spec;
  spec.argv = {"node", TRACE2D_OTLP_CHECK_JS, TRACE2D_OTLP_DECODER_DIR, "tree", file};
  const ProcessResult checked = run_process(spec);
  EXPECT_EQ(checked.exit_code, 0) << checked.err;
  simdjson::dom::parser parser;
  const simdjson::dom::element result = parser.parse(checked.out);
  for (simdjson::dom::element problem : result["problems"].get_array()) {
    ADD_FAILURE() << "OTLP tree of " << sid << ": " << std::string_view(problem.get_string());
  }
  std::vector<CheckedSpan> spans;
  for (simdjson::dom::element span : result["spans"].get_array()) {
    CheckedSpan s;
    s.name = std::string(span["name"].get_string().value());
    s.type = std::string(span["type"].get_string().value());
    std::string_view parent;
    if (span["parent"].get(parent) == simdjson::SUCCESS) {
      s.parent = std::string(parent);
    }
    s.status = span["status"].get_int64().value();
    std::string_view message;
    if (span["message"].get(message) == simdjson::SUCCESS) {
      s.message = std::string(message);
    }
    if (span["nickname"].get(message) == simdjson::SUCCESS) {
      s.nickname = std::string(message);
    }
    if (span["detail"].get(message) == simdjson::SUCCESS) {
      s.detail = std::string(message);
    }
    if (span["regions"].get(message) == simdjson::SUCCESS) {
      s.regions = std::string(message);
    }
    if (span["exe"].get(message) == simdjson::SUCCESS) {
      s.exe = std::string(message);
    }
    if (span["placed_by"].get(message) == simdjson::SUCCESS) {
      s.placed_by = std::string(message);
    }
    spans.push_back(std::move(s));
  }
  return spans;
}

const CheckedSpan* find(const std::vector<CheckedSpan>& spans, const std::string& name) {
  for (const CheckedSpan& span : spans) {
    if (span.name == name) {
      return &span;
    }
  }
  return nullptr;
}

TEST(OtlpExport, AFetchWithItsChildGitsUnderTheChildSpansThatRanThem) {
  TempDir dir;
  const std::string clone = clone_behind(dir);
  RunningDaemon daemon(dir);
  const ProcessResult fetch = run_git(clone, {"fetch", "--no-auto-gc", "origin"},
                                      {{"GIT_TRACE2_EVENT", daemon.git_target()}, {"GIT_TRACE2_EVENT_NESTING", "5"}});
  ASSERT_EQ(fetch.exit_code, 0) << fetch.err;
  const std::string sid = finished_root(daemon.db_path(), "fetch", 3);
  const std::vector<CheckedSpan> spans = export_and_check(dir, daemon.db_path(), sid);

  const CheckedSpan* top = find(spans, "git:fetch");
  ASSERT_NE(top, nullptr);
  EXPECT_EQ(top->parent, "");
  EXPECT_EQ(top->status, 0);
  const CheckedSpan* upload = find(spans, "git-upload-pack:upload-pack");
  ASSERT_NE(upload, nullptr);
  EXPECT_EQ(upload->parent.rfind("child(", 0), 0u) << upload->parent;  // not git:fetch
  const CheckedSpan* pack = find(spans, "git:pack-objects");
  ASSERT_NE(pack, nullptr);
  EXPECT_EQ(pack->parent.rfind("child(", 0), 0u) << pack->parent;
  std::size_t regions = 0;
  for (const CheckedSpan& span : spans) {
    regions += span.type == "region" ? 1 : 0;
  }
  EXPECT_GT(regions, 3u);
}

// git-shell runs the command a remote asked for by exec: the git that
// replaced it is its SID's child with its pid, and hangs under the exec.
TEST(OtlpExport, AGitThatGitShellExecdHangsUnderTheExecSpan) {
  TempDir dir;
  const std::string repo = make_repo(dir, "repo");
  RunningDaemon daemon(dir);
  ProcessSpec shell = git_spec(dir.path(), {}, {{"GIT_TRACE2_EVENT", daemon.git_target()}});
  shell.argv = {"git-shell", "-c", "git-upload-pack '" + repo + "'"};
  shell.stdin_data = "0000";  // a client that wants nothing: upload-pack ends at once
  const ProcessResult ran = run_process(shell);
  ASSERT_EQ(ran.exit_code, 0) << ran.err;
  // git-shell names no command; its session never exits (the exec replaced
  // it) and ends incomplete when the connection the new git inherited closes.
  std::string sid;
  ASSERT_TRUE(wait_until([&] {
    db::Database check = open_db(daemon.db_path());
    sid = check.query_text("SELECT sid FROM sessions WHERE depth = 0").value_or("");
    return check.query_int("SELECT count(*) FROM sessions WHERE status != 'running'") == 2;
  }));
  const std::vector<CheckedSpan> spans = export_and_check(dir, daemon.db_path(), sid);
  ASSERT_EQ(spans.size(), 3u);
  const CheckedSpan* top = find(spans, "git-shell");
  ASSERT_NE(top, nullptr);
  const CheckedSpan* exec = find(spans, "exec(git)");
  ASSERT_NE(exec, nullptr);
  EXPECT_EQ(exec->type, "exec");
  EXPECT_EQ(exec->parent, "git-shell");
  EXPECT_EQ(exec->exe, "git");
  EXPECT_EQ(exec->status, 0);
  // Incomplete because it replaced itself: not a failure.
  EXPECT_EQ(top->status, 0) << top->message;
  const CheckedSpan* upload = find(spans, "git:upload-pack");
  ASSERT_NE(upload, nullptr);
  EXPECT_EQ(upload->parent, "exec(git)");  // within it: otlp_check.js checks the times
  EXPECT_EQ(upload->placed_by, "exec");
  EXPECT_EQ(upload->status, 0);

  // trace2ctl tree shows the exec with the git under it.
  const ProcessResult tree = ctl(daemon.db_path(), {"tree", sid});
  ASSERT_EQ(tree.exit_code, 0) << tree.err;
  EXPECT_NE(tree.out.find("exec 0 git: git upload-pack"), std::string::npos) << tree.out;
  EXPECT_NE(tree.out.find("[replaced the process]"), std::string::npos) << tree.out;
  const std::size_t under = tree.out.find("upload-pack  [");
  ASSERT_NE(under, std::string::npos) << tree.out;
  EXPECT_LT(tree.out.find("exec 0 git"), under) << tree.out;
}

TEST(OtlpExport, AFailingCommandAndAHookScriptsGit) {
  TempDir dir;
  const std::string repo = make_repo(dir, "repo");
  const std::string hook = repo + "/.git/hooks/post-commit";
  write_file(hook, "#!/bin/sh\ngit rev-parse HEAD >/dev/null\n");
  std::filesystem::permissions(hook, std::filesystem::perms::owner_all);
  RunningDaemon daemon(dir);
  const std::map<std::string, std::string> traced{{"GIT_TRACE2_EVENT", daemon.git_target()}};
  EXPECT_EQ(run_git(repo, {"rev-parse", "--verify", "--quiet", "no-such-ref"}, traced).exit_code, 1);
  write_file(repo + "/hooked.txt", "x\n");
  ASSERT_EQ(run_git(repo, {"add", "hooked.txt"}).exit_code, 0);
  ASSERT_EQ(run_git(repo, {"commit", "-qm", "hooked"}, traced).exit_code, 0);

  const std::string failing = finished_root(daemon.db_path(), "rev-parse", 3);
  const std::vector<CheckedSpan> failed = export_and_check(dir, daemon.db_path(), failing);
  ASSERT_EQ(failed.size(), 1u) << failed.size();
  EXPECT_EQ(failed[0].name, "git:rev-parse");
  EXPECT_EQ(failed[0].status, 2);
  EXPECT_EQ(failed[0].message, "exit code 1");

  const std::string commit = finished_root(daemon.db_path(), "commit", 3);
  const std::vector<CheckedSpan> spans = export_and_check(dir, daemon.db_path(), commit);
  const CheckedSpan* hook_span = find(spans, "child(hook:post-commit)");
  ASSERT_NE(hook_span, nullptr);
  const CheckedSpan* hooked_git = find(spans, "git:rev-parse");
  ASSERT_NE(hooked_git, nullptr);
  EXPECT_EQ(hooked_git->parent, "child(hook:post-commit)");

  // Without a SID: every tree of the window, one request per line, oldest first.
  const ProcessResult window = ctl(daemon.db_path(), {"export", "--format", "otlp-json", "--since", "-1h"});
  ASSERT_EQ(window.exit_code, 0) << window.err;
  simdjson::dom::parser parser;
  std::vector<std::string> first_spans;
  std::size_t lines = 0;
  for (std::size_t start = 0, end; (end = window.out.find('\n', start)) != std::string::npos; start = end + 1) {
    const simdjson::dom::element request = parser.parse(window.out.substr(start, end - start));
    const simdjson::dom::array tree_spans = request["resourceSpans"].at(0)["scopeSpans"].at(0)["spans"].get_array();
    first_spans.emplace_back(tree_spans.at(0)["name"].get_string().value());
    ++lines;
  }
  const auto roots = open_db(daemon.db_path()).query_int("SELECT count(DISTINCT root_sid) FROM sessions");
  EXPECT_EQ(static_cast<std::int64_t>(lines), roots);
  ASSERT_GE(first_spans.size(), 2u);
  EXPECT_EQ(first_spans[0], "git:rev-parse");  // the failing command ran first
  EXPECT_EQ(first_spans[1], "git:commit");
}

// `git st` for an alias: git first tries to run `git-st` (a child of class
// dashed that cannot start, code -1), then runs the alias. That probe is
// how git works, not a failure: no span of the run is ERROR.
TEST(OtlpExport, AnAliasHasNoErrorSpanForGitsProbeOfADashedCommand) {
  TempDir dir;
  const std::string repo = make_repo(dir, "repo");
  RunningDaemon daemon(dir);
  const ProcessResult alias =
      run_git(repo, {"-c", "alias.st=status --short", "st"}, {{"GIT_TRACE2_EVENT", daemon.git_target()}});
  ASSERT_EQ(alias.exit_code, 0) << alias.err;
  const std::string sid = finished_root(daemon.db_path(), "_run_git_alias_", 2);
  const std::vector<CheckedSpan> spans = export_and_check(dir, daemon.db_path(), sid);
  const CheckedSpan* probe = find(spans, "child(dashed:git-st)");  // trace2receiver's name
  ASSERT_NE(probe, nullptr);
  EXPECT_EQ(probe->status, 0) << probe->message;
  ASSERT_NE(find(spans, "git:status"), nullptr);
  for (const CheckedSpan& span : spans) {
    EXPECT_EQ(span.status, 0) << span.name << ": " << span.message;
  }
}

// A git killed by a signal other than SIGPIPE sends nothing more: its
// session ends incomplete when its connection closes. Its span is ERROR,
// saying which signal when its parent git saw it (a child's code 128 + N).
TEST(OtlpExport, AGitKilledByASignalIsAnError) {
  TempDir dir;
  const std::string repo = make_repo(dir, "repo");
  RunningDaemon daemon(dir);
  const std::map<std::string, std::string> traced{{"GIT_TRACE2_EVENT", daemon.git_target()}};
  const auto running_pid = [&](const std::string& where) {
    std::int64_t pid = 0;
    EXPECT_TRUE(wait_until([&] {
      pid = open_db(daemon.db_path())
                .query_int("SELECT peer_pid FROM sessions WHERE status = 'running' AND cmd_name = 'cat-file' AND " +
                           where)
                .value_or(0);
      return pid > 0;
    })) << where;
    return static_cast<pid_t>(pid);
  };
  const auto all_finished = [&](std::int64_t sessions) {
    return wait_until([&] {
      db::Database check = open_db(daemon.db_path());
      return check.query_int("SELECT count(*) FROM sessions").value_or(0) == sessions &&
             check.query_int("SELECT count(*) FROM sessions WHERE status = 'running'").value_or(1) == 0;
    });
  };

  // A top git (reading its stdin), killed by SIGKILL: nothing says how it ended.
  ProcessSpec alone = git_spec(repo, {"cat-file", "--batch"}, traced);
  alone.stdin_pipe = true;
  Process top(alone);
  ASSERT_EQ(running_pid("depth = 0"), top.pid());
  top.signal(SIGKILL);
  EXPECT_EQ(top.wait().term_signal, SIGKILL);
  ASSERT_TRUE(all_finished(1));
  const std::string killed_sid = finished_root(daemon.db_path(), "cat-file", 1);
  const std::vector<CheckedSpan> killed = export_and_check(dir, daemon.db_path(), killed_sid);
  ASSERT_EQ(killed.size(), 1u);
  EXPECT_EQ(killed[0].status, 2);
  EXPECT_EQ(killed[0].message, "ended without exiting: killed by a signal, or crashed");

  // The child git of an alias, killed by SIGTERM: its parent saw code 143.
  ProcessSpec aliased = git_spec(repo, {"-c", "alias.cb=cat-file --batch", "cb"}, traced);
  aliased.stdin_pipe = true;
  Process parent(aliased);
  const pid_t child = running_pid("depth = 1");
  ASSERT_GT(child, 0);
  ASSERT_EQ(::kill(child, SIGTERM), 0);
  EXPECT_NE(parent.wait().exit_code, 0);
  ASSERT_TRUE(all_finished(3));
  const std::string alias_sid = finished_root(daemon.db_path(), "_run_git_alias_", 3);
  const std::vector<CheckedSpan> spans = export_and_check(dir, daemon.db_path(), alias_sid);
  const CheckedSpan* cat_file = find(spans, "git:cat-file");
  ASSERT_NE(cat_file, nullptr);
  EXPECT_EQ(cat_file->status, 2);
  EXPECT_EQ(cat_file->message, "killed by signal 15");
  EXPECT_EQ(cat_file->parent, "child(alias:git)");
  const CheckedSpan* probe = find(spans, "child(dashed:git-cb)");
  ASSERT_NE(probe, nullptr);
  EXPECT_EQ(probe->status, 0);
}

// Rules for what leaves the host, offline as the daemon applies them live:
// a nickname git reports because GIT_TRACE2_CONFIG_PARAMS names it, detail
// levels by command.
TEST(OtlpExport, DetailLevelsRulesAndTheNickname) {
  TempDir dir;
  const std::string clone = clone_behind(dir);
  RunningDaemon daemon(dir);
  const ProcessResult fetch =
      run_git(clone, {"-c", "otel.trace2.nickname=monorepo", "fetch", "--no-auto-gc", "origin"},
              {{"GIT_TRACE2_EVENT", daemon.git_target()}, {"GIT_TRACE2_CONFIG_PARAMS", "otel.trace2.nickname"}});
  ASSERT_EQ(fetch.exit_code, 0) << fetch.err;
  const std::string sid = finished_root(daemon.db_path(), "fetch", 3);
  // Every child of the tree is a git: counted once each has its session
  // (under load the last can come after the first three).
  ASSERT_TRUE(wait_until([&] {
    return open_db(daemon.db_path())
               .query_int("SELECT count(*) FROM children c JOIN sessions s ON s.sid = c.sid WHERE s.root_sid = '" +
                          sid + "' AND c.child_sid IS NULL")
               .value_or(1) == 0;
  }));
  ASSERT_TRUE(wait_until([&] {
    return open_db(daemon.db_path()).query_int("SELECT count(*) FROM sessions WHERE status = 'running'").value_or(1) ==
           0;
  }));
  const std::int64_t sessions =
      open_db(daemon.db_path()).query_int("SELECT count(*) FROM sessions WHERE root_sid = '" + sid + "'").value_or(0);
  // The column is filled as the def_param arrives (the stitcher), for each
  // process that reports it: git passes -c settings down to its own
  // children, but not across the transport (upload-pack is the server's).
  EXPECT_EQ(open_db(daemon.db_path()).query_text("SELECT nickname FROM sessions WHERE sid = '" + sid + "'"),
            "monorepo");
  const std::int64_t nicknamed =
      open_db(daemon.db_path())
          .query_int("SELECT count(*) FROM sessions WHERE root_sid = '" + sid + "' AND nickname = 'monorepo'")
          .value_or(0);
  EXPECT_GE(nicknamed, 1);
  EXPECT_LT(nicknamed, sessions);

  // The summary views: fetch's regions by name, as its span summarises them.
  EXPECT_GT(open_db(daemon.db_path())
                .query_int("SELECT count(*) FROM region_timers WHERE sid = '" + sid + "' AND count > 0")
                .value_or(0),
            0);
  // Errors by their pattern (git's format), across two runs of one mistake.
  const std::map<std::string, std::string> traced{{"GIT_TRACE2_EVENT", daemon.git_target()}};
  EXPECT_NE(run_git(clone, {"checkout", "no-such-a"}, traced).exit_code, 0);
  EXPECT_NE(run_git(clone, {"checkout", "no-such-b"}, traced).exit_code, 0);
  ASSERT_TRUE(wait_until([&] {
    return open_db(daemon.db_path())
               .query_int("SELECT count(*) FROM sessions WHERE cmd_name = 'checkout' AND status = 'complete'")
               .value_or(0) == 2;
  }));
  EXPECT_EQ(open_db(daemon.db_path())
                .query_int("SELECT count(DISTINCT pattern) FROM message_patterns m JOIN sessions s ON s.sid = m.sid"
                           " WHERE s.cmd_name = 'checkout' AND m.pattern LIKE '%did not match%'"),
            1);

  const std::vector<CheckedSpan> verbose = export_and_check(dir, daemon.db_path(), sid);
  const std::vector<CheckedSpan> summary = export_and_check(dir, daemon.db_path(), sid, {"--detail", "summary"});
  EXPECT_EQ(static_cast<std::int64_t>(summary.size()), sessions);  // the process spans alone
  EXPECT_GT(verbose.size(), summary.size() + 3);
  std::int64_t nicknamed_spans = 0;
  for (const CheckedSpan& span : summary) {
    EXPECT_EQ(span.type, "process") << span.name;
    EXPECT_EQ(span.detail, "summary") << span.name;
    nicknamed_spans += span.nickname == "monorepo" ? 1 : 0;
  }
  ASSERT_NE(find(summary, "git:fetch"), nullptr);
  EXPECT_NE(find(summary, "git:fetch")->regions.find("\"count\":"), std::string::npos);
  EXPECT_EQ(nicknamed_spans, nicknamed);  // the attribute where the column has it
  ASSERT_NE(find(summary, "git:fetch"), nullptr);
  EXPECT_EQ(find(summary, "git:fetch")->nickname, "monorepo");
  // A child git below a summarised process hangs under that process.
  ASSERT_NE(find(summary, "git-upload-pack:upload-pack"), nullptr);
  EXPECT_EQ(find(summary, "git-upload-pack:upload-pack")->parent, "git:fetch");

  // process level for fetch alone: its child spans, no regions.
  const std::vector<CheckedSpan> mixed =
      export_and_check(dir, daemon.db_path(), sid, {"--detail", "summary", "--rule", "git:fetch=process"});
  ASSERT_NE(find(mixed, "git-upload-pack:upload-pack"), nullptr);
  EXPECT_EQ(find(mixed, "git-upload-pack:upload-pack")->parent.rfind("child(", 0), 0u);
  for (const CheckedSpan& span : mixed) {
    EXPECT_NE(span.type, "region") << span.name;
  }

  // fetch dropped: no span for it; the rest still a valid tree.
  const std::vector<CheckedSpan> dropped =
      export_and_check(dir, daemon.db_path(), sid, {"--rule", "git:fetch=drop", "--nickname-key", ""});
  EXPECT_EQ(find(dropped, "git:fetch"), nullptr);
  ASSERT_NE(find(dropped, "git-upload-pack:upload-pack"), nullptr);
  for (const CheckedSpan& span : dropped) {
    EXPECT_EQ(span.nickname, "") << span.name;  // no nickname key
  }
  EXPECT_NE(ctl(daemon.db_path(), {"export", "--format", "otlp-json", sid, "--rule", "git:fetch"}).exit_code, 0);

  // Detail by outcome, as [otlp] has it: the failed checkouts in full, the
  // fetch (neither failed nor over a minute) as its summary.
  const std::vector<std::string> by_outcome{"--detail", "summary", "--outcome-detail", "verbose", "--slow-ms", "60000"};
  const std::string checkout =
      open_db(daemon.db_path()).query_text("SELECT sid FROM sessions WHERE cmd_name = 'checkout' LIMIT 1").value_or("");
  const std::vector<CheckedSpan> failed = export_and_check(dir, daemon.db_path(), checkout, by_outcome);
  ASSERT_FALSE(failed.empty());
  EXPECT_EQ(failed[0].detail, "verbose");
  EXPECT_GT(failed.size(), 1u) << "the failed checkout's regions";
  const std::vector<CheckedSpan> ordinary = export_and_check(dir, daemon.db_path(), sid, by_outcome);
  EXPECT_EQ(static_cast<std::int64_t>(ordinary.size()), sessions);
  const ProcessResult refused =
      ctl(daemon.db_path(), {"export", "--format", "otlp-json", sid, "--outcome-detail", "drop"});
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.err.find("--outcome-detail 'drop'"), std::string::npos) << refused.err;
  // A nickname naming a ruleset nobody defined (a typo) is refused, not
  // exported at summary without a word.
  const ProcessResult typo = ctl(daemon.db_path(), {"export", "--format", "otlp-json", sid, "--nickname",
                                                    "big=rs:fetch", "--ruleset", "rs:fech git:fetch=verbose"});
  EXPECT_NE(typo.exit_code, 0);
  EXPECT_NE(typo.err.find("'big=rs:fetch' names the ruleset 'rs:fetch', which no ruleset entry defines"),
            std::string::npos)
      << typo.err;
  // host.name on the resource, unless --no-host-name ([otlp] resource_host_name = false).
  const ProcessResult named = ctl(daemon.db_path(), {"export", "--format", "otlp-json", sid});
  ASSERT_EQ(named.exit_code, 0) << named.err;
  EXPECT_NE(named.out.find(R"("key":"host.name")"), std::string::npos);
  const ProcessResult unnamed = ctl(daemon.db_path(), {"export", "--format", "otlp-json", sid, "--no-host-name"});
  ASSERT_EQ(unnamed.exit_code, 0) << unnamed.err;
  EXPECT_EQ(unnamed.out.find(R"("key":"host.name")"), std::string::npos);
  EXPECT_NE(unnamed.out.find(R"("key":"service.name")"), std::string::npos);
}

}  // namespace
}  // namespace trace2d::test
