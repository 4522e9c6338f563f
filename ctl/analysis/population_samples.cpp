#include "ctl/analysis/population_samples.hpp"

#include <algorithm>
#include <string_view>
#include <unordered_map>

#include "ctl/analysis/command_group.hpp"

namespace trace2d::ctl {
namespace {

// Parameters ?1..?3 are window_condition()'s.
constexpr int k_version_parameter = 4;
constexpr int k_repo_parameter = 5;

// window_condition()'s rule (a session's start, else when trace2d first saw
// it), with both bounds on the same column in each branch: SQLite then
// reads only the window's range of the start_time index, not everything
// after its start.
std::string population_condition(const Population& population) {
  std::string sql;
  if (population.window.since && population.window.until) {
    sql = " AND ((s.start_time >= ?1 AND s.start_time < ?3)"
          " OR (s.start_time IS NULL AND s.first_received >= ?1 AND s.first_received < ?3))";
  } else {
    sql = window_condition(population.window);
  }
  if (population.version) {
    sql += " AND s.exe = ?4";
  }
  if (population.repo) {
    sql += " AND (s.worktree = ?5 OR s.nickname = ?5)";
  }
  return sql;
}

std::optional<std::string_view> optional_text(const db::Statement& stmt, int column) {
  if (stmt.column_is_null(column)) {
    return std::nullopt;
  }
  return stmt.column_text(column);
}

// Names of regions are ids into `names`, looked up once each.
class NameCache {
 public:
  explicit NameCache(db::Database& db) : m_lookup(db.prepare("SELECT text FROM names WHERE id = ?1")) {}

  std::string text(const db::Statement& row, int id_column, int text_column) {
    if (row.column_is_null(id_column)) {
      return std::string(row.column_is_null(text_column) ? std::string_view() : row.column_text(text_column));
    }
    const std::int64_t id = row.column_int(id_column);
    const auto found = m_names.find(id);
    if (found != m_names.end()) {
      return found->second;
    }
    m_lookup.reset();
    m_lookup.bind_int(1, id);
    std::string text = m_lookup.step() ? std::string(m_lookup.column_text(0)) : std::string();
    m_names.emplace(id, text);
    return text;
  }

 private:
  db::Statement m_lookup;
  std::unordered_map<std::int64_t, std::string> m_names;
};

// "hook:pre-commit"; else the class and the program ("?:git maintenance",
// "transport/ssh:ssh"): a git child by its subcommand, another by the
// last component of its path.
std::string child_name(const db::Statement& row) {
  const std::string_view child_class = row.column_is_null(0) ? std::string_view("?") : row.column_text(0);
  if (child_class == "hook" && !row.column_is_null(1)) {
    return "hook:" + std::string(row.column_text(1));
  }
  std::string program(row.column_is_null(2) ? std::string_view() : row.column_text(2));
  if (const auto slash = program.rfind('/'); slash != std::string::npos) {
    program.erase(0, slash + 1);
  }
  if (program == "git" && !row.column_is_null(3)) {
    program += " " + std::string(row.column_text(3));
  }
  return std::string(child_class) + ":" + program;
}

}  // namespace

CommandSamples load_command_samples(db::Database& db, const Population& population,
                                    std::span<const std::string> only) {
  const std::string sql = "SELECT s.id, s.elapsed, " + std::string(k_command_identity_columns) +
                          " FROM sessions s WHERE s.status = 'complete' AND s.elapsed IS NOT NULL"
                          " AND s.exit_code = 0 AND s.signo IS NULL" +
                          population_condition(population);
  db::Statement stmt = db.prepare(sql);
  Window window = population.window;
  window.cmd.clear();
  bind_window(stmt, window);
  if (population.version) {
    stmt.bind_text(k_version_parameter, *population.version);
  }
  if (population.repo) {
    stmt.bind_text(k_repo_parameter, *population.repo);
  }
  static_assert(k_command_identity_column_count == 1, "read every column of k_command_identity_columns");
  CommandSamples samples;
  while (stmt.step()) {
    const std::optional<std::string> group = command_group(CommandIdentity{optional_text(stmt, 2)});
    if (!group || (!only.empty() && std::find(only.begin(), only.end(), *group) == only.end())) {
      continue;
    }
    samples.elapsed[*group].push_back(stmt.column_double(1));
    samples.sessions[*group].push_back(stmt.column_int(0));
    ++samples.runs;
  }
  return samples;
}

PartSamples load_part_samples(db::Database& db, std::span<const std::int64_t> sessions) {
  db::Statement regions = db.prepare(
      "SELECT category, label, category_text, label_text, elapsed FROM region_store"
      " WHERE session = ?1 AND elapsed IS NOT NULL");
  db::Statement children = db.prepare(
      "SELECT child_class, hook_name, CASE WHEN json_valid(argv) THEN json_extract(argv, '$[0]') END,"
      " CASE WHEN json_valid(argv) THEN json_extract(argv, '$[1]') END, elapsed"
      " FROM child_store WHERE session = ?1 AND elapsed IS NOT NULL");
  NameCache names(db);
  PartSamples samples;
  std::map<PartKey, double> run;  // this run's sums
  for (const std::int64_t session : sessions) {
    run.clear();
    regions.reset();
    regions.bind_int(1, session);
    while (regions.step()) {
      const std::string name = names.text(regions, 0, 2) + ":" + names.text(regions, 1, 3);
      run[{PartKind::region, name}] += regions.column_double(4);
    }
    children.reset();
    children.bind_int(1, session);
    while (children.step()) {
      run[{PartKind::child, child_name(children)}] += children.column_double(4);
    }
    for (const auto& [key, seconds] : run) {
      samples[key].push_back(seconds);
    }
  }
  return samples;
}

}  // namespace trace2d::ctl
