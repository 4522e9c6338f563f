#pragma once
// The configuration file (default_config_path()) and the command-line
// flags that override it. Every setting has one TOML key ("stream.mode");
// the file, the flags, the checks and the rendering all go through one list
// of settings, so they cannot disagree. docs/configuration.md describes them.
//
// Precedence: embedded defaults (default_options()) < file < flags.

#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/app/options.hpp"

namespace trace2d::app {

// A bad file or setting. Each problem names the file (and line) when there
// is one, the key ("'stream.mode'") and what is wrong; what() is all of
// them, one a line.
class ConfigError : public std::runtime_error {
 public:
  explicit ConfigError(const std::string& problem) : ConfigError(std::vector<std::string>{problem}) {}
  explicit ConfigError(std::vector<std::string> problems);
  [[nodiscard]] const std::vector<std::string>& problems() const { return m_problems; }

 private:
  std::vector<std::string> m_problems;
};

// Reads the TOML file at `path` and applies every key it sets on top of
// `base`; absent keys keep `base`'s values. Rejects unknown sections and
// keys (naming the closest known one), wrong types and bad values: all of
// them in one ConfigError, in the order of their lines.
[[nodiscard]] DaemonOptions load_config_file(const std::string& path, DaemonOptions base);

// load_config_file, and which settings the file sets ("dgram.path"): a
// flag given alone may mean something else when the file is silent (see
// resolve_socket_flags).
struct LoadedConfig {
  DaemonOptions options;
  std::set<std::string> keys;
};
[[nodiscard]] LoadedConfig read_config_file(const std::string& path, DaemonOptions base);

// The same for TOML text; `source_name` stands for the file in messages.
[[nodiscard]] DaemonOptions parse_config(std::string_view text, const std::string& source_name,
                                         DaemonOptions base);

// A command-line flag's value(s) for the setting `key` ("limits.io_threads"),
// converted like the file's value would be. Only the form is checked here
// (an integer, an octal mode, true/false); validate_options checks the value.
// A list setting takes every value; the others exactly one.
void apply_flag(DaemonOptions& options, std::string_view key, const std::vector<std::string>& values);

// `--socket PATH` alone means that socket only: when the stream socket's
// path comes from a flag and neither a flag nor the file names the datagram
// socket, the default datagram socket is not bound (dgram.path = "").
// True when it applied. `file_keys`: read_config_file's keys; `flag_keys`:
// the settings given as flags.
bool resolve_socket_flags(DaemonOptions& options, const std::set<std::string>& file_keys,
                          const std::set<std::string>& flag_keys);

// The OTEL_* variables are defaults under the file and the flags: a setting
// the file or a flag gives is removed from `from_environment`, and so is
// otlp.traces_endpoint, and its value, when the file or a flag names the
// base endpoint (otlp.endpoint) but not the traces endpoint, which would
// otherwise win over it.
void resolve_otel_environment(DaemonOptions& options, OtelSettings& from_environment,
                              const std::set<std::string>& file_keys, const std::set<std::string>& flag_keys);

// A problem validate_options found, with the OTEL_* variable that set the
// setting it names, when one did: "... (set by OTEL_EXPORTER_OTLP_PROTOCOL)".
[[nodiscard]] std::string with_otel_source(const std::string& problem, const OtelSettings& from_environment);

// Checks the effective options (after the file and the flags): ranges,
// absolute paths, socket path lengths, something to listen on. Throws
// one ConfigError naming every setting that is wrong.
void validate_options(const DaemonOptions& options);

// The effective configuration as a TOML document with every key: it loads
// back into the same options (trace2d --check-config). The settings SIGHUP
// applies say so in a comment; the others need a restart.
[[nodiscard]] std::string render_config(const DaemonOptions& options);

// What the command line needs of each setting, in the order of the file.
struct SettingInfo {
  enum class Kind { text, list, boolean, mode, integer };
  std::string key;   // "limits.io_threads"
  std::string flag;  // "--io-threads"
  Kind kind = Kind::text;
  bool live = false;       // a changed value is applied on SIGHUP; otherwise it needs a restart
  std::string value_name;  // its placeholder in --help ("N"); "" for a boolean
  std::string help;        // one line of --help
};
[[nodiscard]] std::vector<SettingInfo> describe_settings();

// What SIGHUP does with `fresh` (the file re-read, flags on top) while
// `running` runs: the keys whose change it applies, and those whose change
// waits for a restart.
struct ReloadPlan {
  std::vector<std::string> applied;
  std::vector<std::string> need_restart;
};
[[nodiscard]] ReloadPlan plan_reload(const DaemonOptions& running, const DaemonOptions& fresh);

// Copies the settings a reload applies (Reload::live) from `fresh` into
// `running`; the others stay as they run.
void apply_live_settings(DaemonOptions& running, const DaemonOptions& fresh);

// One setting's value as TOML would write it ("\"0666\"", "64", "[]"), for
// help texts. Throws ConfigError for an unknown key.
[[nodiscard]] std::string render_setting(const DaemonOptions& options, std::string_view key);

}  // namespace trace2d::app
