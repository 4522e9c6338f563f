#include "ctl/analysis/population_samples.hpp"

#include <algorithm>
#include <string_view>
#include <unordered_map>

#include "ctl/analysis/command_group.hpp"
#include "model/command_identity.hpp"

namespace trace2d::ctl {
namespace {

// Parameters ?1..?3 are window_condition()'s.
constexpr int k_version_parameter = 4;
constexpr int k_repo_parameter = 5;
constexpr int k_repo_path_parameter = 6;

// window_condition()'s rule (a session's start, else when trace2d first saw
// it), with both bounds on the same column in each branch: SQLite then
// reads only the window's range of the start_time index, not everything
// after its start.
std::string population_condition(const Population& population) {
  std::string sql;
  if (population.window.since && population.window.until) {
    sql = " AND ((s.start_time >= ?1 AND s.start_time < ?3)"
          " OR (s.start_time IS NULL AND s.first_received >= ?1 AND s.first_received < ?3))";
    if (population.window.top_level) {
      sql += " AND " + model::top_level_condition("s");
    }
  } else {
    sql = window_condition(population.window);
  }
  if (population.version) {
    sql += " AND s.exe = ?4";
  }
  if (population.repo) {
    // As the listings' --repo: an alias or `git submodule` opens no
    // repository itself, the git under it does.
    const std::string worktree = model::worktree_sql("s");
    sql += " AND (" + model::nickname_sql("s") + " = ?5 OR " + worktree + " = ?5 OR " + worktree + " = ?6 OR substr(" +
           worktree + ", -length(?5) - 1) = '/' || ?5)";
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
// last component of its path. Columns 1..4 of the children's statement.
std::string child_name(const db::Statement& row) {
  const std::string_view child_class = row.column_is_null(1) ? std::string_view("?") : row.column_text(1);
  if (child_class == "hook" && !row.column_is_null(2)) {
    return "hook:" + std::string(row.column_text(2));
  }
  std::string program(row.column_is_null(3) ? std::string_view() : row.column_text(3));
  if (const auto slash = program.rfind('/'); slash != std::string::npos) {
    program.erase(0, slash + 1);
  }
  if (program == "git" && !row.column_is_null(4)) {
    program += " " + std::string(row.column_text(4));
  }
  return std::string(child_class) + ":" + program;
}

// Reading a range of sessions whole beats a lookup per run once the runs
// are at least this share of the range (a lookup costs a descent of the
// B-tree; a row of a range scan, a step).
constexpr std::int64_t k_scan_density = 8;

}  // namespace

CommandSamples load_command_samples(db::Database& db, const Population& population,
                                    std::span<const std::string> only) {
  const std::string sql = "SELECT s.id, s.elapsed, " + std::string(k_command_identity_columns) +
                          " FROM sessions s WHERE s.status = 'complete' AND s.elapsed IS NOT NULL"
                          " AND s.exit_code = 0 AND s.signo IS NULL" +
                          population_condition(population);
  db::Statement stmt = db.prepare(sql);
  Window window = population.window;
  window.cmds.clear();
  bind_window(stmt, window);
  if (population.version) {
    stmt.bind_text(k_version_parameter, *population.version);
  }
  if (population.repo) {
    stmt.bind_text(k_repo_parameter, *population.repo);
    stmt.bind_text(k_repo_path_parameter, population.repo_path.empty() ? *population.repo : population.repo_path);
  }
  static_assert(k_command_identity_column_count == 2, "read every column of k_command_identity_columns");
  CommandSamples samples;
  while (stmt.step()) {
    const CommandIdentity identity{optional_text(stmt, 2), optional_text(stmt, 3)};
    const std::optional<std::string> group = command_group(identity);
    if (!group || !command_selected(identity, *group, only)) {
      continue;
    }
    samples.elapsed[*group].push_back(stmt.column_double(1));
    samples.sessions[*group].push_back(stmt.column_int(0));
    ++samples.runs;
  }
  return samples;
}

std::map<std::string, PartSamples> load_part_samples(db::Database& db,
                                                     const std::unordered_map<std::int64_t, std::string>& runs) {
  std::map<std::string, PartSamples> samples;
  if (runs.empty()) {
    return samples;
  }
  std::vector<std::int64_t> ids;
  ids.reserve(runs.size());
  for (const auto& [id, group] : runs) {
    ids.push_back(id);
  }
  std::sort(ids.begin(), ids.end());
  const bool scan = static_cast<std::int64_t>(ids.size()) * k_scan_density >= ids.back() - ids.front() + 1;
  const std::string where =
      scan ? " WHERE session BETWEEN ?1 AND ?2 AND elapsed IS NOT NULL" : " WHERE session = ?1 AND elapsed IS NOT NULL";
  db::Statement regions =
      db.prepare("SELECT session, category, label, category_text, label_text, elapsed FROM region_store" + where);
  db::Statement children = db.prepare(
      "SELECT session, child_class, hook_name, CASE WHEN json_valid(argv) THEN json_extract(argv, '$[0]') END,"
      " CASE WHEN json_valid(argv) THEN json_extract(argv, '$[1]') END, elapsed FROM child_store" + where);
  NameCache names(db);
  const auto region_name = [&names](const db::Statement& row) {
    return names.text(row, 1, 3) + ":" + names.text(row, 2, 4);
  };
  // Rows come in session order: a run's sums are complete when the next
  // session's rows begin.
  const auto pass = [&](db::Statement& stmt, PartKind kind, const auto& name_of) {
    std::map<std::string, double> sums;
    const std::string* group = nullptr;
    const auto flush = [&] {
      if (group != nullptr) {
        for (const auto& [name, seconds] : sums) {
          samples[*group][{kind, name}].push_back(seconds);
        }
      }
      sums.clear();
    };
    const auto read_rows = [&] {
      std::int64_t current = 0;
      bool first = true;
      while (stmt.step()) {
        const std::int64_t session = stmt.column_int(0);
        if (first || session != current) {
          flush();
          first = false;
          current = session;
          const auto found = runs.find(session);
          group = found == runs.end() ? nullptr : &found->second;
        }
        if (group != nullptr) {
          sums[name_of(stmt)] += stmt.column_double(5);
        }
      }
      flush();
    };
    if (scan) {
      stmt.bind_int(1, ids.front());
      stmt.bind_int(2, ids.back());
      read_rows();
      return;
    }
    for (const std::int64_t id : ids) {
      stmt.reset();
      stmt.bind_int(1, id);
      read_rows();
    }
  };
  pass(regions, PartKind::region, region_name);
  pass(children, PartKind::child, child_name);
  return samples;
}

}  // namespace trace2d::ctl
