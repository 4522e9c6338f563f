#pragma once
// A small trace2d database built in a temp directory with the daemon's own
// setup code (schema, WAL), filled by plain INSERTs so each test knows every
// row; plus a helper that runs the real trace2ctl binary against it.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "db/sqlite.hpp"
#include "tests/support/process.hpp"
#include "tests/support/temp_dir.hpp"

namespace trace2d::test {

// Runs trace2ctl with `args`; `env` is added to the test's environment.
[[nodiscard]] ProcessResult run_ctl(const std::vector<std::string>& args,
                                    const std::map<std::string, std::string>& env = {});

// Sessions, newest first by first_received (then id):
//   id 5 sid-tie      commit  complete    exit 0  started 5 min ago
//   id 4 sid-nostart  (null)  running     -       no start_time; received 5 min ago
//   id 3 sid-recent   status  complete    exit 1  started 1 h ago, 5 events
//   id 2 sid-fetch    fetch   incomplete  -       started 2 d ago
//   id 1 sid-old      status  complete    exit 0  started 10 d ago
class SampleDatabase {
 public:
  SampleDatabase();

  [[nodiscard]] const std::string& path() const { return m_path; }
  [[nodiscard]] const TempDir& dir() const { return m_dir; }
  // The writer's connection (WAL mode, as the daemon holds it).
  [[nodiscard]] db::Database& writer() { return m_db.value(); }
  // Closes the writer as a stopping daemon does (SQLite removes -wal, -shm).
  void close_writer() { m_db.reset(); }
  // When the sample data considers "now".
  [[nodiscard]] std::int64_t now_us() const { return m_now_us; }
  // `now_us() - ago_us` as the store writes times.
  [[nodiscard]] std::string time_ago(std::int64_t ago_us) const;

  // A stored time ("2026-11-27T10:35:22.123456Z") as a table shows it with
  // --utc ("2026-11-27 10:35:22.123 UTC").
  [[nodiscard]] static std::string shown_utc(const std::string& stored) {
    return stored.substr(0, 10) + " " + stored.substr(11, 12) + " UTC";
  }

  // The value of sid-recent's data event: long, with a newline inside.
  static const std::string k_long_value;

  void insert_session(std::int64_t id, const std::string& sid, const std::string& cmd_name,
                      const std::string& status, const std::string& start_time,
                      const std::string& first_received);

 private:
  void insert_events();

  TempDir m_dir;
  std::string m_path;
  std::int64_t m_now_us;
  std::optional<db::Database> m_db;
};

inline constexpr std::int64_t k_minute_us = 60'000'000;
inline constexpr std::int64_t k_hour_us = 60 * k_minute_us;
inline constexpr std::int64_t k_day_us = 24 * k_hour_us;

// Whole lines of `text`, without their newlines.
[[nodiscard]] std::vector<std::string> split_lines(const std::string& text);

}  // namespace trace2d::test
