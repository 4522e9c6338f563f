#pragma once
// The one list of settings behind config_file.cpp: each setting's TOML key,
// command-line flag, kind and allowed values, in the order of the file.
// Loading, flag handling, validation and rendering are visitors over this
// list, so a new setting added here is known to all of them. The settings
// of a component's own options are declared beside them and visited from
// here (daemon/settings/setting.hpp). (Internal to config_file*.cpp.)

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
#include "daemon/export/rule_settings.hpp"
#include "daemon/metrics/metrics_settings.hpp"
#include "daemon/query/query_service.hpp"
#include "daemon/settings/setting.hpp"
#include "daemon/source/socket_file.hpp"
#include "daemon/stitch/stitcher.hpp"
#include "otlp/export_rules.hpp"

namespace trace2d::app::config {

// The vocabulary of a declaration (daemon/settings/setting.hpp).
using settings::any_text;
using settings::Check;
using settings::k_day_ms;
using settings::k_hour_ms;
using settings::k_mib;
using settings::Key;
using settings::Range;
using settings::Reload;

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

inline std::string not_empty(const std::string& value) {
  return value.empty() ? "must not be empty" : std::string();
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

// Every setting, in the order of the file. `Options` is DaemonOptions or
// const DaemonOptions; the visitor has text, list, boolean, mode and integer.
template <typename Options, typename Visitor>
void visit_settings(Options& o, Visitor& v) {
  v.text(Key{"database", "path", "--db", "PATH", "SQLite database path"}, o.db_path, not_empty);
  store::StoreWriter::Options::visit_settings(o.store_writer, v);

  v.text(Key{"stream", "path", "--socket", "PATH", "Stream socket path (absolute; \"\": none)"}, o.stream.path,
         source::socket_path_problem);
  v.mode(Key{"stream", "mode", "--socket-mode", "MODE", "Permissions of the stream socket file (octal)"},
         o.stream.mode);
  v.text(Key{"stream", "owner", "--socket-owner", "USER", "Owner of the stream socket file (name or uid)"},
         o.stream.owner, any_text);
  v.text(Key{"stream", "group", "--socket-group", "GROUP", "Group of the stream socket file (name or gid)"},
         o.stream.group, any_text);
  source::StreamReader::Options::visit_settings(o.stream_reader, v);

  v.text(Key{"dgram", "path", "--dgram-socket", "PATH", "Datagram socket path (absolute; \"\": none)"}, o.dgram.path,
         source::socket_path_problem);
  v.mode(Key{"dgram", "mode", "--dgram-socket-mode", "MODE", "Permissions of the datagram socket file (octal)"},
         o.dgram.mode);
  v.text(Key{"dgram", "owner", "--dgram-socket-owner", "USER", "Owner of the datagram socket file (name or uid)"},
         o.dgram.owner, any_text);
  v.text(Key{"dgram", "group", "--dgram-socket-group", "GROUP", "Group of the datagram socket file (name or gid)"},
         o.dgram.group, any_text);
  source::DgramReceiver::Options::visit_settings(o.dgram_receiver, v);
  pipeline::IngestWorker::Options::visit_settings(o.ingest_worker, v);

  source::DirWatcher::Options::visit_settings(o.directories, v);

  v.integer(Key{"limits", "queue_max_mib", "--max-queue-mib", "MIB", "Memory for events read but not yet committed"},
            o.max_queue_bytes, Range{1, 1LL << 20, k_mib});
  v.integer(Key{"limits", "overflow_wait_ms", "--overflow-wait-ms", "MS",
                "At the memory bound, pause reading this long before dropping"},
            o.overflow_wait, Range{0, k_hour_ms});
  v.integer(Key{"limits", "max_line_bytes", "--max-line-bytes", "BYTES",
                "Longest event line accepted; longer lines are rejected"},
            o.max_line_bytes, Range{1024, 1LL << 30});
  v.integer(Key{"limits", "io_threads", "--io-threads", "N", "Threads reading sockets"}, o.io_threads, Range{1, 64});
  v.boolean(Key{"limits", "batch_scheduling", "--batch-scheduling", "",
                "Run the parse, store and export threads under SCHED_BATCH, so git goes first"},
            o.batch_scheduling);
  v.integer(Key{"limits", "per_uid_connections", "--per-uid-connections", "N",
                "Stream connections one uid may hold open (0: all but a share kept for other uids)"},
            o.per_uid_connections, Range{0, 1LL << 24});
  stitch::Stitcher::Options::visit_settings(o.stitcher, v);

  store::RetentionSettings::visit_settings(o.retention, v);

  v.integer(
      Key{"shutdown", "grace_ms", "--shutdown-grace-ms", "MS", "On SIGTERM, keep reading open connections this long"},
      o.shutdown_grace, Range{0, k_hour_ms});
  v.integer(Key{"shutdown", "give_up_after_ms", "--give-up-after-ms", "MS",
                "On SIGTERM, stop retrying a failing database after this long"},
            o.store_give_up_after, Range{0, k_day_ms});

  v.text(
      Key{"otlp", "endpoint", "--otlp-endpoint", "URL",
          "OTLP collector to export process trees to; over HTTP a base URL: /v1/traces is appended (\"\": no export)"},
      o.otlp_endpoint, otlp_endpoint_problem);
  v.text(Key{"otlp", "traces_endpoint", "--otlp-traces-endpoint", "URL",
             "The collector's traces URL, used as is; wins over otlp.endpoint (\"\": none)"},
         o.otlp_traces_endpoint, otlp_traces_endpoint_problem);
  v.text(Key{"otlp", "protocol", "--otlp-protocol", "P",
             "http/protobuf, http/json or grpc (port 4317 when the endpoint names none)"},
         o.otlp_protocol, otlp_protocol_problem);
  v.text(Key{"otlp", "compression", "--otlp-compression", "C", "none or gzip"}, o.otlp_compression,
         otlp_compression_problem);
  v.list(Key{"otlp", "headers", "--otlp-header", "NAME=VALUE",
             "Extra request header, gRPC metadata over grpc (repeatable)"},
         o.otlp_headers, otlp_header_problem);
  v.text(Key{"otlp", "ca_file", "--otlp-ca-file", "PATH",
             "https (HTTP or gRPC): PEM file of the CAs to trust (\"\": the system's)"},
         o.otlp_ca_file, settings::absolute_path_or_empty);
  v.text(Key{"otlp", "client_cert", "--otlp-client-cert", "PATH", "https: client certificate (PEM)"},
         o.otlp_client_cert, settings::absolute_path_or_empty);
  v.text(Key{"otlp", "client_key", "--otlp-client-key", "PATH", "https: the client certificate's key (PEM)"},
         o.otlp_client_key, settings::absolute_path_or_empty);
  exporter::RuleSettings::visit_settings(o.export_rules, v);
  exporter::ExporterOptions::visit_settings(o.exporter, v);

  metrics::MetricsSettings::visit_settings(o.metrics, v);

  query::QuerySettings::visit_settings(o.query, v);

  v.text(Key{"log", "level", "--log-level", "LEVEL", "trace, debug, info, warn, error, critical, off", Reload::live},
         o.log_level, log_level_problem);
  v.text(Key{"log", "target", "--log-target", "TARGET", "stderr, journal, or an absolute file path"}, o.log_target,
         log_target_problem);
}

}  // namespace trace2d::app::config
