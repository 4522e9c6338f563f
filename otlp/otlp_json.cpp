#include "otlp/otlp_json.hpp"

#include <fmt/format.h>

#include <cmath>

#include "otlp/resource_groups.hpp"
#include "otlp/span_ids.hpp"
#include "proto/utf8.hpp"

namespace trace2d::otlp {
namespace {

void append_value(std::string& out, const AttributeValue& value) {
  std::visit(
      [&out](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, Text>) {
          out += "{\"stringValue\":";
          proto::append_json_string(out, v.view());
          out += '}';
        } else if constexpr (std::is_same_v<T, std::int64_t>) {
          out += fmt::format("{{\"intValue\":\"{}\"}}", v);
        } else if constexpr (std::is_same_v<T, double>) {
          // JSON has no NaN or infinity; OTLP/JSON writes them as strings.
          out += std::isfinite(v) ? fmt::format("{{\"doubleValue\":{}}}", v)
                                  : fmt::format("{{\"doubleValue\":\"{}\"}}", std::isnan(v) ? "NaN" : v > 0 ? "Infinity" : "-Infinity");
        } else if constexpr (std::is_same_v<T, bool>) {
          out += v ? "{\"boolValue\":true}" : "{\"boolValue\":false}";
        } else {
          out += "{\"arrayValue\":{\"values\":[";
          const std::vector<std::string>& items = v.items();
          for (std::size_t i = 0; i < items.size(); ++i) {
            out += i == 0 ? "{\"stringValue\":" : ",{\"stringValue\":";
            proto::append_json_string(out, items[i]);
            out += '}';
          }
          out += "]}}";
        }
      },
      value);
}

// Of a span or an event (Attribute), or of a resource group (its views).
template <typename Item>
void append_attributes(std::string& out, const std::vector<Item>& attributes) {
  out += "\"attributes\":[";
  for (std::size_t i = 0; i < attributes.size(); ++i) {
    const Attribute& attribute = attribute_of(attributes[i]);
    out += i == 0 ? "{\"key\":" : ",{\"key\":";
    proto::append_json_string(out, attribute.key.view());
    out += ",\"value\":";
    append_value(out, attribute.value);
    out += '}';
  }
  out += ']';
}

void append_span(std::string& out, const Span& span) {
  out += "{\"traceId\":\"" + to_hex(span.trace_id) + "\",\"spanId\":\"" + to_hex(span.span_id) + '"';
  if (span.parent_span_id) {
    out += ",\"parentSpanId\":\"" + to_hex(*span.parent_span_id) + '"';
  }
  out += ",\"name\":";
  proto::append_json_string(out, span.name);
  out += fmt::format(",\"kind\":{},\"startTimeUnixNano\":\"{}\",\"endTimeUnixNano\":\"{}\",", static_cast<int>(span.kind),
                     span.start_time_unix_nano, span.end_time_unix_nano);
  append_attributes(out, span.attributes);
  if (!span.events.empty()) {
    out += ",\"events\":[";
    for (std::size_t i = 0; i < span.events.size(); ++i) {
      const SpanEvent& event = span.events[i];
      out += fmt::format("{}{{\"timeUnixNano\":\"{}\",\"name\":", i == 0 ? "" : ",", event.time_unix_nano);
      proto::append_json_string(out, event.name);
      out += ',';
      append_attributes(out, event.attributes);
      out += '}';
    }
    out += ']';
  }
  if (span.status != StatusCode::unset) {
    out += ",\"status\":{\"code\":" + std::to_string(static_cast<int>(span.status));
    if (!span.status_message.empty()) {
      out += ",\"message\":";
      proto::append_json_string(out, span.status_message);
    }
    out += '}';
  }
  out += '}';
}

}  // namespace

void append_json_request(std::string& out, const TraceBatch& batch) {
  const Scope scope = batch.scope != nullptr ? *batch.scope : Scope{};
  out += "{\"resourceSpans\":[";
  bool first_group = true;
  for (const ResourceGroup& group : group_by_resource(batch)) {
    out += first_group ? "{\"resource\":{" : ",{\"resource\":{";
    first_group = false;
    append_attributes(out, group.attributes);
    out += "},\"scopeSpans\":[{\"scope\":{\"name\":";
    proto::append_json_string(out, scope.name);
    if (!scope.version.empty()) {
      out += ",\"version\":";
      proto::append_json_string(out, scope.version);
    }
    out += "},\"spans\":[";
    for (std::size_t i = 0; i < group.spans.size(); ++i) {
      if (i > 0) {
        out += ',';
      }
      append_span(out, *group.spans[i]);
    }
    out += "]}]}";
  }
  out += "]}";
}

}  // namespace trace2d::otlp
