#include "otlp/otlp_protobuf.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <string_view>

#include "otlp/resource_groups.hpp"
#include "proto/utf8.hpp"

namespace trace2d::otlp {
namespace {

// Wire types.
constexpr std::uint32_t k_varint = 0;
constexpr std::uint32_t k_fixed64 = 1;
constexpr std::uint32_t k_length_delimited = 2;

// The request as it is written: straight into the caller's string, through
// a pointer. (std::string's push_back() and append(), a call and a
// capacity test for every tag, length and string, were a third of the
// encoder's time.) The string is made longer a chunk at a time, which
// zeroes only that chunk, about to be written while it is in the cache (a
// string sized ahead zeroed all of it first); a string the caller keeps
// between requests keeps its capacity: no new memory to fault in, and no
// copy of the request into it at the end.
class Writer {
 public:
  explicit Writer(std::string& out) : m_out(out), m_size(out.size()) {}
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;
  // What was made room for and not written goes.
  ~Writer() { m_out.resize(m_size); }

  [[nodiscard]] std::size_t size() const { return m_size; }

  // Room for `n` more bytes, at the end of what is written. The check
  // inlined, the growing not: out of line, the call cost more than the
  // check (a call for every tag, length and byte written; 4% of the
  // exporter's instructions).
  [[gnu::always_inline]] char* room(std::size_t n) {
    if (m_out.size() - m_size < n) [[unlikely]] {
      grow(n);
    }
    return m_out.data() + m_size;
  }
  void wrote(std::size_t n) { m_size += n; }
  // Forgets the last `n` bytes written.
  void unwrote(std::size_t n) { m_size -= n; }

  // Inlined as room() is: out of line (-O2 left them so), a call for
  // every tag and length byte cost more than writing it.
  [[gnu::always_inline]] void byte(char c) {
    *room(1) = c;
    ++m_size;
  }
  [[gnu::always_inline]] void bytes(const void* data, std::size_t n) {
    if (n > 0) {
      std::memcpy(room(n), data, n);
      m_size += n;
    }
  }
  char* at(std::size_t offset) { return m_out.data() + offset; }

 private:
  [[gnu::noinline]] void grow(std::size_t n) { m_out.resize(m_size + std::max(n, k_chunk)); }

  static constexpr std::size_t k_chunk = std::size_t{64} * 1024;
  std::string& m_out;
  std::size_t m_size;
};

// A varint's bytes, at most 10.
using Varint = std::array<char, 10>;
std::size_t encode_varint(std::uint64_t value, char* bytes) {
  std::size_t used = 0;
  while (value >= 0x80) {
    bytes[used++] = static_cast<char>((value & 0x7f) | 0x80);
    value >>= 7;
  }
  bytes[used++] = static_cast<char>(value);
  return used;
}

// Inlined: a call each cost as much as the byte it writes (RelWithDebInfo's
// -O2 kept these out of line).
[[gnu::always_inline]] inline void put_varint(Writer& out, std::uint64_t value) {
  if (value < 0x80) {  // every tag, and most lengths
    out.byte(static_cast<char>(value));
    return;
  }
  out.wrote(encode_varint(value, out.room(sizeof(Varint))));
}

[[gnu::always_inline]] inline void put_tag(Writer& out, std::uint32_t field, std::uint32_t wire_type) {
  put_varint(out, (field << 3) | wire_type);
}

void put_fixed64(Writer& out, std::uint32_t field, std::uint64_t value) {
  put_tag(out, field, k_fixed64);
  std::array<char, 8> bytes{};  // little-endian
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    bytes[i] = static_cast<char>((value >> (8 * i)) & 0xff);
  }
  out.bytes(bytes.data(), bytes.size());
}

[[gnu::always_inline]] inline void put_bytes(Writer& out, std::uint32_t field, const void* data, std::size_t size) {
  put_tag(out, field, k_length_delimited);
  put_varint(out, size);
  out.bytes(data, size);
}

// protobuf strings must be UTF-8; git's may not be.
void put_string(Writer& out, std::uint32_t field, std::string_view text) {
  if (proto::is_valid_utf8(text)) {
    put_bytes(out, field, text.data(), text.size());
  } else {
    const std::string repaired = proto::repair_utf8(text);
    put_bytes(out, field, repaired.data(), repaired.size());
  }
}

std::size_t varint_size(std::uint64_t value) {
  std::size_t size = 1;
  for (; value >= 0x80; value >>= 7) {
    ++size;
  }
  return size;
}

// A nested message: its length goes first, so it is written after the tag
// into the same buffer and its length put in front once known. `width`
// bytes are kept for it, the length's likely size: 1 for most messages (an
// attribute, its value: shorter than 128 bytes), 2 for a span (128 bytes
// to 16 KiB), the request's estimate for its outer messages. Only a
// message whose length takes another size is moved to fit it (the bytes
// are the same either way: a length is always its shortest varint);
// splicing every length in moved each byte of a request once per level it
// is nested in.
template <typename Body>
void put_message(Writer& out, std::uint32_t field, Body&& body, std::size_t width = 1) {
  put_tag(out, field, k_length_delimited);
  const std::size_t start = out.size();
  out.room(width);
  out.wrote(width);
  body(out);
  const std::size_t size = out.size() - start - width;
  if (width == 1 && size < 0x80) {
    *out.at(start) = static_cast<char>(size);
    return;
  }
  Varint length{};
  const std::size_t used = encode_varint(size, length.data());
  if (used > width) {
    out.room(used - width);
    std::memmove(out.at(start + used), out.at(start + width), size);
    out.wrote(used - width);
  } else if (used < width) {
    std::memmove(out.at(start + used), out.at(start + width), size);
    out.unwrote(width - used);
  }
  std::memcpy(out.at(start), length.data(), used);
}

// AnyValue: string_value 1, bool_value 2, int_value 3, double_value 4, array_value 5.
void put_any_value(Writer& out, const AttributeValue& value) {
  std::visit(
      [&out](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, Text>) {
          put_string(out, 1, v.view());
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
          put_message(out, 5, [&v](Writer& array) {
            for (const std::string& item : v.items()) {
              put_message(array, 1, [&item](Writer& any) { put_string(any, 1, item); });
            }
          });
        }
      },
      value);
}

// KeyValue: key 1, value 2. Of a span or an event (Attribute), or of a
// resource group (its views).
template <typename Item>
void put_attributes(Writer& out, std::uint32_t field, const std::vector<Item>& attributes) {
  for (const Item& item : attributes) {
    const Attribute& attribute = attribute_of(item);
    put_message(out, field, [&attribute](Writer& kv) {
      if (attribute.key.is_ascii_literal()) {
        put_bytes(kv, 1, attribute.key.view().data(), attribute.key.view().size());
      } else {
        put_string(kv, 1, attribute.key.view());
      }
      put_message(kv, 2, [&attribute](Writer& any) { put_any_value(any, attribute.value); });
    });
  }
}

// Span: trace_id 1, span_id 2, parent_span_id 4, name 5, kind 6,
// start_time_unix_nano 7, end_time_unix_nano 8, attributes 9, events 11, status 15.
void put_span(Writer& out, const Span& span) {
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
    put_message(out, 11, [&event](Writer& e) {
      put_fixed64(e, 1, event.time_unix_nano);
      put_string(e, 2, event.name);
      put_attributes(e, 3, event.attributes);
    });
  }
  // Status: message 2, code 3.
  if (span.status != StatusCode::unset) {
    put_message(out, 15, [&span](Writer& status) {
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
  // The outer messages' lengths, guessed from the spans (the git traces
  // of bench/ average 423 bytes a span): a wrong guess costs a move.
  constexpr std::size_t k_bytes_per_span = 400;
  const Scope scope = batch.scope != nullptr ? *batch.scope : Scope{};
  Writer writer(out);
  for (const ResourceGroup& group : group_by_resource(batch)) {
    const std::size_t outer = varint_size(group.spans.size() * k_bytes_per_span);
    put_message(writer, 1, [&group, &scope, outer](Writer& resource_spans) {
      put_message(resource_spans, 1, [&group](Writer& resource) { put_attributes(resource, 1, group.attributes); });
      put_message(resource_spans, 2, [&group, &scope](Writer& scope_spans) {
        put_message(scope_spans, 1, [&scope](Writer& s) {
          put_string(s, 1, scope.name);
          if (!scope.version.empty()) {
            put_string(s, 2, scope.version);
          }
        });
        for (const Span* span : group.spans) {
          put_message(scope_spans, 2, [span](Writer& s) { put_span(s, *span); }, 2);
        }
      }, outer);
    }, outer);
  }
}

}  // namespace trace2d::otlp
