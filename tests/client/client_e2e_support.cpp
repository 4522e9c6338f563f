#include "tests/client/client_e2e_support.hpp"

#include <cctype>
#include <map>
#include <sstream>

#include "tests/client/client_support.hpp"
#include "proto/sid.hpp"

namespace trace2d::test {

void ExampleFixture::SetUp() {
  for (int i = 0; i < 3; ++i) {
    m_sources.push_back(make_repo(m_dir, "src-" + std::to_string(i), 5));
  }
}

ExampleRun ExampleFixture::run_example(const std::string& dest, const std::string& target,
                                       const std::vector<std::string>& extra) {
  ProcessSpec spec;
  spec.argv = {PARALLEL_FETCH_BIN, "--jobs", "2", "--print-sid"};
  spec.argv.insert(spec.argv.end(), extra.begin(), extra.end());
  spec.argv.push_back(m_dir.file(dest));
  spec.argv.insert(spec.argv.end(), m_sources.begin(), m_sources.end());
  spec.env = {{"GIT_CONFIG_NOSYSTEM", "1"}, {"GIT_CONFIG_GLOBAL", "/dev/null"}};
  for (const auto& name : trace_variables()) {
    spec.unset_env.push_back(name);
  }
  if (!target.empty()) {
    spec.env["GIT_TRACE2_EVENT"] = target;
    std::erase(spec.unset_env, "GIT_TRACE2_EVENT");
  }
  ExampleRun run;
  run.result = run_process(spec, std::chrono::seconds(120));
  run.sid = stdout_value(run.result.out, "sid");
  return run;
}

long ExampleFixture::events_written_to_a_file(const std::string& dest,
                                              const std::vector<std::string>& extra) {
  const std::string file = m_dir.file(dest + ".jsonl");
  const ExampleRun run = run_example(dest, file, extra);
  EXPECT_EQ(run.result.exit_code, 0) << run.result.err;
  long own = 0;
  for (const auto& line : read_lines(file)) {
    if (string_field(line, "sid") != run.sid) {
      continue;
    }
    if (string_field(line, "key") == "dropped_events") {
      own += std::stol(string_field(line, "value")) - 1;  // a burst outran even a file
    }
    ++own;
  }
  return own;
}

// The pid git encodes at the end of its SID component ("-P%08x").
long pid_in_sid(const std::string& sid) { return static_cast<long>(proto::sid_pid(sid).value_or(-1)); }

long count(db::Database& db, const std::string& sql, const std::string& sid) {
  db::Statement s = db.prepare(sql);
  s.bind_text(1, sid);
  return s.step() ? static_cast<long>(s.column_int(0)) : -1;
}

namespace {}  // namespace

std::size_t indentation(const std::string& line) {
  // Columns of numbers may come first; the tree starts at the first letter.
  std::size_t i = 0;
  while (i < line.size() && !std::isalpha(static_cast<unsigned char>(line[i]))) {
    ++i;
  }
  return i;
}

std::optional<std::size_t> find_line(const std::vector<std::string>& lines, std::size_t from,
                                     const std::vector<std::string>& needles) {
  for (std::size_t i = from; i < lines.size(); ++i) {
    bool all = true;
    for (const auto& needle : needles) {
      all = all && lines[i].find(needle) != std::string::npos;
    }
    if (all) {
      return i;
    }
  }
  return std::nullopt;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    lines.push_back(line);
  }
  return lines;
}

}  // namespace trace2d::test
