#include "daemon/app/config_file.hpp"

#include <fmt/format.h>

#include <toml++/toml.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "daemon/app/config_file_settings.hpp"

namespace trace2d::app {
namespace {

using config::Check;
using config::Key;
using config::Range;
using config::toml_string;

std::string_view type_name(toml::node_type type) {
  switch (type) {
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a floating-point number";
    case toml::node_type::boolean:
      return "a boolean";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::table:
      return "a table";
    default:
      return "a date or time";
  }
}

// Optimal string alignment distance: insertions, deletions, substitutions
// and swaps of neighbours ("mdoe" -> "mode") each count one.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) {
    d[i][0] = i;
  }
  for (std::size_t j = 0; j <= b.size(); ++j) {
    d[0][j] = j;
  }
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

// The settings' names, kinds and flags, from the list of settings.
class KeyCollector {
 public:
  template <typename... Ignored>
  void text(const Key& key, Ignored&&...) { note(key, SettingInfo::Kind::text); }
  template <typename... Ignored>
  void list(const Key& key, Ignored&&...) { note(key, SettingInfo::Kind::list); }
  template <typename... Ignored>
  void boolean(const Key& key, Ignored&&...) { note(key, SettingInfo::Kind::boolean); }
  template <typename... Ignored>
  void mode(const Key& key, Ignored&&...) { note(key, SettingInfo::Kind::mode); }
  template <typename... Ignored>
  void integer(const Key& key, Ignored&&...) { note(key, SettingInfo::Kind::integer); }

  std::map<std::string, std::set<std::string>, std::less<>> sections;
  std::vector<SettingInfo> settings;

 private:
  void note(const Key& key, SettingInfo::Kind kind) {
    sections[std::string(key.section)].emplace(key.name);
    settings.push_back(SettingInfo{key.full(), std::string(key.flag), kind, key.reload == config::Reload::live,
                                   std::string(key.value_name), std::string(key.help)});
  }
};

// Every problem found in a file, reported together: fixing a file one
// error per run is slow. Sorted by line when thrown.
class Problems {
 public:
  explicit Problems(const std::string& source) : m_source(source) {}

  void add(const toml::node& node, const std::string& message) {
    const auto line = node.source().begin.line;
    m_found.push_back({line, line == 0 ? fmt::format("{}: {}", m_source, message)
                                       : fmt::format("{}:{}: {}", m_source, line, message)});
  }

  void throw_if_any() {
    if (m_found.empty()) {
      return;
    }
    std::stable_sort(m_found.begin(), m_found.end(),
                     [](const Found& a, const Found& b) { return a.line < b.line; });
    std::vector<std::string> messages;
    for (auto& found : m_found) {
      messages.push_back(std::move(found.message));
    }
    throw ConfigError(std::move(messages));
  }

 private:
  struct Found {
    std::uint32_t line;
    std::string message;
  };
  const std::string& m_source;
  std::vector<Found> m_found;
};

// " (did you mean 'stream.mode'?)" for the known name closest to a typo,
// or "" when none is close.
std::string did_you_mean(std::string_view typed, const std::vector<std::string>& known) {
  const std::string* best = nullptr;
  std::size_t best_distance = 0;
  for (const auto& candidate : known) {
    const std::size_t distance = edit_distance(typed, candidate);
    if (best == nullptr || distance < best_distance) {
      best = &candidate;
      best_distance = distance;
    }
  }
  // A third of the key's own name may be wrong (the section in front of it
  // does not widen that): "stream.mdoe", "dgram.recieve_buffer_bytes" and
  // "stream.receive_buffer_bytes" (a key of [dgram]) find theirs;
  // "stream.colour" is not taken for "stream.owner".
  const std::size_t dot = typed.find('.');
  const std::size_t name_length = dot == std::string_view::npos ? typed.size() : typed.size() - dot - 1;
  if (best == nullptr || best_distance == 0 || best_distance > std::max<std::size_t>(1, name_length / 3)) {
    return "";
  }
  return fmt::format(" (did you mean '{}'?)", *best);
}

// Unknown sections and keys are typos more often than not: each is
// reported, with the closest known name, and its values are not read.
void check_known_keys(const toml::table& root, Problems& problems) {
  KeyCollector known;
  const DaemonOptions any;
  config::visit_settings(any, known);
  std::vector<std::string> section_names;
  std::vector<std::string> full_keys;
  for (const auto& [section, names] : known.sections) {
    section_names.push_back("[" + section + "]");
  }
  for (const auto& setting : known.settings) {
    full_keys.push_back(setting.key);
  }
  for (const auto& [name, node] : root) {
    const auto section = known.sections.find(name.str());
    if (section == known.sections.end()) {
      if (node.is_table()) {
        const std::string typed = fmt::format("[{}]", name.str());
        problems.add(node, fmt::format("unknown section '{}'{}", typed, did_you_mean(typed, section_names)));
      } else {
        // "path = ..." above every section: which section's key was meant?
        std::vector<std::string> same_name;
        for (const auto& key : full_keys) {
          if (key.substr(key.find('.') + 1) == name.str()) {
            same_name.push_back(key);
          }
        }
        std::string hint;
        for (std::size_t i = 0; i < same_name.size(); ++i) {
          hint += fmt::format("{}'{}'", i == 0 ? "; did you mean " : i + 1 == same_name.size() ? " or " : ", ",
                              same_name[i]);
        }
        problems.add(node, fmt::format("unknown key '{}' (settings belong in a section{})", name.str(),
                                       hint.empty() ? "" : hint + "?"));
      }
      continue;
    }
    const toml::table* table = node.as_table();
    if (table == nullptr) {
      problems.add(node, fmt::format("'{}' must be a table ([{}]), not {}", name.str(), name.str(),
                                     type_name(node.type())));
      continue;
    }
    for (const auto& [key, value] : *table) {
      if (section->second.count(std::string(key.str())) == 0) {
        const std::string full = fmt::format("{}.{}", name.str(), key.str());
        problems.add(value, fmt::format("unknown key '{}'{}", full, did_you_mean(full, full_keys)));
      }
    }
  }
}

// Applies the values a parsed file sets, checking each; a bad value is
// recorded and the setting keeps its value, so that every problem is found.
class TomlLoader {
 public:
  TomlLoader(const toml::table& root, Problems& problems) : m_root(root), m_problems(problems) {}

  void text(const Key& key, std::string& field, Check check) {
    if (const toml::node* node = find(key)) {
      std::optional<std::string> value = expect<std::string>(*node, key, "a string");
      if (value && fine(*node, key, check(*value))) {
        field = std::move(*value);
      }
    }
  }

  void list(const Key& key, std::vector<std::string>& field, Check check) {
    const toml::node* node = find(key);
    if (node == nullptr) {
      return;
    }
    const toml::array* array = node->as_array();
    if (array == nullptr) {
      type_error(*node, key, "an array of strings");
      return;
    }
    std::vector<std::string> items;
    bool all_fine = true;
    std::size_t position = 0;
    for (const toml::node& item : *array) {
      ++position;
      if (!item.is_string()) {
        m_problems.add(item, fmt::format("'{}' must be an array of strings; item {} is {}", key.full(), position,
                                         type_name(item.type())));
        all_fine = false;
        continue;
      }
      items.push_back(*item.value<std::string>());
      all_fine = fine(item, key, check(items.back())) && all_fine;
    }
    if (all_fine) {
      field = std::move(items);
    }
  }

  void boolean(const Key& key, bool& field) {
    if (const toml::node* node = find(key)) {
      if (const auto value = expect<bool>(*node, key, "true or false")) {
        field = *value;
      }
    }
  }

  void mode(const Key& key, unsigned& field) {
    const toml::node* node = find(key);
    if (node == nullptr) {
      return;
    }
    const auto text = expect<std::string>(*node, key, "a string such as \"0660\" (octal)");
    if (!text) {
      return;
    }
    const std::optional<unsigned> mode = config::parse_mode(*text);
    if (!mode) {
      m_problems.add(*node, fmt::format("'{}' must be an octal mode such as \"0660\", not {}", key.full(),
                                        toml_string(*text)));
    } else if (fine(*node, key, config::mode_problem(*mode))) {
      field = *mode;
    }
  }

  template <typename T>
  void integer(const Key& key, T& field, Range range) {
    if (const toml::node* node = find(key)) {
      const auto value = expect<std::int64_t>(*node, key, "an integer");
      if (value && fine(*node, key, config::range_problem(*value, range))) {
        config::assign_int(field, *value * range.unit);
      }
    }
  }

 private:
  const toml::node* find(const Key& key) const {
    const toml::table* section = m_root.get_as<toml::table>(key.section);
    return section != nullptr ? section->get(key.name) : nullptr;
  }

  template <typename T>
  std::optional<T> expect(const toml::node& node, const Key& key, std::string_view wanted) {
    std::optional<T> value = node.value_exact<T>();
    if (!value) {
      type_error(node, key, wanted);
    }
    return value;
  }

  void type_error(const toml::node& node, const Key& key, std::string_view wanted) {
    m_problems.add(node, fmt::format("'{}' must be {}, not {}", key.full(), wanted, type_name(node.type())));
  }

  bool fine(const toml::node& node, const Key& key, const std::string& problem) {
    if (!problem.empty()) {
      m_problems.add(node, fmt::format("'{}' {}", key.full(), problem));
    }
    return problem.empty();
  }

  const toml::table& m_root;
  Problems& m_problems;
};

}  // namespace

namespace {

std::string join_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& line : lines) {
    out += (out.empty() ? "" : "\n") + line;
  }
  return out;
}

}  // namespace

ConfigError::ConfigError(std::vector<std::string> problems)
    : std::runtime_error(join_lines(problems)), m_problems(std::move(problems)) {}

namespace {

// The keys a file sets, known ones only ("dgram.path").
std::set<std::string> keys_set(const toml::table& root) {
  std::set<std::string> keys;
  for (const auto& setting : describe_settings()) {
    const auto dot = setting.key.find('.');
    const toml::table* section = root.get_as<toml::table>(setting.key.substr(0, dot));
    if (section != nullptr && section->contains(setting.key.substr(dot + 1))) {
      keys.insert(setting.key);
    }
  }
  return keys;
}

LoadedConfig parse(std::string_view text, const std::string& source_name, DaemonOptions base) {
  toml::table root;
  try {
    root = toml::parse(text, source_name);
  } catch (const toml::parse_error& e) {
    // toml++ stops at the first syntax error: nothing after it can be read.
    const auto& where = e.source().begin;
    throw ConfigError(
        fmt::format("{}:{}:{}: not valid TOML: {}", source_name, where.line, where.column, e.description()));
  }
  Problems problems(source_name);
  check_known_keys(root, problems);
  TomlLoader loader(root, problems);
  config::visit_settings(base, loader);
  problems.throw_if_any();
  return {std::move(base), keys_set(root)};
}

}  // namespace

DaemonOptions parse_config(std::string_view text, const std::string& source_name, DaemonOptions base) {
  return parse(text, source_name, std::move(base)).options;
}

LoadedConfig read_config_file(const std::string& path, DaemonOptions base) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw ConfigError(fmt::format("{}: cannot read the configuration file: it is a directory", path));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw ConfigError(fmt::format("{}: cannot read the configuration file: {}", path, std::strerror(errno)));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) {
    throw ConfigError(fmt::format("{}: cannot read the configuration file: {}", path, std::strerror(errno)));
  }
  return parse(text.str(), path, std::move(base));
}

DaemonOptions load_config_file(const std::string& path, DaemonOptions base) {
  return read_config_file(path, std::move(base)).options;
}

std::vector<SettingInfo> describe_settings() {
  KeyCollector collector;
  const DaemonOptions any;
  config::visit_settings(any, collector);
  return collector.settings;
}

}  // namespace trace2d::app
