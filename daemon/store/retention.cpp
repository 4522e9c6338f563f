#include "daemon/store/retention.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <vector>

#include "daemon/store/row_cost.hpp"
#include "daemon/store/row_writer.hpp"
#include "proto/timestamp.hpp"

namespace trace2d::store {
namespace {

// A reject's bytes as counted against its sender (the row's text plus a
// little for the row itself), as `sessions.stored_bytes` counts events;
// add_committed() counts a committed reject row the same way.
constexpr std::string_view k_reject_bytes = "(length(raw) + length(reason) + 32)";
constexpr std::uint64_t k_reject_row_overhead = 32;

}  // namespace

Retention::Retention(db::Database& db, Options options)
    : m_db(db),
      m_options(options),
      // Running sessions go too once they have been silent past the age:
      // their process is gone or hung, and a user could otherwise keep data
      // forever by never sending `exit`.
      m_oldest_by_age(db.prepare(
          "SELECT id, event_count, stored_bytes, peer_uid FROM sessions"
          " WHERE first_received < ?1 AND last_received < ?1"
          " ORDER BY first_received LIMIT 1000")),
      // Rejects are numbered in arrival order: the oldest come first.
      m_rejects_by_age(db.prepare("SELECT id, received_at, peer_uid, " + std::string(k_reject_bytes) +
                                  " FROM rejects ORDER BY id LIMIT 1000")),
      m_oldest_of_uid(db.prepare(
          "SELECT id, event_count, stored_bytes, first_received FROM sessions"
          " WHERE peer_uid IS ?1 ORDER BY first_received LIMIT 1000")),
      m_rejects_of_uid(db.prepare("SELECT id, " + std::string(k_reject_bytes) +
                                  ", received_at FROM rejects WHERE peer_uid IS ?1 ORDER BY id LIMIT 1000")),
      m_eraser(db),
      m_delete_reject(db.prepare("DELETE FROM rejects WHERE id = ?")) {}

Retention::Pages Retention::pages() {
  Pages p;
  p.count = static_cast<std::uint64_t>(std::max<std::int64_t>(0, m_db.query_int("PRAGMA page_count").value_or(0)));
  p.free = static_cast<std::uint64_t>(std::max<std::int64_t>(0, m_db.query_int("PRAGMA freelist_count").value_or(0)));
  p.size = static_cast<std::uint64_t>(std::max<std::int64_t>(512, m_db.query_int("PRAGMA page_size").value_or(4096)));
  return p;
}

std::uint64_t Retention::used_bytes() { return pages().used_bytes(); }

std::uint64_t Retention::pages_to_give_back(const Pages& p, bool deleted) const {
  if (m_options.max_db_bytes == 0) {
    // No size bound: what a deletion freed goes back, as it always did.
    return deleted ? std::min<std::uint64_t>(p.free, k_vacuum_pages_per_step) : 0;
  }
  // The file down to its bound, and free pages beyond the headroom kept
  // for the next inserts (a deletion by age frees more than that).
  const std::uint64_t bound_pages = m_options.max_db_bytes / p.size;
  const std::uint64_t over_bound = p.count > bound_pages ? p.count - bound_pages : 0;
  const std::uint64_t headroom_pages = headroom_bytes() / p.size;
  const std::uint64_t beyond_headroom = p.free > headroom_pages ? p.free - headroom_pages : 0;
  return std::min({p.free, k_vacuum_pages_per_step, std::max(over_bound, beyond_headroom)});
}

void Retention::bind_uid(db::Statement& stmt, int index, std::int64_t uid) {
  if (uid == k_no_uid) {
    stmt.bind_null(index);
  } else {
    stmt.bind_int(index, uid);
  }
}

void Retention::collect_by_age(Doomed& doomed) {
  const std::int64_t cutoff_us =
      proto::unix_now_us() - std::chrono::duration_cast<std::chrono::microseconds>(*m_options.max_age).count();
  const std::string cutoff = proto::format_utc_timestamp(std::max<std::int64_t>(0, cutoff_us));
  m_oldest_by_age.bind_text(1, cutoff);
  const auto uid_of = [](db::Statement& stmt, int column) {
    return stmt.column_is_null(column) ? k_no_uid : stmt.column_int(column);
  };
  const auto bytes_of = [](db::Statement& stmt, int column) {
    return static_cast<std::uint64_t>(std::max<std::int64_t>(0, stmt.column_int(column)));
  };
  while ((doomed.empty() || doomed.events < m_options.max_events_per_step) && m_oldest_by_age.step()) {
    doomed.sessions.push_back(m_oldest_by_age.column_int(0));
    doomed.events += static_cast<std::uint64_t>(m_oldest_by_age.column_int(1));
    subtract_usage(uid_of(m_oldest_by_age, 3), bytes_of(m_oldest_by_age, 2));
  }
  m_oldest_by_age.reset();
  while (doomed.rejects.size() < m_options.max_events_per_step && m_rejects_by_age.step() &&
         m_rejects_by_age.column_text(1) < cutoff) {
    doomed.rejects.push_back(m_rejects_by_age.column_int(0));
    subtract_usage(uid_of(m_rejects_by_age, 2), bytes_of(m_rejects_by_age, 3));
  }
  m_rejects_by_age.reset();
}

void Retention::subtract_usage(std::int64_t uid, std::uint64_t bytes) {
  if (const auto it = m_usage.find(uid); it != m_usage.end()) {
    it->second -= std::min(it->second, bytes);
  }
}

void Retention::add_committed(const WriteBatch& batch) {
  if (!m_usage_loaded) {
    return;  // the scan, when it comes, counts these rows
  }
  // Every session whose events are in a batch has its snapshot there too
  // (an event changes its session's counts).
  m_batch_uids.clear();
  for (const stitch::SessionRecord& record : batch.sessions) {
    m_batch_uids.emplace_back(record.id, record.peer_uid.value_or(k_no_uid));
  }
  std::sort(m_batch_uids.begin(), m_batch_uids.end());
  const auto uid_of_session = [&](std::int64_t id) -> std::optional<std::int64_t> {
    const auto it = std::lower_bound(m_batch_uids.begin(), m_batch_uids.end(), std::pair{id, INT64_MIN});
    return it != m_batch_uids.end() && it->first == id ? std::optional(it->second) : std::nullopt;
  };
  std::vector<std::int64_t> withheld;  // erased by the storage rule: none of their rows stays
  for (const stitch::WithheldRecord& record : batch.withheld) {
    withheld.push_back(record.session);
  }
  std::sort(withheld.begin(), withheld.end());
  std::int64_t session = 0;
  std::optional<std::int64_t> uid;
  for (const EventRow& row : batch.events) {
    if (std::binary_search(withheld.begin(), withheld.end(), row.session)) {
      continue;
    }
    if (row.session != session || !uid) {  // events come in runs of one session
      session = row.session;
      uid = uid_of_session(session);
      if (!uid) {
        // Not expected; rather than guess whose they are, count afresh
        // when next needed.
        spdlog::debug("retention: events of session {} without its snapshot; totals are read again", session);
        m_usage_loaded = false;
        return;
      }
    }
    m_usage[*uid] += stored_bytes(row);
  }
  // Region and child rows, as the row writer adds them to their sessions'
  // stored_bytes.
  const auto add_row = [&](std::int64_t row_session, std::uint64_t bytes) {
    if (std::binary_search(withheld.begin(), withheld.end(), row_session)) {
      return;
    }
    if (const auto row_uid = uid_of_session(row_session)) {
      m_usage[*row_uid] += bytes;
    } else {
      spdlog::debug("retention: rows of session {} without its snapshot; totals are read again", row_session);
      m_usage_loaded = false;
    }
  };
  for (const RegionRow& row : batch.regions) {
    add_row(row.session, region_row_bytes(row));
  }
  for (const stitch::ChildRecord& child : batch.children) {
    add_row(child.session, child_row_bytes(child));
  }
  if (!m_usage_loaded) {
    return;
  }
  for (const RejectRow& reject : batch.rejects) {
    m_usage[reject.peer_uid.value_or(k_no_uid)] += reject.raw.size + reject.reason.size + k_reject_row_overhead;
  }
}

void Retention::add_row_charges(const std::vector<RowWriter::RowCharge>& charges) {
  if (!m_usage_loaded) {
    return;  // the scan, when it comes, counts these rows
  }
  for (const RowWriter::RowCharge& charge : charges) {
    const std::int64_t uid = charge.uid.value_or(k_no_uid);
    if (charge.bytes >= 0) {
      m_usage[uid] += static_cast<std::uint64_t>(charge.bytes);
    } else {
      subtract_usage(uid, static_cast<std::uint64_t>(-charge.bytes));
    }
  }
}

void Retention::subtract_erased(const std::vector<RowWriter::Erased>& erased) {
  if (!m_usage_loaded) {
    return;  // the scan, when it comes, no longer sees them
  }
  for (const RowWriter::Erased& e : erased) {
    subtract_usage(e.uid.value_or(k_no_uid), static_cast<std::uint64_t>(std::max<std::int64_t>(0, e.bytes)));
  }
}

void Retention::load_usage() {
  m_usage.clear();
  const auto add = [this](std::string_view sql) {
    db::Statement query = m_db.prepare(sql);
    while (query.step()) {
      const std::int64_t uid = query.column_is_null(0) ? k_no_uid : query.column_int(0);
      m_usage[uid] += static_cast<std::uint64_t>(std::max<std::int64_t>(0, query.column_int(1)));
    }
  };
  // The table in storage order rather than through sessions_uid, which
  // would fetch every row at random.
  add("SELECT peer_uid, sum(stored_bytes) FROM sessions NOT INDEXED GROUP BY peer_uid");
  add("SELECT peer_uid, sum" + std::string(k_reject_bytes) + " FROM rejects GROUP BY peer_uid");
  m_usage_loaded = true;
}

void Retention::collect_by_size(Doomed& doomed, std::uint64_t used, std::uint64_t keep) {
  if (!m_usage_loaded) {
    load_usage();
  }
  std::uint64_t stored = 0;
  for (const auto& [uid, bytes] : m_usage) {
    stored += bytes;
  }
  // Stored bytes are what the rows hold; pages also hold indexes and
  // slack. Free the excess in proportion: the next step measures again.
  const std::uint64_t excess = used - keep;
  const std::uint64_t target =
      stored == 0 ? 1 : std::max<std::uint64_t>(1, static_cast<std::uint64_t>(static_cast<double>(excess) *
                                                                            static_cast<double>(stored) /
                                                                            static_cast<double>(used)));
  // The biggest sender first; one that turns out to hold nothing (its data
  // went since the totals were loaded) is skipped.
  while (doomed.empty() && !m_usage.empty()) {
    const auto biggest = std::max_element(m_usage.begin(), m_usage.end(),
                                          [](const auto& a, const auto& b) { return a.second < b.second; });
    const std::int64_t uid = biggest->first;
    // Never below the next biggest in one step: two greedy senders are
    // taken down in turn, not the one that happened to be looked at first.
    std::uint64_t next_biggest = 0;
    for (const auto& [other, bytes] : m_usage) {
      if (other != uid) {
        next_biggest = std::max(next_biggest, bytes);
      }
    }
    const std::uint64_t take = std::min(target, std::max<std::uint64_t>(1, biggest->second - next_biggest));
    bind_uid(m_oldest_of_uid, 1, uid);
    bind_uid(m_rejects_of_uid, 1, uid);
    // Its sessions and rejects, merged oldest first.
    bool session = m_oldest_of_uid.step();
    bool reject = m_rejects_of_uid.step();
    while ((session || reject) && (doomed.empty() || (doomed.bytes < take &&
                                                      doomed.events + doomed.rejects.size() <
                                                          m_options.max_events_per_step))) {
      if (session && (!reject || m_oldest_of_uid.column_text(3) <= m_rejects_of_uid.column_text(2))) {
        doomed.sessions.push_back(m_oldest_of_uid.column_int(0));
        doomed.events += static_cast<std::uint64_t>(m_oldest_of_uid.column_int(1));
        doomed.bytes += static_cast<std::uint64_t>(std::max<std::int64_t>(0, m_oldest_of_uid.column_int(2)));
        session = m_oldest_of_uid.step();
      } else {
        doomed.rejects.push_back(m_rejects_of_uid.column_int(0));
        doomed.bytes += static_cast<std::uint64_t>(std::max<std::int64_t>(0, m_rejects_of_uid.column_int(1)));
        reject = m_rejects_of_uid.step();
      }
    }
    m_oldest_of_uid.reset();
    m_rejects_of_uid.reset();
    if (doomed.empty()) {
      m_usage.erase(biggest);
    } else {
      biggest->second -= std::min(biggest->second, std::max<std::uint64_t>(1, doomed.bytes));
    }
  }
  if (m_usage.empty()) {
    m_usage_loaded = false;  // nothing known to delete: look afresh next step
  }
}

bool Retention::due_while_busy() {
  return m_options.max_db_bytes > 0 && pages().used_bytes() > m_options.max_db_bytes - slack_bytes();
}

bool Retention::step(bool quiet) {
  if (!enabled()) {
    return false;
  }
  Doomed doomed;
  db::Transaction txn(m_db);
  if (m_options.max_age) {
    collect_by_age(doomed);
  }
  if (doomed.empty() && m_options.max_db_bytes > 0) {
    // Pages in use are kept under the bound less the slack (the headroom
    // once ingest is quiet), so that the pages a step frees are there for the
    // next inserts: the file stays at its bound without pages moved back
    // and forth at full rate.
    const std::uint64_t used = pages().used_bytes();
    const std::uint64_t keep = m_options.max_db_bytes - (quiet ? headroom_bytes() : slack_bytes());
    if (used > keep) {
      collect_by_size(doomed, used, keep);
    }
  }
  for (const std::int64_t id : doomed.sessions) {
    m_eraser.erase(id);
  }
  for (const std::int64_t id : doomed.rejects) {
    m_delete_reject.bind_int(1, id);
    m_delete_reject.run();
  }
  // Incremental vacuum moves each page it gives back (the file's last
  // ones, into free places) and rewrites its parent: only what takes the
  // file over its bound, or frees more than the slack, a bounded amount
  // per step.
  const Pages after = pages();
  m_over_bound = m_options.max_db_bytes > 0 && after.used_bytes() > m_options.max_db_bytes;
  std::uint64_t given_back = 0;
  if (const std::uint64_t give_back = pages_to_give_back(after, !doomed.empty()); give_back > 0) {
    m_db.exec("PRAGMA incremental_vacuum(" + std::to_string(give_back) + ")");
    // Measured, not assumed: a database made without incremental
    // auto-vacuum gives nothing back, and must not keep retention busy.
    const std::uint64_t count = pages().count;
    given_back = after.count > count ? after.count - count : 0;
  }
  txn.commit();
  m_sessions_deleted += doomed.sessions.size();
  m_events_deleted += doomed.events;
  m_rejects_deleted += doomed.rejects.size();
  if (!doomed.empty()) {
    spdlog::debug("retention: deleted {} sessions ({} events) and {} rejects, gave back {} pages",
                  doomed.sessions.size(), doomed.events, doomed.rejects.size(), given_back);
  }
  return !doomed.empty() || given_back > 0;
}

Retention::Options RetentionSettings::options() const {
  Retention::Options o;
  o.max_age = parse_age(max_age);
  o.max_db_bytes = max_db_bytes;
  o.idle_headroom_bytes = max_db_bytes / 100 * headroom_percent;
  return o;
}

namespace {

// At most 100 years: more would overflow the microseconds of the cutoff.
constexpr std::int64_t k_max_age_seconds = std::int64_t{100} * 366 * 86400;

struct ParsedAge {
  std::optional<std::chrono::seconds> age;
  std::string problem;  // when not `age`
};

ParsedAge parse_age_text(std::string_view text) {
  const auto not_a_duration = [&] {
    return ParsedAge{std::nullopt,
                     fmt::format("must be a duration like \"90s\", \"15m\", \"12h\", \"30d\" or \"2w\" (\"\": "
                                 "none), not '{}'",
                                 text)};
  };
  std::int64_t value = 0;
  std::size_t i = 0;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
    if (value <= k_max_age_seconds) {  // past it, too big whatever the unit: said below
      value = value * 10 + (text[i] - '0');
    }
  }
  if (i == 0) {
    return not_a_duration();
  }
  const std::string_view unit = text.substr(i);
  std::int64_t scale = 0;
  if (unit.empty() || unit == "s") {
    scale = 1;
  } else if (unit == "m") {
    scale = 60;
  } else if (unit == "h") {
    scale = 3600;
  } else if (unit == "d") {
    scale = 86400;
  } else if (unit == "w") {
    scale = 7 * 86400;
  } else {
    return not_a_duration();
  }
  if (value == 0) {
    // Read as "no bound" by some: here it deleted every session as soon as
    // it was stored.
    return {std::nullopt, fmt::format("must be more than 0, not '{}' (which would delete every session as soon "
                                      "as it is stored); \"\" keeps everything",
                                      text)};
  }
  if (value > k_max_age_seconds / scale) {
    return {std::nullopt, fmt::format("must be at most 100 years, not '{}'; \"\" keeps everything", text)};
  }
  return {std::chrono::seconds(value * scale), {}};
}

}  // namespace

std::optional<std::chrono::seconds> RetentionSettings::parse_age(std::string_view text) {
  if (text.empty()) {
    return std::nullopt;
  }
  return parse_age_text(text).age;
}

std::string RetentionSettings::age_problem(const std::string& text) {
  if (text.empty()) {
    return {};
  }
  return parse_age_text(text).problem;
}

}  // namespace trace2d::store
