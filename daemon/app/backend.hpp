#pragma once
// The part of the daemon behind the sources: the memory budget, the two
// queues, the ingest worker's thread (parse, stitch, hand to consumers) and
// the store writer's thread. The store is always a consumer of stitched
// output; others (the /metrics histograms) are added to `consumers`.
// Used by the daemon and by `trace2d import`.

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "daemon/ingest/ingest_sink.hpp"
#include "daemon/ingest/line_framer.hpp"
#include "daemon/pipeline/ingest_worker.hpp"
#include "daemon/stitch/stitcher.hpp"
#include "daemon/store/event_encoder.hpp"
#include "daemon/store/name_table.hpp"
#include "daemon/store/session_catalog_db.hpp"
#include "daemon/store/store_consumer.hpp"
#include "daemon/store/store_writer.hpp"
#include "db/database_setup.hpp"
#include "db/writer_lock.hpp"

namespace trace2d::app {

struct BackendOptions {
  std::string db_path;
  std::size_t max_queue_bytes = 16 * 1024 * 1024;
  std::size_t max_line_bytes = ingest::k_default_max_line_bytes;  // the worker's is set from it
  // The components' own settings, as configured (the writer's status hook
  // and retention too; its names are the backend's).
  store::StoreWriter::Options writer;
  pipeline::IngestWorker::Options worker;
  stitch::Stitcher::Options stitcher;
  bool batch_scheduling = false;  // the two threads under SCHED_BATCH (the daemon's default; not an import's)
  // Whether sessions are queued for the OTLP exporter ("": no; the URL: yes;
  // nullopt: left as it is, for `trace2d import`, whose sessions are never
  // queued: the trigger skips source 'import', schema v11).
  std::optional<std::string> export_url;
  // Consumers of stitched output beside the store's (the /metrics
  // histograms); they must outlive the Backend.
  std::vector<stitch::StitchedConsumer*> consumers;
};

class Backend {
 public:
  // Takes the database's writer lock (db::WriterLock: a second writer,
  // daemon or import, is refused with the first one's pid), then opens
  // (creates, migrates) the database. Throws on failure.
  explicit Backend(BackendOptions options);
  ~Backend();
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;

  // A sink for one source, with its own counters.
  [[nodiscard]] std::unique_ptr<ingest::IngestSink> make_sink();

  void start();
  // No more input: lets the worker finish, then the writer commit. Gives up
  // on a database that keeps failing after `give_up_after`.
  void finish(std::chrono::milliseconds give_up_after);

  [[nodiscard]] const db::SetupReport& setup() const { return m_setup; }
  [[nodiscard]] ingest::MemoryBudget& budget() { return m_budget; }
  [[nodiscard]] pipeline::IngestWorker& worker() { return *m_worker; }
  [[nodiscard]] store::StoreWriter& writer() { return *m_writer; }
  // Its live_bytes_total() and values_cut() may be read from any thread.
  [[nodiscard]] const stitch::Stitcher& stitcher() const { return *m_stitcher; }

 private:
  BackendOptions m_options;
  // Held until everything below is gone: the writer thread is joined first.
  db::WriterLock m_writer_lock;
  db::SetupReport m_setup;
  ingest::MemoryBudget m_budget;
  ingest::WorkQueue<ingest::IngestChunk> m_chunks;
  ingest::WorkQueue<store::WriteBatch> m_batches;
  std::atomic<std::uint64_t> m_channel_ids{0};
  store::NameTable m_names;
  std::unique_ptr<store::StoreWriter> m_writer;
  std::unique_ptr<store::DatabaseSessionCatalog> m_catalog;
  std::unique_ptr<stitch::Stitcher> m_stitcher;
  std::unique_ptr<store::EventEncoder> m_encoder;
  std::unique_ptr<store::StoreConsumer> m_store_consumer;
  std::unique_ptr<pipeline::IngestWorker> m_worker;
  std::thread m_writer_thread;
  std::thread m_worker_thread;
};

}  // namespace trace2d::app
