#include "daemon/app/backend.hpp"
#include "daemon/app/thread_scheduling.hpp"

#include "db/otlp_queue.hpp"

#include <pthread.h>

#include <spdlog/spdlog.h>

#include "daemon/source/socket_file.hpp"

namespace trace2d::app {
namespace {

// A second writer, or a lock file that is not ours, is a start-up error
// like a socket another trace2d owns: the message says all.
db::WriterLock take_writer_lock(const std::string& db_path) {
  try {
    return db::WriterLock(db_path);
  } catch (const db::LockFileError& e) {
    throw source::StartupError(e.what());
  }
}

}  // namespace

Backend::Backend(BackendOptions options)
    : m_options(std::move(options)), m_writer_lock(take_writer_lock(m_options.db_path)), m_budget(m_options.max_queue_bytes) {
  db::Database db = db::open_for_writing(m_options.db_path, &m_setup);
  if (m_options.export_url) {
    db::set_export_enabled(db, !m_options.export_url->empty(), *m_options.export_url);
  }
  m_names.load(db);
  store::StoreWriter::Options writer_options = m_options.writer;
  writer_options.names = &m_names;
  m_writer = std::make_unique<store::StoreWriter>(std::move(db), m_batches, m_budget, writer_options);
  m_catalog = std::make_unique<store::DatabaseSessionCatalog>(
      m_options.db_path, [writer = m_writer.get()] { return writer->database_recreated(); });
  m_stitcher = std::make_unique<stitch::Stitcher>(*m_catalog, m_catalog->next_session_id(), m_options.stitcher);
  m_encoder = std::make_unique<store::EventEncoder>(m_names);
  pipeline::IngestWorker::Options worker_options = m_options.worker;
  worker_options.max_line_bytes = m_options.max_line_bytes;
  m_store_consumer = std::make_unique<store::StoreConsumer>(*m_encoder, m_batches, m_budget,
                                                            store::StoreConsumer::Options{});
  std::vector<stitch::StitchedConsumer*> consumers{m_store_consumer.get()};
  consumers.insert(consumers.end(), m_options.consumers.begin(), m_options.consumers.end());
  m_worker = std::make_unique<pipeline::IngestWorker>(
      m_chunks, m_budget, *m_stitcher, std::move(consumers),
      [writer = m_writer.get()] { return writer->committed_batch(); }, worker_options);
}

Backend::~Backend() {
  if (m_worker_thread.joinable() || m_writer_thread.joinable()) {
    finish(std::chrono::seconds(0));
  }
}

std::unique_ptr<ingest::IngestSink> Backend::make_sink() {
  return std::make_unique<ingest::IngestSink>(m_chunks, m_budget, m_channel_ids);
}

void Backend::start() {
  // Named so that `top -H` and perf tell the stages apart.
  m_writer_thread = std::thread([this] {
    pthread_setname_np(pthread_self(), "trace2d-store");
    use_background_scheduling(m_options.batch_scheduling, "trace2d-store");
    m_writer->run();
  });
  m_worker_thread = std::thread([this] {
    pthread_setname_np(pthread_self(), "trace2d-parse");
    use_background_scheduling(m_options.batch_scheduling, "trace2d-parse");
    m_worker->run();
  });
}

void Backend::finish(std::chrono::milliseconds give_up_after) {
  m_chunks.close();
  if (m_worker_thread.joinable()) {
    m_worker_thread.join();
  }
  if (!m_writer_thread.joinable()) {
    return;
  }
  std::atomic<bool> done{false};
  std::thread watchdog([&] {
    const auto give_up = std::chrono::steady_clock::now() + give_up_after;
    while (!done.load()) {
      if (std::chrono::steady_clock::now() >= give_up) {
        spdlog::error("database still failing after {} ms; giving up", give_up_after.count());
        m_writer->stop_retrying();
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  m_writer_thread.join();
  done.store(true);
  watchdog.join();
}

}  // namespace trace2d::app
