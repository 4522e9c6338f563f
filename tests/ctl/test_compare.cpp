// trace2ctl compare against a database whose every run is known: which
// populations the flags select, what each output format holds, which rows
// are called slower, and that failed runs and short samples are not.

#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "db/database_setup.hpp"
#include "db/sqlite.hpp"
#include "proto/timestamp.hpp"
#include "tests/ctl/sample_database.hpp"

namespace trace2d::test {
namespace {

constexpr std::int64_t k_first_name_id = 1000;  // above git's fixed names


// A database of runs inserted as the store writes them, regions included.
class CompareDatabase {
 public:
  CompareDatabase() : m_path(m_dir.file("trace2d.db")), m_now_us(proto::unix_now_us()), m_db(db::open_for_writing(m_path)) {}

  [[nodiscard]] const std::string& path() const { return m_path; }
  [[nodiscard]] std::string time_ago(std::int64_t ago_us) const { return proto::format_utc_timestamp(m_now_us - ago_us); }

  // A successful run unless `exit_code`; returns its sessions.id.
  std::int64_t add(const std::string& cmd, std::int64_t ago_us, double elapsed, int exit_code = 0,
                   const std::string& exe = "2.39.5", const std::string& worktree = "/src/a",
                   const std::optional<std::string>& nickname = std::nullopt) {
    const std::int64_t id = ++m_sessions;
    const std::string sid = "sid-" + std::to_string(id);
    const std::string start = time_ago(ago_us);
    db::Statement stmt = m_db.prepare(
        "INSERT INTO sessions (sid, id, root_sid, depth, exe, cmd_name, start_time, status, source, first_received,"
        " last_received, time_base_us, elapsed, exit_code, worktree, nickname)"
        " VALUES (?1, ?2, ?1, 0, ?3, ?4, ?5, 'complete', 'stream', ?5, ?5, ?6, ?7, ?8, ?9, ?10)");
    stmt.bind_text(1, sid);
    stmt.bind_int(2, id);
    stmt.bind_text(3, exe);
    stmt.bind_text(4, cmd);
    stmt.bind_text(5, start);
    stmt.bind_int(6, m_now_us - ago_us);
    stmt.bind_double(7, elapsed);
    stmt.bind_int(8, exit_code);
    stmt.bind_text(9, worktree);
    stmt.bind(10, nickname);
    stmt.run();
    return id;
  }

  // Says what git says of a process: its argv (a JSON array), and the
  // session that ran it (another of add()'s).
  void set_argv(std::int64_t session, const std::string& argv_json) {
    db::Statement stmt = m_db.prepare("UPDATE sessions SET argv = ?2 WHERE id = ?1");
    stmt.bind_int(1, session);
    stmt.bind_text(2, argv_json);
    stmt.run();
  }
  void set_parent(std::int64_t session, std::int64_t parent) {
    db::Statement stmt = m_db.prepare(
        "UPDATE sessions SET parent_sid = 'sid-' || ?2, depth = 1, root_sid = 'sid-' || ?2 WHERE id = ?1");
    stmt.bind_int(1, session);
    stmt.bind_int(2, parent);
    stmt.run();
  }

  void add_region(std::int64_t session, const std::string& category, const std::string& label, double elapsed) {
    db::Statement stmt = m_db.prepare(
        "INSERT INTO region_store (session, seq, thread, nesting, category, label, t_start, elapsed)"
        " VALUES (?1, ?2, NULL, 1, ?3, ?4, 0.001, ?5)");
    stmt.bind_int(1, session);
    stmt.bind_int(2, ++m_seq);
    stmt.bind_int(3, name(category));
    stmt.bind_int(4, name(label));
    stmt.bind_double(5, elapsed);
    stmt.run();
  }

  void add_hook(std::int64_t session, const std::string& hook, double elapsed) {
    db::Statement stmt = m_db.prepare(
        "INSERT INTO child_store (session, child_id, child_class, hook_name, argv, elapsed)"
        " VALUES (?1, ?2, 'hook', ?3, ?4, ?5)");
    stmt.bind_int(1, session);
    stmt.bind_int(2, ++m_seq);
    stmt.bind_text(3, hook);
    stmt.bind_text(4, "[\".git/hooks/" + hook + "\"]");
    stmt.bind_double(5, elapsed);
    stmt.run();
  }

 private:
  std::int64_t name(const std::string& text) {
    db::Statement find = m_db.prepare("SELECT id FROM names WHERE text = ?1");
    find.bind_text(1, text);
    if (find.step()) {
      return find.column_int(0);
    }
    db::Statement insert = m_db.prepare("INSERT INTO names (id, text) VALUES (?1, ?2)");
    insert.bind_int(1, k_first_name_id + ++m_names);
    insert.bind_text(2, text);
    insert.run();
    return k_first_name_id + m_names;
  }

  TempDir m_dir;
  std::string m_path;
  std::int64_t m_now_us;
  db::Database m_db;
  std::int64_t m_sessions = 0;
  std::int64_t m_seq = 0;
  std::int64_t m_names = 0;
};

// 20 runs of `status` 10 to 29 days ago at 100..119 ms, and 20 in the last
// 7 days at 130..149 ms (30% slower), its index:refresh region carrying the
// change; `fetch` unchanged (20 and 20); `gc` only 5 and 5; a failed
// status in the last days that would be the slowest of all.
void fill_default(CompareDatabase& db) {
  for (int i = 0; i < 20; ++i) {
    const std::int64_t before = db.add("status", (10 + i) * k_day_us, 0.100 + 0.001 * i);
    db.add_region(before, "index", "refresh", 0.050 + 0.001 * i);
    db.add_region(before, "progress", "scan", 0.020 + 0.0005 * i);
    const std::int64_t after = db.add("status", (1 + i) * k_hour_us, 0.130 + 0.001 * i);
    db.add_region(after, "index", "refresh", 0.080 + 0.001 * i);
    db.add_region(after, "progress", "scan", 0.0201 + 0.0005 * i);
    db.add("fetch", (10 + i) * k_day_us, 0.500 + 0.003 * i);
    db.add("fetch", (1 + i) * k_hour_us, 0.5015 + 0.003 * i);
  }
  for (int i = 0; i < 5; ++i) {
    db.add("gc", (12 + i) * k_day_us, 1.0);
    db.add("gc", (2 + i) * k_day_us, 9.0);
  }
  db.add("status", 3 * k_hour_us, 30.0, 1);
}

simdjson::dom::element parse(simdjson::dom::parser& parser, const std::string& text) {
  simdjson::dom::element doc;
  EXPECT_EQ(parser.parse(text).get(doc), simdjson::SUCCESS) << text;
  return doc;
}

std::string text(simdjson::dom::element e) { return std::string(e.get_string().value()); }

// The row of `kind`, `command` and `name` (null for a command).
std::optional<simdjson::dom::element> row(simdjson::dom::element doc, const std::string& kind,
                                          const std::string& command, const std::string& name = {}) {
  simdjson::dom::array rows;
  EXPECT_EQ(doc["rows"].get(rows), simdjson::SUCCESS);
  for (simdjson::dom::element r : rows) {
    const std::string row_name = r["name"].is_null() ? std::string() : text(r["name"]);
    if (text(r["kind"]) == kind && text(r["command"]) == command && row_name == name) {
      return r;
    }
  }
  return std::nullopt;
}

TEST(Trace2ctlCompare, LastWeekAgainstTheFourBefore) {
  CompareDatabase db;
  fill_default(db);
  const ProcessResult result = run_ctl({"--db", db.path(), "--json", "compare"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  simdjson::dom::parser parser;
  const simdjson::dom::element doc = parse(parser, result.out);
  EXPECT_EQ(doc["baseline"]["runs"].get_int64().value(), 45);  // 20 + 20 + 5; the failed run left out
  EXPECT_EQ(doc["target"]["runs"].get_int64().value(), 45);
  const auto baseline_since = proto::parse_utc_timestamp(text(doc["baseline"]["since"]));
  const auto split = proto::parse_utc_timestamp(text(doc["baseline"]["until"]));
  const auto target_until = proto::parse_utc_timestamp(text(doc["target"]["until"]));
  EXPECT_EQ(text(doc["target"]["since"]), text(doc["baseline"]["until"]));
  ASSERT_TRUE(baseline_since && split && target_until) << result.out;
  EXPECT_EQ(*target_until - *split, 7 * k_day_us);
  EXPECT_EQ(*split - *baseline_since, 28 * k_day_us);
  EXPECT_TRUE(doc["baseline"]["version"].is_null());
  EXPECT_EQ(doc["method"]["alpha"].get_double().value(), 0.01);
  EXPECT_EQ(doc["method"]["min_runs"].get_int64().value(), 8);

  const auto status = row(doc, "command", "status");
  ASSERT_TRUE(status) << result.out;
  EXPECT_EQ(text((*status)["verdict"]), "slower");
  EXPECT_EQ((*status)["baseline_runs"].get_int64().value(), 20);
  EXPECT_EQ((*status)["target_runs"].get_int64().value(), 20);
  EXPECT_DOUBLE_EQ((*status)["baseline_p50"].get_double().value(), 0.109);  // nearest rank 10 of 20
  EXPECT_DOUBLE_EQ((*status)["target_p90"].get_double().value(), 0.147);
  EXPECT_NEAR((*status)["change"].get_double().value(), 0.030, 1e-9);  // every difference's median
  EXPECT_NEAR((*status)["change_ratio"].get_double().value(), 0.030 / 0.109, 1e-9);
  EXPECT_EQ((*status)["u"].get_double().value(), 400);
  EXPECT_LT((*status)["p_adjusted"].get_double().value(), 1e-6);

  const auto fetch = row(doc, "command", "fetch");
  ASSERT_TRUE(fetch);
  EXPECT_EQ(text((*fetch)["verdict"]), "no change");
  const auto gc = row(doc, "command", "gc");
  ASSERT_TRUE(gc);
  EXPECT_EQ(text((*gc)["verdict"]), "too few runs");  // nine times slower, five runs a side
  EXPECT_TRUE((*gc)["p_value"].is_null());
  EXPECT_TRUE((*gc)["change"].is_null());

  // Regions only of the command that changed, and only the one that did.
  const auto refresh = row(doc, "region", "status", "index:refresh");
  ASSERT_TRUE(refresh) << result.out;
  EXPECT_EQ(text((*refresh)["verdict"]), "slower");
  EXPECT_NEAR((*refresh)["change"].get_double().value(), 0.030, 1e-9);
  const auto scan = row(doc, "region", "status", "progress:scan");
  ASSERT_TRUE(scan);
  EXPECT_EQ(text((*scan)["verdict"]), "no change");  // 0.1 ms: under 5 ms
  EXPECT_FALSE(row(doc, "region", "fetch", "index:refresh"));
}

TEST(Trace2ctlCompare, RowsComeCommandFirstThenItsParts) {
  CompareDatabase db;
  fill_default(db);
  const ProcessResult csv = run_ctl({"--db", db.path(), "--format", "csv", "compare", "--regions", "none"});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  const auto lines = split_lines(csv.out);
  ASSERT_EQ(lines.size(), 4u) << csv.out;
  EXPECT_EQ(lines[0],
            "kind,command,name,baseline_runs,target_runs,baseline_p50,target_p50,baseline_p90,target_p90,change,"
            "change_low,change_high,change_ratio,u,p_value,p_adjusted,exact,verdict");
  EXPECT_EQ(lines[1].rfind("command,status,,20,20,", 0), 0u) << lines[1];
  EXPECT_EQ(lines[2].rfind("command,fetch,,20,20,", 0), 0u) << lines[2];
  EXPECT_EQ(lines[3].rfind("command,gc,,5,5,", 0), 0u) << lines[3];
  EXPECT_EQ(lines[3].substr(lines[3].size() - 13), ",too few runs");

  const ProcessResult table = run_ctl({"--db", db.path(), "compare"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  const auto out = split_lines(table.out);
  ASSERT_GE(out.size(), 10u) << table.out;
  EXPECT_EQ(out[0].rfind("baseline: ", 0), 0u);
  EXPECT_NE(out[0].find(": 45 runs"), std::string::npos) << out[0];
  EXPECT_EQ(out[1].rfind("target:   ", 0), 0u);
  EXPECT_NE(out[2].find("Mann-Whitney U"), std::string::npos);
  EXPECT_EQ(out[4].rfind("command  part ", 0), 0u) << out[4];
  // status (30.0 ms slower), then its slower region, then the unchanged one.
  EXPECT_EQ(out[6].rfind("status", 0), 0u) << table.out;
  EXPECT_NE(out[6].find("30.0"), std::string::npos) << out[6];
  EXPECT_EQ(out[6].substr(out[6].size() - 6), "slower");
  EXPECT_NE(out[7].find("region index:refresh"), std::string::npos) << table.out;
  EXPECT_NE(out[8].find("region progress:scan"), std::string::npos) << table.out;
  EXPECT_EQ(out[9].rfind("fetch", 0), 0u) << table.out;
}

TEST(Trace2ctlCompare, TwoVersionsOverTheSameWindow) {
  CompareDatabase db;
  for (int i = 0; i < 12; ++i) {
    const std::int64_t old_run = db.add("commit", (1 + 2 * i) * k_hour_us, 0.040 + 0.001 * i, 0, "2.39.5");
    db.add_hook(old_run, "pre-commit", 0.010 + 0.0005 * i);
    const std::int64_t new_run = db.add("commit", (2 + 2 * i) * k_hour_us, 0.090 + 0.001 * i, 0, "2.43.0");
    db.add_hook(new_run, "pre-commit", 0.060 + 0.0005 * i);
  }
  const ProcessResult result = run_ctl({"--db", db.path(), "--json", "compare", "--baseline-version", "2.39.5",
                                        "--target-version", "2.43.0", "--since", "-2d"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  simdjson::dom::parser parser;
  const simdjson::dom::element doc = parse(parser, result.out);
  EXPECT_EQ(text(doc["baseline"]["version"]), "2.39.5");
  EXPECT_EQ(text(doc["target"]["since"]), text(doc["baseline"]["since"]));  // not split in time
  const auto commit = row(doc, "command", "commit");
  ASSERT_TRUE(commit) << result.out;
  EXPECT_EQ(text((*commit)["verdict"]), "slower");
  EXPECT_EQ((*commit)["exact"].get_int64().value(), 1);  // 24 values, no ties: counted exactly
  EXPECT_NEAR((*commit)["change"].get_double().value(), 0.050, 1e-9);
  const auto hook = row(doc, "child", "commit", "hook:pre-commit");
  ASSERT_TRUE(hook) << result.out;
  EXPECT_EQ(text((*hook)["verdict"]), "slower");
  EXPECT_NEAR((*hook)["change"].get_double().value(), 0.050, 1e-9);

  // The same version on both sides: nothing to report.
  const ProcessResult same = run_ctl({"--db", db.path(), "--json", "compare", "--baseline-version", "2.43.0",
                                      "--target-version", "2.43.0", "--since", "-2d"});
  ASSERT_EQ(same.exit_code, 0) << same.err;
  const simdjson::dom::element same_doc = parse(parser, same.out);
  const auto same_commit = row(same_doc, "command", "commit");
  ASSERT_TRUE(same_commit);
  EXPECT_EQ(text((*same_commit)["verdict"]), "no change");
  EXPECT_DOUBLE_EQ((*same_commit)["p_value"].get_double().value(), 1.0);
}

TEST(Trace2ctlCompare, TwoRepositoriesByPathOrNickname) {
  CompareDatabase db;
  for (int i = 0; i < 10; ++i) {
    db.add("status", (1 + i) * k_hour_us, 0.020 + 0.001 * i, 0, "2.39.5", "/src/small");
    db.add("status", (1 + i) * k_hour_us + k_minute_us, 0.400 + 0.001 * i, 0, "2.39.5", "/src/big", "monorepo");
  }
  // As the listings' --repo: the nickname, the path, or its last
  // components as the repository column shows them.
  for (const std::string big : {"/src/big", "monorepo", "big", "src/big"}) {
    const ProcessResult result = run_ctl({"--db", db.path(), "--json", "compare", "--baseline-repo", "/src/small",
                                          "--target-repo", big, "--since", "-1d"});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    simdjson::dom::parser parser;
    const simdjson::dom::element doc = parse(parser, result.out);
    EXPECT_EQ(doc["baseline"]["runs"].get_int64().value(), 10);
    EXPECT_EQ(doc["target"]["runs"].get_int64().value(), 10);
    const auto status = row(doc, "command", "status");
    ASSERT_TRUE(status) << result.out;
    EXPECT_EQ(text((*status)["verdict"]), "slower");
    EXPECT_DOUBLE_EQ((*status)["p_value"].get_double().value(), 2.0 / 184756);  // C(20, 10)
  }
}

TEST(Trace2ctlCompare, ExplicitWindowsAndCmd) {
  CompareDatabase db;
  fill_default(db);
  // Two windows of the baseline's own weeks: status the same speed.
  const ProcessResult result =
      run_ctl({"--db", db.path(), "--json", "compare", "--baseline-since", db.time_ago(29 * k_day_us + 12 * k_hour_us),
               "--baseline-until", db.time_ago(19 * k_day_us + 12 * k_hour_us), "--target-since",
               db.time_ago(19 * k_day_us + 12 * k_hour_us), "--target-until", db.time_ago(9 * k_day_us),
               "--cmd", "status", "--min-runs", "5", "--min-change-pct", "5"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  simdjson::dom::parser parser;
  const simdjson::dom::element doc = parse(parser, result.out);
  const auto status = row(doc, "command", "status");
  ASSERT_TRUE(status) << result.out;
  EXPECT_EQ((*status)["baseline_runs"].get_int64().value(), 10);  // 20..29 days ago
  EXPECT_EQ((*status)["target_runs"].get_int64().value(), 10);    // 10..19
  EXPECT_EQ(text((*status)["verdict"]), "faster");  // 110..119 ms then 100..109 ms: 9%
  EXPECT_FALSE(row(doc, "command", "fetch"));
  // --cmd looks into every region of the command it names.
  EXPECT_TRUE(row(doc, "region", "status", "progress:scan"));
}

TEST(Trace2ctlCompare, RefusesAnEmptyWindowAndBadFlags) {
  CompareDatabase db;
  const ProcessResult empty = run_ctl({"--db", db.path(), "compare", "--split", "-40d"});
  EXPECT_EQ(empty.exit_code, 1);
  EXPECT_NE(empty.err.find("the baseline window is empty"), std::string::npos) << empty.err;
  EXPECT_EQ(run_ctl({"--db", db.path(), "compare", "--since", "soon"}).exit_code, 2);
  EXPECT_EQ(run_ctl({"--db", db.path(), "compare", "--alpha", "2"}).exit_code, 2);
  EXPECT_EQ(run_ctl({"--db", db.path(), "compare", "--min-runs", "1"}).exit_code, 2);
  EXPECT_EQ(run_ctl({"--db", db.path(), "compare", "--regions", "some"}).exit_code, 2);
  const ProcessResult nothing = run_ctl({"--db", db.path(), "compare"});
  EXPECT_EQ(nothing.exit_code, 0) << nothing.err;
  EXPECT_NE(nothing.out.find("no successful runs in either population"), std::string::npos) << nothing.out;
}

// `git st` (alias.st = status) runs 10 times a window, 100 ms slower in
// the target; each runs `git status` as its child session, which holds the
// region. `git submodule status` (git's `_run_dashed_`) the same speed.
void fill_aliases(CompareDatabase& db) {
  for (int i = 0; i < 10; ++i) {
    for (const bool target : {false, true}) {
      const std::int64_t ago = target ? (1 + i) * k_hour_us : (10 + i) * k_day_us;
      const double slower = target ? 0.100 : 0;
      const std::int64_t alias = db.add("_run_git_alias_", ago, 0.150 + slower + 0.001 * i);
      db.set_argv(alias, R"(["git","st"])");
      const std::int64_t status = db.add("status", ago - 1000, 0.140 + slower + 0.001 * i);
      db.set_argv(status, R"(["git","status"])");
      db.set_parent(status, alias);
      db.add_region(status, "index", "refresh", 0.050 + slower + 0.001 * i);
      const std::int64_t submodule = db.add("_run_dashed_", ago + k_minute_us, 0.300 + 0.001 * i);
      db.set_argv(submodule, R"(["git","submodule","status"])");
    }
  }
}

TEST(Trace2ctlCompare, RunsAreWhatTheUserRanUnderTheNamesTheListingsShow) {
  CompareDatabase db;
  fill_aliases(db);
  simdjson::dom::parser parser;
  const ProcessResult result = run_ctl({"--db", db.path(), "--json", "compare"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  simdjson::dom::element doc = parse(parser, result.out);
  EXPECT_EQ(doc["baseline"]["runs"].get_int64().value(), 20) << "the alias's status is no run of its own";
  const auto alias = row(doc, "command", "st");
  ASSERT_TRUE(alias) << result.out;
  EXPECT_EQ((*alias)["baseline_runs"].get_int64().value(), 10);
  EXPECT_EQ(text((*alias)["verdict"]), "slower");
  EXPECT_NEAR((*alias)["change"].get_double().value(), 0.100, 1e-9);
  const auto submodule = row(doc, "command", "submodule");
  ASSERT_TRUE(submodule) << result.out;
  EXPECT_EQ(text((*submodule)["verdict"]), "no change");
  for (const char* hidden : {"status", "_run_git_alias_", "_run_dashed_"}) {
    EXPECT_FALSE(row(doc, "command", hidden)) << hidden << ": " << result.out;
  }
  // A region is compared under its own process's group: the status's
  // refresh is not the alias's.
  EXPECT_FALSE(row(doc, "region", "st", "index:refresh")) << result.out;

  // --all: every git process, each under its own name, its regions with it.
  const ProcessResult all = run_ctl({"--db", db.path(), "--json", "compare", "--all"});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  doc = parse(parser, all.out);
  EXPECT_EQ(doc["baseline"]["runs"].get_int64().value(), 30);
  const auto status = row(doc, "command", "status");
  ASSERT_TRUE(status) << all.out;
  EXPECT_EQ(text((*status)["verdict"]), "slower");
  EXPECT_TRUE(row(doc, "command", "st"));
  const auto refresh = row(doc, "region", "status", "index:refresh");
  ASSERT_TRUE(refresh) << all.out;
  EXPECT_EQ(text((*refresh)["verdict"]), "slower");
  EXPECT_FALSE(row(doc, "region", "st", "index:refresh")) << all.out;
}

TEST(Trace2ctlCompare, CmdTakesTheListingsForms) {
  CompareDatabase db;
  fill_aliases(db);
  fill_default(db);
  // The commands a --cmd selection keeps, in the JSON's rows.
  const auto commands = [&db](std::vector<std::string> cmd_args) {
    cmd_args.insert(cmd_args.begin(), {"--db", db.path(), "--json", "compare", "--regions", "none"});
    const ProcessResult r = run_ctl(cmd_args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    simdjson::dom::parser parser;
    const simdjson::dom::element doc = parse(parser, r.out);
    std::vector<std::string> names;
    simdjson::dom::array rows;
    EXPECT_EQ(doc["rows"].get(rows), simdjson::SUCCESS) << r.out;
    for (simdjson::dom::element row : rows) {
      names.push_back(text(row["command"]));
    }
    std::sort(names.begin(), names.end());
    return names;
  };
  const std::vector<std::string> both{"st", "submodule"};
  EXPECT_EQ(commands({"--cmd", "st,submodule"}), both);
  EXPECT_EQ(commands({"--cmd", "st", "--cmd", "submodule"}), both);
  EXPECT_EQ(commands({"--cmd", "_run_dashed_"}), std::vector<std::string>{"submodule"}) << "git's own name";
  EXPECT_EQ(commands({"--cmd", "status"}), std::vector<std::string>{"status"}) << "the user's status runs";
  EXPECT_EQ(commands({"--cmd", "status", "--all"}), std::vector<std::string>{"status"});
  EXPECT_EQ(commands({"--cmd", "st,fetch", "--cmd", "gc"}), (std::vector<std::string>{"fetch", "gc", "st"}));
}

}  // namespace
}  // namespace trace2d::test
