// Fuzz target: arbitrary bytes, fed to ingest::LineFramer in pieces of
// pseudo-random sizes (as a socket delivers them), each complete line parsed
// by proto::Parser and each accepted event encoded by store::EventEncoder.
// Not only "no crash": every stage's promise is checked against an
// independent oracle, and a broken promise aborts like a crash.
//
//   framer   the lines it emits are exactly the input split at '\n' (a line
//            over the limit: its first kept_bytes, and its full size);
//   parser   an accepted line is valid UTF-8 (after repair) and valid JSON
//            throughout (tests/fuzz/strict_json.hpp), with a non-empty, short,
//            NUL-free event and sid;
//   redact   (security.redact_url_credentials, before parsing) puts in
//            "<redacted>", is idempotent, and never turns an accepted line
//            into a rejected one;
//   encoder  the row rebuilds, as the `events` view does it, into text that
//            is valid JSON, and coalesce(raw, json) is the line as received.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/ingest/line_framer.hpp"
#include "daemon/stitch/stitcher.hpp"
#include "daemon/store/event_encoder.hpp"
#include "daemon/store/name_table.hpp"
#include "daemon/store/write_batch.hpp"
#include "db/event_codec.hpp"
#include "proto/event.hpp"
#include "proto/json_quote.hpp"
#include "proto/parser.hpp"
#include "proto/redact.hpp"
#include "proto/timestamp.hpp"
#include "proto/utf8.hpp"
#include "tests/fuzz/strict_json.hpp"

namespace {

using namespace trace2d;

void check(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "fuzz_framer_parser: invariant broken: %s\n", what);
    std::abort();
  }
}

// The piece sizes come from the input itself, so that a crash file alone
// reproduces the run and seed files stay plain trace lines.
std::uint64_t fnv1a(std::string_view bytes) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (const char c : bytes) {
    hash = (hash ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  }
  return hash;
}

std::uint64_t next_random(std::uint64_t& state) {  // splitmix64
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

struct FramedLine {
  std::string text;
  std::uint64_t full_size = 0;
};

// What the framer must emit, computed the obvious way.
std::vector<FramedLine> split_lines(std::string_view input, const ingest::LineFramer::Limits& limits) {
  std::vector<FramedLine> lines;
  while (!input.empty()) {
    const std::size_t newline = input.find('\n');
    const std::string_view line = input.substr(0, newline);
    FramedLine framed{std::string(line.substr(0, line.size() > limits.max_line_bytes ? limits.kept_bytes
                                                                                    : line.size())),
                      line.size()};
    lines.push_back(std::move(framed));
    if (newline == std::string_view::npos) {
      break;
    }
    input.remove_prefix(newline + 1);
  }
  return lines;
}

std::string_view trim(std::string_view s) {
  const std::size_t first = s.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) {
    return {};
  }
  return s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
}

// The `events` view's json column, rebuilt in C++ from the row (schema.cpp).
std::string view_json(const store::EventRow& row, const store::WriteBatch& batch,
                      const std::map<std::int64_t, std::string>& names, const proto::Event& event,
                      const stitch::EventPlacement& placement) {
  const std::string_view body = batch.text(row.body);
  if (!body.empty() && body.front() == '{') {
    return std::string(body);  // stored whole
  }
  std::string json = "{\"event\":";
  proto::append_json_quoted(json, names.at(row.type));
  json.append(",\"sid\":");
  proto::append_json_quoted(json, event.sid);
  if (row.thread) {
    json.append(",\"thread\":");
    proto::append_json_quoted(json, names.at(*row.thread));
  }
  if (row.time_us) {
    json.append(",\"time\":\"");
    proto::append_utc_timestamp(json, *placement.time_base_us + *row.time_us);
    json.push_back('"');
  }
  if (row.file) {
    json.append(",\"file\":");
    proto::append_json_quoted(json, names.at(*row.file));
  }
  if (row.line) {
    json.append(",\"line\":").append(std::to_string(*row.line));
  }
  // The leading members the encoder took out of the body (schema v15),
  // written back here without the codec's code.
  for (std::size_t i = 0; i < row.leading.size(); ++i) {
    if (!row.leading[i]) {
      continue;
    }
    const std::int64_t value = *row.leading[i];
    json.append(",\"").append(db::k_leading_members[i].key).append("\":");
    switch (db::k_leading_members[i].value) {
      case db::MemberValue::integer:
        json.append(std::to_string(value));
        break;
      case db::MemberValue::microseconds:
        json.append(std::to_string(value / 1000000))
            .append(".")
            .append(std::to_string(value % 1000000 + 1000000).substr(1));
        break;
      case db::MemberValue::name:
        proto::append_json_quoted(json, names.at(value));
        break;
    }
  }
  json.append(body).push_back('}');
  return json;
}

void check_event(const proto::Event& event, std::string_view line, std::uint64_t& state) {
  check(proto::is_valid_utf8(event.json), "accepted JSON is valid UTF-8");
  check(event.utf8_repaired == !proto::is_valid_utf8(line), "repaired exactly when the line was not UTF-8");
  check(fuzz::StrictJson::is_object(event.json), "accepted line is one valid JSON object");
  check(!event.event.empty() && event.event.size() <= proto::ParserLimits{}.max_event_name_bytes,
        "event name is present and short");
  check(!event.sid.empty() && event.sid.size() <= proto::ParserLimits{}.max_sid_bytes, "sid is present and short");
  check(event.sid.find('\0') == std::string_view::npos && event.event.find('\0') == std::string_view::npos,
        "no NUL in event or sid");
  check(event.kind == proto::event_kind_from_name(event.event), "kind matches the name");
  check(!event.time_us || event.time_text, "a parsed time has its text");

  // Encode as session 1, with a time base near the event's own time (or none).
  store::NameTable names;
  store::WriteBatch batch;
  store::EventEncoder encoder(names);
  stitch::EventPlacement placement;
  placement.session = 1;
  placement.seq = static_cast<std::int64_t>(next_random(state) % 1000);
  if (event.time_us && (next_random(state) & 3) != 0) {
    placement.time_base_us = *event.time_us - static_cast<std::int64_t>(next_random(state) % 5000000);
  }
  encoder.encode(event, line, placement, batch);
  check(batch.events.size() == 1, "one row per event");
  const store::EventRow& row = batch.events.front();
  std::map<std::int64_t, std::string> name_texts;
  for (const store::NameRow& name : batch.names) {
    name_texts.emplace(name.id, std::string(batch.text(name.text)));
  }
  check(row.type != 0, "the event name is interned");
  check(name_texts.at(row.type) == event.event, "the type id names the event");
  const std::string rebuilt = view_json(row, batch, name_texts, event, placement);
  check(fuzz::StrictJson::is_object(rebuilt), "the view's json is one valid JSON object");
  check(rebuilt == event.json || rebuilt == trim(event.json), "the view's json is the parsed text");
  const std::string_view received = row.raw.present ? batch.text(row.raw) : std::string_view(rebuilt);
  check(received == line, "coalesce(raw, json) is the line as received");
  check(event.problems.empty() == batch.problems.empty(), "a problem row exactly when problems were noted");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::uint64_t state = fnv1a(input);

  // Small limits sometimes, so that the cut-short path is reached with
  // inputs of a few KiB too.
  ingest::LineFramer::Limits limits;
  if ((next_random(state) & 1) != 0) {
    limits.max_line_bytes = 1024;
    limits.kept_bytes = 100;
  }
  std::vector<FramedLine> framed;
  const auto sink = [&](std::string_view line, std::uint64_t full_size) {
    framed.push_back(FramedLine{std::string(line), full_size});
  };
  ingest::LineFramer framer(limits);
  for (std::size_t at = 0; at < input.size();) {
    // Mostly small pieces (split lines, split UTF-8), sometimes big ones.
    const std::uint64_t r = next_random(state);
    const std::size_t piece = (r & 7) == 0 ? 1 + r % 70000 : 1 + r % 64;
    framer.feed(input.substr(at, piece), sink);
    at += piece;
  }
  framer.finish(sink);
  check(!framer.has_partial_line(), "nothing held after finish");

  const std::vector<FramedLine> expected = split_lines(input, limits);
  check(framed.size() == expected.size(), "one line per '\\n' (and one for an unterminated tail)");
  for (std::size_t i = 0; i < framed.size(); ++i) {
    check(framed[i].full_size == expected[i].full_size, "full size of each line");
    check(framed[i].text == expected[i].text, "the bytes of each line (its head when too long)");
  }

  proto::Parser parser;
  proto::Event event;
  for (const FramedLine& line : framed) {
    if (line.full_size > limits.max_line_bytes) {
      continue;  // the pipeline rejects it without parsing
    }
    // In place (padding bytes after the line) or copied (nothing readable
    // after it): an exactly sized allocation, so an over-read trips ASan.
    const bool in_place = (next_random(state) & 1) != 0;
    const std::size_t padding = in_place ? proto::Parser::padding_bytes() : 0;
    auto buffer = std::make_unique<char[]>(line.text.size() + padding);
    line.text.copy(buffer.get(), line.text.size());
    for (std::size_t i = 0; i < padding; ++i) {
      buffer[line.text.size() + i] = "\"}]\\ \0x"[next_random(state) % 7];  // what a read buffer may hold
    }
    const std::string_view text(buffer.get(), line.text.size());
    const proto::ParseOutcome outcome = parser.parse(text, padding, event);
    const bool accepted = outcome.ok;
    if (accepted) {
      check_event(event, text, state);
    } else {
      check(!outcome.reject_reason.empty(), "a reject has a reason");
    }

    // What trace2d parses instead when it redacts passwords in URLs.
    std::string redacted;
    if (!proto::redact_url_credentials(text, redacted)) {
      continue;
    }
    check(redacted.find(proto::k_redacted) != std::string::npos, "redaction put in its marker");
    std::string again;
    check(!proto::redact_url_credentials(redacted, again) || again == redacted, "redaction is idempotent");
    const proto::ParseOutcome redacted_outcome = parser.parse(redacted, 0, event);
    if (redacted_outcome) {
      check_event(event, redacted, state);
    } else {
      // "<redacted>" can be longer than the password it replaces.
      check(!accepted || redacted_outcome.reject_reason == "sid too long" ||
                redacted_outcome.reject_reason == "event name too long",
            "redaction turned an accepted line into a rejected one");
    }
  }
  return 0;
}
