#pragma once
// The resources spans are sent with. The host's: host.name (unless turned
// off), trace2d's version, telemetry.sdk.*, and whatever
// OTEL_RESOURCE_ATTRIBUTES adds ("k=v,k2=v2", values percent-encoded), as
// the OpenTelemetry SDKs read these variables; service.name "git" unless
// OTEL_SERVICE_NAME, or service.name in OTEL_RESOURCE_ATTRIBUTES, says
// otherwise. A process's, as trace2receiver makes one per process:
// service.name "exe:verb#mode" (where no variable chose one),
// service.namespace "trace2", service.version (git's version),
// service.instance.id (the SID), trace2.cmd.version, trace2.cmd.sid.

#include <optional>
#include <string>
#include <string_view>

#include "model/process_tree.hpp"
#include "otlp/span.hpp"

namespace trace2d::otlp {

struct ResourceSettings {
  std::optional<std::string> service_name;         // OTEL_SERVICE_NAME
  std::optional<std::string> resource_attributes;  // OTEL_RESOURCE_ATTRIBUTES
  std::string host_name;
  bool include_host_name = true;  // [otlp] resource_host_name: host.name on the resource
  std::string trace2d_version;
};

// The settings from this process's environment and host.
[[nodiscard]] ResourceSettings resource_settings_from_environment();

[[nodiscard]] Resource make_resource(const ResourceSettings& settings);

// A process's own resource; its text values are views of `process`'s
// strings, which must outlive it (as a span's: span_builder.hpp).
[[nodiscard]] ProcessResource make_process_resource(const model::ProcessInfo& process);

// "%2C" -> ","; a malformed escape is kept as it is.
[[nodiscard]] std::string percent_decode(std::string_view text);

}  // namespace trace2d::otlp
