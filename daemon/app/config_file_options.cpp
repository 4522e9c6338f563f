// The options beyond the file: flags applied, values checked, the whole
// rendered back as TOML. All of them visit the list of settings.

#include "daemon/app/config_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <optional>

#include "daemon/app/config_file_settings.hpp"
#include "daemon/export/otlp_grpc_transport.hpp"

namespace trace2d::app {
namespace {

using config::Check;
using config::Key;
using config::Range;
using config::toml_string;

// Converts a flag's text; the value itself is left to validate_options.
class FlagApplier {
 public:
  FlagApplier(std::string_view key, const std::vector<std::string>& values) : m_key(key), m_values(values) {}

  void text(const Key& key, std::string& field, Check) {
    if (matches(key)) {
      field = single(key);
    }
  }

  void list(const Key& key, std::vector<std::string>& field, Check) {
    if (matches(key)) {
      field = m_values;
    }
  }

  void boolean(const Key& key, bool& field) {
    if (matches(key)) {
      const std::string& text = single(key);
      if (text != "true" && text != "false") {
        throw form_error(key, "true or false", text);
      }
      field = text == "true";
    }
  }

  void mode(const Key& key, unsigned& field) {
    if (matches(key)) {
      const std::optional<unsigned> mode = config::parse_mode(single(key));
      if (!mode) {
        throw form_error(key, "an octal mode such as 0660", single(key));
      }
      field = *mode;
    }
  }

  template <typename T>
  void integer(const Key& key, T& field, Range range) {
    if (!matches(key)) {
      return;
    }
    const std::string& text = single(key);
    std::int64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() ||
        value > std::numeric_limits<std::int64_t>::max() / range.unit ||
        value < std::numeric_limits<std::int64_t>::min() / range.unit) {
      throw form_error(key, "an integer", text);
    }
    config::assign_int(field, value * range.unit);
    // A negative number in an unsigned field would come back as another one.
    if (config::to_int(field) != value * range.unit) {
      throw ConfigError(fmt::format("'{}' ({}) must be between {} and {}, not {}", key.full(), key.flag, range.min,
                                    range.max, text));
    }
  }

  [[nodiscard]] bool matched() const { return m_matched; }

 private:
  bool matches(const Key& key) {
    if (key.full() != m_key) {
      return false;
    }
    m_matched = true;
    return true;
  }

  const std::string& single(const Key& key) const {
    if (m_values.size() != 1) {
      throw ConfigError(fmt::format("'{}' ({}) takes one value, not {}", key.full(), key.flag, m_values.size()));
    }
    return m_values.front();
  }

  static ConfigError form_error(const Key& key, std::string_view wanted, const std::string& text) {
    return ConfigError(fmt::format("'{}' ({}) must be {}, not '{}'", key.full(), key.flag, wanted, text));
  }

  std::string_view m_key;
  const std::vector<std::string>& m_values;
  bool m_matched = false;
};

// The same checks as the loader, on values from anywhere; every problem
// is kept, so that one run reports them all.
class Validator {
 public:
  void text(const Key& key, const std::string& value, Check check) { note(key, check(value)); }
  void list(const Key& key, const std::vector<std::string>& values, Check check) {
    for (const auto& value : values) {
      note(key, check(value));
    }
  }
  void boolean(const Key&, const bool&) {}
  void mode(const Key& key, const unsigned& mode) { note(key, config::mode_problem(mode)); }
  template <typename T>
  void integer(const Key& key, const T& field, Range range) {
    note(key, config::range_problem(config::to_int(field) / range.unit, range));
  }

  std::vector<std::string> problems;

 private:
  void note(const Key& key, const std::string& problem) {
    if (!problem.empty()) {
      problems.push_back(fmt::format("'{}' ({}) {}", key.full(), key.flag, problem));
    }
  }
};

// Writes each setting as a TOML line, or only the one asked for.
class Renderer {
 public:
  explicit Renderer(std::optional<std::string_view> only = std::nullopt) : m_only(only) {}

  void text(const Key& key, const std::string& value, Check) { emit(key, toml_string(value)); }
  void list(const Key& key, const std::vector<std::string>& values, Check) {
    std::string out = "[";
    for (const auto& value : values) {
      out += (out.size() > 1 ? ", " : "") + toml_string(value);
    }
    emit(key, out + "]");
  }
  void boolean(const Key& key, const bool& value) { emit(key, value ? "true" : "false"); }
  void mode(const Key& key, const unsigned& mode) { emit(key, toml_string(fmt::format("{:04o}", mode))); }
  template <typename T>
  void integer(const Key& key, const T& field, Range range) {
    emit(key, std::to_string(config::to_int(field) / range.unit));
  }

  // Each section once, in the order of its first setting: components
  // declare their own settings, so one section's may be visited apart
  // (TOML refuses a table defined twice).
  [[nodiscard]] std::string text() const {
    std::string out;
    for (const auto& [section, lines] : m_sections) {
      out += fmt::format("{}[{}]\n{}", out.empty() ? "" : "\n", section, lines);
    }
    return out;
  }
  [[nodiscard]] const std::optional<std::string>& found() const { return m_found; }

 private:
  void emit(const Key& key, const std::string& value) {
    if (m_only) {
      if (key.full() == *m_only) {
        m_found = value;
      }
      return;
    }
    auto section = std::find_if(m_sections.begin(), m_sections.end(),
                                [&](const auto& entry) { return entry.first == key.section; });
    if (section == m_sections.end()) {
      section = m_sections.insert(m_sections.end(), {key.section, {}});
    }
    // Which changes SIGHUP applies, where the user edits them.
    section->second +=
        fmt::format("{} = {}{}\n", key.name, value, key.reload == config::Reload::live ? "  # applied on SIGHUP" : "");
  }

  std::optional<std::string_view> m_only;
  std::vector<std::pair<std::string_view, std::string>> m_sections;  // section, its lines
  std::optional<std::string> m_found;
};

}  // namespace

void apply_flag(DaemonOptions& options, std::string_view key, const std::vector<std::string>& values) {
  FlagApplier applier(key, values);
  config::visit_settings(options, applier);
  if (!applier.matched()) {
    throw ConfigError(fmt::format("no setting '{}'", key));
  }
}

bool resolve_socket_flags(DaemonOptions& options, const std::set<std::string>& file_keys,
                          const std::set<std::string>& flag_keys) {
  // Someone naming one socket on the command line means that socket; a
  // second one bound at its default path would surprise them (and clash
  // with another daemon's).
  if (flag_keys.count("stream.path") == 0 || flag_keys.count("dgram.path") > 0 || file_keys.count("dgram.path") > 0) {
    return false;
  }
  options.dgram.path.clear();
  return true;
}

void resolve_otel_environment(DaemonOptions& options, OtelSettings& from_environment,
                              const std::set<std::string>& file_keys, const std::set<std::string>& flag_keys) {
  const auto given = [&](const std::string& key) { return file_keys.contains(key) || flag_keys.contains(key); };
  for (auto it = from_environment.begin(); it != from_environment.end();) {
    it = given(it->first) ? from_environment.erase(it) : std::next(it);
  }
  if (given("otlp.endpoint") && from_environment.erase("otlp.traces_endpoint") > 0) {
    options.otlp_traces_endpoint.clear();
  }
}

std::string with_otel_source(const std::string& problem, const OtelSettings& from_environment) {
  // validate_options names the setting first: "'otlp.protocol' (--otlp-protocol) ...".
  for (const auto& [key, variable] : from_environment) {
    if (problem.starts_with("'" + key + "'")) {
      return problem + " (set by " + variable + ")";
    }
  }
  return problem;
}

void validate_options(const DaemonOptions& options) {
  Validator validator;
  config::visit_settings(options, validator);
  std::vector<std::string>& problems = validator.problems;
  if (!options.stream.path.empty() && options.stream.path == options.dgram.path) {
    problems.push_back(fmt::format("'dgram.path' (--dgram-socket) is the same as 'stream.path' (--socket): '{}'",
                                   options.stream.path));
  }
  if (const std::string problem =
          otlp::undefined_ruleset_problem(options.export_rules.nicknames, options.export_rules.rulesets);
      !problem.empty()) {
    problems.push_back("'otlp.nicknames' (--otlp-nickname): " + problem);
  }
  // gRPC carries fewer headers than HTTP (otlp.headers checks what HTTP
  // takes): said here, so that --check-config says it too.
  if (options.otlp_protocol == "grpc") {
    for (const std::string& header : options.otlp_headers) {
      const auto equals = header.find('=');
      const std::string problem = exporter::grpc_metadata_problem(
          header.substr(0, equals), equals == std::string::npos ? std::string() : header.substr(equals + 1));
      if (!problem.empty()) {
        problems.push_back(fmt::format("'otlp.headers' (--otlp-header) lists '{}', which {} (otlp.protocol is grpc)",
                                       header, problem));
      }
    }
  }
  // Under socket activation the sockets come from systemd, whatever the paths say.
  if (options.stream.path.empty() && options.dgram.path.empty() && options.directories.dirs.empty() &&
      std::getenv("LISTEN_FDS") == nullptr) {
    problems.push_back(
        "nothing to listen on: 'stream.path' (--socket) and 'dgram.path' (--dgram-socket) are empty and "
        "'directories.watch' (--watch) lists no directory");
  }
  if (!problems.empty()) {
    throw ConfigError(std::move(problems));
  }
}

std::string render_config(const DaemonOptions& options) {
  Renderer renderer;
  config::visit_settings(options, renderer);
  return "# trace2d configuration (docs/configuration.md)\n\n" + renderer.text();
}

std::string render_setting(const DaemonOptions& options, std::string_view key) {
  Renderer renderer(key);
  config::visit_settings(options, renderer);
  if (!renderer.found()) {
    throw ConfigError(fmt::format("no setting '{}'", key));
  }
  return *renderer.found();
}

}  // namespace trace2d::app
