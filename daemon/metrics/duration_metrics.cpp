#include "daemon/metrics/duration_metrics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace trace2d::metrics {
namespace {

constexpr std::size_t k_max_label_bytes = 64;
constexpr std::string_view k_other = "other";
// Sessions without peer credentials share one account.
constexpr std::int64_t k_unknown_uid = -1;

// Joined with a byte no bounded label holds.
std::string join(const std::vector<std::string>& labels) {
  std::string key;
  for (const std::string& label : labels) {
    key += label;
    key += '\x1f';
  }
  return key;
}

// "0".."255" as git exits; a signal; anything else (hostile, or a wrapper's
// code) folds, so that exit codes cannot multiply the series.
std::string exit_label(const stitch::SessionRecord& session) {
  if (session.signo && !session.exit_code) {
    return "signal";
  }
  if (session.exit_code && *session.exit_code >= 0 && *session.exit_code <= 255) {
    return std::to_string(*session.exit_code);
  }
  return std::string(k_other);
}

// The repo label of a session: "none" when it named no repository (or no
// nickname), else the nickname or its worktree's base name, bounded.
std::string repo_label(const stitch::SessionRecord& session, RepoLabel kind) {
  if (kind == RepoLabel::nickname) {
    return bounded_label(session.nickname, "none");
  }
  if (!session.worktree) {
    return "none";
  }
  std::string_view path = *session.worktree;
  while (path.size() > 1 && path.back() == '/') {
    path.remove_suffix(1);
  }
  const auto slash = path.rfind('/');
  return bounded_label(std::string(slash == std::string_view::npos ? path : path.substr(slash + 1)), "none");
}

// A duration a histogram can take: a sender may claim any number.
bool usable(const std::optional<double>& seconds) {
  return seconds && std::isfinite(*seconds) && *seconds >= 0;
}

}  // namespace

std::string bounded_label(const std::optional<std::string>& value, std::string_view if_none) {
  if (!value || value->empty()) {
    return std::string(if_none);
  }
  if (value->size() > k_max_label_bytes ||
      !std::all_of(value->begin(), value->end(), [](char c) { return c >= 0x20 && c < 0x7f; })) {
    return std::string(k_other);
  }
  return *value;
}

std::optional<RepoLabel> parse_repo_label(std::string_view text) {
  if (text == "none") {
    return RepoLabel::none;
  }
  if (text == "nickname") {
    return RepoLabel::nickname;
  }
  if (text == "worktree") {
    return RepoLabel::worktree;
  }
  return std::nullopt;
}

std::optional<RegionSelector> parse_region_selector(std::string_view text, std::string& error) {
  const auto slash = text.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == text.size()) {
    error = fmt::format("'{}' is not category/label (e.g. \"pack-objects/write-pack-file\", or "
                        "\"pack-objects/*\" for every label)",
                        text);
    return std::nullopt;
  }
  RegionSelector selector{std::string(text.substr(0, slash)), std::string(text.substr(slash + 1))};
  // Labels are written as they are configured: they must be label values a
  // scrape can carry.
  if (bounded_label(selector.category, "") != selector.category ||
      (selector.label != "*" && bounded_label(selector.label, "") != selector.label)) {
    error = fmt::format("'{}' is longer than {} bytes or not printable ASCII", text, k_max_label_bytes);
    return std::nullopt;
  }
  return selector;
}

DurationMetrics::DurationMetrics(Options options) : m_options(std::move(options)) {
  m_options.max_series = std::max<std::size_t>(m_options.max_series, 1);
  m_commands.names = {"cmd", "exit"};
  if (m_options.repo_label != RepoLabel::none) {
    m_commands.names.emplace_back("repo");
  }
  m_regions.names = {"category", "label"};
  m_counted_sessions.capacity = m_options.remembered;
  m_counted_regions.capacity = m_options.remembered;
}

bool DurationMetrics::Recent::insert(const Key& key) {
  if (!keys.insert(key).second) {
    return false;
  }
  order.push_back(key);
  if (order.size() > capacity) {
    keys.erase(order.front());
    order.pop_front();
  }
  return true;
}

void DurationMetrics::Family::observe(std::vector<std::string> labels, std::int64_t uid, std::size_t max_series,
                                      double value) {
  std::string key = join(labels);
  auto found = index.find(key);
  if (found == index.end()) {
    // A slot is kept for "other" until it exists, so that folding always
    // has a place.
    std::vector<std::string> other(labels.size(), std::string(k_other));
    std::string other_key = join(other);
    const std::size_t room = max_series - (index.count(other_key) == 0 ? 1 : 0);
    const std::size_t per_uid = std::max<std::size_t>(1, max_series - max_series / 4);
    const auto created = created_by_uid.find(uid);
    if (series.size() >= room || (created != created_by_uid.end() && created->second >= per_uid)) {
      ++folded;
      labels = std::move(other);
      key = std::move(other_key);
      found = index.find(key);
    } else {
      ++created_by_uid[uid];
    }
    if (found == index.end()) {
      found = index.emplace(std::move(key), series.size()).first;
      series.push_back(Series{std::move(labels), Histogram(default_duration_bounds().size())});
    }
  }
  series[found->second].histogram.observe(default_duration_bounds(), value);
}

void DurationMetrics::on_changes(const stitch::StitchChanges& changes, std::uint64_t /*number*/) {
  const bool any_session = std::any_of(changes.sessions.begin(), changes.sessions.end(), [](const auto& s) {
    return s.status != stitch::SessionStatus::running;
  });
  if (!any_session && (m_options.regions.empty() || changes.regions.empty())) {
    return;
  }
  std::lock_guard lock(m_mutex);
  for (const stitch::SessionRecord& session : changes.sessions) {
    on_session(session);
  }
  if (!m_options.regions.empty() && !changes.regions.empty()) {
    // A region's session is in the same changes (its event count moved);
    // its uid decides whose share a new label set comes from.
    std::unordered_map<std::int64_t, std::int64_t> uid_of;
    for (const stitch::SessionRecord& session : changes.sessions) {
      uid_of.emplace(session.id, session.peer_uid.value_or(k_unknown_uid));
    }
    for (const stitch::RegionRecord& region : changes.regions) {
      const auto uid = uid_of.find(region.session);
      on_region(region, uid != uid_of.end() ? uid->second : k_unknown_uid);
    }
  }
}

void DurationMetrics::on_session(const stitch::SessionRecord& session) {
  if (session.status == stitch::SessionStatus::running || !m_counted_sessions.insert({session.id, -1})) {
    return;
  }
  if (session.status != stitch::SessionStatus::complete || !usable(session.elapsed)) {
    ++m_untimed;
    return;
  }
  std::vector<std::string> labels{bounded_label(session.cmd_name, "unknown"), exit_label(session)};
  if (m_options.repo_label != RepoLabel::none) {
    labels.push_back(repo_label(session, m_options.repo_label));
  }
  m_commands.observe(std::move(labels), session.peer_uid.value_or(k_unknown_uid), m_options.max_series,
                     *session.elapsed);
}

const RegionSelector* DurationMetrics::selected(const stitch::RegionRecord& region) const {
  if (!region.category || !region.label) {
    return nullptr;
  }
  for (const RegionSelector& selector : m_options.regions) {
    if (selector.category == *region.category && (selector.label == "*" || selector.label == *region.label)) {
      return &selector;
    }
  }
  return nullptr;
}

void DurationMetrics::on_region(const stitch::RegionRecord& region, std::int64_t uid) {
  // Open regions come back once they are left; only the left ones count.
  if (!usable(region.elapsed) || selected(region) == nullptr ||
      !m_counted_regions.insert({region.session, region.seq})) {
    return;
  }
  m_regions.observe({*region.category, bounded_label(region.label, "")}, uid, m_options.max_series,
                    *region.elapsed);
}

void DurationMetrics::write_figures(Exposition& out) const {
  std::lock_guard lock(m_mutex);
  std::vector<Label> labels;
  const auto histograms = [&](const Family& family) {
    for (const Series& series : family.series) {
      labels.clear();
      for (std::size_t i = 0; i < family.names.size(); ++i) {
        labels.push_back({family.names[i], series.labels[i]});
      }
      out.histogram(labels, default_duration_bounds(), series.histogram);
    }
  };
  out.family("trace2d_git_command_duration_seconds", Type::histogram,
             m_commands.names.size() > 2 ? "Wall time of finished git processes (the exit or atexit event's t_abs), by "
                                           "cmd_name, exit code and repository."
                                         : "Wall time of finished git processes (the exit or atexit event's t_abs), by "
                                           "cmd_name and exit code.");
  histograms(m_commands);
  out.family("trace2d_git_commands_untimed", Type::counter,
             "Git processes that ended without a duration (cut off: incomplete), not in the histogram.");
  out.value(static_cast<double>(m_untimed));
  out.family("trace2d_git_region_duration_seconds", Type::histogram,
             "Wall time of the regions named in metrics.regions, by category and label.");
  histograms(m_regions);
  out.family("trace2d_metrics_folded_observations", Type::counter,
             "Observations put under the label value other because their family had no room for more label sets.");
  out.value({{"family", "trace2d_git_command_duration_seconds"}}, static_cast<double>(m_commands.folded));
  out.value({{"family", "trace2d_git_region_duration_seconds"}}, static_cast<double>(m_regions.folded));
}

}  // namespace trace2d::metrics
