#pragma once
// Finding spans and their attributes in what the span builder made: the
// otlp suites' shared helpers (once, so that their unity builds hold).

#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "otlp/span.hpp"

namespace trace2d::otlp::span_lookup {

// The value of `span`'s attribute `key`, or nullptr.
inline const AttributeValue* attribute(const Span& span, const std::string& key) {
  for (const Attribute& a : span.attributes) {
    if (a.key == key) {
      return &a.value;
    }
  }
  return nullptr;
}

// A text attribute's value, "<absent>" when the span has none.
inline std::string text(const Span& span, const std::string& key) {
  const AttributeValue* value = attribute(span, key);
  return value == nullptr ? std::string("<absent>") : std::string(std::get<Text>(*value).view());
}

// The span named `name`; throws when there is none.
inline const Span& named(const std::vector<Span>& spans, const std::string& name) {
  for (const Span& span : spans) {
    if (span.name == name) {
      return span;
    }
  }
  throw std::runtime_error("no span named " + name);
}

}  // namespace trace2d::otlp::span_lookup
