// trace2ctl with the habits of journalctl, git and ps (issue 26): SIDs in
// every form the tables print them, journalctl's times, local times in
// tables, whole lines when piped, errors that say what to do. Real git, a
// real trace2d, real SQLite.

#include <gtest/gtest.h>

#include <algorithm>
#include <ctime>
#include <tuple>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "tests/e2e/daemon_fixture.hpp"

namespace trace2d::test {
namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The lines of `text`.
std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    lines.push_back(line);
  }
  return lines;
}

// The first whitespace-separated field of each table row (after the header
// and its rule): the short SIDs `sessions` prints.
std::vector<std::string> first_column(const std::string& table) {
  std::vector<std::string> fields;
  const std::vector<std::string> lines = lines_of(table);
  for (std::size_t i = 2; i < lines.size(); ++i) {
    fields.push_back(lines[i].substr(0, lines[i].find(' ')));
  }
  return fields;
}

// Two commands run one after the other in a fresh repository, traced into
// a fresh daemon.
class CtlHabits : public ::testing::Test {
 protected:
  void SetUp() override {
    m_repo = make_repo(m_dir, "repo", 3);
    m_daemon = std::make_unique<RunningDaemon>(m_dir);
    for (const std::vector<std::string>& args : m_commands) {
      const ProcessResult r = run_git(m_repo, args, trace());
      ASSERT_EQ(r.exit_code, 0) << r.err;
    }
    ASSERT_TRUE(wait_for_sessions(db(), static_cast<int>(m_commands.size())));
  }
  [[nodiscard]] std::map<std::string, std::string> trace() const {
    return {{"GIT_TRACE2_EVENT", m_daemon->git_target()}};
  }
  [[nodiscard]] const std::string& db() const { return m_daemon->db_path(); }
  // The whole SID of the one session of `cmd_name`.
  [[nodiscard]] std::string sid_of(const std::string& cmd_name) const {
    const ProcessResult r =
        ctl(db(), {"--format", "tsv", "sql", "SELECT sid FROM sessions WHERE cmd_name = '" + cmd_name + "'"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const std::vector<std::string> lines = lines_of(r.out);
    EXPECT_EQ(lines.size(), 2u) << r.out;
    return lines.size() == 2 ? lines[1] : std::string();
  }

  TempDir m_dir;
  std::string m_repo;
  std::unique_ptr<RunningDaemon> m_daemon;
  std::vector<std::vector<std::string>> m_commands{{"status", "--short"}, {"log", "-1", "--oneline"}};
};

TEST_F(CtlHabits, EveryCommandThatTakesASidTakesTheShortSidAndLast) {
  const ProcessResult listed = ctl(db(), {"sessions"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  const std::vector<std::string> short_sids = first_column(listed.out);
  ASSERT_EQ(short_sids.size(), 2u) << listed.out;
  const std::string log_sid = sid_of("log");
  const std::string status_sid = sid_of("status");
  // Newest first: the log, then the status.
  const std::string log_short = short_sids[0];
  ASSERT_LT(log_short.size(), log_sid.size()) << listed.out;
  ASSERT_EQ(log_sid.rfind(log_short, 0), 0u) << log_short << " is not a prefix of " << log_sid;
  ASSERT_EQ(status_sid.rfind(short_sids[1], 0), 0u) << listed.out;

  // export, as the issue tried it: the short SID, and --last.
  const std::string by_short = m_dir.file("by-short.json");
  const std::string by_last = m_dir.file("by-last.json");
  const std::string by_whole = m_dir.file("by-whole.json");
  for (const auto& [args, file] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"export", log_short, "-o", by_short}, by_short},
           {{"export", "--last", "-o", by_last}, by_last},
           {{"export", log_sid, "-o", by_whole}, by_whole}}) {
    const ProcessResult r = ctl(db(), args);
    ASSERT_EQ(r.exit_code, 0) << args[1] << ": " << r.err;
    EXPECT_NE(r.out.find("wrote "), std::string::npos) << r.out;
  }
  const std::string whole = read_text(by_whole);
  EXPECT_NE(whole.find("\"traceEvents\""), std::string::npos) << whole.substr(0, 200);
  EXPECT_NE(whole.find(log_sid), std::string::npos) << "the trace names the log's session";
  EXPECT_EQ(read_text(by_short), whole);
  EXPECT_EQ(read_text(by_last), whole);
  // --last --cmd: the latest of that command, for export as for tree.
  const ProcessResult status_trace = ctl(db(), {"export", "--last", "--cmd", "status"});
  ASSERT_EQ(status_trace.exit_code, 0) << status_trace.err;
  EXPECT_NE(status_trace.out.find(status_sid), std::string::npos);
  EXPECT_EQ(status_trace.out.find(log_sid), std::string::npos);
  const ProcessResult otlp = ctl(db(), {"export", "--format", "otlp-json", log_short});
  ASSERT_EQ(otlp.exit_code, 0) << otlp.err;
  EXPECT_EQ(std::count(otlp.out.begin(), otlp.out.end(), '\n'), 1) << "one tree, one line";

  // show and tree: the short SID, --last, --last --cmd.
  for (const std::string command : {"show", "tree"}) {
    const ProcessResult last = ctl(db(), {"--json", command, "--last"});
    ASSERT_EQ(last.exit_code, 0) << command << ": " << last.err;
    EXPECT_NE(last.out.find(log_sid), std::string::npos) << command << " --last: " << last.out.substr(0, 300);
    EXPECT_EQ(last.out.find(status_sid), std::string::npos) << command;
    EXPECT_EQ(ctl(db(), {"--json", command, log_short}).out, last.out) << command;
    const ProcessResult status = ctl(db(), {"--json", command, "--last", "--cmd", "status"});
    ASSERT_EQ(status.exit_code, 0) << command << ": " << status.err;
    EXPECT_NE(status.out.find(status_sid), std::string::npos) << command;
    // Neither a SID nor --last: said so, with the forms it takes.
    const ProcessResult none = ctl(db(), {command});
    EXPECT_EQ(none.exit_code, 2) << command;
    EXPECT_NE(none.err.find("--last"), std::string::npos) << command << ": " << none.err;
  }
  const ProcessResult unknown = ctl(db(), {"show", "--last", "--cmd", "frobnicate"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.err.find("no session of command 'frobnicate'"), std::string::npos) << unknown.err;
  const ProcessResult chrome_none = ctl(db(), {"export"});
  EXPECT_EQ(chrome_none.exit_code, 1);
  EXPECT_NE(chrome_none.err.find("--last"), std::string::npos) << chrome_none.err;
  EXPECT_EQ(ctl(db(), {"export", log_short, "--last"}).exit_code, 2) << "a SID or --last, not both";
}

// The sessions' start times as stored (UTC, git's format), newest first.
std::vector<std::string> stored_start_times(const std::string& db) {
  const ProcessResult r =
      ctl(db, {"--format", "tsv", "sql", "SELECT start_time FROM sessions ORDER BY start_time DESC"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> times = lines_of(r.out);
  times.erase(times.begin());
  return times;
}

// `stored` ("2026-11-27T10:35:22.123456Z") shifted by `offset_minutes`
// and shown as tables show times: "2026-11-27 16:05:22.123".
std::string shown(const std::string& stored, int offset_minutes) {
  std::tm tm{};
  tm.tm_year = std::stoi(stored.substr(0, 4)) - 1900;
  tm.tm_mon = std::stoi(stored.substr(5, 2)) - 1;
  tm.tm_mday = std::stoi(stored.substr(8, 2));
  tm.tm_hour = std::stoi(stored.substr(11, 2));
  tm.tm_min = std::stoi(stored.substr(14, 2));
  tm.tm_sec = std::stoi(stored.substr(17, 2));
  const std::time_t t = ::timegm(&tm) + offset_minutes * 60;
  std::tm out{};
  ::gmtime_r(&t, &out);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &out);
  return std::string(text) + "." + stored.substr(20, 3);
}

TEST_F(CtlHabits, SinceAndUntilReadWhatJournalctlReads) {
  const auto listed = [&](const std::vector<std::string>& window) {
    std::vector<std::string> args{"--format", "tsv", "sessions", "--all"};
    args.insert(args.end(), window.begin(), window.end());
    const ProcessResult r = ctl(db(), args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return lines_of(r.out).size() - 1;  // rows, without the header
  };
  const std::size_t all = listed({});
  ASSERT_GE(all, 2u);
  for (const std::vector<std::string>& window :
       std::vector<std::vector<std::string>>{{"--since", "-1h"},
                                             {"--since=-1h"},
                                             {"--since", "1h ago"},
                                             {"--since", "5min ago"},
                                             {"--since", "-1h30min"},
                                             {"--since", "@" + std::to_string(std::time(nullptr) - 3600)},
                                             {"--since", "today", "--until", "tomorrow"},
                                             {"--since", "yesterday"},
                                             {"--until", "now"},
                                             {"--until", "+5min"}}) {
    EXPECT_EQ(listed(window), all) << window[0] << " " << window.back();
  }
  EXPECT_EQ(listed({"--until", "-1h"}), 0u);
  EXPECT_EQ(listed({"--since", "+5min"}), 0u);
  EXPECT_EQ(listed({"--since", "@" + std::to_string(std::time(nullptr) + 60)}), 0u);
  // What journalctl refuses: a bare duration, said with the forms it meant.
  const ProcessResult bare = ctl(db(), {"sessions", "--since", "1h"});
  EXPECT_EQ(bare.exit_code, 2);
  EXPECT_NE(bare.err.find("'-1h' or '1h ago'"), std::string::npos) << bare.err;
}

TEST_F(CtlHabits, TablesShowLocalTimeWithItsZoneAndTakeItBack) {
  const std::vector<std::string> times = stored_start_times(db());
  ASSERT_EQ(times.size(), 2u);
  const auto run = [&](const std::string& zone, std::vector<std::string> args) {
    args.insert(args.begin(), {TRACE2CTL_BIN, "--db", db()});
    ProcessSpec spec;
    spec.argv = std::move(args);
    spec.env = {{"TZ", zone}};
    const ProcessResult r = run_process(spec);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  };
  // India: five and a half hours ahead of UTC all year, no summer time.
  const std::string zone = "Asia/Kolkata";
  const std::string local = shown(times[0], 330) + " IST";
  const std::string table = run(zone, {"sessions"});
  EXPECT_NE(table.find(local), std::string::npos) << local << "\n" << table;
  EXPECT_EQ(table.find(times[0]), std::string::npos) << "not the stored UTC text\n" << table;
  const std::string utc = run(zone, {"--utc", "sessions"});
  EXPECT_NE(utc.find(shown(times[0], 0) + " UTC"), std::string::npos) << utc;
  // show and top show times alike.
  EXPECT_NE(run(zone, {"show", "--last"}).find("start_time: " + local), std::string::npos);
  EXPECT_NE(run(zone, {"top"}).find(local), std::string::npos);
  // JSON, CSV and TSV keep the stored UTC text, whatever TZ says.
  EXPECT_NE(run(zone, {"--json", "sessions"}).find("\"start_time\":\"" + times[0] + "\""), std::string::npos);
  EXPECT_NE(run(zone, {"--format", "csv", "sessions"}).find("," + times[0] + ","), std::string::npos);
  EXPECT_NE(run(zone, {"--format", "tsv", "sessions"}).find("\t" + times[0] + "\t"), std::string::npos);
  // A time as the table shows it goes back into --since as it is (the
  // zone's name, or UTC), in the zone the table was made in.
  const auto rows = [&](const std::string& since) {
    return lines_of(run(zone, {"--format", "tsv", "sessions", "--since", since})).size() - 1;
  };
  EXPECT_EQ(rows(local), 1u) << local;
  EXPECT_EQ(rows(shown(times[0], 0) + " UTC"), 1u);
  EXPECT_EQ(rows(shown(times[1], 330)), 2u) << "a local time without the zone's name";
}

// `show` nests regions by their nesting and times them, as `tree` does.
TEST_F(CtlHabits, ShowNestsAndTimesRegions) {
  const std::string sid = sid_of("status");
  // The regions as stored: a nested one (nesting 2) and its duration.
  const ProcessResult nested = ctl(db(), {"--format", "tsv", "sql",
                                          "SELECT category || ':' || label, leave_seq, round(elapsed * 1000, 3) FROM "
                                          "regions WHERE sid = '" + sid + "' AND nesting = 2 AND elapsed IS NOT NULL "
                                          "ORDER BY enter_seq LIMIT 1"});
  ASSERT_EQ(nested.exit_code, 0) << nested.err;
  const std::vector<std::string> rows = lines_of(nested.out);
  ASSERT_EQ(rows.size(), 2u) << "git status has nested regions\n" << nested.out;
  std::vector<std::string> fields;
  std::istringstream row(rows[1]);
  for (std::string field; std::getline(row, field, '\t');) {
    fields.push_back(field);
  }
  ASSERT_EQ(fields.size(), 3u) << rows[1];
  const ProcessResult shown = ctl(db(), {"show", sid});
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  // The leave's line: its seq, the duration in ms, the label indented one
  // level ("  category:label").
  const std::regex leave("\\n *" + fields[1] + "  region_leave  main +\\S+ \\S+ \\S+ +([0-9.]+)  {3}" +
                         std::regex_replace(fields[0], std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)") + "(  |\\n)");
  std::smatch match;
  ASSERT_TRUE(std::regex_search(shown.out, match, leave)) << fields[0] << " at seq " << fields[1] << "\n" << shown.out;
  EXPECT_DOUBLE_EQ(std::stod(match[1]), std::stod(fields[2]));
  // JSON: git's nesting and category as they are, the duration in seconds.
  const ProcessResult json = ctl(db(), {"--json", "show", sid});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_NE(json.out.find("\"seq\":" + fields[1] + ",\"event\":\"region_leave\""), std::string::npos) << json.out;
  EXPECT_NE(json.out.find("\"nesting\":2,\"category\":"), std::string::npos);
  EXPECT_NE(json.out.find("\"elapsed\":"), std::string::npos);
}

// SIDs complete in bash, as `sessions` prints them, for each command that
// takes one, from the database --db names.
TEST_F(CtlHabits, ShortSidsTabCompleteInBash) {
  const ProcessResult listed = ctl(db(), {"sessions"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  const std::vector<std::string> short_sids = first_column(listed.out);
  ASSERT_EQ(short_sids.size(), 2u) << listed.out;
  const std::string script = std::string(TRACE2D_SOURCE_DIR) + "/ctl/completion/trace2ctl.bash";
  for (const std::string command : {"show", "tree", "export"}) {
    ProcessSpec spec;
    spec.argv = {"bash", "-c",
                 "source \"$0\"; COMP_WORDS=(\"$1\" --db \"$2\" " + command +
                     " ''); COMP_CWORD=4; _trace2ctl; printf '%s\\n' \"${COMPREPLY[@]}\"",
                 script, TRACE2CTL_BIN, db()};
    const ProcessResult r = run_process(spec);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::vector<std::string> offered = lines_of(r.out);
    std::sort(offered.begin(), offered.end());
    std::vector<std::string> expected = short_sids;
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(offered, expected) << command << ":\n" << r.out;
  }
  // A prefix narrows them; a flag still completes flags.
  ProcessSpec prefix;
  prefix.argv = {"bash", "-c",
                 "source \"$0\"; COMP_WORDS=(\"$1\" --db \"$2\" show \"$3\"); COMP_CWORD=4; _trace2ctl; "
                 "printf '%s\\n' \"${COMPREPLY[@]}\"",
                 script, TRACE2CTL_BIN, db(), short_sids[0]};
  EXPECT_EQ(run_process(prefix).out, short_sids[0] + "\n");
}

// Runs trace2ctl on a pseudo-terminal (util-linux `script`), the shell
// command `before` first (stty), and returns its output without the
// terminal's carriage returns.
std::string on_terminal(const std::string& db, const std::string& before, const std::vector<std::string>& args,
                        const std::map<std::string, std::string>& env = {}) {
  std::string command = before + " exec '" + std::string(TRACE2CTL_BIN) + "' --db '" + db + "' --no-pager";
  for (const std::string& arg : args) {
    command += " '" + arg + "'";
  }
  ProcessSpec spec;
  spec.argv = {"script", "-qec", command, "/dev/null"};
  spec.env = env;
  spec.unset_env = {"COLUMNS"};
  const ProcessResult r = run_process(spec);
  EXPECT_EQ(r.exit_code, 0) << command << ": " << r.err << r.out;
  std::string out;
  for (const char c : r.out) {
    if (c != '\r') {
      out.push_back(c);
    }
  }
  return out;
}

bool has_program(const std::string& name) {
  ProcessSpec spec;
  spec.argv = {"sh", "-c", "command -v " + name};
  return run_process(spec).exit_code == 0;
}

class CtlWholeLines : public CtlHabits {
 protected:
  CtlWholeLines() {
    m_commands = {{"status", "--short"},
                  {"log", "-1", "--format=%H " + std::string(300, 'x') + " the end"}};
  }
};

TEST_F(CtlWholeLines, PipedLinesAreWholeTerminalLinesFitAndNoTruncKeepsThemWhole) {
  const std::string tail = std::string(40, 'x') + " the end'";
  // Piped (as `trace2ctl sessions | grep` reads it): the whole argv.
  const ProcessResult piped = ctl(db(), {"sessions"});
  ASSERT_EQ(piped.exit_code, 0) << piped.err;
  EXPECT_NE(piped.out.find(tail), std::string::npos) << piped.out;
  EXPECT_EQ(piped.out.find("..."), std::string::npos) << piped.out;

  if (!has_program("script") || !has_program("stty")) {
    GTEST_SKIP() << "util-linux script is not installed";
  }
  // On a terminal: each line fits its width, from the kernel (stty) or COLUMNS.
  for (const auto& [before, env, width] : std::vector<std::tuple<std::string, std::map<std::string, std::string>,
                                                                 std::size_t>>{
           {"stty cols 150 rows 50;", {}, 150}, {"", {{"COLUMNS", "200"}}, 200}}) {
    const std::string shown_lines = on_terminal(db(), before, {"--color", "never", "sessions"}, env);
    const std::vector<std::string> lines = lines_of(shown_lines);
    ASSERT_EQ(lines.size(), 4u) << shown_lines;
    for (const std::string& line : lines) {
      EXPECT_LE(line.size(), width) << line;
    }
    EXPECT_NE(lines[2].find("..."), std::string::npos) << lines[2];
    EXPECT_EQ(lines[2].find(tail), std::string::npos) << lines[2];
    EXPECT_EQ(lines[2].size(), width) << "the argv takes the rest of the line\n" << lines[2];
  }
  // -l and --no-trunc: whole on a terminal too.
  for (const std::string flag : {"-l", "--no-trunc"}) {
    const std::string whole = on_terminal(db(), "stty cols 100 rows 50;", {"--color", "never", flag, "sessions"});
    EXPECT_NE(whole.find(tail), std::string::npos) << flag << "\n" << whole;
  }
}

}  // namespace
}  // namespace trace2d::test

namespace trace2d::test {
namespace {

// The start-up log says one thing about the datagram socket's receive
// buffer, in the setting's terms (it said "4194304 bytes, less than the
// 8388608 wanted", then "receive buffer 8388608 bytes": the kernel's
// doubled figure).
TEST(DaemonLog, TheDgramReceiveBufferIsOneLineWithOneNumber) {
  TempDir dir;
  RunningDaemon daemon(dir, {"--dgram-receive-buffer-bytes", "65536"});
  const ProcessResult stopped = daemon.stop();
  ASSERT_EQ(stopped.exit_code, 0) << stopped.err;
  std::vector<std::string> lines;
  for (const std::string& line : lines_of(stopped.err)) {
    if (line.find("receive buffer") != std::string::npos) {
      lines.push_back(line);
    }
  }
  ASSERT_EQ(lines.size(), 1u) << stopped.err;
  // 65536 is below every default net.core.rmem_max, so it is had (or the
  // kernel's default, when that is larger: trace2d only ever raises it).
  std::smatch match;
  ASSERT_TRUE(std::regex_search(lines[0], match, std::regex("receive buffer (\\d+) bytes$"))) << lines[0];
  EXPECT_GE(std::stoll(match[1]), 65536) << lines[0];
  EXPECT_EQ(lines[0].find("less than"), std::string::npos) << lines[0];
}

}  // namespace
}  // namespace trace2d::test

namespace trace2d::test {
namespace {

// As git: a misspelt command is named, with the commands it may have meant.
TEST(CtlUsage, AnUnknownCommandGetsADidYouMean) {
  TempDir dir;
  for (const auto& [word, meant] : std::vector<std::pair<std::string, std::string>>{
           {"sesions", "\tsessions\n"}, {"shwo", "\tshow\n"}, {"tre", "\ttree\n"}, {"stat", "\tstats\n\tstatus\n"}}) {
    const ProcessResult r = ctl(dir.file("t.db"), {"--json", word});
    EXPECT_EQ(r.exit_code, 2) << word;
    EXPECT_NE(r.err.find("'" + word + "' is not a trace2ctl command"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("similar command"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(meant), std::string::npos) << word << ": " << r.err;
  }
  const ProcessResult frob = ctl(dir.file("t.db"), {"frob"});
  EXPECT_EQ(frob.exit_code, 2);
  EXPECT_NE(frob.err.find("The commands are: advice compare doctor export"), std::string::npos) << frob.err;
  // An unknown flag of a real command stays CLI11's message.
  const ProcessResult flag = ctl(dir.file("t.db"), {"sessions", "--frob"});
  EXPECT_EQ(flag.exit_code, 2);
  EXPECT_EQ(flag.err.find("is not a trace2ctl command"), std::string::npos) << flag.err;
}

}  // namespace
}  // namespace trace2d::test
