#include "daemon/app/service_notifier.hpp"

#include <spdlog/spdlog.h>
#include <systemd/sd-daemon.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace trace2d::app {
namespace {

// The protocol is newline-separated assignments: a newline inside STATUS=
// would start a new (bogus) assignment.
std::string one_line(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r') {
      c = ' ';
    }
  }
  return text;
}

}  // namespace

ServiceNotifier::ServiceNotifier() {
  const char* socket = std::getenv("NOTIFY_SOCKET");
  m_enabled = socket != nullptr && socket[0] != '\0';
}

void ServiceNotifier::notify(const std::string& state) {
  if (!m_enabled) {
    return;
  }
  // unset_environment = 0: sd_watchdog_enabled() reads the same variables
  // later, and trace2d starts no children that could inherit them.
  const int r = ::sd_notify(0, state.c_str());
  if (r < 0 && !m_warned) {
    // Once: a broken notify socket would otherwise log on every ping.
    m_warned = true;
    spdlog::warn("sd_notify({}): {}", state.substr(0, state.find('\n')), std::strerror(-r));
  }
}

void ServiceNotifier::ready(std::string status) {
  m_ready_status = one_line(std::move(status));
  notify("READY=1\nSTATUS=" + m_ready_status);
}

void ServiceNotifier::stopping() { notify("STOPPING=1\nSTATUS=stopping: draining connections, committing"); }

void ServiceNotifier::status(std::string text) { notify("STATUS=" + one_line(std::move(text))); }

std::optional<std::chrono::microseconds> ServiceNotifier::watchdog_interval() const {
  if (!m_enabled) {
    return std::nullopt;
  }
  std::uint64_t usec = 0;
  // Also checks WATCHDOG_PID against our pid: a watchdog meant for a
  // wrapper that exec'd us must not be answered by the wrong process.
  if (::sd_watchdog_enabled(0, &usec) <= 0 || usec == 0) {
    return std::nullopt;
  }
  return std::chrono::microseconds(usec);
}

void ServiceNotifier::ping() { notify("WATCHDOG=1"); }

ServiceWatchdog::ServiceWatchdog(asio::io_context& io, ServiceNotifier& notifier, HealthCheck healthy)
    : m_notifier(notifier),
      m_healthy(std::move(healthy)),
      m_interval(notifier.watchdog_interval()),
      m_strand(asio::make_strand(io)),
      m_timer(m_strand) {}

void ServiceWatchdog::start() {
  if (!m_interval) {
    return;
  }
  spdlog::info("systemd watchdog: {} ms; pinging every {} ms while the pipeline makes progress",
               m_interval->count() / 1000, m_interval->count() / 2000);
  asio::post(m_strand, [this] {
    if (m_stopped) {
      return;
    }
    // The first ping right after READY=1, not half an interval later.
    tick();
  });
}

void ServiceWatchdog::stop() {
  asio::post(m_strand, [this] {
    m_stopped = true;
    m_timer.cancel();
  });
}

void ServiceWatchdog::schedule() {
  // Half the interval, as sd_watchdog_enabled(3) recommends: one late tick
  // does not yet miss the deadline.
  m_timer.expires_after(*m_interval / 2);
  m_timer.async_wait([this](const boost::system::error_code& ec) {
    if (ec || m_stopped) {
      return;
    }
    tick();
  });
}

void ServiceWatchdog::tick() {
  if (m_healthy()) {
    m_notifier.ping();
    if (m_stalled) {
      m_stalled = false;
      spdlog::info("systemd watchdog: the writer commits again; pinging");
      m_notifier.status(m_notifier.ready_status());
    }
  } else if (!m_stalled) {
    m_stalled = true;
    spdlog::warn("systemd watchdog: events are pending but the writer neither committed nor retried for {} ms; "
                 "withholding pings (systemd restarts trace2d if this lasts {} ms)",
                 m_interval->count() / 2000, m_interval->count() / 1000);
    m_notifier.status("stalled: events pending, the writer makes no progress");
  }
  schedule();
}

}  // namespace trace2d::app
