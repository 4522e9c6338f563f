// `trace2d import`: saved traces into the database, idempotently.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "tests/e2e/daemon_fixture.hpp"

namespace trace2d::test {
namespace {

namespace fs = std::filesystem;

ProcessResult import(const std::string& db, std::vector<std::string> paths) {
  ProcessSpec spec;
  spec.argv = {TRACE2D_BIN, "--config", "", "import", "--db", db};
  spec.argv.insert(spec.argv.end(), paths.begin(), paths.end());
  return run_process(spec);
}

long count_lines(const fs::path& dir) {
  long lines = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::ifstream in(entry.path());
    std::string line;
    while (std::getline(in, line)) {
      ++lines;
    }
  }
  return lines;
}

TEST(Import, LoadsACapturedDirectoryOnceAndNewLinesLater) {
  TempDir dir;
  const std::string db = dir.file("import.db");
  const fs::path traces = fs::path(TRACE2D_TEST_DATA) / "traces";
  const ProcessResult first = import(db, {traces.string()});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(first.out, "");  // progress and summary go to stderr; quiet when not a terminal
  EXPECT_EQ(first.err.find('\r'), std::string::npos);

  const long lines = count_lines(traces);
  db::Database check = open_db(db);
  EXPECT_EQ(check.query_int("SELECT count(*) FROM events"), lines);
  EXPECT_EQ(check.query_int("SELECT count(*) FROM rejects"), 0);
  EXPECT_EQ(check.query_int("SELECT count(*) FROM sessions WHERE source != 'import'"), 0);
  EXPECT_GT(check.query_int("SELECT count(*) FROM sessions WHERE cmd_name = 'fetch'"), 0);

  // Again: nothing new.
  const ProcessResult again = import(db, {traces.string()});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.err.find("already imported"), std::string::npos) << again.err;
  EXPECT_EQ(open_db(db).query_int("SELECT count(*) FROM events"), lines);

  // A file that grew since: only its new lines.
  const std::string grown = dir.file("grown.jsonl");
  fs::copy_file(traces / "status.jsonl", grown);
  ASSERT_EQ(import(db, {grown}).exit_code, 0);
  const auto before = open_db(db).query_int("SELECT count(*) FROM events").value_or(0);
  {
    std::ofstream out(grown, std::ios::app);
    out << R"({"event":"data","sid":"grown-later","thread":"main","key":"k","value":"v"})" << "\n";
  }
  ASSERT_EQ(import(db, {grown}).exit_code, 0);
  EXPECT_EQ(open_db(db).query_int("SELECT count(*) FROM events").value_or(0), before + 1);
}

TEST(Import, WarnsAboutAFileWithNoTrace2EventAndStoresItsLinesAsRejects) {
  TempDir dir;
  const std::string db = dir.file("import.db");
  const std::string script = dir.file("workload.sh");
  std::ofstream(script) << "#!/bin/sh\nset -e\ngit status\ngit log -1\n";
  const fs::path traces = fs::path(TRACE2D_TEST_DATA) / "traces";
  // One event and no newline after it is a trace all the same.
  const std::string unterminated = dir.file("one-event.jsonl");
  std::ofstream(unterminated) << R"({"event":"version","sid":"20261123T000000.000001Z-H00000001-P00000001",)"
                              << R"("thread":"main","time":"2026-11-23T00:00:00.000001Z","evt":"3","exe":"2.39.5"})";
  const ProcessResult result = import(db, {script, (traces / "status.jsonl").string(), unterminated});
  ASSERT_EQ(result.exit_code, 0) << result.err;  // every file was read
  EXPECT_NE(result.err.find("'" + script + "' has no Trace2 event line"), std::string::npos) << result.err;
  EXPECT_EQ(result.err.find("one-event.jsonl' has no"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("imported 3 files (0 already imported)"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("4 rejected lines; 1 file has no Trace2 event"), std::string::npos) << result.err;
  EXPECT_EQ(open_db(db).query_int("SELECT count(*) FROM rejects WHERE source = 'import'"), 4);
}

// One file of many processes, bigger than the memory bound: the import waits
// for the writer (the budget's wake-up) instead of dropping, and a process's
// atexit does not end the file.
TEST(Import, AFileOfManyProcessesLargerThanTheMemoryBoundIsStoredWhole) {
  TempDir dir;
  const std::string db = dir.file("import.db");
  const fs::path traces = fs::path(TRACE2D_TEST_DATA) / "traces";
  std::ifstream in(traces / "fetch.jsonl");
  const std::string fetch((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string sid = "20261122T000429.651221Z-H0a7c9cdf-P0000150a";
  ASSERT_NE(fetch.find(sid), std::string::npos);
  const std::string big = dir.file("many.jsonl");
  constexpr int k_copies = 200;  // 200 x 20 KB: 4 MB against a bound of 1 MiB
  long lines = 0;
  {
    std::ofstream out(big);
    for (int copy = 0; copy < k_copies; ++copy) {
      std::string text = fetch;
      const std::string unique = sid.substr(0, sid.size() - 4) + fmt::format("{:04x}", copy);
      for (auto at = text.find(sid); at != std::string::npos; at = text.find(sid, at + unique.size())) {
        text.replace(at, sid.size(), unique);
      }
      lines += std::count(text.begin(), text.end(), '\n');
      out << text;
    }
  }
  ProcessSpec spec;
  spec.argv = {TRACE2D_BIN, "--config", "", "--max-queue-mib", "1", "import", "--db", db, big};
  const ProcessResult result = run_process(spec);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  db::Database check = open_db(db);
  EXPECT_EQ(check.query_int("SELECT count(*) FROM events"), lines);
  EXPECT_EQ(check.query_int("SELECT count(*) FROM rejects"), 0);
  EXPECT_EQ(check.query_int("SELECT count(DISTINCT root_sid) FROM sessions"), k_copies);
}

TEST(Import, RefusesASparseFileUnreadAndImportsTheRest) {
  TempDir dir;
  const std::string db = dir.file("import.db");
  const std::string sparse = dir.file("sparse.jsonl");
  fs::resize_file((write_file(sparse, ""), sparse), 1ULL << 40);  // 1 TiB of holes: hours of zeros to read
  const fs::path traces = fs::path(TRACE2D_TEST_DATA) / "traces";
  const ProcessResult r = import(db, {sparse, (traces / "status.jsonl").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_LT(r.seconds, 10.0);
  EXPECT_NE(r.err.find("'" + sparse + "' refused: sparse file"), std::string::npos) << r.err;
  EXPECT_EQ(open_db(db).query_int("SELECT count(*) FROM sessions"), 1);
}

TEST(Import, MissingPathsFailButTheRestIsImported) {
  TempDir dir;
  const std::string db = dir.file("import.db");
  const fs::path traces = fs::path(TRACE2D_TEST_DATA) / "traces";
  const ProcessResult r = import(db, {dir.file("no-such-file"), (traces / "status.jsonl").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no-such-file"), std::string::npos) << r.err;
  EXPECT_EQ(open_db(db).query_int("SELECT count(*) FROM sessions"), 1);
}

}  // namespace
}  // namespace trace2d::test

namespace trace2d::test {
namespace {

TEST(Import, ShowsAProgressBarOnATerminal) {
  if (!std::filesystem::exists("/usr/bin/script")) {
    GTEST_SKIP() << "util-linux script(1) is needed to give trace2d a terminal";
  }
  TempDir dir;
  const std::string command = std::string(TRACE2D_BIN) + " --config '' import --db " + dir.file("tty.db") + " " +
                              std::string(TRACE2D_TEST_DATA) + "/traces";
  ProcessSpec spec;
  spec.argv = {"/usr/bin/script", "-q", "-e", "-c", command, "/dev/null"};
  const ProcessResult r = run_process(spec);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\r["), std::string::npos);
  EXPECT_NE(r.out.find("files,"), std::string::npos);
}

}  // namespace
}  // namespace trace2d::test
