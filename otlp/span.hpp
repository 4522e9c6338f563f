#pragma once
// The OpenTelemetry span model trace2d exports (docs/otlp.md): plain data,
// built from a process tree by span_builder.hpp and written by the OTLP
// encoders (otlp_json.hpp, otlp_protobuf.hpp).

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace trace2d::otlp {

using TraceId = std::array<std::uint8_t, 16>;
using SpanId = std::array<std::uint8_t, 8>;

using AttributeValue = std::variant<std::string, std::int64_t, double, bool, std::vector<std::string>>;

struct Attribute {
  std::string key;
  AttributeValue value;
};

// OTLP's enum values (trace.proto).
enum class SpanKind : int { internal = 1, server = 2, client = 3 };
enum class StatusCode : int { unset = 0, ok = 1, error = 2 };

struct SpanEvent {
  std::uint64_t time_unix_nano = 0;
  std::string name;
  std::vector<Attribute> attributes;
};

struct Span {
  TraceId trace_id{};
  SpanId span_id{};
  std::optional<SpanId> parent_span_id;
  std::string name;
  SpanKind kind = SpanKind::internal;
  std::uint64_t start_time_unix_nano = 0;
  std::uint64_t end_time_unix_nano = 0;
  std::vector<Attribute> attributes;
  std::vector<SpanEvent> events;
  StatusCode status = StatusCode::unset;
  std::string status_message;
};

// What is true of every span trace2d sends from one host.
struct Resource {
  std::vector<Attribute> attributes;
};

// The instrumentation scope every span is sent under.
struct Scope {
  std::string name = "trace2d";
  std::string version;
};

// One ExportTraceServiceRequest: one resource, one scope, its spans.
struct TraceBatch {
  const Resource* resource = nullptr;
  const Scope* scope = nullptr;
  std::vector<Span> spans;
};

}  // namespace trace2d::otlp
