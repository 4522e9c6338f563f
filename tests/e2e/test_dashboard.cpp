// The shipped Grafana dashboard and Prometheus alert rules
// (config/grafana, config/prometheus) against the real thing: a real
// Prometheus scrapes a real trace2d (metrics on, exporting to a collector
// that accepts everything) while the real git fetches and fails; then every
// query of the dashboard, as Grafana would send it, returns data, and every
// alert rule evaluates without error and stays quiet on this healthy host.

#include <gtest/gtest.h>

#include <simdjson.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "tests/e2e/daemon_fixture.hpp"
#include "tests/e2e/http_loopback.hpp"
#include "tests/e2e/prometheus_server.hpp"

namespace trace2d::test {
namespace {

const std::string k_dashboard = std::string(TRACE2D_SOURCE_DIR) + "/config/grafana/trace2d-dashboard.json";
const std::string k_alert_rules = std::string(TRACE2D_SOURCE_DIR) + "/config/prometheus/trace2d-alerts.yml";

struct PanelQuery {
  std::string panel;
  std::string expr;
};

// Every target of every panel (rows included), as written in the file.
std::vector<PanelQuery> dashboard_queries(simdjson::dom::element dashboard) {
  std::vector<PanelQuery> queries;
  const auto collect = [&](auto&& self, simdjson::dom::array panels) -> void {
    for (simdjson::dom::element panel : panels) {
      simdjson::dom::array nested;
      if (panel["panels"].get(nested) == simdjson::SUCCESS) {
        self(self, nested);
      }
      simdjson::dom::array targets;
      if (panel["targets"].get(targets) != simdjson::SUCCESS) {
        continue;
      }
      for (simdjson::dom::element target : targets) {
        queries.push_back({std::string(panel["title"].get_string().value()),
                           std::string(target["expr"].get_string().value())});
      }
    }
  };
  collect(collect, dashboard["panels"].get_array().value());
  return queries;
}

// What Grafana puts in place of its variables: every job and instance
// ("All"), and a rate window of a minute (the test's scrapes are a second
// apart, so a minute holds every sample of the run).
std::string as_grafana_sends(std::string expr) {
  const std::map<std::string, std::string> variables{
      {"$__rate_interval", "1m"}, {"$instance", ".*"}, {"$job", ".*"}};
  for (const auto& [name, value] : variables) {
    for (std::size_t at = expr.find(name); at != std::string::npos; at = expr.find(name, at + value.size())) {
      expr.replace(at, name.size(), value);
    }
  }
  return expr;
}

// The finite sample values of a query's answer; "error: ..." entries for
// an answer that is not a success.
std::vector<std::string> finite_values(const std::string& answer, std::string& error) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (parser.parse(answer).get(doc) != simdjson::SUCCESS) {
    error = "not JSON: " + answer;
    return {};
  }
  std::string_view status;
  if (doc["status"].get(status) != simdjson::SUCCESS || status != "success") {
    error = answer;
    return {};
  }
  std::vector<std::string> values;
  simdjson::dom::array result;
  if (doc["data"]["result"].get(result) != simdjson::SUCCESS) {
    error = "no result: " + answer;
    return {};
  }
  for (simdjson::dom::element series : result) {
    std::string_view value;
    if (series["value"].at(1).get(value) == simdjson::SUCCESS && std::isfinite(std::stod(std::string(value)))) {
      values.emplace_back(value);
    }
  }
  return values;
}

TEST(Dashboard, EveryQueryReturnsDataAndEveryAlertRuleEvaluatesAfterRealGit) {
  TempDir dir;
  AcceptingHttpServer collector;
  RunningDaemon daemon(dir, {"--metrics-listen", "127.0.0.1:0", "--metrics-region", "pack-objects/*",
                             "--metrics-repository-label", "worktree", "--otlp-endpoint", collector.endpoint()});
  const int metrics = metrics_port(daemon);
  ASSERT_NE(metrics, 0);
  RunningPrometheus prometheus(dir, metrics, {k_alert_rules});
  ASSERT_TRUE(wait_until([&] { return prometheus.query(R"(up{job="trace2d"} == 1)").find(R"("value")") != std::string::npos; },
                         std::chrono::seconds(20)))
      << prometheus.log();

  // Git runs while Prometheus watches: a fetch (upload-pack, pack-objects
  // and its regions beneath) and a command that fails, twice. A series
  // first scraped at 1 has no rate until it grows (Prometheus cannot tell
  // when it went from nothing to 1), so the second round is what a rate
  // sees, as on a host where the commands ran before.
  const std::string clone = clone_behind(dir);
  const std::map<std::string, std::string> env{{"GIT_TRACE2_EVENT", daemon.git_target()}};
  for (int round = 1; round <= 2; ++round) {
    if (round == 2) {
      ASSERT_EQ(run_git(dir.file("upstream"), {"commit", "--allow-empty", "-qm", "more"}).exit_code, 0);
    }
    ASSERT_EQ(run_git(clone, {"fetch", "--no-auto-gc", "origin"}, env).exit_code, 0);
    ASSERT_EQ(run_git(clone, {"rev-parse", "--verify", "no-such-ref"}, env).exit_code, 128);
    // Scraped, and delivered by the exporter (the last-success gauge).
    const std::string count = std::to_string(round);
    ASSERT_TRUE(wait_until(
        [&] {
          return prometheus.query(R"(trace2d_git_command_duration_seconds_count{cmd="rev-parse",exit="128"} == )" + count)
                         .find(R"("value")") != std::string::npos &&
                 prometheus.query(R"(trace2d_git_region_duration_seconds_count{label="write-pack-file"} == )" + count)
                         .find(R"("value")") != std::string::npos &&
                 prometheus.query("trace2d_otlp_last_success_timestamp_seconds").find(R"("value")") !=
                     std::string::npos;
        },
        std::chrono::seconds(30)))
        << prometheus.log();
  }
  std::this_thread::sleep_for(std::chrono::seconds(3));  // a few scrapes more: rates over two samples and more

  simdjson::dom::parser parser;
  simdjson::dom::element dashboard;
  ASSERT_EQ(parser.load(k_dashboard).get(dashboard), simdjson::SUCCESS) << k_dashboard;
  const std::vector<PanelQuery> queries = dashboard_queries(dashboard);
  ASSERT_GE(queries.size(), 30U);
  for (const PanelQuery& q : queries) {
    std::string error;
    const std::vector<std::string> values = finite_values(prometheus.query(as_grafana_sends(q.expr)), error);
    EXPECT_EQ(error, "") << q.panel << ": " << q.expr;
    EXPECT_FALSE(values.empty()) << q.panel << ": no finite value for " << as_grafana_sends(q.expr);
  }
  // The variables' choices: label_values(trace2d_build_info, job|instance).
  const std::string jobs = prometheus.get("/api/v1/label/job/values?match[]=trace2d_build_info");
  EXPECT_NE(jobs.find(R"("trace2d")"), std::string::npos) << jobs;
  const std::string instances =
      prometheus.get("/api/v1/label/instance/values?match[]=" + url_encode(R"(trace2d_build_info{job=~".*"})"));
  EXPECT_NE(instances.find("127.0.0.1:" + std::to_string(metrics)), std::string::npos) << instances;
  // The restart annotation is a valid query (it has no restart to show).
  std::string error;
  finite_values(prometheus.query(as_grafana_sends(std::string(
                    dashboard["annotations"]["list"].at(0)["expr"].get_string().value()))),
                error);
  EXPECT_EQ(error, "");

  // Every rule loaded and evaluated without error; none fires or waits to.
  simdjson::dom::parser rules_parser;
  const std::string rules_answer = prometheus.get("/api/v1/rules");
  simdjson::dom::element rules;
  ASSERT_EQ(rules_parser.parse(rules_answer).get(rules), simdjson::SUCCESS) << rules_answer;
  std::size_t evaluated = 0;
  for (simdjson::dom::element group : rules["data"]["groups"].get_array()) {
    for (simdjson::dom::element rule : group["rules"].get_array()) {
      const std::string_view name = rule["name"].get_string().value();
      EXPECT_EQ(std::string(rule["health"].get_string().value()), "ok") << name << ": " << rules_answer;
      EXPECT_EQ(std::string(rule["state"].get_string().value()), "inactive") << name << ": " << rules_answer;
      evaluated += rule["health"].get_string().value() == "ok" ? 1 : 0;
    }
  }
  EXPECT_EQ(evaluated, 11U) << rules_answer;
  EXPECT_EQ(prometheus.stop(), 0);
  EXPECT_EQ(daemon.stop().exit_code, 0);
}

}  // namespace
}  // namespace trace2d::test
