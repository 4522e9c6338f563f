#pragma once
// A real Prometheus (Debian's package) for end-to-end tests: scrapes one
// trace2d every second, optionally evaluates rule files, and answers
// queries over its HTTP API on loopback.

#include <string>
#include <vector>

#include "tests/support/process.hpp"
#include "tests/support/temp_dir.hpp"

namespace trace2d::test {

class RunningPrometheus {
 public:
  // Scrapes 127.0.0.1:`metrics_port` as job "trace2d" every second, with
  // its data and configuration under `dir`; evaluates `rule_files` every
  // second.
  RunningPrometheus(const TempDir& dir, int metrics_port, const std::vector<std::string>& rule_files = {});
  ~RunningPrometheus();
  RunningPrometheus(const RunningPrometheus&) = delete;
  RunningPrometheus& operator=(const RunningPrometheus&) = delete;

  [[nodiscard]] int web_port() const { return m_web_port; }
  // The body of GET /api/v1/query?query=<expr> (JSON), "" when unanswered.
  [[nodiscard]] std::string query(const std::string& expr) const;
  // The body of GET <target> on its web port.
  [[nodiscard]] std::string get(const std::string& target) const;
  [[nodiscard]] std::string log() const { return m_process.err_so_far(); }
  // SIGTERM; its exit code.
  int stop();

 private:
  int m_web_port;
  Process m_process;
  bool m_stopped = false;
};

}  // namespace trace2d::test
