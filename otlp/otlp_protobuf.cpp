#include "otlp/otlp_protobuf.hpp"

#include <array>
#include <cstring>

#include "proto/utf8.hpp"

namespace trace2d::otlp {
namespace {

// Wire types.
constexpr std::uint32_t k_varint = 0;
constexpr std::uint32_t k_fixed64 = 1;
constexpr std::uint32_t k_length_delimited = 2;

// A varint's bytes, at most 10.
using Varint = std::array<char, 10>;
std::size_t encode_varint(std::uint64_t value, Varint& bytes) {
  std::size_t used = 0;
  while (value >= 0x80) {
    bytes[used++] = static_cast<char>((value & 0x7f) | 0x80);
    value >>= 7;
  }
  bytes[used++] = static_cast<char>(value);
  return used;
}

void put_varint(std::string& out, std::uint64_t value) {
  Varint bytes{};
  out.append(bytes.data(), encode_varint(value, bytes));
}

void put_tag(std::string& out, std::uint32_t field, std::uint32_t wire_type) { put_varint(out, (field << 3) | wire_type); }

void put_fixed64(std::string& out, std::uint32_t field, std::uint64_t value) {
  put_tag(out, field, k_fixed64);
  for (int i = 0; i < 8; ++i) {
    out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
  }
}

void put_bytes(std::string& out, std::uint32_t field, const void* data, std::size_t size) {
  put_tag(out, field, k_length_delimited);
  put_varint(out, size);
  out.append(static_cast<const char*>(data), size);
}

// protobuf strings must be UTF-8; git's may not be.
void put_string(std::string& out, std::uint32_t field, std::string_view text) {
  if (proto::is_valid_utf8(text)) {
    put_bytes(out, field, text.data(), text.size());
  } else {
    const std::string repaired = proto::repair_utf8(text);
    put_bytes(out, field, repaired.data(), repaired.size());
  }
}

// A nested message: its length goes first, so it is written after the tag
// into the same buffer and its length put in front once known. A byte is
// kept for it: most messages (an attribute, its value) are shorter than 128
// bytes, and only a longer one is moved to make room (splicing every
// length in moved each byte of a request once per level it is nested in).
template <typename Body>
void put_message(std::string& out, std::uint32_t field, Body&& body) {
  put_tag(out, field, k_length_delimited);
  const std::size_t start = out.size();
  out.push_back('\0');
  body(out);
  const std::size_t size = out.size() - start - 1;
  if (size < 0x80) {
    out[start] = static_cast<char>(size);
    return;
  }
  Varint length{};
  out.replace(start, 1, length.data(), encode_varint(size, length));
}

// AnyValue: string_value 1, bool_value 2, int_value 3, double_value 4, array_value 5.
void put_any_value(std::string& out, const AttributeValue& value) {
  std::visit(
      [&out](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::string>) {
          put_string(out, 1, v);
        } else if constexpr (std::is_same_v<T, bool>) {
          put_tag(out, 2, k_varint);
          put_varint(out, v ? 1 : 0);
        } else if constexpr (std::is_same_v<T, std::int64_t>) {
          put_tag(out, 3, k_varint);
          put_varint(out, static_cast<std::uint64_t>(v));  // int64: two's complement, 10 bytes when negative
        } else if constexpr (std::is_same_v<T, double>) {
          std::uint64_t bits = 0;
          std::memcpy(&bits, &v, sizeof bits);
          put_fixed64(out, 4, bits);
        } else {
          // ArrayValue: values 1.
          put_message(out, 5, [&v](std::string& array) {
            for (const std::string& item : v) {
              put_message(array, 1, [&item](std::string& any) { put_string(any, 1, item); });
            }
          });
        }
      },
      value);
}

// KeyValue: key 1, value 2.
void put_attributes(std::string& out, std::uint32_t field, const std::vector<Attribute>& attributes) {
  for (const Attribute& attribute : attributes) {
    put_message(out, field, [&attribute](std::string& kv) {
      if (attribute.key.is_ascii_literal()) {
        put_bytes(kv, 1, attribute.key.view().data(), attribute.key.view().size());
      } else {
        put_string(kv, 1, attribute.key.view());
      }
      put_message(kv, 2, [&attribute](std::string& any) { put_any_value(any, attribute.value); });
    });
  }
}

// Span: trace_id 1, span_id 2, parent_span_id 4, name 5, kind 6,
// start_time_unix_nano 7, end_time_unix_nano 8, attributes 9, events 11, status 15.
void put_span(std::string& out, const Span& span) {
  put_bytes(out, 1, span.trace_id.data(), span.trace_id.size());
  put_bytes(out, 2, span.span_id.data(), span.span_id.size());
  if (span.parent_span_id) {
    put_bytes(out, 4, span.parent_span_id->data(), span.parent_span_id->size());
  }
  put_string(out, 5, span.name);
  put_tag(out, 6, k_varint);
  put_varint(out, static_cast<std::uint64_t>(span.kind));
  put_fixed64(out, 7, span.start_time_unix_nano);
  put_fixed64(out, 8, span.end_time_unix_nano);
  put_attributes(out, 9, span.attributes);
  // Span.Event: time_unix_nano 1, name 2, attributes 3.
  for (const SpanEvent& event : span.events) {
    put_message(out, 11, [&event](std::string& e) {
      put_fixed64(e, 1, event.time_unix_nano);
      put_string(e, 2, event.name);
      put_attributes(e, 3, event.attributes);
    });
  }
  // Status: message 2, code 3.
  if (span.status != StatusCode::unset) {
    put_message(out, 15, [&span](std::string& status) {
      if (!span.status_message.empty()) {
        put_string(status, 2, span.status_message);
      }
      put_tag(status, 3, k_varint);
      put_varint(status, static_cast<std::uint64_t>(span.status));
    });
  }
}

}  // namespace

// ExportTraceServiceRequest: resource_spans 1. ResourceSpans: resource 1,
// scope_spans 2. Resource: attributes 1. ScopeSpans: scope 1, spans 2.
// InstrumentationScope: name 1, version 2.
void append_protobuf_request(std::string& out, const TraceBatch& batch) {
  put_message(out, 1, [&batch](std::string& resource_spans) {
    put_message(resource_spans, 1, [&batch](std::string& resource) {
      if (batch.resource != nullptr) {
        put_attributes(resource, 1, batch.resource->attributes);
      }
    });
    put_message(resource_spans, 2, [&batch](std::string& scope_spans) {
      const Scope scope = batch.scope != nullptr ? *batch.scope : Scope{};
      put_message(scope_spans, 1, [&scope](std::string& s) {
        put_string(s, 1, scope.name);
        if (!scope.version.empty()) {
          put_string(s, 2, scope.version);
        }
      });
      for (const Span& span : batch.spans) {
        put_message(scope_spans, 2, [&span](std::string& s) { put_span(s, span); });
      }
    });
  });
}

}  // namespace trace2d::otlp
