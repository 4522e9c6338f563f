#include "ctl/analysis/population_comparison.hpp"

#include <algorithm>
#include <iterator>
#include <set>
#include <stdexcept>
#include <tuple>
#include <unordered_map>

namespace trace2d::ctl {

std::string_view row_kind_name(RowKind kind) {
  switch (kind) {
    case RowKind::command: return "command";
    case RowKind::region: return "region";
    case RowKind::child: return "child";
  }
  throw std::logic_error("unknown row kind");
}

namespace {

template <typename Key>
std::vector<double> samples_of(const std::map<Key, std::vector<double>>& samples, const Key& key) {
  const auto found = samples.find(key);
  return found == samples.end() ? std::vector<double>{} : found->second;
}

template <typename Key>
std::set<Key> keys_of(const std::map<Key, std::vector<double>>& a, const std::map<Key, std::vector<double>>& b) {
  std::set<Key> keys;
  for (const auto& [key, values] : a) {
    keys.insert(key);
  }
  for (const auto& [key, values] : b) {
    keys.insert(key);
  }
  return keys;
}

std::span<const std::int64_t> sessions_of(const CommandSamples& samples, const std::string& group) {
  const auto found = samples.sessions.find(group);
  return found == samples.sessions.end() ? std::span<const std::int64_t>{} : std::span(found->second);
}

bool look_into(const SampleComparison& command, DetailScope scope) {
  switch (scope) {
    case DetailScope::changed:
      return command.verdict == Verdict::slower || command.verdict == Verdict::faster;
    case DetailScope::all: return command.test.has_value();
    case DetailScope::none: return false;
  }
  return false;
}

// The display order of rows among their peers.
std::tuple<int, long long, long long, int, const std::string&, const std::string&> order_key(const CompareRow& row) {
  return {static_cast<int>(row.comparison.verdict), -static_cast<long long>(row.comparison.target.count),
          -static_cast<long long>(row.comparison.baseline.count), static_cast<int>(row.kind), row.name, row.command};
}

void sort_rows(std::vector<CompareRow>& rows) {
  std::sort(rows.begin(), rows.end(), [](const CompareRow& a, const CompareRow& b) { return order_key(a) < order_key(b); });
}

}  // namespace

CompareResult compare_populations(db::Database& db, const CompareRequest& request) {
  const CommandSamples baseline = load_command_samples(db, request.baseline, request.commands);
  const CommandSamples target = load_command_samples(db, request.target, request.commands);
  CompareResult result;
  result.baseline_runs = baseline.runs;
  result.target_runs = target.runs;

  std::vector<CompareRow> commands;
  for (const std::string& group : keys_of(baseline.elapsed, target.elapsed)) {
    commands.push_back({RowKind::command, group, {},
                        compare_samples(samples_of(baseline.elapsed, group), samples_of(target.elapsed, group),
                                        request.thresholds)});
  }
  std::vector<SampleComparison*> family;
  for (CompareRow& row : commands) {
    family.push_back(&row.comparison);
  }
  judge(family, request.thresholds);
  sort_rows(commands);

  // Every command's parts are one family, judged before any is placed.
  std::unordered_map<std::int64_t, std::string> baseline_runs;
  std::unordered_map<std::int64_t, std::string> target_runs;
  for (const CompareRow& command : commands) {
    if (!look_into(command.comparison, request.detail)) {
      continue;
    }
    for (const std::int64_t id : sessions_of(baseline, command.command)) {
      baseline_runs.emplace(id, command.command);
    }
    for (const std::int64_t id : sessions_of(target, command.command)) {
      target_runs.emplace(id, command.command);
    }
  }
  const std::map<std::string, PartSamples> before_parts = load_part_samples(db, baseline_runs);
  const std::map<std::string, PartSamples> after_parts = load_part_samples(db, target_runs);
  const PartSamples none;
  const auto parts_of = [&none](const std::map<std::string, PartSamples>& all, const std::string& group) -> const PartSamples& {
    const auto found = all.find(group);
    return found == all.end() ? none : found->second;
  };
  std::vector<std::vector<CompareRow>> parts(commands.size());
  family.clear();
  for (std::size_t c = 0; c < commands.size(); ++c) {
    const CompareRow& command = commands[c];
    if (!look_into(command.comparison, request.detail)) {
      continue;
    }
    const PartSamples& before = parts_of(before_parts, command.command);
    const PartSamples& after = parts_of(after_parts, command.command);
    for (const PartKey& key : keys_of(before, after)) {
      parts[c].push_back({key.first == PartKind::region ? RowKind::region : RowKind::child, command.command,
                          key.second,
                          compare_samples(samples_of(before, key), samples_of(after, key), request.thresholds)});
    }
  }
  for (auto& rows : parts) {
    for (CompareRow& row : rows) {
      family.push_back(&row.comparison);
    }
  }
  judge(family, request.thresholds);

  for (std::size_t c = 0; c < commands.size(); ++c) {
    result.rows.push_back(std::move(commands[c]));
    sort_rows(parts[c]);
    std::move(parts[c].begin(), parts[c].end(), std::back_inserter(result.rows));
  }
  return result;
}

}  // namespace trace2d::ctl
