// `trace2d import`: saved traces into the database, idempotently.

#include <gtest/gtest.h>

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
