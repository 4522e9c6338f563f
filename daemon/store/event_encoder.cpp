#include "daemon/store/event_encoder.hpp"

#include <charconv>
#include <iterator>

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

void append_int(std::string& out, std::int64_t value) {
  char buf[24];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  out.append(buf, end);
}

}  // namespace

void EventEncoder::encode(const proto::Event& event, std::string_view original,
                          const stitch::Placement& placement, WriteBatch& batch) {
  EventRow row;
  row.session = placement.session;
  row.seq = placement.seq;
  // The parser guarantees a short, NUL-free event name, so this always interns
  // unless the names table is full; then the name is stored as a sentinel id.
  row.type = m_names.intern(event.event, batch).value_or(0);
  if (event.thread) {
    row.thread = m_names.intern(*event.thread, batch);
  }
  if (event.file) {
    row.file = m_names.intern(*event.file, batch);
  }
  row.line = event.line;
  const bool time_usable = event.time_us && placement.time_base_us && *event.time_us >= 0 &&
                           *event.time_us <= proto::k_max_timestamp_us;
  if (time_usable) {
    row.time_us = *event.time_us - *placement.time_base_us;
  }

  // Rebuild the prefix the view will produce and compare it with the line.
  bool canonical = row.type != 0 && (!event.thread || row.thread) && (!event.file || row.file) &&
                   (!event.time_text || time_usable);
  const std::string_view json = event.json;
  std::string_view body;
  if (canonical) {
    m_prefix.clear();
    m_prefix.append("{\"event\":");
    proto::append_json_quoted(m_prefix, event.event);
    m_prefix.append(",\"sid\":");
    proto::append_json_quoted(m_prefix, event.sid);
    if (event.thread) {
      m_prefix.append(",\"thread\":");
      proto::append_json_quoted(m_prefix, *event.thread);
    }
    if (time_usable) {
      m_prefix.append(",\"time\":\"");
      proto::append_utc_timestamp(m_prefix, *event.time_us);
      m_prefix.push_back('"');
    }
    if (event.file) {
      m_prefix.append(",\"file\":");
      proto::append_json_quoted(m_prefix, *event.file);
    }
    if (event.line) {
      m_prefix.append(",\"line\":");
      append_int(m_prefix, *event.line);
    }
    canonical = json.size() > m_prefix.size() && json.starts_with(m_prefix) && json.back() == '}';
    if (canonical) {
      body = json.substr(m_prefix.size(), json.size() - m_prefix.size() - 1);
      canonical = body.empty() || body.front() == ',';
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
  batch.events.push_back(row);
}

void EventEncoder::encode(stitch::StitchChanges&& changes, WriteBatch& batch) {
  const auto intern = [&](const std::optional<std::string>& text) -> std::optional<std::int64_t> {
    return text ? m_names.intern(*text, batch) : std::nullopt;
  };
  batch.regions.reserve(batch.regions.size() + changes.regions.size());
  for (const stitch::RegionRecord& region : changes.regions) {
    RegionRow row;
    row.session = region.session;
    row.seq = region.seq;
    row.thread = intern(region.thread);
    row.nesting = region.nesting;
    row.category = intern(region.category);
    row.label = intern(region.label);
    if (region.msg) {
      row.msg = batch.add_text(*region.msg);
    }
    row.repo = region.repo;
    row.t_start = region.t_start;
    row.elapsed = region.elapsed;
    row.parent_seq = region.parent_seq;
    row.leave_seq = region.leave_seq;
    batch.regions.push_back(row);
  }
  if (batch.sessions.empty()) {
    batch.sessions = std::move(changes.sessions);
  } else {
    std::move(changes.sessions.begin(), changes.sessions.end(), std::back_inserter(batch.sessions));
  }
  std::move(changes.children.begin(), changes.children.end(), std::back_inserter(batch.children));
}

}  // namespace trace2d::store
