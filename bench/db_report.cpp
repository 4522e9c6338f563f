#include "bench/db_report.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <random>
#include <unordered_map>

#include "db/sqlite.hpp"

namespace trace2d::bench {
namespace {

std::string_view without_newline(const std::string& line) {
  std::string_view view(line);
  if (!view.empty() && view.back() == '\n') {
    view.remove_suffix(1);
  }
  return view;
}

}  // namespace

LossReport read_loss(const std::string& db_path) {
  db::Database db(db_path, db::OpenMode::read_only);
  db.set_busy_timeout(5000);
  LossReport loss;
  loss.stored = db.query_int("SELECT count(*) FROM event_store").value_or(-1);
  loss.sessions = db.query_int("SELECT count(*) FROM sessions").value_or(-1);
  loss.rejects = db.query_int("SELECT count(*) FROM rejects").value_or(-1);
  loss.dropped_lines = db.query_int("SELECT coalesce(sum(dropped_lines), 0) FROM source_stats").value_or(-1);
  loss.kernel_drops = db.query_int("SELECT coalesce(sum(kernel_drops), 0) FROM source_stats").value_or(-1);
  loss.queue_peak_bytes = db.query_int("SELECT queue_peak_bytes FROM daemon_status").value_or(-1);
  return loss;
}

StorageReport measure_storage(const std::string& db_path, const Payload& payload, std::int64_t json_samples) {
  StorageReport report;
  std::error_code ec;
  const auto wal = std::filesystem::file_size(db_path + "-wal", ec);
  report.wal_bytes_before = ec ? 0 : static_cast<std::int64_t>(wal);
  db::Database db(db_path, db::OpenMode::read_write_create);
  db.set_busy_timeout(5000);
  // Everything into the main file, so page_count covers all of it.
  db::Statement checkpoint = db.prepare("PRAGMA wal_checkpoint(TRUNCATE)");
  while (checkpoint.step()) {
  }
  const std::int64_t pages = db.query_int("PRAGMA page_count").value_or(0);
  const std::int64_t page_size = db.query_int("PRAGMA page_size").value_or(0);
  report.db_bytes = pages * page_size;
  report.freelist_pages = db.query_int("PRAGMA freelist_count").value_or(0);
  db::Statement stat = db.prepare("SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC, 1");
  while (stat.step()) {
    report.objects.emplace_back(std::string(stat.column_text(0)), stat.column_int(1));
  }

  std::unordered_map<std::string_view, const Connection*> by_sid;
  std::vector<const Connection*> all;
  for (const auto& connections : payload.clients) {
    for (const Connection& connection : connections) {
      by_sid.emplace(connection.sid, &connection);
      all.push_back(&connection);
    }
  }
  const auto check = [&](std::string_view sid, std::int64_t seq, std::string_view stored) {
    ++report.json_checked;
    const auto it = by_sid.find(sid);
    const bool same = it != by_sid.end() && seq >= 0 &&
                      static_cast<std::size_t>(seq) < it->second->lines.size() &&
                      without_newline(it->second->lines[static_cast<std::size_t>(seq)]) == stored;
    report.json_mismatched += same ? 0 : 1;
  };
  if (json_samples <= 0) {
    db::Statement every = db.prepare("SELECT sid, seq, coalesce(raw, json) FROM events");
    while (every.step()) {
      check(every.column_text(0), every.column_int(1), every.column_blob(2));
    }
  } else {
    db::Statement one = db.prepare("SELECT coalesce(raw, json) FROM events WHERE sid = ?1 AND seq = ?2");
    std::mt19937_64 random(20261121);
    for (std::int64_t i = 0; i < json_samples && !all.empty(); ++i) {
      const Connection& connection = *all[random() % all.size()];
      const auto seq = static_cast<std::int64_t>(random() % connection.lines.size());
      one.bind_text(1, connection.sid);
      one.bind_int(2, seq);
      check(connection.sid, seq, one.step() ? one.column_blob(0) : std::string_view("<missing>"));
      one.reset();
    }
  }
  return report;
}

void print_storage(const StorageReport& report, const Payload& payload) {
  const double events = static_cast<double>(std::max<std::int64_t>(1, payload.events));
  std::printf(
      "STORAGE db_bytes=%lld raw_bytes=%llu bytes_per_event=%.1f raw_bytes_per_event=%.1f ratio_to_raw=%.3f "
      "wal_bytes_before_checkpoint=%lld freelist_pages=%lld json_checked=%lld json_mismatched=%lld\n",
      static_cast<long long>(report.db_bytes), static_cast<unsigned long long>(payload.bytes),
      static_cast<double>(report.db_bytes) / events, static_cast<double>(payload.bytes) / events,
      static_cast<double>(report.db_bytes) / static_cast<double>(std::max<std::uint64_t>(1, payload.bytes)),
      static_cast<long long>(report.wal_bytes_before), static_cast<long long>(report.freelist_pages),
      static_cast<long long>(report.json_checked), static_cast<long long>(report.json_mismatched));
  for (const auto& [name, bytes] : report.objects) {
    std::printf("OBJECT name=%s bytes=%lld bytes_per_event=%.1f share=%.3f\n", name.c_str(),
                static_cast<long long>(bytes), static_cast<double>(bytes) / events,
                static_cast<double>(bytes) / static_cast<double>(std::max<std::int64_t>(1, report.db_bytes)));
  }
}

LatencyReport measure_latency(const std::string& db_path, const CommitPoller& poller) {
  db::Database db(db_path, db::OpenMode::read_only);
  db.set_busy_timeout(5000);
  db::Statement rows = db.prepare(
      "SELECT e.session, e.seq, s.time_base_us + e.time_us FROM event_store e "
      "JOIN sessions s ON s.id = e.session WHERE e.time_us IS NOT NULL AND s.time_base_us IS NOT NULL");
  std::vector<double> latencies_ms;
  std::vector<std::pair<std::int64_t, double>> timed;  // (sent, latency)
  LatencyReport report;
  while (rows.step()) {
    const auto seen = poller.seen_at(rows.column_int(0), rows.column_int(1));
    if (!seen) {
      ++report.unseen;
      continue;
    }
    const double latency = static_cast<double>(*seen - rows.column_int(2)) / 1000.0;
    latencies_ms.push_back(latency);
    timed.emplace_back(rows.column_int(2), latency);
  }
  if (!timed.empty()) {
    std::sort(timed.begin(), timed.end());
    const std::int64_t first = timed.front().first;
    std::vector<double> bucket;
    std::size_t i = 0;
    for (std::int64_t second = 0; i < timed.size(); ++second) {
      bucket.clear();
      for (; i < timed.size() && timed[i].first - first < (second + 1) * 1000000; ++i) {
        bucket.push_back(timed[i].second);
      }
      std::sort(bucket.begin(), bucket.end());
      LatencyReport::Second row;
      row.events = static_cast<std::int64_t>(bucket.size());
      if (!bucket.empty()) {
        row.p50_ms = bucket[(bucket.size() - 1) / 2];
        row.p99_ms = bucket[(bucket.size() - 1) * 99 / 100];
      }
      report.seconds.push_back(row);
    }
  }
  report.measured = static_cast<std::int64_t>(latencies_ms.size());
  if (latencies_ms.empty()) {
    return report;
  }
  std::sort(latencies_ms.begin(), latencies_ms.end());
  const auto at = [&](double q) {
    const auto index = static_cast<std::size_t>(q * static_cast<double>(latencies_ms.size() - 1));
    return latencies_ms[index];
  };
  report.p50_ms = at(0.50);
  report.p99_ms = at(0.99);
  report.max_ms = latencies_ms.back();
  return report;
}

}  // namespace trace2d::bench
