// The bad-input corpus (tests/data/bad/): every case sent over a real stream
// socket to a real trace2d, each followed by a good line, on one connection.
// Each case must end as tests/data/bad/expected.tsv says (a reject with its
// reason, or an event stored whole / with its problem noted / with a field
// left absent), every good line must be stored, and trace2d must keep
// running.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tests/e2e/daemon_fixture.hpp"
#include "tests/support/socket_client.hpp"

namespace trace2d::test {
namespace {

const std::filesystem::path k_corpus = std::filesystem::path(TRACE2D_TEST_DATA) / "bad";
constexpr std::size_t k_reject_raw_bytes = 64 * 1024;

struct Expectation {
  std::string outcome;  // reject, event, problem (one per line), check (SQL)
  std::string detail;
};

struct BadCase {
  std::string name;
  std::string bytes;
  std::vector<std::string> lines;         // as the framer splits them
  std::vector<Expectation> per_line;      // reject / event / problem, in line order
  std::vector<std::string> checks;        // SQL returning 1
};

std::vector<std::string> split_lines(const std::string& bytes) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  for (std::size_t newline = bytes.find('\n'); newline != std::string::npos;
       newline = bytes.find('\n', start)) {
    lines.push_back(bytes.substr(start, newline - start));
    start = newline + 1;
  }
  if (start < bytes.size()) {
    lines.push_back(bytes.substr(start));
  }
  return lines;
}

std::vector<BadCase> load_corpus() {
  std::map<std::string, BadCase> cases;
  for (const auto& entry : std::filesystem::directory_iterator(k_corpus)) {
    if (entry.path().extension() == ".jsonl") {
      BadCase& c = cases[entry.path().filename().string()];
      c.name = entry.path().filename().string();
      c.bytes = read_file(entry.path());
      c.lines = split_lines(c.bytes);
    }
  }
  std::ifstream tsv(k_corpus / "expected.tsv");
  std::string row;
  while (std::getline(tsv, row)) {
    if (row.empty() || row.front() == '#') {
      continue;
    }
    std::istringstream fields(row);
    std::string name;
    Expectation e;
    std::getline(fields, name, '\t');
    std::getline(fields, e.outcome, '\t');
    std::getline(fields, e.detail);
    const auto found = cases.find(name);
    if (found == cases.end()) {
      throw std::runtime_error("expected.tsv names a missing case: " + name);
    }
    if (e.outcome == "check") {
      found->second.checks.push_back(e.detail);
    } else {
      found->second.per_line.push_back(e);
    }
  }
  std::vector<BadCase> sorted;
  for (auto& [name, c] : cases) {
    sorted.push_back(std::move(c));
  }
  return sorted;
}

// The case number, "07" of "07-raw-control-char.jsonl": names its good line.
std::string case_number(const BadCase& c) { return c.name.substr(0, c.name.find('-')); }

TEST(BadInput, CorpusIsCompleteAndWellFormed) {
  const std::vector<BadCase> corpus = load_corpus();
  EXPECT_GE(corpus.size(), 30U);
  std::map<std::string, int> outcomes;
  for (const BadCase& c : corpus) {
    SCOPED_TRACE(c.name);
    // Each file holds whole lines: a case must not run into the good line after it.
    ASSERT_FALSE(c.bytes.empty());
    EXPECT_EQ(c.bytes.back(), '\n');
    EXPECT_EQ(c.per_line.size(), c.lines.size()) << "one expected.tsv row per line";
    for (const Expectation& e : c.per_line) {
      EXPECT_TRUE(e.outcome == "reject" || e.outcome == "event" || e.outcome == "problem") << e.outcome;
      ++outcomes[e.outcome];
    }
  }
  // The corpus exercises all three outcomes.
  EXPECT_GT(outcomes["reject"], 10);
  EXPECT_GT(outcomes["event"], 10);
  EXPECT_GT(outcomes["problem"], 10);
}

TEST(BadInput, EachCaseIsStoredAsExpectedAndGoodLinesAroundItAreKept) {
  const std::vector<BadCase> corpus = load_corpus();
  TempDir dir;
  RunningDaemon daemon(dir);
  {
    // One connection for everything: no bad line may disturb the next one.
    SocketClient client(daemon.socket_path());
    ASSERT_TRUE(client.send(event_line("good-start", "version")));
    for (const BadCase& c : corpus) {
      ASSERT_TRUE(client.send(c.bytes)) << c.name;
      ASSERT_TRUE(client.send(event_line("good-" + case_number(c), "version"))) << c.name;
    }
  }
  // Still running, and still accepting connections.
  ASSERT_TRUE(daemon.process().running());
  {
    SocketClient again(daemon.socket_path());
    ASSERT_TRUE(again.send(event_line("good-after", "version")));
  }
  const ProcessResult result = daemon.stop();
  ASSERT_EQ(result.exit_code, 0) << result.err;

  db::Database db = open_db(daemon.db_path());
  db::Statement rejects = db.prepare("SELECT reason, CAST(raw AS BLOB), size FROM rejects ORDER BY id");
  db::Statement find_event = db.prepare(
      "SELECT e.sid, e.raw IS NOT NULL, substr(s.body, 1, 1) = '{', json_valid(e.json),"
      "       (SELECT message FROM problems p WHERE p.sid = e.sid AND p.seq = e.seq)"
      "  FROM events e JOIN event_store s ON s.session = e.id >> 32 AND s.seq = e.seq"
      " WHERE CAST(coalesce(e.raw, e.json) AS BLOB) = ?1");
  std::size_t stored_events = 0;
  for (const BadCase& c : corpus) {
    SCOPED_TRACE(c.name);
    ASSERT_EQ(c.per_line.size(), c.lines.size());
    for (std::size_t i = 0; i < c.lines.size(); ++i) {
      const std::string& line = c.lines[i];
      const Expectation& e = c.per_line[i];
      if (e.outcome == "reject") {
        ASSERT_TRUE(rejects.step()) << "no reject row for line " << i;
        EXPECT_NE(std::string(rejects.column_text(0)).find(e.detail), std::string::npos)
            << "reason '" << rejects.column_text(0) << "', expected '" << e.detail << "'";
        EXPECT_EQ(rejects.column_blob(1), line.substr(0, k_reject_raw_bytes));
        EXPECT_EQ(rejects.column_int(2), static_cast<std::int64_t>(line.size()));
        continue;
      }
      // An event: found by the promise that coalesce(raw, json) is what arrived.
      find_event.reset();
      find_event.bind_blob(1, line);
      ASSERT_TRUE(find_event.step()) << "line " << i << " not stored as an event";
      ++stored_events;
      EXPECT_EQ(find_event.column_int(3), 1) << "json is not valid JSON";
      const bool has_raw = find_event.column_int(1) == 1;
      const bool whole = find_event.column_int(2) == 1;
      const std::string problems = find_event.column_is_null(4) ? "" : std::string(find_event.column_text(4));
      if (e.outcome == "problem") {
        EXPECT_NE(problems.find(e.detail), std::string::npos)
            << "problems '" << problems << "', expected '" << e.detail << "'";
        continue;
      }
      EXPECT_EQ(problems, "");
      std::istringstream flags(e.detail);
      for (std::string flag; flags >> flag;) {
        if (flag == "exact") {
          EXPECT_FALSE(has_raw) << "raw kept";
          EXPECT_FALSE(whole) << "stored whole";
        } else if (flag == "whole") {
          EXPECT_TRUE(whole) << "stored in git's layout";
        } else if (flag == "raw") {
          EXPECT_TRUE(has_raw) << "raw not kept";
        } else {
          ADD_FAILURE() << "unknown flag " << flag;
        }
      }
      EXPECT_FALSE(find_event.step()) << "line " << i << " stored twice";
    }
    for (const std::string& check : c.checks) {
      EXPECT_EQ(db.query_int(check), 1) << check;
    }
    // The good line after the case: stored, alone in its session.
    EXPECT_EQ(db.query_int("SELECT event_count FROM sessions WHERE sid = 'good-" + case_number(c) + "'"), 1);
  }
  EXPECT_FALSE(rejects.step()) << "more rejects than expected: " << rejects.column_text(0);
  // Nothing else became an event: the cases' events, and the good lines.
  EXPECT_EQ(db.query_int("SELECT count(*) FROM events WHERE sid NOT LIKE 'good-%'"),
            static_cast<std::int64_t>(stored_events));
  EXPECT_EQ(db.query_int("SELECT count(*) FROM events WHERE sid LIKE 'good-%'"),
            static_cast<std::int64_t>(corpus.size() + 2));
  EXPECT_EQ(db.query_text("PRAGMA integrity_check"), "ok");
}

}  // namespace
}  // namespace trace2d::test
