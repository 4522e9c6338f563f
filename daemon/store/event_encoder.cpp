#include "daemon/store/event_encoder.hpp"

#include <algorithm>
#include <cstdint>

#include "daemon/store/row_cost.hpp"
#include "db/event_codec.hpp"
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

// The leading members' names, interned for the event's sender.
class InternedNames final : public db::NameIds {
 public:
  InternedNames(NameTable& names, WriteBatch& batch, std::optional<std::int64_t> uid)
      : m_names(names), m_batch(batch), m_uid(uid) {}
  std::optional<std::int64_t> id(std::string_view text) override { return m_names.intern(text, m_batch, m_uid); }

 private:
  NameTable& m_names;
  WriteBatch& m_batch;
  std::optional<std::int64_t> m_uid;
};

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

  // Stored in pieces only when the view gives back exactly this line.
  const bool canonical = row.type != 0 && (!event.thread || row.thread) && (!event.file || row.file) &&
                         (!event.time_text || (time_usable && db::is_canonical_time_text(*event.time_text)));
  const std::optional<std::string_view> rest =
      canonical ? db::body_after_canonical_prefix(event, time_usable, m_quote_scratch) : std::nullopt;
  std::string_view body;
  std::string_view stored_json = event.json;
  if (rest) {
    InternedNames names(m_names, batch, uid);
    body = db::take_leading_members(*rest, row.leading, names);
  } else {
    // Stored whole; a body that starts with '{' tells the view so.
    body = trim(event.json);
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
