#include "tests/e2e/prometheus_server.hpp"

#include <signal.h>

#include <chrono>
#include <fstream>

#include "tests/e2e/http_loopback.hpp"

namespace trace2d::test {
namespace {

ProcessSpec prometheus_spec(const TempDir& dir, int metrics_port, int web_port,
                            const std::vector<std::string>& rule_files) {
  const std::string config = dir.file("prometheus.yml");
  std::ofstream out(config);
  out << "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n";
  if (!rule_files.empty()) {
    out << "rule_files:\n";
    for (const std::string& file : rule_files) {
      out << "  - '" << file << "'\n";
    }
  }
  out << "scrape_configs:\n  - job_name: trace2d\n    static_configs:\n"
      << "      - targets: ['127.0.0.1:" << metrics_port << "']\n";
  out.close();
  ProcessSpec spec;
  spec.argv = {"prometheus",
               "--config.file=" + config,
               "--storage.tsdb.path=" + dir.file("tsdb"),
               "--web.listen-address=127.0.0.1:" + std::to_string(web_port),
               "--log.level=warn"};
  return spec;
}

}  // namespace

RunningPrometheus::RunningPrometheus(const TempDir& dir, int metrics_port,
                                     const std::vector<std::string>& rule_files)
    : m_web_port(free_port()), m_process(prometheus_spec(dir, metrics_port, m_web_port, rule_files)) {}

RunningPrometheus::~RunningPrometheus() {
  if (!m_stopped) {
    stop();
  }
}

std::string RunningPrometheus::query(const std::string& expr) const {
  return get("/api/v1/query?query=" + url_encode(expr));
}

std::string RunningPrometheus::get(const std::string& target) const { return http_get(m_web_port, target).body; }

int RunningPrometheus::stop() {
  m_stopped = true;
  m_process.signal(SIGTERM);
  return m_process.wait(std::chrono::seconds(10)).exit_code;
}

}  // namespace trace2d::test
