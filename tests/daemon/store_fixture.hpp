#pragma once
// The daemon's pipeline minus the sockets and threads: parse, stitch, encode
// and write lines into a real SQLite file, synchronously.

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "daemon/stitch/stitcher.hpp"
#include "db/database_setup.hpp"
#include "daemon/store/event_encoder.hpp"
#include "daemon/store/name_table.hpp"
#include "daemon/store/row_writer.hpp"
#include "daemon/store/session_catalog_db.hpp"
#include "proto/parser.hpp"
#include "proto/timestamp.hpp"
#include "tests/support/temp_dir.hpp"

namespace trace2d::test {

class StorePipeline {
 public:
  explicit StorePipeline(const TempDir& dir, stitch::Stitcher::Options options = {},
                         std::size_t max_names = store::NameTable::k_default_max_names,
                         std::size_t max_names_per_uid = store::NameTable::k_default_max_names_per_uid)
      : m_path(dir.file("store.db")),
        m_db(db::open_for_writing(m_path)),
        m_names(max_names, max_names_per_uid),
        m_catalog(m_path),
        m_stitcher(m_catalog, m_catalog.next_session_id(), options),
        m_encoder(m_names),
        m_rows(m_db) {
    m_names.load(m_db);
  }

  // Feeds lines as one channel would deliver them; returns reject reasons.
  std::vector<std::string> ingest(const std::vector<std::string>& lines, ingest::Origin origin = {}) {
    std::vector<std::string> rejects;
    store::WriteBatch batch;
    for (const std::string& line : lines) {
      const proto::ParseOutcome outcome = m_parser.parse(line, 0, m_event);
      if (!outcome) {
        rejects.emplace_back(outcome.reject_reason);
        continue;
      }
      const std::optional<stitch::EventPlacement> placement = m_stitcher.place(m_event, origin, proto::unix_now_us());
      if (!placement) {
        rejects.push_back(m_stitcher.refusal());
        continue;
      }
      if (placement->withheld) {
        continue;  // as the ingest worker does: the storage rule keeps it out
      }
      m_encoder.encode(m_event, line, *placement, batch, origin.peer_uid);
    }
    commit(batch);
    return rejects;
  }

  void writer_exited(std::uint64_t channel) {
    m_stitcher.writer_exited(channel);
    store::WriteBatch batch;
    commit(batch);
  }

  void end_channel(std::uint64_t channel) {
    m_stitcher.end_of_channel(channel);
    store::WriteBatch batch;
    commit(batch);
  }

  [[nodiscard]] db::Database& db() { return m_db; }
  [[nodiscard]] stitch::Stitcher& stitcher() { return m_stitcher; }
  [[nodiscard]] const std::string& path() const { return m_path; }
  [[nodiscard]] const store::NameTable& names() const { return m_names; }

 private:
  void commit(store::WriteBatch& batch) {
    stitch::StitchChanges changes;
    m_stitcher.collect_changes(changes, ++m_batches);
    m_encoder.encode(changes, batch);
    m_db.exec("BEGIN");
    m_rows.write(batch);
    m_db.exec("COMMIT");
  }

  std::string m_path;
  db::Database m_db;
  store::NameTable m_names;
  store::DatabaseSessionCatalog m_catalog;
  stitch::Stitcher m_stitcher;
  store::EventEncoder m_encoder;
  store::RowWriter m_rows;
  proto::Parser m_parser;
  proto::Event m_event;
  std::uint64_t m_batches = 0;
};

// A stream connection's origin: its sender's uid (pid 100 + uid).
inline ingest::Origin from(std::int64_t uid, std::uint64_t channel) {
  ingest::Origin origin;
  origin.kind = ingest::SourceKind::stream;
  origin.channel = channel;
  origin.peer_pid = 100 + uid;
  origin.peer_uid = uid;
  return origin;
}

// One event line of `sid` (no newline), on 2026-11-21 at `time` (UTC),
// with `rest` (",\"key\":value...") after the common fields.
inline std::string event_json(const std::string& sid, const std::string& name, const std::string& rest = "",
                              const std::string& time = "10:00:00.000000") {
  return R"({"event":")" + name + R"(","sid":")" + sid + R"(","thread":"main","time":"2026-11-21T)" + time +
         R"(Z")" + rest + "}";
}

inline std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    lines.push_back(line);
  }
  return lines;
}

}  // namespace trace2d::test
