#pragma once
// Talks to the service manager over sd_notify(3): readiness, stopping, a
// status line for `systemctl status`, and the watchdog.
//
// Under systemd (Type=notify) NOTIFY_SOCKET names the manager's socket. When
// it is unset (a shell, a test, a container without systemd) every call is a
// no-op, so the daemon never has to ask whether it runs as a service.

#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "daemon/source/asio.hpp"

namespace trace2d::app {

class ServiceNotifier {
 public:
  // Reads NOTIFY_SOCKET once; the environment is left as it is.
  ServiceNotifier();

  [[nodiscard]] bool enabled() const { return m_enabled; }

  // READY=1: the sockets listen and the pipeline runs. `status` goes along
  // as STATUS= so the first `systemctl status` line already says where.
  void ready(std::string status);
  // STOPPING=1: a stop signal arrived; draining may take up to the grace.
  void stopping();
  // STATUS=<text>, one line.
  void status(std::string text);
  // What ready() announced, to put back after a temporary status.
  [[nodiscard]] const std::string& ready_status() const { return m_ready_status; }

  // The watchdog interval systemd expects pings within (WatchdogSec=), or
  // nullopt when there is no watchdog for this process: unset
  // WATCHDOG_USEC, a WATCHDOG_PID naming another process, or no
  // NOTIFY_SOCKET to ping through.
  [[nodiscard]] std::optional<std::chrono::microseconds> watchdog_interval() const;
  // WATCHDOG=1.
  void ping();

 private:
  void notify(const std::string& state);

  bool m_enabled = false;
  bool m_warned = false;
  std::string m_ready_status;
};

// Pings the watchdog every interval / 2 from the io_context, but only while
// `healthy` says so: a wedged pipeline then stops the pings and systemd
// restarts trace2d (WatchdogSec=, Restart=on-failure). Running on the
// io_context also makes a wedged io thread stop the pings.
class ServiceWatchdog {
 public:
  // Asked once per tick on the io_context; true when the daemon works.
  using HealthCheck = std::function<bool()>;

  ServiceWatchdog(asio::io_context& io, ServiceNotifier& notifier, HealthCheck healthy);
  ServiceWatchdog(const ServiceWatchdog&) = delete;
  ServiceWatchdog& operator=(const ServiceWatchdog&) = delete;

  // Starts ticking if systemd asked for a watchdog; otherwise does nothing.
  void start();
  // Cancels the timer so that io_context::run() can return at shutdown.
  // Safe from any thread.
  void stop();

  [[nodiscard]] std::optional<std::chrono::microseconds> interval() const { return m_interval; }

 private:
  void schedule();
  void tick();

  ServiceNotifier& m_notifier;
  HealthCheck m_healthy;
  std::optional<std::chrono::microseconds> m_interval;
  // All timer work on one strand: stop() may come from a signal handler on
  // another io thread.
  asio::strand<asio::io_context::executor_type> m_strand;
  asio::steady_timer m_timer;
  bool m_stopped = false;
  bool m_stalled = false;  // pings withheld since the last healthy tick
};

}  // namespace trace2d::app
