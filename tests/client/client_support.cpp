#include "tests/client/client_support.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "proto/parser.hpp"

namespace trace2d::test {

std::vector<Field> top_level_fields(std::string_view line) {
  std::vector<Field> fields;
  std::size_t i = line.find('{');
  if (i == std::string_view::npos) {
    return fields;
  }
  ++i;
  while (i < line.size() && line[i] == '"') {
    const std::size_t key_end = line.find('"', i + 1);  // keys never need escapes here
    Field f{std::string(line.substr(i + 1, key_end - i - 1)), {}};
    std::size_t j = key_end + 2;  // after '":'
    const std::size_t start = j;
    int depth = 0;
    bool in_string = false;
    for (; j < line.size(); ++j) {
      const char c = line[j];
      if (in_string) {
        if (c == '\\') {
          ++j;
        } else if (c == '"') {
          in_string = false;
        }
      } else if (c == '"') {
        in_string = true;
      } else if (c == '{' || c == '[') {
        ++depth;
      } else if (c == '}' || c == ']') {
        if (depth == 0) {
          break;
        }
        --depth;
      } else if (c == ',' && depth == 0) {
        break;
      }
    }
    f.raw = std::string(line.substr(start, j - start));
    fields.push_back(std::move(f));
    i = j + 1;
  }
  return fields;
}

std::string raw_field(std::string_view line, std::string_view key) {
  for (const Field& f : top_level_fields(line)) {
    if (f.key == key) {
      return f.raw;
    }
  }
  return {};
}

std::string string_field(std::string_view line, std::string_view key) {
  const std::string raw = raw_field(line, key);
  return raw.size() >= 2 && raw.front() == '"' ? raw.substr(1, raw.size() - 2) : raw;
}

bool has_field(std::string_view line, std::string_view key) {
  for (const Field& f : top_level_fields(line)) {
    if (f.key == key) {
      return true;
    }
  }
  return false;
}

std::vector<std::string> read_lines(const std::string& path) {
  std::vector<std::string> files;
  if (std::filesystem::is_directory(path)) {
    for (const auto& entry : std::filesystem::directory_iterator(path)) {
      files.push_back(entry.path().string());
    }
  } else if (std::filesystem::exists(path)) {
    files.push_back(path);
  }
  std::vector<std::string> lines;
  for (const auto& file : files) {
    std::ifstream in(file);
    std::string line;
    while (std::getline(in, line)) {
      lines.push_back(line);
    }
  }
  return lines;
}

std::vector<std::string> with_event(const std::vector<std::string>& lines, std::string_view event) {
  std::vector<std::string> out;
  for (const auto& line : lines) {
    if (string_field(line, "event") == event) {
      out.push_back(line);
    }
  }
  return out;
}

std::vector<std::string> of_session(const std::vector<std::string>& lines, const std::string& sid) {
  std::vector<std::string> out;
  for (const auto& line : lines) {
    if (string_field(line, "sid") == sid) {
      out.push_back(line);
    }
  }
  return out;
}

std::vector<std::string> events_of(const std::vector<std::string>& lines) {
  std::vector<std::string> out;
  out.reserve(lines.size());
  for (const auto& line : lines) {
    out.push_back(string_field(line, "event"));
  }
  return out;
}

void expect_parser_accepts(const std::vector<std::string>& lines) {
  proto::Parser parser;
  proto::Event event;
  for (const auto& line : lines) {
    const proto::ParseOutcome outcome = parser.parse(line, 0, event);
    ASSERT_TRUE(outcome.ok) << outcome.reject_reason << "\n" << line;
    EXPECT_TRUE(event.problems.empty()) << event.problems << "\n" << line;
    EXPECT_NE(event.kind, proto::EventKind::unknown) << line;
  }
}

const std::vector<std::string>& trace_variables() {
  static const std::vector<std::string> names = {"GIT_TRACE2",
                                                 "GIT_TRACE2_EVENT",
                                                 "GIT_TRACE2_PERF",
                                                 "GIT_TRACE2_PARENT_SID",
                                                 "GIT_TRACE2_PARENT_NAME",
                                                 "GIT_TRACE2_EVENT_NESTING",
                                                 "GIT_TRACE2_EVENT_BRIEF",
                                                 "GIT_TRACE2_BRIEF",
                                                 "GIT_TRACE2_CONFIG_PARAMS",
                                                 "GIT_TRACE2_ENV_VARS",
                                                 "GIT_TRACE2_MAX_FILES",
                                                 "GIT_TRACE2_DST_DEBUG"};
  return names;
}

EmitterRun run_emitter(const TempDir& dir, const std::string& program,
                       const std::vector<std::string>& args,
                       std::map<std::string, std::string> env) {
  const std::string target = dir.file("trace.jsonl");
  env.emplace("GIT_TRACE2_EVENT", target);
  env.emplace("GIT_CONFIG_NOSYSTEM", "1");
  env.emplace("GIT_CONFIG_GLOBAL", "/dev/null");
  ProcessSpec spec;
  spec.argv = {program};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  for (const auto& name : trace_variables()) {
    if (env.count(name) == 0) {
      spec.unset_env.push_back(name);
    }
  }
  spec.env = env;
  EmitterRun run;
  run.result = run_process(spec, std::chrono::seconds(60));
  run.sid = stdout_value(run.result.out, "sid");
  run.lines = read_lines(env.at("GIT_TRACE2_EVENT"));
  return run;
}

std::string stdout_value(const std::string& out, const std::string& key) {
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + " ", 0) == 0) {
      return line.substr(key.size() + 1);
    }
  }
  return {};
}

}  // namespace trace2d::test
