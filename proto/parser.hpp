#pragma once
// Parses one Trace2 EVENT line into an Event, never trusting the input.
//
// Built on simdjson On-Demand with one long-lived parser and reused buffers.
// Every value in the line is visited and validated, so an accepted line is
// valid JSON text throughout (with invalid UTF-8 repaired, see utf8.hpp).
// A line is rejected only when it is not a single JSON object, or lacks a
// string `event` or `sid`; anything else odd is noted in Event::problems and
// the event is kept.

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "proto/event.hpp"

namespace trace2d::proto {

struct ParserLimits {
  std::size_t max_sid_bytes = 4096;
  std::size_t max_event_name_bytes = 128;
  std::size_t max_depth = 64;  // nesting of objects/arrays inside a line
};

// The outcome of one parse: ok, or the reason the line is rejected.
// `reject_reason` stays valid until the next parse.
struct ParseOutcome {
  bool ok = false;
  std::string_view reject_reason;
  explicit operator bool() const { return ok; }
};

class Parser {
 public:
  explicit Parser(ParserLimits limits = {});
  ~Parser();
  Parser(const Parser&) = delete;
  Parser& operator=(const Parser&) = delete;
  Parser(Parser&&) noexcept;
  Parser& operator=(Parser&&) noexcept;

  // `line` excludes the '\n'. When at least `padding_bytes()` bytes after
  // line.end() are readable, pass that count as `readable_after` and the line
  // is parsed in place; otherwise it is first copied. The event's views stay
  // valid until the next call (and as long as `line`'s memory lives).
  [[nodiscard]] ParseOutcome parse(std::string_view line, std::size_t readable_after, Event& out);

  [[nodiscard]] static std::size_t padding_bytes();

 private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

}  // namespace trace2d::proto
