#include "daemon/app/options.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "daemon/export/http_client.hpp"
#include "daemon/source/runtime_dir.hpp"
#include "db/default_paths.hpp"
#include "otlp/resource.hpp"
#include "trace2d/version.hpp"

namespace trace2d::app {
namespace {

std::string env_or(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && value[0] == '/' ? std::string(value) : fallback;
}

std::string runtime_dir() {
  if (::geteuid() == 0) {
    return "/run/trace2d";
  }
  // The fallback is checked and made private when a socket is created there
  // (source::prepare_socket_directory).
  return env_or("XDG_RUNTIME_DIR", source::fallback_runtime_root()) + "/trace2d";
}

}  // namespace

std::string default_socket_path() { return runtime_dir() + "/trace2d.sock"; }

std::string default_dgram_socket_path() { return runtime_dir() + "/trace2d-dgram.sock"; }

std::string default_config_path() { return k_default_config_path; }

DaemonOptions default_options() {
  DaemonOptions options;
  options.stream.path = default_socket_path();
  options.dgram.path = default_dgram_socket_path();
  options.db_path = db::default_db_path();
  return options;
}

std::string comma_list(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) {
    out += (out.empty() ? "" : ", ") + item;
  }
  return out;
}

std::string otlp_traces_url(const std::string& endpoint) {
  constexpr std::string_view k_path = "/v1/traces";
  std::string url = endpoint;
  if (url.size() >= k_path.size() && url.compare(url.size() - k_path.size(), k_path.size(), k_path) == 0) {
    return url;
  }
  while (!url.empty() && url.back() == '/') {
    url.pop_back();
  }
  return url + std::string(k_path);
}

std::string otlp_export_url(const DaemonOptions& options) {
  if (!options.otlp_traces_endpoint.empty()) {
    return options.otlp_traces_endpoint;
  }
  if (options.otlp_endpoint.empty() || options.otlp_protocol == "grpc") {
    return options.otlp_endpoint;  // gRPC has no path to append: the method is named in the call
  }
  return otlp_traces_url(options.otlp_endpoint);
}

OtelSettings apply_otel_environment(DaemonOptions& options) {
  OtelSettings set;
  const auto env = [&set](const char* name, const char* key) -> std::optional<std::string> {
    const char* value = std::getenv(name);
    if (value == nullptr || value[0] == '\0') {
      return std::nullopt;
    }
    set[key] = name;
    return std::string(value);
  };
  if (const auto traces = env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "otlp.traces_endpoint")) {
    options.otlp_traces_endpoint = *traces;
  }
  if (const auto base = env("OTEL_EXPORTER_OTLP_ENDPOINT", "otlp.endpoint")) {
    options.otlp_endpoint = *base;
  }
  if (const auto headers = env("OTEL_EXPORTER_OTLP_HEADERS", "otlp.headers")) {
    options.otlp_headers.clear();
    std::string_view rest = *headers;
    while (!rest.empty()) {
      const auto comma = rest.find(',');
      const std::string_view pair = rest.substr(0, comma);
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
      if (pair.find('=') != std::string_view::npos) {
        options.otlp_headers.push_back(otlp::percent_decode(pair));
      }
    }
  }
  if (const auto compression = env("OTEL_EXPORTER_OTLP_COMPRESSION", "otlp.compression")) {
    options.otlp_compression = *compression;
  }
  if (const auto protocol = env("OTEL_EXPORTER_OTLP_PROTOCOL", "otlp.protocol")) {
    options.otlp_protocol = *protocol;
  }
  // The signal's own variable wins over the general one (the SDK
  // specification), and is named when its value is wrong.
  if (const auto protocol = env("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "otlp.protocol")) {
    options.otlp_protocol = *protocol;
  }
  if (const auto ca = env("OTEL_EXPORTER_OTLP_CERTIFICATE", "otlp.ca_file")) {
    options.otlp_ca_file = *ca;
  }
  if (const auto cert = env("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", "otlp.client_cert")) {
    options.otlp_client_cert = *cert;
  }
  if (const auto key = env("OTEL_EXPORTER_OTLP_CLIENT_KEY", "otlp.client_key")) {
    options.otlp_client_key = *key;
  }
  if (const auto timeout = env("OTEL_EXPORTER_OTLP_TIMEOUT", "otlp.timeout_ms")) {
    try {
      options.exporter.timeout = std::chrono::milliseconds(std::stoll(*timeout));
    } catch (const std::exception&) {
      // Left at the default; --check-config shows what is in effect.
      set.erase("otlp.timeout_ms");
    }
  }
  return set;
}

std::string DaemonOptions::log_level_problem(const std::string& level) {
  for (const char* known : {"trace", "debug", "info", "warn", "error", "critical", "off"}) {
    if (level == known) {
      return {};
    }
  }
  return fmt::format("must be one of trace, debug, info, warn, error, critical, off; not '{}'", level);
}

std::string DaemonOptions::log_target_problem(const std::string& target) {
  if (target == "stderr" || target == "journal" || (!target.empty() && target.front() == '/' && target.back() != '/')) {
    return {};
  }
  return fmt::format("must be stderr, journal or an absolute file path, not '{}'", target);
}

std::string DaemonOptions::endpoint_problem(const std::string& url) {
  std::string error;
  if (url.empty() || exporter::parse_endpoint(otlp_traces_url(url), error)) {
    return {};
  }
  return fmt::format("is not usable: '{}': {}", url, error);
}

// The traces URL, POSTed to as it is (no /v1/traces appended).
std::string DaemonOptions::traces_endpoint_problem(const std::string& url) {
  std::string error;
  if (url.empty() || exporter::parse_endpoint(url, error)) {
    return {};
  }
  return fmt::format("is not usable: '{}': {}", url, error);
}

std::string DaemonOptions::protocol_problem(const std::string& protocol) {
  return protocol == "http/protobuf" || protocol == "http/json" || protocol == "grpc"
             ? std::string()
             : fmt::format("must be http/protobuf, http/json or grpc, not '{}'", protocol);
}

std::string DaemonOptions::compression_problem(const std::string& compression) {
  return compression == "gzip" || compression == "none" ? std::string()
                                                        : fmt::format("must be gzip or none, not '{}'", compression);
}

std::string DaemonOptions::header_problem(const std::string& header) {
  const auto equals = header.find('=');
  if (equals == std::string::npos || equals == 0 || header.find_first_of("\r\n") != std::string::npos) {
    return fmt::format("lists a header that is not name=value on one line: '{}'", header);
  }
  // What a collector's HTTP parser takes (RFC 9110): a name that is a
  // token, a value without control characters (but gRPC's binary
  // metadata, "-bin"). Sent as typed, a space in a name was answered 400,
  // which drops what the request carried.
  const std::string_view name(header.data(), equals);
  const auto token = [](unsigned char c) {
    return std::isalnum(c) != 0 ||
           std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos;
  };
  if (!std::all_of(name.begin(), name.end(), token)) {
    return fmt::format("lists a header whose name is not an HTTP token (letters, digits and !#$%&'*+-.^_`|~): '{}'",
                       header);
  }
  const std::string_view value = std::string_view(header).substr(equals + 1);
  const bool grpc_binary =
      name.size() > 4 && (name.substr(name.size() - 4) == "-bin" || name.substr(name.size() - 4) == "-BIN");
  if (!grpc_binary &&
      std::any_of(value.begin(), value.end(), [](unsigned char c) { return (c < 0x20 && c != '\t') || c == 0x7f; })) {
    return fmt::format("lists a header whose value holds a control character: '{}'", name);
  }
  return {};
}

}  // namespace trace2d::app
