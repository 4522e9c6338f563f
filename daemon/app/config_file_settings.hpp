#pragma once
// The one list of settings behind config_file.cpp: each setting's TOML key,
// command-line flag, kind and allowed values. Loading, flag handling,
// validation and rendering are visitors over this list, so a new setting
// added here is known to all of them. (Internal to config_file*.cpp.)

#include <fmt/format.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "daemon/app/options.hpp"
#include "daemon/export/http_client.hpp"
#include "daemon/metrics/duration_metrics.hpp"
#include "daemon/metrics/metrics_server.hpp"
#include "daemon/source/socket_file.hpp"
#include "otlp/export_rules.hpp"

namespace trace2d::app::config {

// Whether a running daemon applies a changed value on SIGHUP (live), or
// needs a restart (the sockets, the database, the threads and the queue are
// made once, at start-up).
enum class Reload : bool { restart, live };

struct Key {
  std::string_view section;
  std::string_view name;
  std::string_view flag;  // the command-line flag that overrides it
  Reload reload = Reload::restart;

  [[nodiscard]] std::string full() const { return fmt::format("{}.{}", section, name); }
};

// Checks a string value: the problem ("is not absolute: ..."), or "" when fine.
using Check = std::string (*)(const std::string&);

struct Range {
  std::int64_t min;
  std::int64_t max;
  std::int64_t unit = 1;  // the field holds value * unit (MiB kept as bytes)
};

inline constexpr std::int64_t k_hour_ms = 3600LL * 1000;
inline constexpr std::int64_t k_day_ms = 24 * k_hour_ms;
inline constexpr std::int64_t k_mib = 1024 * 1024;

template <typename T>
struct IsDuration : std::false_type {};
template <typename Rep, typename Period>
struct IsDuration<std::chrono::duration<Rep, Period>> : std::true_type {};

template <typename T>
std::int64_t to_int(const T& field) {
  if constexpr (IsDuration<std::remove_cv_t<T>>::value) {
    return static_cast<std::int64_t>(field.count());
  } else {
    return static_cast<std::int64_t>(field);
  }
}

template <typename T>
void assign_int(T& field, std::int64_t value) {
  if constexpr (IsDuration<T>::value) {
    field = T(static_cast<typename T::rep>(value));
  } else {
    field = static_cast<T>(value);
  }
}

// TOML's basic string, so that any path renders as valid TOML.
inline std::string toml_string(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (byte < 0x20 || byte == 0x7f) {
      out += fmt::format("\\u{:04X}", byte);
    } else {
      out += c;
    }
  }
  return out + "\"";
}

inline std::string range_problem(std::int64_t value, const Range& range) {
  if (value < range.min || value > range.max) {
    return fmt::format("must be between {} and {}, not {}", range.min, range.max, value);
  }
  return {};
}

// "0660", "660": octal digits only, as chmod takes them.
inline std::optional<unsigned> parse_mode(std::string_view text) {
  if (text.empty() || text.size() > 4) {
    return std::nullopt;
  }
  unsigned mode = 0;
  for (const char c : text) {
    if (c < '0' || c > '7') {
      return std::nullopt;
    }
    mode = mode * 8 + static_cast<unsigned>(c - '0');
  }
  return mode;
}

inline std::string mode_problem(unsigned mode) {
  // Set-id and sticky bits mean nothing on a socket.
  return mode > 0777 ? fmt::format("must be a mode of at most \"0777\", not \"{:04o}\"", mode) : std::string();
}

inline std::string any_text(const std::string&) { return {}; }

inline std::string not_empty(const std::string& value) {
  return value.empty() ? "must not be empty" : std::string();
}

// Empty disables the socket; otherwise git's rules (see validate_socket_path).
inline std::string socket_path_problem(const std::string& path) {
  if (path.empty()) {
    return {};
  }
  if (path.front() != '/') {
    return fmt::format("is not absolute: '{}' (git requires an absolute socket path)", path);
  }
  if (path.size() > source::k_max_socket_path) {
    return fmt::format("is too long: '{}' is {} bytes; AF_UNIX allows at most {}", path, path.size(),
                       source::k_max_socket_path);
  }
  return {};
}

inline std::string absolute_dir_problem(const std::string& path) {
  return path.empty() || path.front() != '/' ? fmt::format("lists a directory that is not absolute: '{}'", path)
                                             : std::string();
}

inline std::string duration_problem(const std::string& text) {
  if (text.empty() || parse_duration(text)) {
    return {};
  }
  return fmt::format("must be a duration like \"90s\", \"15m\", \"12h\", \"30d\" or \"2w\" (\"\": none), not '{}'",
                     text);
}

inline std::string log_level_problem(const std::string& level) {
  for (const char* known : {"trace", "debug", "info", "warn", "error", "critical", "off"}) {
    if (level == known) {
      return {};
    }
  }
  return fmt::format("must be one of trace, debug, info, warn, error, critical, off; not '{}'", level);
}

inline std::string log_target_problem(const std::string& target) {
  if (target == "stderr" || target == "journal" || (!target.empty() && target.front() == '/' && target.back() != '/')) {
    return {};
  }
  return fmt::format("must be stderr, journal or an absolute file path, not '{}'", target);
}

inline std::string otlp_endpoint_problem(const std::string& url) {
  std::string error;
  if (url.empty() || exporter::parse_endpoint(otlp_traces_url(url), error)) {
    return {};
  }
  return fmt::format("is not usable: '{}': {}", url, error);
}

// The traces URL, POSTed to as it is (no /v1/traces appended).
inline std::string otlp_traces_endpoint_problem(const std::string& url) {
  std::string error;
  if (url.empty() || exporter::parse_endpoint(url, error)) {
    return {};
  }
  return fmt::format("is not usable: '{}': {}", url, error);
}

inline std::string absolute_or_empty_problem(const std::string& path) {
  return path.empty() || path.front() == '/' ? std::string() : fmt::format("is not absolute: '{}'", path);
}

inline std::string otlp_protocol_problem(const std::string& protocol) {
  return protocol == "http/protobuf" || protocol == "http/json" || protocol == "grpc"
             ? std::string()
             : fmt::format("must be http/protobuf, http/json or grpc, not '{}'", protocol);
}

inline std::string otlp_compression_problem(const std::string& compression) {
  return compression == "gzip" || compression == "none" ? std::string()
                                                         : fmt::format("must be gzip or none, not '{}'", compression);
}

inline std::string otlp_header_problem(const std::string& header) {
  const auto equals = header.find('=');
  if (equals == std::string::npos || equals == 0 ||
      header.find_first_of("\r\n") != std::string::npos) {
    return fmt::format("lists a header that is not name=value on one line: '{}'", header);
  }
  return {};
}

inline std::string otlp_detail_problem(const std::string& level) {
  return otlp::parse_detail_level(level) ? std::string()
                                         : fmt::format("must be drop, summary, process or verbose, not '{}'", level);
}

inline std::string otlp_outcome_detail_problem(const std::string& level) {
  if (level.empty()) {
    return {};
  }
  const auto parsed = otlp::parse_detail_level(level);
  return parsed && *parsed != otlp::DetailLevel::drop
             ? std::string()
             : fmt::format("must be summary, process or verbose (or \"\" for off), not '{}'", level);
}

inline std::string otlp_rule_problem(const std::string& rule) {
  const std::string problem = otlp::detail_rule_problem(rule);
  return problem.empty() ? problem : fmt::format("lists a rule that {}: '{}'", problem, rule);
}

inline std::string otlp_important_data_problem(const std::string& entry) {
  const std::string problem = otlp::important_data_problem(entry);
  return problem.empty() ? problem : fmt::format("lists an entry that {}: '{}'", problem, entry);
}

// A check for a list entry of trace2receiver's filter settings: `problem`
// says what is wrong, "" when fine.
template <std::string (*Problem)(std::string_view)>
std::string otlp_entry_problem(const std::string& entry) {
  const std::string problem = Problem(entry);
  return problem.empty() ? problem : fmt::format("lists an entry that {}: '{}'", problem, entry);
}

// "exe", "exe:verb" or "exe:verb#mode", as a detail rule's pattern; an
// "=" says a detail rule was meant (the storage rule has no levels).
inline std::string storage_drop_problem(const std::string& pattern) {
  if (pattern.empty() || pattern.front() == ':' || pattern.front() == '#' ||
      pattern.find_first_of("= \t") != std::string::npos) {
    return fmt::format("lists '{}', which is not exe, exe:verb or exe:verb#mode (such as git:status)", pattern);
  }
  return {};
}

inline std::string metrics_listen_problem(const std::string& address) {
  std::string error;
  if (address.empty() || metrics::parse_listen_address(address, error)) {
    return {};
  }
  return fmt::format("is not usable: {}", error);
}

inline std::string metrics_repository_label_problem(const std::string& label) {
  return metrics::parse_repo_label(label) ? std::string()
                                          : fmt::format("must be none, nickname or worktree; not '{}'", label);
}

inline std::string metrics_region_problem(const std::string& region) {
  std::string error;
  return metrics::parse_region_selector(region, error) ? std::string() : fmt::format("lists {}", error);
}

// Every setting, in the order of the file. `Options` is DaemonOptions or
// const DaemonOptions; the visitor has text, list, boolean, mode and integer.
template <typename Options, typename Visitor>
void visit_settings(Options& o, Visitor& v) {
  v.text(Key{"database", "path", "--db"}, o.db_path, not_empty);
  v.integer(Key{"database", "commit_interval_ms", "--commit-interval-ms"}, o.commit_interval, Range{1, 10000});

  v.text(Key{"stream", "path", "--socket"}, o.stream.path, socket_path_problem);
  v.mode(Key{"stream", "mode", "--socket-mode"}, o.stream.mode);
  v.text(Key{"stream", "owner", "--socket-owner"}, o.stream.owner, any_text);
  v.text(Key{"stream", "group", "--socket-group"}, o.stream.group, any_text);
  v.integer(Key{"stream", "silent_timeout_ms", "--stream-silent-timeout-ms"}, o.stream_silent_timeout,
            Range{0, k_hour_ms});

  v.text(Key{"dgram", "path", "--dgram-socket"}, o.dgram.path, socket_path_problem);
  v.mode(Key{"dgram", "mode", "--dgram-socket-mode"}, o.dgram.mode);
  v.text(Key{"dgram", "owner", "--dgram-socket-owner"}, o.dgram.owner, any_text);
  v.text(Key{"dgram", "group", "--dgram-socket-group"}, o.dgram.group, any_text);
  v.integer(Key{"dgram", "receive_buffer_bytes", "--dgram-receive-buffer-bytes"}, o.dgram_receive_buffer,
            Range{4096, 1LL << 30});
  v.integer(Key{"dgram", "idle_timeout_ms", "--dgram-idle-timeout-ms", Reload::live}, o.dgram_idle_timeout,
            Range{1, 30 * k_day_ms});

  v.list(Key{"directories", "watch", "--watch", Reload::live}, o.watch_dirs, absolute_dir_problem);
  v.boolean(Key{"directories", "delete_finished", "--delete-finished", Reload::live}, o.delete_finished_files);
  v.integer(Key{"directories", "idle_timeout_ms", "--dir-idle-timeout-ms", Reload::live}, o.dir_idle_timeout,
            Range{1, 30 * k_day_ms});
  v.integer(Key{"directories", "max_silence_ms", "--dir-max-silence-ms", Reload::live}, o.dir_max_silence,
            Range{1, 30 * k_day_ms});
  v.integer(Key{"directories", "max_open_files_per_uid", "--dir-max-open-files-per-uid", Reload::live},
            o.dir_max_open_files_per_uid, Range{1, 1LL << 20});
  v.integer(Key{"directories", "max_open_files", "--dir-max-open-files", Reload::live}, o.dir_max_open_files,
            Range{1, 1LL << 20});
  v.integer(Key{"directories", "max_file_bytes", "--dir-max-file-bytes", Reload::live}, o.dir_max_file_bytes,
            Range{0, 1LL << 50});

  v.integer(Key{"limits", "queue_max_mib", "--max-queue-mib"}, o.max_queue_bytes, Range{1, 1LL << 20, k_mib});
  v.integer(Key{"limits", "overflow_wait_ms", "--overflow-wait-ms"}, o.overflow_wait, Range{0, k_hour_ms});
  v.integer(Key{"limits", "max_line_bytes", "--max-line-bytes"}, o.max_line_bytes, Range{1024, 1LL << 30});
  v.integer(Key{"limits", "io_threads", "--io-threads"}, o.io_threads, Range{1, 64});
  v.boolean(Key{"limits", "batch_scheduling", "--batch-scheduling"}, o.batch_scheduling);
  v.integer(Key{"limits", "per_uid_lines_per_second", "--per-uid-rate"}, o.per_uid_lines_per_second,
            Range{0, 1LL << 32});
  v.integer(Key{"limits", "per_uid_connections", "--per-uid-connections"}, o.per_uid_connections,
            Range{0, 1LL << 24});
  v.integer(Key{"limits", "per_uid_sessions", "--per-uid-sessions"}, o.per_uid_sessions, Range{1, 1LL << 24});
  v.integer(Key{"limits", "per_uid_live_mib", "--per-uid-live-mib"}, o.per_uid_live_bytes,
            Range{1, 1LL << 20, k_mib});

  v.text(Key{"retention", "max_age", "--retention-max-age"}, o.retention_max_age, duration_problem);
  v.integer(Key{"retention", "max_db_bytes", "--retention-max-db-bytes"}, o.retention_max_db_bytes,
            Range{0, 1LL << 50});
  v.integer(Key{"retention", "headroom_percent", "--retention-headroom-percent"}, o.retention_headroom_percent,
            Range{0, 50});

  v.list(Key{"storage", "drop", "--storage-drop", Reload::live}, o.storage_drop, storage_drop_problem);

  v.boolean(Key{"security", "redact_url_credentials", "--redact-url-credentials"}, o.redact_url_credentials);

  v.integer(Key{"shutdown", "grace_ms", "--shutdown-grace-ms"}, o.shutdown_grace, Range{0, k_hour_ms});
  v.integer(Key{"shutdown", "give_up_after_ms", "--give-up-after-ms"}, o.store_give_up_after,
            Range{0, k_day_ms});

  v.integer(Key{"status", "interval_ms", "--status-interval-ms"}, o.stats_interval, Range{100, k_hour_ms});

  v.text(Key{"otlp", "endpoint", "--otlp-endpoint"}, o.otlp_endpoint, otlp_endpoint_problem);
  v.text(Key{"otlp", "traces_endpoint", "--otlp-traces-endpoint"}, o.otlp_traces_endpoint,
         otlp_traces_endpoint_problem);
  v.text(Key{"otlp", "protocol", "--otlp-protocol"}, o.otlp_protocol, otlp_protocol_problem);
  v.text(Key{"otlp", "compression", "--otlp-compression"}, o.otlp_compression, otlp_compression_problem);
  v.integer(Key{"otlp", "timeout_ms", "--otlp-timeout-ms"}, o.otlp_timeout, Range{100, 10 * 60 * 1000});
  v.list(Key{"otlp", "headers", "--otlp-header"}, o.otlp_headers, otlp_header_problem);
  v.text(Key{"otlp", "ca_file", "--otlp-ca-file"}, o.otlp_ca_file, absolute_or_empty_problem);
  v.text(Key{"otlp", "client_cert", "--otlp-client-cert"}, o.otlp_client_cert, absolute_or_empty_problem);
  v.text(Key{"otlp", "client_key", "--otlp-client-key"}, o.otlp_client_key, absolute_or_empty_problem);
  v.text(Key{"otlp", "detail", "--otlp-detail"}, o.otlp_detail, otlp_detail_problem);
  v.list(Key{"otlp", "rules", "--otlp-rule"}, o.otlp_rules, otlp_rule_problem);
  v.text(Key{"otlp", "nickname_key", "--otlp-nickname-key"}, o.otlp_nickname_key, any_text);
  v.list(Key{"otlp", "important_data", "--otlp-important-data"}, o.otlp_important_data,
         otlp_important_data_problem);
  v.text(Key{"otlp", "ruleset_key", "--otlp-ruleset-key"}, o.otlp_ruleset_key, any_text);
  v.list(Key{"otlp", "nicknames", "--otlp-nickname"}, o.otlp_nicknames, otlp_entry_problem<otlp::nickname_problem>);
  v.list(Key{"otlp", "rulesets", "--otlp-ruleset"}, o.otlp_rulesets, otlp_entry_problem<otlp::ruleset_problem>);
  v.list(Key{"otlp", "summary_messages", "--otlp-summary-message"}, o.otlp_summary_messages,
         otlp_entry_problem<otlp::summary_message_problem>);
  v.list(Key{"otlp", "summary_regions", "--otlp-summary-region"}, o.otlp_summary_regions,
         otlp_entry_problem<otlp::summary_region_problem>);
  v.list(Key{"otlp", "important_events", "--otlp-important-event"}, o.otlp_important_events,
         otlp_entry_problem<otlp::important_event_problem>);
  v.boolean(Key{"otlp", "pii_user_name", "--otlp-pii-user-name"}, o.otlp_pii_user_name);
  v.boolean(Key{"otlp", "pii_host_name", "--otlp-pii-host-name"}, o.otlp_pii_host_name);
  v.boolean(Key{"otlp", "resource_host_name", "--otlp-resource-host-name"}, o.otlp_resource_host_name);
  v.text(Key{"otlp", "outcome_detail", "--otlp-outcome-detail"}, o.otlp_outcome_detail, otlp_outcome_detail_problem);
  v.integer(Key{"otlp", "slow_ms", "--otlp-slow-ms"}, o.otlp_slow, Range{0, k_hour_ms});
  v.boolean(Key{"otlp", "slow_p99", "--otlp-slow-p99"}, o.otlp_slow_p99);
  v.integer(Key{"otlp", "batch_max_sessions", "--otlp-batch-max-sessions"}, o.otlp_batch_max_sessions,
            Range{1, 65536});
  v.integer(Key{"otlp", "batch_max_spans", "--otlp-batch-max-spans"}, o.otlp_batch_max_spans, Range{64, 1 << 20});
  v.integer(Key{"otlp", "max_backoff_ms", "--otlp-max-backoff-ms"}, o.otlp_max_backoff, Range{100, k_hour_ms});
  v.integer(Key{"otlp", "shutdown_wait_ms", "--otlp-shutdown-wait-ms"}, o.otlp_shutdown_wait, Range{0, 60000});

  v.text(Key{"metrics", "listen", "--metrics-listen"}, o.metrics_listen, metrics_listen_problem);
  v.list(Key{"metrics", "regions", "--metrics-region"}, o.metrics_regions, metrics_region_problem);
  v.text(Key{"metrics", "repository_label", "--metrics-repository-label"}, o.metrics_repository_label,
         metrics_repository_label_problem);

  v.boolean(Key{"query", "enabled", "--query"}, o.query_enabled);
  v.text(Key{"query", "socket", "--query-socket"}, o.query_socket, socket_path_problem);
  v.text(Key{"query", "trace2ctl", "--query-trace2ctl"}, o.query_trace2ctl, absolute_or_empty_problem);

  v.text(Key{"log", "level", "--log-level", Reload::live}, o.log_level, log_level_problem);
  v.text(Key{"log", "target", "--log-target"}, o.log_target, log_target_problem);
}

}  // namespace trace2d::app::config
