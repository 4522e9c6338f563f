#include "tests/ctl/sample_database.hpp"

#include "db/database_setup.hpp"
#include "proto/timestamp.hpp"

namespace trace2d::test {
namespace {

constexpr std::int64_t k_main_thread = 100;  // names.id of "main"; git's own names stop at 30

}  // namespace

ProcessResult run_ctl(const std::vector<std::string>& args,
                      const std::map<std::string, std::string>& env) {
  ProcessSpec spec;
  spec.argv.emplace_back(TRACE2CTL_BIN);
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.env = env;
  return run_process(spec, std::chrono::seconds(30));
}

const std::string SampleDatabase::k_long_value =
    "first line\nsecond line " + std::string(150, 'x') + " end";

SampleDatabase::SampleDatabase()
    : m_path(m_dir.file("trace2d.db")),
      m_now_us(proto::unix_now_us()),
      m_db(db::open_for_writing(m_path)) {
  insert_session(1, "sid-old", "status", "complete", time_ago(10 * k_day_us),
                 time_ago(10 * k_day_us));
  insert_session(2, "sid-fetch", "fetch", "incomplete", time_ago(2 * k_day_us),
                 time_ago(2 * k_day_us));
  insert_session(3, "sid-recent", "status", "complete", time_ago(k_hour_us), time_ago(k_hour_us));
  insert_session(4, "sid-nostart", "", "running", "", time_ago(5 * k_minute_us));
  insert_session(5, "sid-tie", "commit", "complete", time_ago(5 * k_minute_us),
                 time_ago(5 * k_minute_us));
  writer().exec(
      "UPDATE sessions SET exit_code = 0, elapsed = 0.25 WHERE sid IN ('sid-old', 'sid-tie');"
      "UPDATE sessions SET exit_code = 1, elapsed = 0.0125, event_count = 5,"
      "  argv = '[\"git\",\"status\"]' WHERE sid = 'sid-recent';");
  insert_events();
}

std::string SampleDatabase::time_ago(std::int64_t ago_us) const {
  return proto::format_utc_timestamp(m_now_us - ago_us);
}

void SampleDatabase::insert_session(std::int64_t id, const std::string& sid,
                                    const std::string& cmd_name, const std::string& status,
                                    const std::string& start_time,
                                    const std::string& first_received) {
  db::Statement stmt = writer().prepare(
      "INSERT INTO sessions (sid, id, root_sid, depth, cmd_name, start_time, status, source,"
      "                      first_received, last_received, time_base_us)"
      " VALUES (?, ?, ?, 0, ?, ?, ?, 'stream', ?, ?, ?)");
  stmt.bind_text(1, sid);
  stmt.bind_int(2, id);
  stmt.bind_text(3, sid);
  stmt.bind_text_or_null(4, cmd_name);
  stmt.bind_text_or_null(5, start_time);
  stmt.bind_text(6, status);
  stmt.bind_text(7, first_received);
  stmt.bind_text(8, first_received);
  const auto base = proto::parse_utc_timestamp(start_time.empty() ? first_received : start_time);
  stmt.bind(9, base);
  stmt.run();
}

void SampleDatabase::insert_events() {
  writer().exec("INSERT INTO names (id, text) VALUES (" + std::to_string(k_main_thread) +
                ", 'main')");
  db::Statement stmt = writer().prepare(
      "INSERT INTO event_store (session, seq, type, thread, time_us, body)"
      " VALUES (3, ?, ?, ?, ?, ?)");
  struct EventSpec {
    std::int64_t seq;
    std::int64_t type;  // names.id: 1 version, 3 start, 24 data, 4 exit
    std::int64_t time_us;
    std::string body;   // the members after event/sid/thread/time, with a leading comma
  };
  const std::string quoted_value =
      R"("first line\nsecond line )" + std::string(150, 'x') + R"( end")";
  const EventSpec events[] = {
      {0, 1, 0, R"(,"evt":"3","exe":"2.43.0")"},
      {1, 3, 1000, R"(,"t_abs":0.001,"argv":["git","status"])"},
      {2, 24, 2000,
       R"(,"t_abs":0.002,"t_rel":0.002,"nesting":1,"category":"status","key":"note","value":)" +
           quoted_value},
      {3, 4, 12500, R"(,"t_abs":0.0125,"code":1)"},
  };
  for (const EventSpec& e : events) {
    stmt.bind_int(1, e.seq);
    stmt.bind_int(2, e.type);
    stmt.bind_int(3, k_main_thread);
    stmt.bind_int(4, e.time_us);
    stmt.bind_text(5, e.body);
    stmt.run();
  }
  // An event stored whole (the encoder's fallback): no thread or time columns.
  writer().exec(
      "INSERT INTO event_store (session, seq, type, body) VALUES (3, 4, 30, "
      "'{\"event\":\"printf\",\"sid\":\"sid-recent\",\"thread\":\"main\","
      "\"time\":\"2026-11-21T10:00:00.000000Z\",\"msg\":\"hello\"}')");
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    if (end == std::string::npos) {
      lines.push_back(text.substr(start));
      break;
    }
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

}  // namespace trace2d::test
