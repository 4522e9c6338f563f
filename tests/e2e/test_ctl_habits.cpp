// trace2ctl with the habits of journalctl, git and ps (issue 26): SIDs in
// every form the tables print them, journalctl's times, local times in
// tables, whole lines when piped, errors that say what to do. Real git, a
// real trace2d, real SQLite.

#include <gtest/gtest.h>

#include <algorithm>
#include <ctime>
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

// Waits until every session in `db` has finished and there are at least `count`.
bool wait_for_sessions(const std::string& db, int count) {
  return wait_until([&] {
    const ProcessResult r = ctl(db, {"--format", "tsv", "sql",
                                     "SELECT count(*), coalesce(sum(status = 'running'), 0) FROM sessions"});
    const auto tab = r.out.find('\t', r.out.find('\n') + 1);
    return r.exit_code == 0 && tab != std::string::npos &&
           std::stoi(r.out.substr(r.out.find('\n') + 1)) >= count && r.out.substr(tab + 1) == "0\n";
  });
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

}  // namespace
}  // namespace trace2d::test
