// What one local user can store (trace2d's sockets are open to all) must not
// break trace2ctl for the others: crafted sessions, imported by the real
// `trace2d import` (the daemon's own pipeline), next to a real git fetch,
// then read by the real trace2ctl.

#include <gtest/gtest.h>
#include <simdjson.h>

#include <filesystem>
#include <string>
#include <vector>

#include "ctl/output/unsafe_text.hpp"
#include "proto/utf8.hpp"
#include "tests/ctl/imported_traces.hpp"
#include "tests/ctl/sample_database.hpp"

namespace trace2d::test {
namespace {

constexpr const char* k_crafted_sid = "20261122T100000.000000Z-H0a7c9cdf-P00002000";

std::string line_of(const std::string& sid, const std::string& event, const std::string& thread,
                    const std::string& time, const std::string& fields) {
  return R"({"event":")" + event + R"(","sid":")" + sid + R"(","thread":")" + thread +
         R"(","time":"2026-11-22T10:00:00.)" + time + R"(Z","file":"x.c","line":1)" + fields + "}\n";
}

std::string line(const std::string& event, const std::string& thread, const std::string& time,
                 const std::string& fields) {
  return line_of(k_crafted_sid, event, thread, time, fields);
}

// Issue 10, item 9: a region and then a child on thread th01:worker (which
// sent no thread_start), elapsed 1e9 s so that it is the slowest run and
// every `report` draws it. It made report --html, tree and export fail with
// "std::get: wrong index for variant".
std::string crafted_session() {
  return line("version", "main", "000010", R"(,"evt":"3","exe":"2.39.5")") +
         line("start", "main", "000020", R"(,"t_abs":0.00002,"argv":["git","status"])") +
         line("cmd_name", "main", "000030", R"(,"name":"status","hierarchy":"status")") +
         line("region_enter", "th01:worker", "000100", R"(,"nesting":1,"category":"work","label":"crafted")") +
         line("region_leave", "th01:worker", "000200",
              R"(,"t_rel":0.0001,"nesting":1,"category":"work","label":"crafted")") +
         line("child_start", "th01:worker", "000300",
              R"(,"child_id":0,"child_class":"?","use_shell":false,"argv":["true"])") +
         line("child_exit", "th01:worker", "000400", R"(,"child_id":0,"pid":1,"code":0,"t_rel":1000000000)") +
         line("exit", "main", "000500", R"(,"t_abs":1000000000,"code":0)") +
         line("atexit", "main", "000600", R"(,"t_abs":1000000000,"code":0)");
}

// A database holding `trace` and the captured git fetch.
class HostileDatabase {
 public:
  explicit HostileDatabase(const std::string& trace) {
    write_file(m_dir.file("crafted.jsonl"), trace);
    ProcessSpec spec;
    spec.argv = {TRACE2D_BIN, "--config", "", "import", "--db", path(), m_dir.file("crafted.jsonl"),
                 (std::filesystem::path(TRACE2D_TEST_DATA) / "traces" / "fetch.jsonl").string()};
    const ProcessResult result = run_process(spec);
    EXPECT_EQ(result.exit_code, 0) << result.err;
  }
  [[nodiscard]] std::string path() const { return m_dir.file("t.db"); }
  [[nodiscard]] std::string file(const std::string& name) const { return m_dir.file(name); }

 private:
  TempDir m_dir;
};

TEST(HostileData, ACraftedThreadChildBreaksNeitherTreeNorExportNorReport) {
  const HostileDatabase db(crafted_session());

  const ProcessResult tree = run_ctl({"--db", db.path(), "tree", k_crafted_sid, "--no-times"});
  ASSERT_EQ(tree.exit_code, 0) << tree.err;
  EXPECT_EQ(tree.out,
            "status  git status  [pid 8192, exit 0]\n"
            "└─ thread th01:worker\n"
            "   ├─ work:crafted\n"
            "   └─ child 0: true  [pid 1, exit 0]\n");

  const ProcessResult exported = run_ctl({"--db", db.path(), "export", k_crafted_sid});
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  simdjson::dom::parser parser;
  simdjson::dom::element trace;
  ASSERT_EQ(parser.parse(exported.out).get(trace), simdjson::SUCCESS);
  EXPECT_GT(trace["traceEvents"].get_array().size(), 3u);

  // The report draws the crafted run (the slowest) and the others.
  const std::string html_file = db.file("r.html");
  const ProcessResult report = run_ctl({"--db", db.path(), "report", "--html", html_file});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  const std::string html = read_file(html_file);
  EXPECT_NE(html.find(std::string("data-sid=\"") + k_crafted_sid + "\""), std::string::npos);
  EXPECT_NE(html.find(std::string("data-sid=\"") + k_fetch_sid + "\""), std::string::npos);
  EXPECT_NE(html.find("data-name=\"crafted\""), std::string::npos);
}

// Execs a sender made up: a repeated exec_id (an exec_result answers the
// latest), 20,000 exec_results that answer nothing, then an exec that
// worked, and a session with the same pid that replaced the process. The
// tree, the Chrome trace and the OTLP export pair and place them all.
TEST(HostileData, ExecFloodsArePairedByIdAndThePidsGitHangsUnderItsExec) {
  std::string trace = line("version", "main", "000010", R"(,"evt":"3","exe":"2.39.5")") +
                      line("start", "main", "000020", R"(,"t_abs":0.00002,"argv":["git-shell","-c","x"])") +
                      line("exec", "main", "000100", R"(,"exec_id":7,"argv":["first"])") +
                      line("exec", "main", "000110", R"(,"exec_id":7,"argv":["second"])") +
                      line("exec_result", "main", "000120", R"(,"exec_id":7,"code":-1)");
  for (int i = 0; i < 20000; ++i) {
    const std::string us = std::to_string(200 + i);
    trace += line("exec_result", "main", std::string(6 - us.size(), '0') + us,
                  R"(,"exec_id":)" + std::to_string(1000 + i) + R"(,"code":-1)");
  }
  trace += line("exec", "main", "300000", R"(,"exec_id":5,"exe":"git","argv":["git","upload-pack","r"])");
  const std::string git_sid = std::string(k_crafted_sid) + "/20261122T100000.400000Z-H0a7c9cdf-P00002000";
  const auto git_line = [&](const std::string& event, const std::string& time, const std::string& fields) {
    return line_of(git_sid, event, "main", time, fields);
  };
  trace += git_line("version", "400000", R"(,"evt":"3","exe":"2.39.5")") +
           git_line("start", "400010", R"(,"t_abs":0.00001,"argv":["git","upload-pack","r"])") +
           git_line("cmd_name", "400020", R"(,"name":"upload-pack","hierarchy":"upload-pack")") +
           git_line("exit", "500000", R"(,"t_abs":0.1,"code":0)");
  const HostileDatabase db(trace);

  // All of it (tree reads a session's first 20,000 events by default, and
  // this one has 20,006).
  const ProcessResult tree = run_ctl({"--db", db.path(), "tree", k_crafted_sid, "--no-times", "--max-events", "0"});
  ASSERT_EQ(tree.exit_code, 0) << tree.err;
  EXPECT_EQ(tree.out,
            "git-shell  git-shell -c x  [pid 8192, incomplete]\n"
            "├─ exec 7: first  [replaced the process]\n"
            "├─ exec 7: second  [failed, code -1]\n"
            "└─ exec 5 git: git upload-pack r  [replaced the process]\n"
            "   └─ upload-pack  [pid 8192, exit 0]\n");
  const ProcessResult exported = run_ctl({"--db", db.path(), "export", k_crafted_sid});
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  const ProcessResult otlp = run_ctl({"--db", db.path(), "export", "--format", "otlp-json", k_crafted_sid});
  ASSERT_EQ(otlp.exit_code, 0) << otlp.err;
  EXPECT_NE(otlp.out.find(R"x("name":"exec(git)")x"), std::string::npos);
}

// Issue 10: U+009B (CSI) and the other C1 controls, sent as JSON escapes
// or as raw bytes (git copies bytes unchecked, so a line may hold a lone
// 0x9b too), reached the terminal raw through tree, show and tables.
TEST(HostileData, NoControlSequenceReachesTheTerminal) {
  const std::string csi = "\\u009b2J\\u0085\\u001b[31m";  // JSON escapes: CSI, NEL, ESC
  const std::string raw = "\xc2\x9b" "2J \x9b" "2J";          // UTF-8 CSI, and a lone CSI byte
  const HostileDatabase db(
      line("version", "main", "000010", R"(,"evt":"3","exe":"2.39.5")") +
      line("start", "main", "000020", R"(,"t_abs":0.00002,"argv":["git",")" + csi + R"(",")" + raw + R"("])") +
      line("cmd_name", "main", "000030", R"(,"name":")" + csi + R"(","hierarchy":"x")") +
      line("region_enter", "main", "000100",
           R"(,"nesting":1,"category":")" + csi + R"(","label":")" + raw + R"(","msg":")" + csi + R"(")") +
      line("region_leave", "main", "000200",
           R"(,"t_rel":0.0001,"nesting":1,"category":")" + csi + R"(","label":")" + raw + R"(")") +
      line("exit", "main", "000500", R"(,"t_abs":0.0005,"code":0)"));
  for (const std::vector<std::string>& command :
       {std::vector<std::string>{"tree", k_crafted_sid}, {"show", k_crafted_sid}, {"sessions"},
        {"top", "--by", "regions"}, {"sql", "SELECT category, label, msg FROM regions"}}) {
    std::vector<std::string> args{"--db", db.path()};
    args.insert(args.end(), command.begin(), command.end());
    const ProcessResult result = run_ctl(args);
    SCOPED_TRACE(command.front());
    ASSERT_EQ(result.exit_code, 0) << result.err;
    EXPECT_NE(result.out.find("\\u009b2J"), std::string::npos) << result.out;
    for (std::size_t i = 0; i < result.out.size(); ++i) {
      const auto byte = static_cast<unsigned char>(result.out[i]);
      ASSERT_TRUE(byte == '\n' || (byte >= 0x20 && byte != 0x7F)) << "control byte " << int{byte} << " at " << i;
      ASSERT_FALSE(byte == 0xC2 && i + 1 < result.out.size() &&
                   (static_cast<unsigned char>(result.out[i + 1]) & 0xE0) == 0x80)
          << "C1 control at " << i;
      ASSERT_NE(byte, 0x9B) << "a lone CSI byte at " << i;
    }
  }
}

// Issue 24, finding 9: U+202E, U+2028, U+200B, U+2066 reached the terminal
// in `sessions`, `stats` and `top`, and U+009B was raw in JSON, CSV and TSV.
// Every bidi, separator and invisible character, sent as JSON escapes and as
// raw UTF-8 by a crafted line through the real pipeline, reaches no output
// of any command in any format as itself; JSON keeps the data.
TEST(HostileData, NoBidiOrInvisibleCharacterReachesAnyOutput) {
  const std::string escapes =
      "\\u202e\\u2028\\u2029\\u200b\\u2066\\u2067\\u2068\\u2069\\u202a\\u202b\\u202c\\u202d\\u200e\\u200f"
      "\\u061c\\ufeff\\u009b\\u00ad";
  const std::string decoded =
      "\xe2\x80\xae\xe2\x80\xa8\xe2\x80\xa9\xe2\x80\x8b\xe2\x81\xa6\xe2\x81\xa7\xe2\x81\xa8\xe2\x81\xa9"
      "\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xac\xe2\x80\xad\xe2\x80\x8e\xe2\x80\x8f\xd8\x9c\xef\xbb\xbf\xc2\x9b\xc2\xad";
  const std::string name = "gpj" + escapes + "exe";  // the command's name, as a JSON escape
  const std::string raw = "gpj" + decoded + "exe";   // a region's label, as raw UTF-8
  const HostileDatabase db(
      line("version", "main", "000010", R"(,"evt":"3","exe":"2.39.5")") +
      line("start", "main", "000020", R"(,"t_abs":0.00002,"argv":["git",")" + name + R"(",")" + raw + R"("])") +
      line("cmd_name", "main", "000030", R"(,"name":")" + name + R"(","hierarchy":")" + name + R"(")") +
      line("region_enter", "main", "000100",
           R"(,"nesting":1,"category":")" + name + R"(","label":")" + raw + R"(","msg":")" + name + R"(")") +
      line("region_leave", "main", "000200",
           R"(,"t_rel":0.0001,"nesting":1,"category":")" + name + R"(","label":")" + raw + R"(")") +
      line("data", "main", "000300", R"(,"t_abs":0.0003,"t_rel":0.0003,"nesting":1,"category":")" + name +
                                         R"(","key":")" + name + R"(","value":")" + raw + R"(")") +
      line("exit", "main", "000500", R"(,"t_abs":1000,"code":0)"));
  const std::string whole = "gpj" + decoded + "exe";
  // What no output may hold: any unsafe character but the line breaks (and
  // TSV's tab separators).
  const auto expect_neutralised = [&](const std::string& out, bool tabs) {
    ASSERT_TRUE(proto::is_valid_utf8(out));
    for (std::size_t i = 0; i < out.size(); ++i) {
      char32_t c = 0;
      if (ctl::unsafe_character_at(out, i, c) > 0 && c != '\n' && !(tabs && c == '\t')) {
        ADD_FAILURE() << "U+" << std::hex << static_cast<std::uint32_t>(c) << " at " << std::dec << i << " in:\n"
                      << out.substr(i > 200 ? i - 200 : 0, 400);
        return;
      }
    }
    EXPECT_NE(out.find("gpj\\u202e\\u2028"), std::string::npos) << "shown, as its escape: " << out.substr(0, 2000);
  };
  for (const std::string format : {"table", "json", "csv", "tsv"}) {
    for (const std::vector<std::string>& command :
         {std::vector<std::string>{"sessions"}, {"top"}, {"top", "--by", "regions"}, {"stats"},
          {"stats", "--by", "regions"}, {"sql", "SELECT cmd_name, argv, category, label, msg FROM sessions JOIN regions USING (sid)"},
          {"tree", k_crafted_sid}, {"show", k_crafted_sid}, {"export", k_crafted_sid}}) {
      const bool one_table = command.front() != "tree" && command.front() != "show" && command.front() != "export";
      if (!one_table && (format == "csv" || format == "tsv")) {
        continue;  // refused by those commands
      }
      if (command.front() == "export" && format != "table") {
        continue;
      }
      std::vector<std::string> args{"--db", db.path(), "--format", format};
      args.insert(args.end(), command.begin(), command.end());
      SCOPED_TRACE(format + " " + command.front() + (command.size() > 1 ? " " + command[1] : ""));
      const ProcessResult result = run_ctl(args);
      ASSERT_EQ(result.exit_code, 0) << result.err;
      expect_neutralised(result.out, format == "tsv");
      if (format == "json" || command.front() == "export") {
        simdjson::dom::parser parser;
        simdjson::dom::element document;
        ASSERT_EQ(parser.parse(result.out).get(document), simdjson::SUCCESS) << result.out;
        EXPECT_NE(simdjson::to_string(document).find(whole), std::string::npos) << "JSON keeps the stored text";
      }
    }
  }
  const std::string html_file = db.file("r.html");
  const ProcessResult report = run_ctl({"--db", db.path(), "report", "--html", html_file});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  SCOPED_TRACE("report --html");
  expect_neutralised(read_file(html_file), true);
}

}  // namespace
}  // namespace trace2d::test
