#pragma once
// The OpenTelemetry span model trace2d exports (docs/otlp.md): plain data,
// built from a process tree by span_builder.hpp and written by the OTLP
// encoders (otlp_json.hpp, otlp_protobuf.hpp).

#include <array>
#include <concepts>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace trace2d::otlp {

using TraceId = std::array<std::uint8_t, 16>;
using SpanId = std::array<std::uint8_t, 8>;

// A text attribute value: most are the process tree's own strings (a SID,
// a region's label, argv), copied for each span they were about 1.5 heap
// strings and two argv vectors a span, a sixth of the exporter's
// allocations. Such a value is a view of the tree's string, which the
// caller of append_spans() keeps alive while the spans are used
// (span_builder.hpp); a literal is a view of itself; text made for the
// span (a number, a summary) is owned.
class Text {
 public:
  template <std::size_t N>
  consteval Text(const char (&literal)[N])  // NOLINT(google-explicit-constructor): values are written as literals
      : m_text(std::string_view(literal, N - 1)) {}
  Text(std::string owned)  // NOLINT(google-explicit-constructor)
      : m_text(std::move(owned)) {}

  // A view of `text`, whose characters must outlive this value and its copies.
  [[nodiscard]] static Text view_of(std::string_view text) { return Text(text); }
  static Text view_of(std::string&&) = delete;  // a temporary would dangle

  [[nodiscard]] std::string_view view() const {
    return std::holds_alternative<std::string>(m_text) ? std::string_view(std::get<std::string>(m_text))
                                                       : std::get<std::string_view>(m_text);
  }
  friend bool operator==(const Text& a, std::string_view b) { return a.view() == b; }

 private:
  explicit Text(std::string_view view) : m_text(view) {}
  std::variant<std::string_view, std::string> m_text;
};

// A list of text (argv): a view of the tree's vector (as Text's view of
// its strings), or owned.
class TextList {
 public:
  TextList(std::vector<std::string> owned)  // NOLINT(google-explicit-constructor)
      : m_items(std::move(owned)) {}

  // A view of `items`, which must outlive this value and its copies.
  [[nodiscard]] static TextList view_of(const std::vector<std::string>& items) { return TextList(&items); }
  static TextList view_of(std::vector<std::string>&&) = delete;  // a temporary would dangle

  [[nodiscard]] const std::vector<std::string>& items() const {
    return std::holds_alternative<std::vector<std::string>>(m_items) ? std::get<std::vector<std::string>>(m_items)
                                                                     : *std::get<const std::vector<std::string>*>(m_items);
  }

 private:
  explicit TextList(const std::vector<std::string>* view) : m_items(view) {}
  std::variant<const std::vector<std::string>*, std::vector<std::string>> m_items;
};

using AttributeValue = std::variant<Text, std::int64_t, double, bool, TextList>;

// An attribute's key. Almost every key is one of docs/otlp.md's fixed
// names, and most of those are longer than std::string's inline buffer: a
// heap string each would be an allocation per attribute of every span. A
// fixed key is kept as a view of its literal, which the consteval
// constructor admits only from a constant (a literal lives as long as the
// program: no view can dangle); a key made at run time (a data key,
// OTEL_RESOURCE_ATTRIBUTES) is owned. A literal key is ASCII (a non-ASCII
// one does not compile), so the encoders need not check it is UTF-8.
class AttributeKey {
 public:
  template <std::size_t N>
  consteval AttributeKey(const char (&literal)[N])  // NOLINT(google-explicit-constructor): keys are written as literals
      : m_literal(literal, N - 1) {
    for (const char c : m_literal) {
      if (static_cast<unsigned char>(c) >= 0x80) {
        throw "an attribute key literal must be ASCII";  // in a consteval constructor: a compile error
      }
    }
  }
  AttributeKey(std::string owned)  // NOLINT(google-explicit-constructor)
      : m_owned(std::move(owned)) {}

  [[nodiscard]] bool is_ascii_literal() const { return !m_owned; }
  [[nodiscard]] std::string_view view() const { return m_owned ? std::string_view(*m_owned) : m_literal; }
  friend bool operator==(const AttributeKey& a, std::string_view b) { return a.view() == b; }

 private:
  std::string_view m_literal;
  // Optional, not an empty string: a constant cannot hold a std::string,
  // whose inline buffer points into itself.
  std::optional<std::string> m_owned;
};

struct Attribute {
  // A constructor, not an aggregate, so that emplace_back builds one in
  // place with every compiler (clang before 16 has no C++20 parenthesized
  // aggregate initialization); the value is made from what is given, not
  // moved from a temporary variant (which GCC 12 -O2 misreads as
  // maybe-uninitialized).
  template <typename Value>
    requires std::constructible_from<AttributeValue, Value&&>
  Attribute(AttributeKey key_, Value&& value_) : key(std::move(key_)), value(std::forward<Value>(value_)) {}

  AttributeKey key;
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

// A process's own resource attributes (trace2receiver's one resource per
// process: service.name = "exe:verb#mode", its SID, its version), shared by
// the spans of the process.
using ProcessResource = std::shared_ptr<const std::vector<Attribute>>;

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
  // Its process's resource; none: the host's alone.
  ProcessResource resource;
};

// What is true of every span trace2d sends from one host. A span's
// process resource adds to it (otlp/resource_groups.hpp): the host's
// attributes win, except those named in `yielding` (defaults, such as
// service.name "git", that no setting chose), where the process's win.
struct Resource {
  std::vector<Attribute> attributes;
  std::vector<std::string> yielding;
};

// The instrumentation scope every span is sent under.
struct Scope {
  std::string name = "trace2d";
  std::string version;
};

// One ExportTraceServiceRequest: the host's resource, one scope, its
// spans; one ResourceSpans per process resource among them.
struct TraceBatch {
  const Resource* resource = nullptr;
  const Scope* scope = nullptr;
  std::vector<Span> spans;
};

}  // namespace trace2d::otlp
