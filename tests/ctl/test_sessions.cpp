// trace2ctl sessions: order, filters, table and JSON output.

#include <signal.h>

#include <gtest/gtest.h>
#include <simdjson.h>

#include <chrono>
#include <cstdlib>
#include <thread>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "tests/ctl/sample_database.hpp"

namespace trace2d::test {
namespace {

// The sids in a table's rows (first column), top to bottom.
std::vector<std::string> listed_sids(const ProcessResult& result) {
  std::vector<std::string> sids;
  const auto lines = split_lines(result.out);
  for (std::size_t i = 2; i < lines.size(); ++i) {  // after the header and its rule
    sids.push_back(lines[i].substr(0, lines[i].find(' ')));
  }
  return sids;
}

std::vector<std::string> sessions(const SampleDatabase& db, std::vector<std::string> args) {
  args.insert(args.begin(), {"--db", db.path(), "sessions", "--full-sid"});
  const ProcessResult result = run_ctl(args);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.err, "");
  return listed_sids(result);
}

using Sids = std::vector<std::string>;

// By start time (issue 26: it was by arrival); a session that never sent
// one (sid-nostart) comes after those that did.
TEST(Trace2ctlSessions, ListsNewestFirstWithIdBreakingTies) {
  SampleDatabase db;
  EXPECT_EQ(sessions(db, {}),
            (Sids{"sid-tie", "sid-recent", "sid-fetch", "sid-old", "sid-nostart"}));
  EXPECT_EQ(sessions(db, {"--reverse"}),
            (Sids{"sid-nostart", "sid-old", "sid-fetch", "sid-recent", "sid-tie"}));
  EXPECT_EQ(sessions(db, {"-n", "2"}), (Sids{"sid-tie", "sid-recent"}));
  EXPECT_EQ(sessions(db, {"-n", "2", "--reverse"}), (Sids{"sid-recent", "sid-tie"})) << "the newest two, oldest first";
}

TEST(Trace2ctlSessions, TableHasTheDocumentedColumnsAndValues) {
  SampleDatabase db;
  const ProcessResult result = run_ctl({"--db", db.path(), "--utc", "sessions", "--full-sid"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto lines = split_lines(result.out);
  ASSERT_EQ(lines.size(), 7u) << result.out;
  // Words of the header, in order, padded apart.
  // The command as the user knows it (display name) and its repository.
  const std::vector<std::string> columns{"sid",       "start_time", "owner",       "command", "repository", "status",
                                         "exit_code", "elapsed_ms", "event_count", "argv"};
  std::size_t pos = 0;
  for (const std::string& column : columns) {
    const std::size_t found = lines[0].find(column, pos);
    ASSERT_NE(found, std::string::npos) << column << " in " << lines[0];
    pos = found + column.size();
  }
  EXPECT_EQ(lines[1].find_first_not_of("- "), std::string::npos) << lines[1];
  const std::string& recent = lines[3];
  EXPECT_EQ(recent.rfind("sid-recent ", 0), 0u) << recent;
  EXPECT_NE(recent.find(" status "), std::string::npos) << recent;
  EXPECT_NE(recent.find(" complete "), std::string::npos) << recent;
  EXPECT_NE(recent.find(" 12.5 "), std::string::npos) << "milliseconds, as everywhere in tables\n" << recent;
  EXPECT_NE(recent.find(" git status"), std::string::npos) << "argv as a command line\n" << recent;
  EXPECT_NE(recent.find(SampleDatabase::shown_utc(db.time_ago(k_hour_us))), std::string::npos) << "--utc\n" << recent;
  for (const std::string& line : lines) {
    EXPECT_EQ(line.back() == ' ', false) << "trailing blank: '" << line << "'";
  }
}

TEST(Trace2ctlSessions, SinceDurationUsesStartTimeOrFirstReceived) {
  SampleDatabase db;
  // sid-nostart has no start_time; its first_received (5 min ago) counts.
  EXPECT_EQ(sessions(db, {"--since", "-30m"}), (Sids{"sid-tie", "sid-nostart"}));
  EXPECT_EQ(sessions(db, {"--since", "-1d"}), (Sids{"sid-tie", "sid-recent", "sid-nostart"}));
  EXPECT_EQ(sessions(db, {"--since", "-3d"}).size(), 4u);
  EXPECT_EQ(sessions(db, {"--since", "-2w"}).size(), 5u);
}

TEST(Trace2ctlSessions, SinceAbsoluteTime) {
  SampleDatabase db;
  // Three days ago, whole seconds, as a user would type it.
  const std::string since = db.time_ago(3 * k_day_us).substr(0, 19) + "Z";
  EXPECT_EQ(sessions(db, {"--since", since}),
            (Sids{"sid-tie", "sid-recent", "sid-fetch", "sid-nostart"}));
  EXPECT_EQ(sessions(db, {"--since", "9999-01-01"}), Sids{});
}

TEST(Trace2ctlSessions, FiltersByCommandStatusAndLimit) {
  SampleDatabase db;
  EXPECT_EQ(sessions(db, {"--cmd", "status"}), (Sids{"sid-recent", "sid-old"}));
  EXPECT_EQ(sessions(db, {"--status", "running"}), Sids{"sid-nostart"});
  EXPECT_EQ(sessions(db, {"--status", "incomplete"}), Sids{"sid-fetch"});
  EXPECT_EQ(sessions(db, {"--status", "complete", "--limit", "2"}),
            (Sids{"sid-tie", "sid-recent"}));
  EXPECT_EQ(sessions(db, {"--cmd", "status", "--since", "-1d"}), Sids{"sid-recent"});
  EXPECT_EQ(sessions(db, {"--limit", "1"}), Sids{"sid-tie"});
  EXPECT_EQ(sessions(db, {"--cmd", "no-such-command"}), Sids{});
}

TEST(Trace2ctlSessions, DefaultLimitIsFifty) {
  SampleDatabase db;
  for (int i = 0; i < 60; ++i) {
    db.insert_session(100 + i, "sid-bulk-" + std::to_string(i), "gc", "complete",
                      db.time_ago(20 * k_day_us), db.time_ago(20 * k_day_us));
  }
  EXPECT_EQ(sessions(db, {}).size(), 50u);
  EXPECT_EQ(sessions(db, {"--limit", "0"}).size(), 65u);
}

TEST(Trace2ctlSessions, RejectsBadFilterValuesAsUsageErrors) {
  SampleDatabase db;
  for (const std::vector<std::string>& flags : std::vector<std::vector<std::string>>{
           {"--status", "finished"}, {"--since", "soon"}, {"--until", "later"}, {"--since", "10x"},
           {"--since", "2026-13-01T00:00:00Z"}, {"--limit", "-1"}, {"--limit", "many"}}) {
    std::vector<std::string> args{"--db", db.path(), "sessions"};
    args.insert(args.end(), flags.begin(), flags.end());
    const ProcessResult result = run_ctl(args);
    EXPECT_EQ(result.exit_code, 2) << flags[0] << " " << flags[1];
    EXPECT_NE(result.err.find(flags[0]), std::string::npos) << result.err;
    EXPECT_EQ(result.out, "");
  }
}

// A window that ends before it begins is a mistake, not "nothing ran".
TEST(Trace2ctlSessions, AWindowEndingBeforeItBeginsIsRefused) {
  SampleDatabase db;
  for (const std::string command : {"sessions", "stats", "top"}) {
    const ProcessResult result = run_ctl({"--db", db.path(), command, "--since", "-1h", "--until", "-2h"});
    EXPECT_NE(result.exit_code, 0) << command << ": " << result.out;
    EXPECT_NE(result.err.find("the window is empty: --since"), std::string::npos) << command << ": " << result.err;
    EXPECT_EQ(result.out, "") << command;
  }
  const ProcessResult same =
      run_ctl({"--db", db.path(), "sessions", "--since", "@1800000000", "--until", "@1800000000"});
  EXPECT_NE(same.exit_code, 0) << same.out;
  const ProcessResult ordered = run_ctl({"--db", db.path(), "sessions", "--since", "-2h", "--until", "-1h"});
  EXPECT_EQ(ordered.exit_code, 0) << ordered.err;
}

TEST(Trace2ctlSessions, JsonIsAnArrayOfTypedObjects) {
  SampleDatabase db;
  // --json works after the command name as well as before it.
  const ProcessResult result = run_ctl({"--db", db.path(), "sessions", "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  simdjson::dom::parser parser;
  simdjson::dom::array rows;
  ASSERT_EQ(parser.parse(result.out).get(rows), simdjson::SUCCESS) << result.out;
  ASSERT_EQ(rows.size(), 5u);

  simdjson::dom::object recent = rows.at(1).get_object().value();
  EXPECT_EQ(std::string_view(recent["sid"].get_string().value()), "sid-recent");
  EXPECT_EQ(std::string_view(recent["cmd_name"].get_string().value()), "status");
  EXPECT_EQ(std::string_view(recent["status"].get_string().value()), "complete");
  EXPECT_EQ(recent["exit_code"].get_int64().value(), 1);
  EXPECT_DOUBLE_EQ(recent["elapsed"].get_double().value(), 0.0125);
  EXPECT_EQ(recent["event_count"].get_int64().value(), 5) << "the schema's column name";
  EXPECT_EQ(std::string_view(recent["start_time"].get_string().value()), db.time_ago(k_hour_us));
  simdjson::dom::array argv = recent["argv"].get_array().value();
  ASSERT_EQ(argv.size(), 2u) << "argv is an array, as in `tree --json`";
  EXPECT_EQ(std::string_view(argv.at(1).get_string().value()), "status");
  EXPECT_TRUE(recent["signo"].is_null());
  EXPECT_TRUE(recent["peer_uid"].is_null()) << "no uid known";
  EXPECT_TRUE(recent["owner"].is_null());
  EXPECT_EQ(recent["lines_lost"].get_int64().value(), 0) << "a whole session";
  EXPECT_EQ(std::string_view(recent["command"].get_string().value()), "status");
  EXPECT_TRUE(recent["repository"].is_null()) << "no worktree, no nickname";
  EXPECT_EQ(recent.size(), 14u);

  simdjson::dom::object nostart = rows.at(4).get_object().value();  // no start time: last
  EXPECT_TRUE(nostart["cmd_name"].is_null());
  EXPECT_TRUE(nostart["exit_code"].is_null());
  EXPECT_TRUE(nostart["start_time"].is_null());
}

TEST(Trace2ctlSessions, JsonOfNoRowsIsAnEmptyArray) {
  SampleDatabase db;
  const ProcessResult result =
      run_ctl({"--json", "--db", db.path(), "sessions", "--cmd", "no-such-command"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "[]\n");
}

TEST(Trace2ctlSessions, UntilFailedAndLast) {
  SampleDatabase db;
  EXPECT_EQ(sessions(db, {"--until", "-30m"}), (Sids{"sid-recent", "sid-fetch", "sid-old"}));
  EXPECT_EQ(sessions(db, {"--since", "-1d", "--until", "-30m"}), (Sids{"sid-recent"}));
  // sid-recent exited 1, sid-fetch is incomplete.
  EXPECT_EQ(sessions(db, {"--failed"}), (Sids{"sid-recent", "sid-fetch"}));
  EXPECT_EQ(sessions(db, {"--last"}), (Sids{"sid-tie"}));
  EXPECT_EQ(sessions(db, {"--last", "--failed"}), (Sids{"sid-recent"}));
}

TEST(Trace2ctlSessions, ShortSidsAreUniquePrefixesThatShowAndTreeAccept) {
  SampleDatabase db;
  db.insert_session(50, "20261122T000429.517133Z-H0a7c9cdf-P000014ca", "status", "complete", db.time_ago(k_day_us),
                    db.time_ago(k_day_us));
  db.insert_session(51, "20261122T000429.517133Z-H0a7c9cdf-P000014ca/20261122T000429.553282Z-H0a7c9cdf-P000014da",
                    "rev-parse", "complete", db.time_ago(k_day_us), db.time_ago(k_day_us));
  db.insert_session(52, "20261122T000429.589719Z-H0a7c9cdf-P000014ea", "status", "complete", db.time_ago(k_day_us),
                    db.time_ago(k_day_us));
  const ProcessResult result = run_ctl({"--db", db.path(), "sessions", "--cmd", "rev-parse"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  // The nested session's own part, cut where it differs from every other
  // session's own part ("…T000429.5" is shared by the three).
  const auto sids = listed_sids(result);
  ASSERT_EQ(sids, Sids{"20261122T000429.55"}) << result.out;
  const ProcessResult show = run_ctl({"--db", db.path(), "show", sids.front()});
  EXPECT_EQ(show.exit_code, 0) << show.err;
  EXPECT_NE(show.out.find("sid: 20261122T000429.517133Z-H0a7c9cdf-P000014ca/20261122T000429.553282Z"),
            std::string::npos)
      << show.out;
  const ProcessResult ambiguous = run_ctl({"--db", db.path(), "show", "20261122T000429.5"});
  EXPECT_EQ(ambiguous.exit_code, 1);
  EXPECT_NE(ambiguous.err.find("short SID '20261122T000429.5' is ambiguous: it begins 3 sessions' SIDs"),
            std::string::npos)
      << ambiguous.err;
  const ProcessResult tree = run_ctl({"--db", db.path(), "tree", "20261122T000429.58", "--no-times"});
  EXPECT_EQ(tree.exit_code, 0) << tree.err;
  EXPECT_EQ(run_ctl({"--db", db.path(), "show", "nothing-like-it"}).err,
            "trace2ctl: no session with sid 'nothing-like-it'\n");
}

// Short SIDs are worked out from each shown SID's neighbours, not from
// every SID in the database: the nearest top-level SIDs, and the child
// processes that started within a second of the time the own part begins
// with (git's layout); the result is the same as against all of them.
TEST(Trace2ctlSessions, ShortSidsOfChildrenSeeChildrenOfOtherParents) {
  SampleDatabase db;
  db.insert_session(60, "20261122T000429.100000Z-H0a7c9cdf-P00000001", "status", "complete",
                    "2026-11-22T00:04:29.100000Z", "2026-11-22T00:04:29.100000Z");
  db.insert_session(61, "20261122T000429.100000Z-H0a7c9cdf-P00000001/20261122T000429.553282Z-H0a7c9cdf-P00000002",
                    "rev-parse", "complete", "2026-11-22T00:04:29.553282Z", "2026-11-22T00:04:29.553282Z");
  db.insert_session(62, "20261122T000429.200000Z-H0a7c9cdf-P00000003", "status", "complete",
                    "2026-11-22T00:04:29.200000Z", "2026-11-22T00:04:29.200000Z");
  // Another parent's child, whose own part shares "…T000429.5532" with 61's.
  db.insert_session(63, "20261122T000429.200000Z-H0a7c9cdf-P00000003/20261122T000429.553299Z-H0a7c9cdf-P00000004",
                    "ls-files", "complete", "2026-11-22T00:04:29.553299Z", "2026-11-22T00:04:29.553299Z");
  const ProcessResult result = run_ctl({"--db", db.path(), "sessions", "--all", "--cmd", "rev-parse"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const auto sids = listed_sids(result);
  ASSERT_EQ(sids, Sids{"20261122T000429.55328"}) << result.out;
  EXPECT_EQ(run_ctl({"--db", db.path(), "show", sids.front()}).exit_code, 0);
  // And in a listing of them all.
  const ProcessResult all = run_ctl({"--db", db.path(), "sessions", "--all", "--limit", "0"});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  EXPECT_NE(all.out.find("20261122T000429.55328 "), std::string::npos) << all.out;
  EXPECT_NE(all.out.find("20261122T000429.55329 "), std::string::npos) << all.out;
}

TEST(Trace2ctlSessions, FailedRowsAreRedOnlyWhenColourIsOn) {
  SampleDatabase db;
  const ProcessResult plain = run_ctl({"--db", db.path(), "sessions"});
  EXPECT_EQ(plain.out.find('\033'), std::string::npos) << "not a terminal: no colour";
  const ProcessResult red = run_ctl({"--db", db.path(), "sessions", "--full-sid", "--color", "always"});
  ASSERT_EQ(red.exit_code, 0) << red.err;
  for (const std::string& line : split_lines(red.out)) {
    const bool failed = line.find("sid-recent") != std::string::npos || line.find("sid-fetch") != std::string::npos;
    const bool is_red = line.rfind("\033[31m", 0) == 0 && line.size() > 3 && line.substr(line.size() - 3) == "\033[m";
    EXPECT_EQ(is_red, failed) << line;
  }
}

TEST(Trace2ctlSessions, CsvAndTsvHaveTheSchemasColumns) {
  SampleDatabase db;
  const ProcessResult csv = run_ctl({"--db", db.path(), "--format", "csv", "sessions", "--cmd", "status"});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  const auto lines = split_lines(csv.out);
  ASSERT_EQ(lines.size(), 3u) << csv.out;
  EXPECT_EQ(lines[0], "sid,start_time,peer_uid,owner,command,cmd_name,repository,status,exit_code,signo,elapsed,"
                      "event_count,lines_lost,argv");
  EXPECT_EQ(lines[1], "sid-recent," + db.time_ago(k_hour_us) + R"(,,,status,status,,complete,1,,0.0125,5,0,"[""git"",""status""]")");
  const ProcessResult tsv = run_ctl({"--db", db.path(), "sessions", "--format", "tsv", "--cmd", "status"});
  ASSERT_EQ(tsv.exit_code, 0) << tsv.err;
  EXPECT_EQ(split_lines(tsv.out)[1],
            "sid-recent\t" + db.time_ago(k_hour_us) + "\t\t\tstatus\tstatus\t\tcomplete\t1\t\t0.0125\t5\t0\t[\"git\",\"status\"]");
  const ProcessResult tree = run_ctl({"--db", db.path(), "--format", "csv", "tree", "sid-recent"});
  EXPECT_EQ(tree.exit_code, 1);
  EXPECT_NE(tree.err.find("`tree` prints no single table, so it has no --format csv"), std::string::npos) << tree.err;
}

TEST(Trace2ctlSessions, FollowPrintsSessionsWhenTheyFinishWithTheSameFilters) {
  SampleDatabase db;
  ProcessSpec spec;
  spec.argv = {TRACE2CTL_BIN, "--db", db.path(), "--json", "sessions", "--follow", "--failed"};
  Process follow(spec);
  // The failed runs so far, oldest first, one JSON object per line.
  ASSERT_TRUE(wait_until([&] { return split_lines(follow.out_so_far()).size() == 2; })) << follow.out_so_far();
  const auto first = split_lines(follow.out_so_far());
  EXPECT_EQ(first[0].rfind(R"({"sid":"sid-fetch",)", 0), 0u) << first[0];
  EXPECT_EQ(first[1].rfind(R"({"sid":"sid-recent",)", 0), 0u) << first[1];

  // A new run: not shown while it runs, nor when it succeeds; a failing
  // one is shown once it ends, and sid-nostart (running, no exit code) too
  // once it is marked incomplete.
  db.insert_session(10, "sid-new-ok", "status", "running", db.time_ago(0), db.time_ago(0));
  db.insert_session(11, "sid-new-bad", "push", "running", db.time_ago(0), db.time_ago(0));
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  EXPECT_EQ(split_lines(follow.out_so_far()).size(), 2u) << follow.out_so_far();
  db.writer().exec("UPDATE sessions SET status = 'complete', exit_code = 0 WHERE sid = 'sid-new-ok';"
                   "UPDATE sessions SET status = 'complete', exit_code = 1 WHERE sid = 'sid-new-bad';"
                   "UPDATE sessions SET status = 'incomplete' WHERE sid = 'sid-nostart'");
  ASSERT_TRUE(wait_until([&] { return split_lines(follow.out_so_far()).size() == 4; })) << follow.out_so_far();
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  const std::string out = follow.out_so_far();
  EXPECT_NE(out.find(R"({"sid":"sid-new-bad",)"), std::string::npos) << out;
  EXPECT_NE(out.find(R"({"sid":"sid-nostart",)"), std::string::npos) << out;
  EXPECT_EQ(out.find("sid-new-ok"), std::string::npos) << out;
  EXPECT_EQ(split_lines(out).size(), 4u) << "each once\n" << out;
  follow.signal(SIGTERM);
  const ProcessResult result = follow.wait(std::chrono::seconds(10));
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.err, "");
}

// Runs trace2ctl with a terminal as its standard output (util-linux
// `script`), the environment given first.
ProcessResult run_ctl_on_terminal(const std::string& env, const std::vector<std::string>& args) {
  std::string command = env + " " + TRACE2CTL_BIN;
  for (const std::string& arg : args) {
    command += " '" + arg + "'";
  }
  ProcessSpec spec;
  spec.argv = {"script", "-qec", command, "/dev/null"};
  spec.unset_env = {"NO_COLOR", "TRACE2CTL_PAGER", "PAGER", "LESS"};
  return run_process(spec);
}

TEST(Trace2ctlSessions, PagesAndColoursOnlyOnATerminal) {
  if (std::system("command -v script >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "util-linux script is not installed";
  }
  SampleDatabase db;
  const std::string paged = db.dir().file("paged.txt");
  // The pager's own environment shows LESS=FRX was set for it.
  const std::string pager = "TRACE2CTL_PAGER='echo LESS=$LESS >" + paged + "; cat >>" + paged + "' PAGER=more";
  const ProcessResult terminal = run_ctl_on_terminal(pager, {"--db", db.path(), "sessions", "--full-sid"});
  ASSERT_EQ(terminal.exit_code, 0) << terminal.out << terminal.err;
  const std::string through_pager = read_file(paged);
  EXPECT_EQ(through_pager.rfind("LESS=FRX\n", 0), 0u) << through_pager;
  EXPECT_NE(through_pager.find("\033[31msid-recent"), std::string::npos) << "red on a terminal\n" << through_pager;
  EXPECT_EQ(terminal.out.find("sid-recent"), std::string::npos) << "all of it went to the pager";

  // NO_COLOR: no colour; --no-pager: straight to the terminal.
  const ProcessResult plain =
      run_ctl_on_terminal("NO_COLOR=1", {"--db", db.path(), "sessions", "--full-sid", "--no-pager"});
  ASSERT_EQ(plain.exit_code, 0) << plain.out;
  EXPECT_NE(plain.out.find("sid-recent"), std::string::npos) << plain.out;
  EXPECT_EQ(plain.out.find("\033["), std::string::npos) << plain.out;

  // Not a terminal: no pager, whatever the environment says.
  std::filesystem::remove(paged);
  ProcessSpec spec;
  spec.argv = {TRACE2CTL_BIN, "--db", db.path(), "sessions"};
  spec.env = {{"TRACE2CTL_PAGER", "cat >" + paged}};
  const ProcessResult piped = run_process(spec);
  EXPECT_EQ(piped.exit_code, 0);
  EXPECT_NE(piped.out.find("sid-tie"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(paged));
}

// Issue 24, finding 9: without an owner, a session another user made to
// look like root's could not be told from root's.
TEST(Trace2ctlSessions, TheOwnerIsShownByNameAndItsUidKeptInMachineFormats) {
  SampleDatabase db;
  constexpr std::int64_t k_unknown_uid = 3999999;  // no passwd entry
  db.writer().exec("UPDATE sessions SET peer_uid = 0 WHERE sid = 'sid-recent'");
  db.writer().exec("UPDATE sessions SET peer_uid = " + std::to_string(k_unknown_uid) + " WHERE sid = 'sid-fetch'");
  db.writer().exec("UPDATE sessions SET peer_uid = 0, source = 'import' WHERE sid = 'sid-old'");

  const ProcessResult table = run_ctl({"--db", db.path(), "sessions", "--full-sid"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  const auto lines = split_lines(table.out);
  ASSERT_EQ(lines.size(), 7u) << table.out;
  const std::size_t owner_at = lines[0].find("owner");
  ASSERT_NE(owner_at, std::string::npos) << lines[0];
  const auto owner_of = [&](const std::string& line) {
    const std::size_t end = line.find(' ', owner_at);
    return line.substr(owner_at, end - owner_at);
  };
  EXPECT_EQ(owner_of(lines[3]), "root") << lines[3];                          // sid-recent
  EXPECT_EQ(owner_of(lines[4]), std::to_string(k_unknown_uid)) << lines[4];  // sid-fetch
  EXPECT_EQ(owner_of(lines[5]), "-") << "imported: no one's\n" << lines[5];  // sid-old
  EXPECT_EQ(owner_of(lines[2]), "-") << "no uid known\n" << lines[2];        // sid-tie

  const ProcessResult json = run_ctl({"--db", db.path(), "--json", "sessions"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  simdjson::dom::parser parser;
  simdjson::dom::array rows;
  ASSERT_EQ(parser.parse(json.out).get(rows), simdjson::SUCCESS) << json.out;
  std::map<std::string, std::pair<std::string, std::string>> owners;  // sid: peer_uid, owner as JSON
  for (simdjson::dom::element row : rows) {
    owners[std::string(row["sid"].get_string().value())] = {simdjson::to_string(row["peer_uid"]),
                                                            simdjson::to_string(row["owner"])};
  }
  EXPECT_EQ(owners["sid-recent"], (std::pair<std::string, std::string>{"0", "\"root\""}));
  EXPECT_EQ(owners["sid-fetch"], (std::pair<std::string, std::string>{std::to_string(k_unknown_uid), "null"}));
  EXPECT_EQ(owners["sid-old"], (std::pair<std::string, std::string>{"0", "null"}));
  EXPECT_EQ(owners["sid-tie"], (std::pair<std::string, std::string>{"null", "null"}));

  const ProcessResult csv = run_ctl({"--db", db.path(), "--format", "csv", "sessions", "--cmd", "status"});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_EQ(split_lines(csv.out)[1].rfind("sid-recent," + db.time_ago(k_hour_us) + ",0,root,status,", 0), 0u)
      << csv.out;

  const ProcessResult show = run_ctl({"--db", db.path(), "show", "sid-recent"});
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_NE(show.out.find("\npeer_uid: 0\nowner: root\n"), std::string::npos) << show.out;
  const ProcessResult show_json = run_ctl({"--db", db.path(), "--json", "show", "sid-old"});
  ASSERT_EQ(show_json.exit_code, 0) << show_json.err;
  EXPECT_NE(show_json.out.find(R"("peer_uid":0,"owner":null)"), std::string::npos) << show_json.out;

  const ProcessResult top = run_ctl({"--db", db.path(), "top"});
  ASSERT_EQ(top.exit_code, 0) << top.err;
  EXPECT_NE(top.out.find("  owner  "), std::string::npos) << top.out;
  EXPECT_NE(top.out.find("  root  "), std::string::npos) << top.out;
}

}  // namespace
}  // namespace trace2d::test
