#include "daemon/source/stream_server.hpp"

namespace trace2d::source {

StreamServer::StreamServer(asio::io_context& io, asio::local::stream_protocol::acceptor listener,
                           ingest::IngestSink& sink, Options options)
    : m_io(io),
      m_strand(asio::make_strand(io)),
      m_listener(std::move(listener)),
      m_reader(sink, options, [this](bool handed_over) {
        // The last connection is closed: once stopping, nothing is left to
        // wait for, so end the grace period and let the daemon exit. (Not
        // before: between git processes this happens all the time, and
        // waking the io thread for nothing is a cost to git.)
        if (!m_stop_requested.load()) {
          return;
        }
        asio::post(m_strand, [this, handed_over] {
          if (!m_stopping) {
            return;
          }
          if (!m_closing_all) {
            close_all();
          } else if (handed_over && m_reader.open_connections() == 0) {
            m_work.reset();
          }
        });
      }) {}

StreamServer::~StreamServer() = default;

void StreamServer::start() {
  m_work.emplace(m_io.get_executor());
  m_listener.non_blocking(true);
  // Taken out of Asio's epoll set too: there, every connect() would wake an
  // io thread for nothing.
  m_listener_fd = UniqueFd(m_listener.release());
  m_reader.accept_from(m_listener_fd.get());
}

void StreamServer::close_all() {
  if (m_grace_timer) {
    m_grace_timer->cancel();
  }
  m_closing_all = true;
  m_reader.close_all();
  // The reader drains and closes every connection on its own thread; the
  // io_context keeps running (and the daemon keeps its pipeline open) until
  // it has handed over the last line and its last counts: its on_empty,
  // above, comes once it has.
}

void StreamServer::stop(std::chrono::milliseconds grace) {
  m_stop_requested.store(true);
  asio::post(m_strand, [this, grace] {
    if (m_stopping) {
      return;
    }
    m_stopping = true;
    // Clients whose connect() completed may still be in the backlog: their
    // writes are in the kernel already. The reader takes them in first.
    m_reader.stop_accepting();
    m_listener_fd.reset();
    boost::system::error_code ec;
    m_listener.close(ec);
    if (grace.count() <= 0 || m_reader.open_connections() == 0) {
      close_all();
      return;
    }
    m_grace_timer = std::make_unique<asio::steady_timer>(m_strand, grace);
    m_grace_timer->async_wait([this](const boost::system::error_code&) { close_all(); });
  });
}

}  // namespace trace2d::source
