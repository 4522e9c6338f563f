#pragma once
// Helpers for the client suites: run the emitter programs with a trace
// target, read the lines they wrote, and look at lines field by field.

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "tests/support/process.hpp"
#include "tests/support/temp_dir.hpp"

namespace trace2d::test {

// A top-level "key":value of an event line, the value as its raw JSON text.
struct Field {
  std::string key;
  std::string raw;
};

// The top-level fields of a flat JSON object line, in order.
[[nodiscard]] std::vector<Field> top_level_fields(std::string_view line);
// The raw text of `key` ("" when absent).
[[nodiscard]] std::string raw_field(std::string_view line, std::string_view key);
// A string field's text, unescaped only for plain strings ("" when absent).
[[nodiscard]] std::string string_field(std::string_view line, std::string_view key);
[[nodiscard]] bool has_field(std::string_view line, std::string_view key);

// Every line of a file, or of every file in a directory.
[[nodiscard]] std::vector<std::string> read_lines(const std::string& path);
// The lines whose "event" is `event`.
[[nodiscard]] std::vector<std::string> with_event(const std::vector<std::string>& lines,
                                                  std::string_view event);

// The lines of the session `sid` (a child's lines share a target file).
[[nodiscard]] std::vector<std::string> of_session(const std::vector<std::string>& lines,
                                                  const std::string& sid);
// Each line's "event", in order.
[[nodiscard]] std::vector<std::string> events_of(const std::vector<std::string>& lines);

// Parses each line with trace2d's parser; a reject or a noted problem is a
// test failure naming the line.
void expect_parser_accepts(const std::vector<std::string>& lines);

// The environment variables git and the library read, for unset_env.
[[nodiscard]] const std::vector<std::string>& trace_variables();

struct EmitterRun {
  ProcessResult result;
  std::string sid;                 // from the "sid ..." line it prints
  std::vector<std::string> lines;  // what it wrote to the target
};

// Runs `program` with `args` and GIT_TRACE2_EVENT=<dir>/trace.jsonl unless
// `env` sets it; the other trace variables are cleared unless set in `env`.
EmitterRun run_emitter(const TempDir& dir, const std::string& program,
                       const std::vector<std::string>& args,
                       std::map<std::string, std::string> env = {});

// The value after `key ` on a line of the program's stdout ("" if none).
[[nodiscard]] std::string stdout_value(const std::string& out, const std::string& key);

}  // namespace trace2d::test
