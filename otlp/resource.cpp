#include "otlp/resource.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>

#include "otlp/export_rules.hpp"
#include "trace2d/version.hpp"

namespace trace2d::otlp {
namespace {

std::optional<std::string> env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && value[0] != '\0' ? std::optional<std::string>(value) : std::nullopt;
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) {
    text.remove_prefix(1);
  }
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) {
    text.remove_suffix(1);
  }
  return text;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  if (c >= 'a' && c <= 'f') {
    return c - 'a' + 10;
  }
  if (c >= 'A' && c <= 'F') {
    return c - 'A' + 10;
  }
  return -1;
}

void set(std::vector<Attribute>& attributes, AttributeKey key, std::string value) {
  const auto found =
      std::find_if(attributes.begin(), attributes.end(), [&](const Attribute& a) { return a.key == key.view(); });
  if (found != attributes.end()) {
    found->value = std::move(value);
  } else {
    attributes.push_back(Attribute{std::move(key), std::move(value)});
  }
}

}  // namespace

std::string percent_decode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size()) {
      const int high = hex_digit(text[i + 1]);
      const int low = hex_digit(text[i + 2]);
      if (high >= 0 && low >= 0) {
        out.push_back(static_cast<char>(high * 16 + low));
        i += 2;
        continue;
      }
    }
    out.push_back(text[i]);
  }
  return out;
}

ResourceSettings resource_settings_from_environment() {
  ResourceSettings settings;
  settings.service_name = env("OTEL_SERVICE_NAME");
  settings.resource_attributes = env("OTEL_RESOURCE_ATTRIBUTES");
  std::array<char, 256> host{};
  if (::gethostname(host.data(), host.size() - 1) == 0) {
    settings.host_name = host.data();
  }
  settings.trace2d_version = k_version;
  return settings;
}

Resource make_resource(const ResourceSettings& settings) {
  Resource resource;
  auto& a = resource.attributes;
  set(a, "service.name", "git");
  resource.yielding.emplace_back("service.name");  // a process's own name replaces it, unless a variable set it
  if (settings.include_host_name && !settings.host_name.empty()) {
    set(a, "host.name", settings.host_name);
  }
  set(a, "trace2d.version", settings.trace2d_version);
  // The "SDK" that wrote the OTLP: trace2d (trace2receiver names the Go SDK it links).
  set(a, "telemetry.sdk.name", "trace2d");
  set(a, "telemetry.sdk.language", "cpp");
  set(a, "telemetry.sdk.version", settings.trace2d_version);
  if (settings.resource_attributes) {
    std::string_view rest = *settings.resource_attributes;
    while (!rest.empty()) {
      const auto comma = rest.find(',');
      const std::string_view pair = rest.substr(0, comma);
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
      const auto equals = pair.find('=');
      if (equals == std::string_view::npos) {
        continue;  // the SDKs drop a malformed pair and keep the others
      }
      const std::string key(trim(pair.substr(0, equals)));
      if (!key.empty()) {
        set(a, key, percent_decode(trim(pair.substr(equals + 1))));
        std::erase(resource.yielding, key);  // chosen: it wins over a process's
      }
    }
  }
  if (settings.service_name) {
    set(a, "service.name", *settings.service_name);  // wins over OTEL_RESOURCE_ATTRIBUTES, as in the SDKs
    std::erase(resource.yielding, std::string("service.name"));
  }
  return resource;
}

ProcessResource make_process_resource(const model::ProcessInfo& process) {
  auto attributes = std::make_shared<std::vector<Attribute>>();
  auto& a = *attributes;
  a.reserve(6);
  a.emplace_back(AttributeKey("service.namespace"), Text("trace2"));
  a.emplace_back(AttributeKey("service.name"), Text(process_name(process)));
  a.emplace_back(AttributeKey("service.version"), Text::view_of(process.version));
  a.emplace_back(AttributeKey("service.instance.id"), Text::view_of(process.sid));
  a.emplace_back(AttributeKey("trace2.cmd.version"), Text::view_of(process.version));
  a.emplace_back(AttributeKey("trace2.cmd.sid"), Text::view_of(process.sid));
  return attributes;
}

}  // namespace trace2d::otlp
