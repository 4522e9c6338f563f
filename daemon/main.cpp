// trace2d: the collector daemon, and `trace2d import`. Works out the options
// (embedded defaults < configuration file < command-line flags), then hands
// over to app::Daemon or app::run_import. Exit codes: 0 fine, 1 a bad
// configuration or a failure, 2 bad usage.

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/sinks/systemd_sink.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "daemon/app/config_file.hpp"
#include "daemon/app/daemon.hpp"
#include "daemon/app/importer.hpp"
#include "daemon/app/options.hpp"
#include "daemon/source/socket_file.hpp"
#include "trace2d/version.hpp"

namespace {

using namespace trace2d;
using Kind = app::SettingInfo::Kind;

// What the command line said about the configuration: replayed on SIGHUP.
struct CommandLine {
  std::optional<std::string> config;  // --config as given; "" means none
  std::map<std::string, std::vector<std::string>> overrides;  // key -> the flag's values
};

// Which configuration file is read, and how to say so: logged at start-up,
// on SIGHUP and by --check-config, so nobody has to guess.
struct ConfigSource {
  std::optional<std::string> path;  // nullopt: none
  std::string description;          // the path, or "none (why)"
};

ConfigSource config_source(const CommandLine& command_line) {
  if (command_line.config) {
    if (command_line.config->empty()) {
      return {std::nullopt, "none (--config \"\")"};
    }
    return {command_line.config, *command_line.config};
  }
  const std::string fallback = app::default_config_path();
  std::error_code ec;
  if (std::filesystem::exists(fallback, ec)) {
    return {fallback, fallback};
  }
  return {std::nullopt, "none (" + fallback + " does not exist)"};
}

struct Effective {
  app::DaemonOptions options;
  ConfigSource source;
  bool dgram_dropped = false;  // --socket alone: no datagram socket
};

// Whether the OpenTelemetry SDK's variables are read (see effective_options).
enum class OtelVariables : bool { ignored, read };

// The options from the embedded defaults (and the OTEL_* variables), the
// file and the flags, unchecked; every problem of the file and the flags is
// added to `problems`. `from_environment` gets the settings an OTEL_*
// variable still sets (neither the file nor a flag does).
Effective gather_options(const CommandLine& command_line, OtelVariables otel, std::vector<std::string>& problems,
                         app::OtelSettings& from_environment) {
  Effective effective{app::default_options(), config_source(command_line)};
  if (otel == OtelVariables::read) {
    from_environment = app::apply_otel_environment(effective.options);
  }
  const auto keep = [&problems](const app::ConfigError& e) {
    problems.insert(problems.end(), e.problems().begin(), e.problems().end());
  };
  std::set<std::string> file_keys;
  if (effective.source.path) {
    try {
      app::LoadedConfig loaded = app::read_config_file(*effective.source.path, effective.options);
      effective.options = std::move(loaded.options);
      file_keys = std::move(loaded.keys);
    } catch (const app::ConfigError& e) {
      keep(e);
    }
  }
  std::set<std::string> flag_keys;
  for (const auto& [key, values] : command_line.overrides) {
    try {
      app::apply_flag(effective.options, key, values);
      flag_keys.insert(key);
    } catch (const app::ConfigError& e) {
      keep(e);
    }
  }
  effective.dgram_dropped = app::resolve_socket_flags(effective.options, file_keys, flag_keys);
  app::resolve_otel_environment(effective.options, from_environment, file_keys, flag_keys);
  return effective;
}

// Throws one app::ConfigError with every problem of the file and of the
// flags: a broken file does not hide a bad flag until the next run.
Effective effective_options(const CommandLine& command_line) {
  std::vector<std::string> problems;
  app::OtelSettings from_environment;
  Effective effective = gather_options(command_line, OtelVariables::read, problems, from_environment);
  if (app::otlp_export_url(effective.options).empty()) {
    // The OTEL_* variables configure an export: with it off they are not
    // used, so not checked either. An OTEL_EXPORTER_OTLP_PROTOCOL trace2d
    // does not know, set in a shared environment for another program, must
    // not stop trace2d.
    problems.clear();
    from_environment.clear();
    effective = gather_options(command_line, OtelVariables::ignored, problems, from_environment);
  }
  try {
    app::validate_options(effective.options);
  } catch (const app::ConfigError& e) {
    for (const std::string& problem : e.problems()) {
      problems.push_back(app::with_otel_source(problem, from_environment));
    }
  }
  if (!problems.empty()) {
    throw app::ConfigError(std::move(problems));
  }
  return effective;
}

// One line each, as a compiler reports errors: all of them at once.
void print_problems(const std::exception& e) {
  if (const auto* config = dynamic_cast<const app::ConfigError*>(&e)) {
    for (const auto& problem : config->problems()) {
      std::fprintf(stderr, "trace2d: %s\n", problem.c_str());
    }
    return;
  }
  std::fprintf(stderr, "trace2d: %s\n", e.what());
}

std::shared_ptr<spdlog::logger> make_logger(const std::string& target) {
  spdlog::sink_ptr sink;
  if (target == "stderr") {
    sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  } else if (target == "journal") {
    // The journal stamps time and priority itself.
    sink = std::make_shared<spdlog::sinks::systemd_sink_mt>("trace2d");
  } else {
    sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(target, false);
  }
  auto logger = std::make_shared<spdlog::logger>("trace2d", std::move(sink));
  if (target != "stderr" && target != "journal") {
    // Someone tailing the file wants each line as it happens.
    logger->flush_on(spdlog::level::trace);
  }
  return logger;
}

app::Daemon::Reloader make_reloader(CommandLine command_line) {
  return [command_line = std::move(command_line)]()
             -> std::optional<app::DaemonOptions> {
    try {
      spdlog::info("SIGHUP: configuration file {}", config_source(command_line).description);
      return effective_options(command_line).options;
    } catch (const app::ConfigError& e) {
      for (const auto& problem : e.problems()) {
        spdlog::error("SIGHUP: {}", problem);
      }
      return std::nullopt;
    } catch (const std::exception& e) {
      spdlog::error("SIGHUP: {}", e.what());
      return std::nullopt;
    }
  };
}

// The embedded default, as --help shows it ("/run/...", not "\"/run/...\"").
std::string default_text(const app::DaemonOptions& defaults, const app::SettingInfo& setting) {
  std::string text = app::render_setting(defaults, setting.key);
  if (text.size() >= 2 && text.front() == '"' && text.back() == '"') {
    text = text.substr(1, text.size() - 2);
  }
  return text;
}

// The flags that override settings, one per setting (from the list of
// settings), and what was given of them.
class SettingFlags {
 public:
  explicit SettingFlags(CLI::App& cli) : m_settings(app::describe_settings()) {
    const app::DaemonOptions defaults = app::default_options();
    for (const auto& setting : m_settings) {
      // Every setting has help (tests/daemon/test_config_file.cpp).
      const std::string& type_name = setting.value_name;
      const std::string text = setting.help + " [" + setting.key + "]";
      Flag flag{&setting, nullptr, nullptr};
      if (setting.kind == Kind::boolean) {
        flag.option = cli.add_flag(setting.flag);
        flag.option->description(text + " (default: " + default_text(defaults, setting) + ")");
        flag.negation = cli.add_flag("--no-" + setting.flag.substr(2))->description("The opposite of " + setting.flag);
        flag.option->excludes(flag.negation);
      } else if (setting.kind == Kind::list) {
        // One value per --watch, so that `--watch DIR import FILE` parses.
        flag.option = cli.add_option(setting.flag, m_lists[setting.key], text)
                          ->type_name(type_name)
                          ->allow_extra_args(false);
      } else {
        flag.option = cli.add_option(setting.flag, m_scalars[setting.key], text)
                          ->type_name(type_name)
                          ->default_str(default_text(defaults, setting));
      }
      m_flags.push_back(flag);
    }
  }
  SettingFlags(const SettingFlags&) = delete;
  SettingFlags& operator=(const SettingFlags&) = delete;

  // After parsing: setting key -> the values of its flag, for flags given.
  [[nodiscard]] std::map<std::string, std::vector<std::string>> given() const {
    std::map<std::string, std::vector<std::string>> values;
    for (const auto& [setting, option, negation] : m_flags) {
      if (negation != nullptr && negation->count() > 0) {
        values[setting->key] = {"false"};
      } else if (option->count() == 0) {
        continue;
      } else if (setting->kind == Kind::boolean) {
        values[setting->key] = {"true"};
      } else if (setting->kind == Kind::list) {
        values[setting->key] = m_lists.at(setting->key);
      } else {
        values[setting->key] = {m_scalars.at(setting->key)};
      }
    }
    return values;
  }

 private:
  struct Flag {
    const app::SettingInfo* setting;
    CLI::Option* option;
    CLI::Option* negation;  // --no-<flag>, for a boolean
  };

  std::vector<app::SettingInfo> m_settings;
  std::map<std::string, std::string> m_scalars;  // CLI11 writes the values here
  std::map<std::string, std::vector<std::string>> m_lists;
  std::vector<Flag> m_flags;
};

}  // namespace

int main(int argc, char** argv) {
  // OTLP/gRPC resolves the collector's name with the system's resolver
  // (getaddrinfo: /etc/hosts, nsswitch, systemd-resolved), as the HTTP
  // export does, not with gRPC's c-ares, which reads resolv.conf alone (and
  // leaks in Debian 12's build). Set here, before any thread, unless the
  // environment chose.
  ::setenv("GRPC_DNS_RESOLVER", "native", 0);
  CLI::App cli{"trace2d: collects Git Trace2 events into SQLite.\n"
               "Point git at it with GIT_TRACE2_EVENT=af_unix:stream:<socket>.\n"
               "Settings come from the configuration file; each flag overrides its setting."};
  cli.set_version_flag("--version", std::string("trace2d ") + k_version);
  std::string config;
  CLI::Option* config_option =
      cli.add_option("--config", config,
                     "Configuration file (default: " + app::default_config_path() + " if it exists; \"\": none)")
          ->type_name("PATH");
  bool check_config = false;
  cli.add_flag("--check-config", check_config,
               "Print the configuration in effect (TOML) and exit: 0 if valid, 1 if not");

  SettingFlags setting_flags(cli);

  CLI::App* import = cli.add_subcommand("import", "Load saved trace files or directories into the database, then exit");
  std::vector<std::string> import_paths;
  import->add_option("paths", import_paths, "Trace files, or directories of them")->required()->type_name("FILE|DIR");
  std::string import_db;
  CLI::Option* import_db_option = import->add_option("--db", import_db, "SQLite database path")->type_name("PATH");

  try {
    cli.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11's own codes start at 100; scripts expect 2 for bad usage.
    return cli.exit(e) == 0 ? 0 : 2;
  }

  CommandLine command_line;
  if (config_option->count() > 0) {
    command_line.config = config;
  }
  command_line.overrides = setting_flags.given();
  if (import_db_option->count() > 0) {
    command_line.overrides["database.path"] = {import_db};
  }

  // A flag's value that is not even of the right form is bad usage.
  try {
    app::DaemonOptions probe = app::default_options();
    for (const auto& [key, values] : command_line.overrides) {
      app::apply_flag(probe, key, values);
    }
  } catch (const app::ConfigError& e) {
    print_problems(e);
    return 2;
  }

  Effective effective;
  try {
    effective = effective_options(command_line);
  } catch (const std::exception& e) {
    print_problems(e);
    return 1;
  }
  app::DaemonOptions& options = effective.options;
  if (check_config) {
    std::printf("# configuration file: %s; the command-line flags on top\n%s%s",
                effective.source.description.c_str(),
                effective.dgram_dropped ? "# --socket without --dgram-socket: no datagram socket\n" : "",
                app::render_config(options).c_str());
    return 0;
  }

  try {
    // An import is run by hand: its log belongs on the terminal.
    spdlog::set_default_logger(make_logger(import->parsed() ? std::string("stderr") : options.log_target));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "trace2d: log.target '%s': %s\n", options.log_target.c_str(), e.what());
    return 1;
  }
  app::apply_log_level(options.log_level);
  spdlog::info("configuration file: {}", effective.source.description);
  if (effective.dgram_dropped && !import->parsed()) {
    spdlog::info("--socket without --dgram-socket: no datagram socket (--dgram-socket PATH adds one)");
  }

  try {
    if (import->parsed()) {
      return app::run_import(options, import_paths);
    }
    return app::Daemon(std::move(options), make_reloader(std::move(command_line))).run();
  } catch (const source::StartupError& e) {
    spdlog::critical("{}", e.what());
    return 1;
  } catch (const std::exception& e) {
    spdlog::critical("fatal: {}", e.what());
    return 1;
  }
}
