#pragma once
// What `trace2d --help` says about each setting's flag: the placeholder of
// its value and one line of help. Kept apart from main.cpp so that a test can
// hold every setting to having help, and docs/configuration.md to naming the
// same flag and placeholder.

#include <optional>
#include <string_view>

namespace trace2d::app {

struct SettingHelp {
  std::string_view value_name;  // "MS", "PATH"; "" for a boolean flag
  std::string_view text;
};

// The help of the setting `key` ("limits.io_threads"); nullopt for a key
// without any (a test keeps that from happening).
[[nodiscard]] std::optional<SettingHelp> setting_help(std::string_view key);

}  // namespace trace2d::app
