#pragma once
// The resource every span from this host is sent with: service.name ("git"
// unless OTEL_SERVICE_NAME, or service.name in OTEL_RESOURCE_ATTRIBUTES,
// says otherwise), host.name, trace2d's version, and whatever
// OTEL_RESOURCE_ATTRIBUTES adds ("k=v,k2=v2", values percent-encoded), as
// the OpenTelemetry SDKs read these variables.

#include <optional>
#include <string>
#include <string_view>

#include "otlp/span.hpp"

namespace trace2d::otlp {

struct ResourceSettings {
  std::optional<std::string> service_name;         // OTEL_SERVICE_NAME
  std::optional<std::string> resource_attributes;  // OTEL_RESOURCE_ATTRIBUTES
  std::string host_name;
  std::string trace2d_version;
};

// The settings from this process's environment and host.
[[nodiscard]] ResourceSettings resource_settings_from_environment();

[[nodiscard]] Resource make_resource(const ResourceSettings& settings);

// "%2C" -> ","; a malformed escape is kept as it is.
[[nodiscard]] std::string percent_decode(std::string_view text);

}  // namespace trace2d::otlp
