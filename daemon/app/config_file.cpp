#include "daemon/app/config_file.hpp"

#include <fmt/format.h>

#include <toml++/toml.h>

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
    settings.push_back(SettingInfo{key.full(), std::string(key.flag), kind, key.reload == config::Reload::live});
  }
};

ConfigError error_at(const std::string& source, const toml::node& node, const std::string& message) {
  const auto line = node.source().begin.line;
  if (line == 0) {
    return ConfigError(fmt::format("{}: {}", source, message));
  }
  return ConfigError(fmt::format("{}:{}: {}", source, line, message));
}

// Unknown sections and keys are typos more often than not: refuse them
// before looking at any value.
void check_known_keys(const toml::table& root, const std::string& source) {
  KeyCollector known;
  const DaemonOptions any;
  config::visit_settings(any, known);
  for (const auto& [name, node] : root) {
    const auto section = known.sections.find(name.str());
    if (section == known.sections.end()) {
      throw error_at(source, node,
                     node.is_table() ? fmt::format("unknown section '[{}]'", name.str())
                                     : fmt::format("unknown key '{}' (settings belong in a section)", name.str()));
    }
    const toml::table* table = node.as_table();
    if (table == nullptr) {
      throw error_at(source, node,
                     fmt::format("'{}' must be a table ([{}]), not {}", name.str(), name.str(),
                                 type_name(node.type())));
    }
    for (const auto& [key, value] : *table) {
      if (section->second.count(std::string(key.str())) == 0) {
        throw error_at(source, value, fmt::format("unknown key '{}.{}'", name.str(), key.str()));
      }
    }
  }
}

// Applies the values a parsed file sets, checking each.
class TomlLoader {
 public:
  TomlLoader(const toml::table& root, const std::string& source) : m_root(root), m_source(source) {}

  void text(const Key& key, std::string& field, Check check) {
    if (const toml::node* node = find(key)) {
      std::string value = expect<std::string>(*node, key, "a string");
      check_value(*node, key, check(value));
      field = std::move(value);
    }
  }

  void list(const Key& key, std::vector<std::string>& field, Check check) {
    const toml::node* node = find(key);
    if (node == nullptr) {
      return;
    }
    const toml::array* array = node->as_array();
    if (array == nullptr) {
      throw type_error(*node, key, "an array of strings");
    }
    std::vector<std::string> items;
    for (const toml::node& item : *array) {
      if (!item.is_string()) {
        throw error_at(m_source, item,
                       fmt::format("'{}' must be an array of strings; item {} is {}", key.full(), items.size() + 1,
                                   type_name(item.type())));
      }
      items.push_back(*item.value<std::string>());
      check_value(item, key, check(items.back()));
    }
    field = std::move(items);
  }

  void boolean(const Key& key, bool& field) {
    if (const toml::node* node = find(key)) {
      field = expect<bool>(*node, key, "true or false");
    }
  }

  void mode(const Key& key, unsigned& field) {
    if (const toml::node* node = find(key)) {
      const std::string text = expect<std::string>(*node, key, "a string such as \"0660\" (octal)");
      const std::optional<unsigned> mode = config::parse_mode(text);
      if (!mode) {
        throw error_at(m_source, *node,
                       fmt::format("'{}' must be an octal mode such as \"0660\", not {}", key.full(),
                                   toml_string(text)));
      }
      check_value(*node, key, config::mode_problem(*mode));
      field = *mode;
    }
  }

  template <typename T>
  void integer(const Key& key, T& field, Range range) {
    if (const toml::node* node = find(key)) {
      const auto value = expect<std::int64_t>(*node, key, "an integer");
      check_value(*node, key, config::range_problem(value, range));
      config::assign_int(field, value * range.unit);
    }
  }

 private:
  const toml::node* find(const Key& key) const {
    const toml::table* section = m_root.get_as<toml::table>(key.section);
    return section != nullptr ? section->get(key.name) : nullptr;
  }

  template <typename T>
  T expect(const toml::node& node, const Key& key, std::string_view wanted) const {
    const std::optional<T> value = node.value_exact<T>();
    if (!value) {
      throw type_error(node, key, wanted);
    }
    return *value;
  }

  ConfigError type_error(const toml::node& node, const Key& key, std::string_view wanted) const {
    return error_at(m_source, node, fmt::format("'{}' must be {}, not {}", key.full(), wanted, type_name(node.type())));
  }

  void check_value(const toml::node& node, const Key& key, const std::string& problem) const {
    if (!problem.empty()) {
      throw error_at(m_source, node, fmt::format("'{}' {}", key.full(), problem));
    }
  }

  const toml::table& m_root;
  const std::string& m_source;
};

}  // namespace

DaemonOptions parse_config(std::string_view text, const std::string& source_name, DaemonOptions base) {
  toml::table root;
  try {
    root = toml::parse(text, source_name);
  } catch (const toml::parse_error& e) {
    const auto& where = e.source().begin;
    throw ConfigError(
        fmt::format("{}:{}:{}: not valid TOML: {}", source_name, where.line, where.column, e.description()));
  }
  check_known_keys(root, source_name);
  TomlLoader loader(root, source_name);
  config::visit_settings(base, loader);
  return base;
}

DaemonOptions load_config_file(const std::string& path, DaemonOptions base) {
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
  return parse_config(text.str(), path, std::move(base));
}

std::vector<SettingInfo> describe_settings() {
  KeyCollector collector;
  const DaemonOptions any;
  config::visit_settings(any, collector);
  return collector.settings;
}

}  // namespace trace2d::app
