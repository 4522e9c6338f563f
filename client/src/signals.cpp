// The fatal-signal handler (see install_fatal_signal_handlers() in session.hpp).

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include "client/src/clock.hpp"
#include "client/src/session.hpp"

namespace trace2d::client::detail {
namespace {

constexpr int k_fatal_signals[] = {SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGQUIT,
                                   SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL};

// Appends into a fixed buffer; async-signal-safe.
class FixedLine {
 public:
  FixedLine(char* buffer, std::size_t size) : m_buffer(buffer), m_size(size) {}
  void append(std::string_view text) {
    if (m_len + text.size() > m_size) {
      m_overflow = true;
      return;
    }
    std::memcpy(m_buffer + m_len, text.data(), text.size());
    m_len += text.size();
  }
  void integer(std::int64_t value) {
    char digits[24];
    append(std::string_view(digits, format_int(digits, value)));
  }
  [[nodiscard]] bool ok() const { return !m_overflow; }
  [[nodiscard]] std::string_view text() const { return {m_buffer, m_len}; }

 private:
  char* m_buffer;
  std::size_t m_size;
  std::size_t m_len = 0;
  bool m_overflow = false;
};

void fatal_signal_handler(int signo) {
  const int saved_errno = errno;
  Session* s = Session::current();
  if (s != nullptr && s->pid() == ::getpid()) {
    s->on_fatal_signal(signo);
  }
  errno = saved_errno;
  // SA_RESETHAND restored the default action; the signal is blocked until
  // this handler returns, then it ends the process as it would have.
  ::raise(signo);
}

}  // namespace

void install_fatal_signal_handlers() {
  for (const int signo : k_fatal_signals) {
    struct sigaction current {};
    if (::sigaction(signo, nullptr, &current) != 0 || current.sa_handler != SIG_DFL ||
        (current.sa_flags & SA_SIGINFO) != 0) {
      continue;  // the program handles or ignores it: leave it alone
    }
    struct sigaction ours {};
    ours.sa_handler = fatal_signal_handler;
    sigemptyset(&ours.sa_mask);
    ours.sa_flags = SA_RESETHAND | SA_RESTART;
    ::sigaction(signo, &ours, nullptr);
  }
}

void Session::on_fatal_signal(int signo) noexcept {
  if (m_finished.exchange(true)) {
    return;  // exit already sent its events, or another signal came first
  }
  const std::int64_t t_abs = mono_us() - m_start_us;
  static char buffer[8192];
  FixedLine line(buffer, sizeof buffer);
  line.append("{\"event\":\"signal\"");
  line.append(m_sid_json);
  const ThreadContext* ctx = current_context();
  line.append(ctx != nullptr && ctx->session == this
                  ? std::string_view(ctx->thread_json)
                  : std::string_view(",\"thread\":\"th00:unknown\""));
  if (!m_brief) {
    char time_text[k_time_extended_len];
    format_time_extended(time_text, real_us());
    line.append(",\"time\":\"");
    line.append(std::string_view(time_text, sizeof time_text));
    line.append("\",\"file\":\"");
    line.append(k_internal_file);
    line.append("\",\"line\":");
    line.integer(__LINE__);
  }
  char seconds[32];
  line.append(",\"t_abs\":");
  line.append(std::string_view(seconds, format_seconds(seconds, t_abs)));
  line.append(",\"signo\":");
  line.integer(signo);
  line.append("}\n");
  if (!line.ok()) {
    return;
  }
  // Let the writer hand over what is queued (it runs on its own thread),
  // but never hold up the process's death for long.
  for (int i = 0; i < 100 && !m_writer->drained(); ++i) {
    const timespec one_ms{0, 1000000};
    ::nanosleep(&one_ms, nullptr);
  }
  m_writer->sink().write_from_signal_handler(line.text());
}

}  // namespace trace2d::client::detail
