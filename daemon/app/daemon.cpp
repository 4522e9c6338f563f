#include "daemon/app/daemon.hpp"

#include <spdlog/spdlog.h>

#include <csignal>
#include <cstdio>
#include <thread>
#include <vector>

#include "daemon/pipeline/ingest_sink.hpp"
#include "daemon/pipeline/ingest_worker.hpp"
#include "daemon/source/asio.hpp"
#include "daemon/source/socket_file.hpp"
#include "daemon/source/stream_server.hpp"
#include "daemon/stitch/stitcher.hpp"
#include "daemon/store/database_setup.hpp"
#include "daemon/store/event_encoder.hpp"
#include "daemon/store/name_table.hpp"
#include "daemon/store/session_catalog_db.hpp"
#include "daemon/store/store_writer.hpp"

namespace trace2d::app {

int Daemon::run() {
  using stream = asio::local::stream_protocol;
  std::signal(SIGPIPE, SIG_IGN);

  source::SocketFile socket_file(m_options.socket_path);

  store::SetupReport setup;
  store::Database db = store::open_for_writing(m_options.db_path, &setup);
  if (setup.migrations_applied > 0) {
    spdlog::info("database {}: schema brought to version {}", m_options.db_path,
                 setup.migrations_applied);
  }
  if (setup.sessions_marked_incomplete > 0) {
    spdlog::info("database {}: {} sessions left running by a previous run marked incomplete",
                 m_options.db_path, setup.sessions_marked_incomplete);
  }
  store::NameTable names;
  names.load(db);
  store::DatabaseSessionCatalog catalog(m_options.db_path);

  pipeline::MemoryBudget budget(m_options.max_queue_bytes);
  pipeline::WorkQueue<pipeline::IngestChunk> chunks;
  pipeline::WorkQueue<store::WriteBatch> batches;
  pipeline::IngestSink sink(chunks, budget);

  store::StoreWriter::Options writer_options;
  writer_options.commit_interval = m_options.commit_interval;
  store::StoreWriter writer(std::move(db), batches, budget, writer_options);

  stitch::Stitcher stitcher(catalog, catalog.next_session_id(), {});
  store::EventEncoder encoder(names);
  pipeline::IngestWorker::Options worker_options;
  worker_options.max_line_bytes = m_options.max_line_bytes;
  pipeline::IngestWorker worker(chunks, batches, budget, stitcher, encoder,
                                [&writer] { return writer.committed_batch(); }, worker_options);

  asio::io_context io(static_cast<int>(m_options.io_threads));
  stream::acceptor acceptor(io);
  acceptor.open();
  acceptor.bind(stream::endpoint(m_options.socket_path));
  acceptor.listen(asio::socket_base::max_listen_connections);
  socket_file.bound(m_options.socket_mode);

  source::StreamServer::Options server_options;
  server_options.framing.max_line_bytes = m_options.max_line_bytes;
  server_options.overflow_wait = m_options.overflow_wait;
  source::StreamServer server(io, std::move(acceptor), sink, server_options);

  std::thread writer_thread([&writer] { writer.run(); });
  std::thread worker_thread([&worker] { worker.run(); });

  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code& ec, int signo) {
    if (ec) {
      return;
    }
    spdlog::info("received signal {}: stopping (grace {} ms)", signo, m_options.shutdown_grace.count());
    server.stop(m_options.shutdown_grace);
  });
  server.start();

  spdlog::info("trace2d listening on {} (stream), database {}", m_options.socket_path,
               m_options.db_path);
  std::printf("GIT_TRACE2_EVENT=af_unix:stream:%s\n", m_options.socket_path.c_str());
  std::fflush(stdout);

  std::vector<std::thread> io_threads;
  for (unsigned i = 1; i < m_options.io_threads; ++i) {
    io_threads.emplace_back([&io] { io.run(); });
  }
  io.run();
  for (auto& t : io_threads) {
    t.join();
  }

  // Every connection is drained: let the pipeline finish, then the writer.
  chunks.close();
  worker_thread.join();
  std::atomic<bool> writer_done{false};
  std::thread watchdog([&] {
    const auto give_up = std::chrono::steady_clock::now() + m_options.store_give_up_after;
    while (!writer_done.load()) {
      if (std::chrono::steady_clock::now() >= give_up) {
        spdlog::error("database still failing after {} ms; giving up",
                      m_options.store_give_up_after.count());
        writer.stop_retrying();
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
  writer_thread.join();
  writer_done.store(true);
  watchdog.join();

  const auto& counts = worker.counters();
  const auto& source_counts = sink.counters();
  spdlog::info(
      "stopped: {} connections, {} lines, {} events stored, {} rejected, {} dropped at the memory "
      "bound, {} abandoned; peak queued {:.1f} MiB",
      source_counts.channels_opened.load(), counts.lines.load(), writer.committed_events(),
      counts.rejects.load(), source_counts.dropped_lines.load(), writer.abandoned_events(),
      static_cast<double>(budget.peak()) / (1024.0 * 1024.0));
  return writer.abandoned_events() == 0 ? 0 : 1;
}

}  // namespace trace2d::app
