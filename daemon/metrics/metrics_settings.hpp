#pragma once
// The [metrics] settings (docs/metrics.md): where /metrics is served ("":
// off; a port alone means loopback), the regions timed as histograms, and
// the command histogram's repo label, as the configuration writes them;
// duration_options() and listen_address() turn them into what the
// histograms and the server take.

#include <fmt/format.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "daemon/metrics/duration_metrics.hpp"
#include "daemon/metrics/metrics_server.hpp"
#include "daemon/settings/setting.hpp"

namespace trace2d::metrics {

struct MetricsSettings {
  std::string listen;
  std::vector<std::string> regions;       // "category/label", "category/*"
  std::string repository_label = "none";  // or "nickname", "worktree"

  [[nodiscard]] bool enabled() const { return !listen.empty(); }

  // The histograms' options; the checks below must have passed (a region
  // that is not category/label throws std::invalid_argument).
  [[nodiscard]] DurationMetrics::Options duration_options() const {
    DurationMetrics::Options o;
    o.repo_label = parse_repo_label(repository_label).value_or(RepoLabel::none);
    for (const std::string& region : regions) {
      std::string error;
      auto selector = parse_region_selector(region, error);
      if (!selector) {
        throw std::invalid_argument("metrics.regions: " + error);
      }
      o.regions.push_back(std::move(*selector));
    }
    return o;
  }

  static std::string listen_problem(const std::string& address) {
    std::string error;
    if (address.empty() || parse_listen_address(address, error)) {
      return {};
    }
    return fmt::format("is not usable: {}", error);
  }
  static std::string repository_label_problem(const std::string& label) {
    return parse_repo_label(label) ? std::string() : fmt::format("must be none, nickname or worktree; not '{}'", label);
  }
  static std::string region_problem(const std::string& region) {
    std::string error;
    return parse_region_selector(region, error) ? std::string() : fmt::format("lists {}", error);
  }

  // The settings that fill these ([metrics], docs/configuration.md);
  // `Self` is MetricsSettings or const MetricsSettings.
  template <typename Self, typename Visitor>
  static void visit_settings(Self& o, Visitor& v) {
    using settings::Key;
    v.text(
        Key{"metrics", "listen", "--metrics-listen", "ADDR", "Serve /metrics here (a port alone: loopback; \"\": off)"},
        o.listen, listen_problem);
    v.list(Key{"metrics", "regions", "--metrics-region", "CAT/LABEL",
               "Regions timed as histograms, category/label or category/* (repeatable)"},
           o.regions, region_problem);
    v.text(Key{"metrics", "repository_label", "--metrics-repository-label", "KIND",
               "A repo label on the command histogram: none, nickname, or worktree (its base name)"},
           o.repository_label, repository_label_problem);
  }
};

}  // namespace trace2d::metrics
