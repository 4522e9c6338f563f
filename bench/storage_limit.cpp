// The storage limit: how fast this machine's SQLite takes the rows trace2d
// would write for a benchmark's payload, with nothing else running. The
// exact payload of ingest_bench (same options, same bytes) is parsed,
// stitched and encoded by trace2d's own Parser, Stitcher and EventEncoder into
// WriteBatches in memory first (untimed; its rate is reported, as the
// pipeline thread's ceiling); then only the RowWriter's writes and the
// commits into a fresh database made by db::open_for_writing (trace2d's
// schema and pragmas) are timed.
//
//   storage_limit --shape short|long|dgram|dir [--clients N] [--events N] [--files N]
//                 [--rows-per-commit 50000] [--batch-rows 8192]
//
// Transactions hold --rows-per-commit rows (trace2d's largest transaction);
// batches are cut at --batch-rows events as trace2d's pipeline thread cuts them.

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/support.hpp"
#include "daemon/stitch/stitcher.hpp"
#include "db/database_setup.hpp"
#include "daemon/store/event_encoder.hpp"
#include "daemon/store/name_table.hpp"
#include "daemon/store/row_writer.hpp"
#include "daemon/store/session_catalog_db.hpp"
#include "proto/parser.hpp"
#include "proto/timestamp.hpp"

namespace {

using namespace trace2d;
using bench::Clock;

struct Encoded {
  std::vector<store::WriteBatch> batches;
  std::int64_t rejects = 0;
  std::size_t rows = 0;
};

ingest::SourceKind kind_of(const std::string& shape) {
  if (shape == "dgram") {
    return ingest::SourceKind::dgram;
  }
  return shape == "dir" ? ingest::SourceKind::dir : ingest::SourceKind::stream;
}

// What trace2d's pipeline thread does with the lines, minus the queues.
Encoded encode(const bench::Payload& payload, ingest::SourceKind kind, db::Database& db,
               const std::string& db_path, std::size_t batch_rows) {
  store::NameTable names;
  names.load(db);
  store::DatabaseSessionCatalog catalog(db_path);
  stitch::Stitcher stitcher(catalog, catalog.next_session_id(), stitch::Stitcher::Options{});
  store::EventEncoder encoder(names);
  proto::Parser parser;
  proto::Event event;
  Encoded out;
  store::WriteBatch batch;
  std::uint64_t number = 1;
  const auto hand_on = [&] {
    stitch::StitchChanges changes;
    stitcher.collect_changes(changes, number);
    encoder.encode(changes, batch);
    if (!batch.empty()) {
      batch.number = number++;
      out.rows += batch.row_count();
      out.batches.push_back(std::move(batch));
      batch = store::WriteBatch();
    }
  };
  // The clients' connections interleaved, in about the order they arrive.
  std::size_t most = 0;
  for (const auto& connections : payload.clients) {
    most = std::max(most, connections.size());
  }
  std::uint64_t channel = 0;
  for (std::size_t k = 0; k < most; ++k) {
    for (const auto& connections : payload.clients) {
      if (k >= connections.size()) {
        continue;
      }
      const ingest::Origin origin{kind, ++channel, ::getpid(), ::getuid()};
      for (const std::string& line : connections[k].lines) {
        const std::string_view text(line.data(), line.size() - 1);  // without '\n'
        if (!parser.parse(text, 0, event)) {
          ++out.rejects;
          continue;
        }
        const std::optional<stitch::EventPlacement> placement = stitcher.place(event, origin, proto::unix_now_us());
        if (!placement) {
          ++out.rejects;
          continue;
        }
        encoder.encode(event, text, *placement, batch);
        if (batch.events.size() >= batch_rows) {
          hand_on();
        }
      }
      if (kind != ingest::SourceKind::dgram) {
        stitcher.end_of_channel(origin.channel);
      }
    }
  }
  hand_on();
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  bench::PayloadOptions payload_options;
  std::string work_dir;
  std::size_t rows_per_commit = 50000;
  std::size_t batch_rows = 8192;
  CLI::App cli{"Times bare RowWriter inserts of a benchmark payload's pre-encoded rows (the storage limit)."};
  payload_options.add_to(cli);
  cli.add_option("--work-dir", work_dir, "Where the database goes (default: a fresh temp dir)");
  cli.add_option("--rows-per-commit", rows_per_commit, "Rows per transaction")->capture_default_str();
  cli.add_option("--batch-rows", batch_rows, "Events per WriteBatch")->capture_default_str();
  CLI11_PARSE(cli, argc, argv);
  try {
    const bench::Payload payload = bench::make_payload(payload_options);
    bench::WorkDir work(work_dir);
    const std::string db_path = work.path() + "/limit.db";
    db::Database db = db::open_for_writing(db_path);

    const auto encode_start = Clock::now();
    const Encoded encoded = encode(payload, kind_of(payload_options.shape), db, db_path, batch_rows);
    const double encode_s = bench::seconds_between(encode_start, Clock::now());

    store::RowWriter rows(db);
    const auto start = Clock::now();
    db.exec("BEGIN IMMEDIATE");
    std::size_t in_transaction = 0;
    for (const store::WriteBatch& batch : encoded.batches) {
      rows.write(batch);
      in_transaction += batch.row_count();
      if (in_transaction >= rows_per_commit) {
        db.exec("COMMIT");
        db.exec("BEGIN IMMEDIATE");
        in_transaction = 0;
      }
    }
    db.exec("COMMIT");
    const double elapsed = bench::seconds_between(start, Clock::now());

    const std::int64_t stored = db.query_int("SELECT count(*) FROM event_store").value_or(-1);
    const bool lossless = stored == payload.events && encoded.rejects == 0;
    std::printf(
        "RESULT bench=storage_limit shape=%s sessions=%lld events=%lld bytes=%llu rows=%zu batches=%zu "
        "rows_per_commit=%zu elapsed_s=%.3f events_per_s=%.0f rows_per_s=%.0f encode_s=%.3f "
        "encode_events_per_s=%.0f stored=%lld rejects=%lld loss=%s\n",
        payload_options.shape.c_str(), static_cast<long long>(payload.sessions),
        static_cast<long long>(payload.events), static_cast<unsigned long long>(payload.bytes), encoded.rows,
        encoded.batches.size(), rows_per_commit, elapsed, static_cast<double>(payload.events) / elapsed,
        static_cast<double>(encoded.rows) / elapsed, encode_s, static_cast<double>(payload.events) / encode_s,
        static_cast<long long>(stored), static_cast<long long>(encoded.rejects), lossless ? "none" : "YES");
    return lossless ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "storage_limit: %s\n", e.what());
    return 1;
  }
}
