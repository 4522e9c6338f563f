#include "daemon/store/event_encoder.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <iterator>

#include "daemon/store/row_cost.hpp"
#include "proto/json_quote.hpp"
#include "proto/timestamp.hpp"

namespace trace2d::store {
namespace {

std::string_view trim(std::string_view s) {
  constexpr std::string_view k_space = " \t\r\n";
  const auto first = s.find_first_not_of(k_space);
  if (first == std::string_view::npos) {
    return {};
  }
  return s.substr(first, s.find_last_not_of(k_space) - first + 1);
}

// "YYYY-MM-DDTHH:MM:SS.ffffffZ": what format_utc_timestamp writes. A time
// that parsed and has this shape formats back to the same text. Other shapes
// the parser accepts do not ("t", "z", a leap second ":60", an offset of the
// same length: "...:01.5+01:00", "...:01.123+00Z"), so their line is
// stored whole.
bool is_git_time_text(std::string_view text) {
  if (text.size() != 27 || text[10] != 'T' || text[19] != '.' || text[26] != 'Z' ||
      text.substr(17, 2) == "60") {
    return false;
  }
  for (std::size_t i = 20; i < 26; ++i) {
    if (text[i] < '0' || text[i] > '9') {
      return false;
    }
  }
  return true;
}

constexpr std::array<bool, 256> k_needs_escape = [] {
  std::array<bool, 256> table{};
  for (std::size_t c = 0; c < 0x20; ++c) {
    table[c] = true;
  }
  table['"'] = true;
  table['\\'] = true;
  return table;
}();

bool needs_json_escape(std::string_view text) {
  for (const char c : text) {
    if (k_needs_escape[static_cast<unsigned char>(c)]) {
      return true;
    }
  }
  return false;
}

// Walks a line, consuming the pieces expected at its start.
struct PrefixCursor {
  std::string_view rest;
  bool ok = true;

  void literal(std::string_view expected) {
    if (ok && rest.starts_with(expected)) {
      rest.remove_prefix(expected.size());
    } else {
      ok = false;
    }
  }
  // `text` as git (and SQLite's json_quote) would quote it.
  void quoted(std::string_view text, std::string& scratch) {
    if (!needs_json_escape(text)) {
      literal("\"");
      literal(text);
      literal("\"");
      return;
    }
    scratch.clear();
    proto::append_json_quoted(scratch, text);
    literal(scratch);
  }
  void integer(std::int64_t value) {
    char buf[24];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
    literal(std::string_view(buf, static_cast<std::size_t>(end - buf)));
  }
};

// The text of `member` at the start of `rest` (`,"member":`), consumed.
bool take_key(std::string_view& rest, std::string_view member) {
  if (rest.size() < member.size() + 4 || rest[0] != ',' || rest[1] != '"' ||
      rest.substr(2, member.size()) != member || rest[2 + member.size()] != '"' ||
      rest[3 + member.size()] != ':') {
    return false;
  }
  rest.remove_prefix(member.size() + 4);
  return true;
}

// Where a member's value ends: at the next ',' or at the end.
std::string_view value_text(std::string_view rest) { return rest.substr(0, rest.find(',')); }

// An integer written as SQLite writes it back (no '+', no leading zeros, no "-0").
std::optional<std::int64_t> exact_integer(std::string_view text) {
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) {
    return std::nullopt;
  }
  char buf[24];
  const char* const out = std::to_chars(buf, buf + sizeof buf, value).ptr;
  if (std::string_view(buf, static_cast<std::size_t>(out - buf)) != text) {
    return std::nullopt;
  }
  return value;
}

// git's "%.6f" of a non-negative number of seconds, as microseconds: the
// view's printf('%d.%06d') writes the same text back.
std::optional<std::int64_t> exact_microseconds(std::string_view text) {
  const auto dot = text.find('.');
  if (dot == std::string_view::npos || dot == 0 || text.size() - dot != 7 || (dot > 1 && text[0] == '0') ||
      dot > 12) {
    return std::nullopt;
  }
  std::int64_t value = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (i == dot) {
      continue;
    }
    if (text[i] < '0' || text[i] > '9') {
      return std::nullopt;
    }
    value = value * 10 + (text[i] - '0');
  }
  return value;
}

// A string without escapes, whose text json_quote() writes back as it was.
std::optional<std::string_view> plain_string(std::string_view rest) {
  if (rest.empty() || rest.front() != '"') {
    return std::nullopt;
  }
  const auto close = rest.find('"', 1);
  if (close == std::string_view::npos) {
    return std::nullopt;
  }
  const std::string_view text = rest.substr(1, close - 1);
  if (needs_json_escape(text)) {  // a backslash: an escape, left in the body
    return std::nullopt;
  }
  if (close + 1 < rest.size() && rest[close + 1] != ',') {
    return std::nullopt;
  }
  return text;
}

// What the names a row added to the batch take: a name is a row its
// first sender's session pays for (store/row_cost.hpp), though others use
// it afterwards; each uid's names are bounded in number by NameTable.
std::uint32_t names_bytes_since(std::size_t first, const WriteBatch& batch) {
  std::uint64_t bytes = 0;
  for (std::size_t i = first; i < batch.names.size(); ++i) {
    bytes += name_row_bytes(batch.text(batch.names[i].text));
  }
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(bytes, UINT32_MAX));
}

}  // namespace

std::string_view EventEncoder::take_leading_members(std::string_view body, EventRow& row, WriteBatch& batch,
                                                    std::optional<std::int64_t> uid) {
  // A member is taken only when it is first in what is left: the view
  // writes them back in this order, in front of the rest of the body. One
  // that is absent is skipped; one that is present but cannot be given back
  // exactly ends the taking.
  std::string_view rest = body;
  bool open = true;
  const auto number = [&](std::string_view member, std::optional<std::int64_t>& to,
                          std::optional<std::int64_t> (*exact)(std::string_view)) {
    std::string_view after = rest;
    if (!open || !take_key(after, member)) {
      return;
    }
    const std::string_view text = value_text(after);
    if (const auto value = exact(text)) {
      to = value;
      rest = after.substr(text.size());
    } else {
      open = false;
    }
  };
  const auto name = [&](std::string_view member, std::optional<std::int64_t>& to) {
    std::string_view after = rest;
    if (!open || !take_key(after, member)) {
      return;
    }
    const auto text = plain_string(after);
    const auto id = text ? m_names.intern(*text, batch, uid) : std::nullopt;
    if (id) {
      to = id;
      rest = after.substr(text->size() + 2);
    } else {
      open = false;
    }
  };
  number("repo", row.repo, exact_integer);
  number("t_abs", row.t_abs_us, exact_microseconds);
  number("t_rel", row.t_rel_us, exact_microseconds);
  number("nesting", row.nesting, exact_integer);
  name("category", row.category);
  name("label", row.label);
  return rest;
}

void EventEncoder::encode(const proto::Event& event, std::string_view original,
                          const stitch::EventPlacement& placement, WriteBatch& batch,
                          std::optional<std::int64_t> uid) {
  // Consecutive events mostly share their session: one map update per run.
  if (placement.session != m_last_session || uid != m_last_uid) {
    m_session_uids.insert_or_assign(placement.session, uid);
    m_last_session = placement.session;
    m_last_uid = uid;
  }
  EventRow row;
  row.session = placement.session;
  row.seq = placement.seq;
  const std::size_t names_before = batch.names.size();
  // The parser guarantees a short, NUL-free event name, so this always interns
  // unless the names table (or the sender's share) is full; then the name is
  // stored as a sentinel id and the line whole.
  row.type = m_names.intern(event.event, batch, uid).value_or(0);
  if (event.thread) {
    row.thread = m_names.intern(*event.thread, batch, uid);
  }
  if (event.file) {
    row.file = m_names.intern(*event.file, batch, uid);
  }
  row.line = event.line;
  const bool time_usable = event.time_us && placement.time_base_us && *event.time_us >= 0 &&
                           *event.time_us <= proto::k_max_timestamp_us;
  if (time_usable) {
    row.time_us = *event.time_us - *placement.time_base_us;
  }

  // Check, piece by piece, that the line starts with exactly the prefix the
  // view will rebuild (no string is built for the common case).
  bool canonical = row.type != 0 && (!event.thread || row.thread) && (!event.file || row.file) &&
                   (!event.time_text || (time_usable && is_git_time_text(*event.time_text)));
  const std::string_view json = event.json;
  std::string_view body;
  if (canonical) {
    PrefixCursor cursor{json};
    cursor.literal("{\"event\":");
    cursor.quoted(event.event, m_quote_scratch);
    cursor.literal(",\"sid\":");
    cursor.quoted(event.sid, m_quote_scratch);
    if (event.thread) {
      cursor.literal(",\"thread\":");
      cursor.quoted(*event.thread, m_quote_scratch);
    }
    if (time_usable) {
      // A 27-character git time round-trips through time_us exactly.
      cursor.literal(",\"time\":\"");
      cursor.literal(*event.time_text);
      cursor.literal("\"");
    }
    if (event.file) {
      cursor.literal(",\"file\":");
      cursor.quoted(*event.file, m_quote_scratch);
    }
    if (event.line) {
      cursor.literal(",\"line\":");
      cursor.integer(*event.line);
    }
    canonical = cursor.ok && !cursor.rest.empty() && json.back() == '}';
    if (canonical) {
      body = cursor.rest.substr(0, cursor.rest.size() - 1);
      canonical = body.empty() || body.front() == ',';
      if (canonical) {
        body = take_leading_members(body, row, batch, uid);
      }
    }
  }
  std::string_view stored_json = json;
  if (!canonical) {
    // Stored whole; a body that starts with '{' tells the view so.
    body = trim(json);
    stored_json = body;
  }
  row.body = batch.add_text(body);
  if (event.utf8_repaired || stored_json.size() != original.size()) {
    row.raw = batch.add_text(original);
  }
  if (!event.problems.empty()) {
    batch.problems.push_back(ProblemRow{row.session, row.seq, batch.add_text(event.problems)});
  }
  row.names_bytes = names_bytes_since(names_before, batch);
  batch.events.push_back(row);
}

void EventEncoder::encode(const stitch::StitchChanges& changes, WriteBatch& batch) {
  for (const stitch::SessionRecord& session : changes.sessions) {
    m_session_uids.try_emplace(session.id, session.peer_uid);
  }
  batch.regions.reserve(batch.regions.size() + changes.regions.size());
  for (const stitch::RegionRecord& region : changes.regions) {
    // A region whose sender is not known here adds no names: only those
    // already in the table are used, the rest is kept inline.
    const auto sender = m_session_uids.find(region.session);
    const auto name = [&](const std::optional<std::string>& text, std::optional<std::int64_t>& id,
                          TextRef& inline_text) {
      if (!text) {
        return;
      }
      id = sender != m_session_uids.end() ? m_names.intern(*text, batch, sender->second) : m_names.find(*text);
      if (!id) {
        inline_text = batch.add_text(*text);
      }
    };
    RegionRow row;
    row.session = region.session;
    row.seq = region.seq;
    const std::size_t names_before = batch.names.size();
    name(region.thread, row.thread, row.thread_text);
    row.nesting = region.nesting;
    name(region.category, row.category, row.category_text);
    name(region.label, row.label, row.label_text);
    if (region.msg) {
      row.msg = batch.add_text(*region.msg);
    }
    row.repo = region.repo;
    row.t_start = region.t_start;
    row.elapsed = region.elapsed;
    row.parent_seq = region.parent_seq;
    row.leave_seq = region.leave_seq;
    row.names_bytes = names_bytes_since(names_before, batch);
    batch.regions.push_back(row);
  }
  // Copied, not moved: other consumers see the same changes.
  batch.sessions.insert(batch.sessions.end(), changes.sessions.begin(), changes.sessions.end());
  batch.children.insert(batch.children.end(), changes.children.begin(), changes.children.end());
  batch.withheld.insert(batch.withheld.end(), changes.withheld.begin(), changes.withheld.end());
  m_session_uids.clear();
  m_last_session = 0;
}

}  // namespace trace2d::store
