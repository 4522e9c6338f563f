#include "model/full_loader.hpp"

#include <simdjson.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "db/event_codec.hpp"
#include "db/event_types.hpp"
#include "model/event_values.hpp"
#include "model/row_readers.hpp"
#include "proto/event.hpp"

namespace trace2d::model::loading {
namespace {

// The regions of the sessions loaded in full, from region_store: the
// regions view looks up the session and three names for every row; here
// the names come from a cache (FullLoader::name). As the view gives them:
// a name the names table had no room for is in the row's *_text column.
// By session id ({id}), which the session's row gave: through the SID each
// session cost two more seeks (its SID's index, its row) in every query.
constexpr std::string_view k_region_rows_sql = R"sql(
SELECT r.seq, r.leave_seq, r.parent_seq & 4294967295, r.thread, r.nesting, r.category, r.label, r.msg, r.repo,
       r.t_start, r.elapsed, r.thread_text, r.category_text, r.label_text, r.session
  FROM region_store r
 WHERE r.session {id} AND r.seq < ?2
 ORDER BY r.session, r.seq
)sql";

// The children of the sessions loaded in full, by session id, from
// child_store: the children view found each row's session again by its SID
// (for the thread's event row) and its thread's name by a lookup, which
// come here from the row and FullLoader's name cache. child_sid is the
// view's expression, as it is (docs/schema.md, `children`).
constexpr std::string_view k_child_rows_sql = R"sql(
SELECT c.child_id, c.start_seq, e.thread, c.child_class, c.hook_name, c.argv, c.use_shell, c.pid, c.code,
       c.ready, c.t_start, c.elapsed,
       COALESCE(
         CASE WHEN c.pid > 0 THEN
           (SELECT k.sid FROM sessions k
             WHERE k.parent_sid = s.sid AND k.sid_pid = c.pid AND k.peer_uid IS s.peer_uid) END,
         (SELECT k.sid FROM sessions k
           WHERE k.parent_sid = s.sid AND k.argv_key = c.argv_key AND k.peer_uid IS s.peer_uid
             AND (c.start_us IS NULL OR k.process_start_us >= c.start_us)
             AND (c.end_us IS NULL OR k.process_start_us <= c.end_us)
           ORDER BY k.process_start_us LIMIT 1)),
       c.session
  FROM child_store c
  JOIN sessions s ON s.id = c.session
  LEFT JOIN event_store e ON e.session = c.session AND e.seq = c.start_seq
 WHERE c.session {id} AND coalesce(c.start_seq, c.end_seq, -1) < ?2
 ORDER BY c.session, c.child_id
)sql";

// Those events, read once (the views each read every event of the session
// again) and their text parsed once with simdjson rather than by the views'
// json_extract() calls. Their threads' names come from FullLoader's cache,
// not a lookup per row.
constexpr std::string_view k_events_sql = R"sql(
SELECT e.seq, e.type, e.time_us, e.body, e.thread, {leading_columns}, e.session
  FROM event_store e
 WHERE e.session {id} AND e.seq < ?2
   AND {scanned_types}
 ORDER BY e.session, e.seq
)sql";

// The time of each session's last event (relative to its time base), for
// those without `elapsed`.
constexpr std::string_view k_last_event_sql = R"sql(
SELECT max(e.time_us), e.session
  FROM event_store e
 WHERE e.session {id}
 GROUP BY e.session
)sql";

// The event types the scan reads (k_scanned_kinds), by their stored ids.
using proto::EventKind;
constexpr std::int64_t k_error = db::stored_type(EventKind::error);
constexpr std::int64_t k_cmd_ancestry = db::stored_type(EventKind::cmd_ancestry);
constexpr std::int64_t k_alias = db::stored_type(EventKind::alias);
constexpr std::int64_t k_thread_start = db::stored_type(EventKind::thread_start);
constexpr std::int64_t k_thread_exit = db::stored_type(EventKind::thread_exit);
constexpr std::int64_t k_exec = db::stored_type(EventKind::exec);
constexpr std::int64_t k_exec_result = db::stored_type(EventKind::exec_result);
constexpr std::int64_t k_def_param = db::stored_type(EventKind::def_param);
constexpr std::int64_t k_def_repo = db::stored_type(EventKind::def_repo);
constexpr std::int64_t k_data = db::stored_type(EventKind::data);
constexpr std::int64_t k_data_json = db::stored_type(EventKind::data_json);
constexpr std::int64_t k_timer = db::stored_type(EventKind::timer);
constexpr std::int64_t k_th_timer = db::stored_type(EventKind::th_timer);
constexpr std::int64_t k_counter = db::stored_type(EventKind::counter);
constexpr std::int64_t k_th_counter = db::stored_type(EventKind::th_counter);
constexpr std::int64_t k_printf = db::stored_type(EventKind::printf);

// What the scan of one session's events gathers before it is complete.
struct EventScan {
  std::vector<ExecResult> exec_results;
  // thread_starts: their thread's id; and the first thread_exit's t_rel of each thread.
  std::vector<std::optional<std::int64_t>> thread_ids;
  std::unordered_map<std::int64_t, std::optional<double>> thread_exits;
};

// An annotation's members every kind has: its thread, and the category and
// name (`name_key`: "key" for data, "name" for counters and timers).
Annotation& add_annotation(std::vector<Annotation>& annotations, const char* kind,
                           std::optional<std::string_view> thread, const StoredEventMembers& event,
                           std::string_view name_key) {
  Annotation& a = annotations.emplace_back();
  a.kind = kind;
  a.thread = thread ? std::string(*thread) : std::string();
  a.category = text_or_empty(event["category"]);
  a.name = text_or_empty(event[name_key]);
  return a;
}

// data and data_json as the data view and the annotations query gave them:
// `value_type` 'json' for an array or object (or a data_json's value that
// is not a string), 'integer', else 'string', which is JSON-quoted.
void add_data(std::int64_t type, const StoredEventMembers& event, std::optional<std::string_view> thread,
              std::vector<Annotation>& annotations, simdjson::dom::parser& value_parser) {
  Annotation& a = add_annotation(annotations, "data", thread, event, "key");
  const SqlValue value = event["value"];
  const bool json = value.kind == SqlValue::Kind::json ||
                    (type == k_data_json && value.kind != SqlValue::Kind::text && value.kind != SqlValue::Kind::null);
  if (json) {
    // json(json_extract(...)): the value's text (a data_json's true is 1).
    const std::string text = text_or_empty(value);
    a.json_value = as_json(text, value_parser);
    a.text = text;
  } else if (value.kind == SqlValue::Kind::integer) {
    a.json_value = as_json(std::to_string(value.integer), value_parser);
    a.text = std::to_string(value.integer);
  } else {
    a.json_value = as_json(sql_json(value), value_parser);
    a.text = text_or_empty(value);
  }
  a.t_abs = as_double(event["t_abs"]);
}

}  // namespace

class FullLoader::Impl {
 public:
  Impl(db::Database& db, const LoadOptions& options, Sessions sessions)
      : m_sessions(sessions),
        m_options(options),
        m_regions(db.prepare(query(k_region_rows_sql, sessions))),
        m_children(db.prepare(query(k_child_rows_sql, sessions))),
        m_events(db.prepare(query(k_events_sql, sessions))),
        m_last_event(db.prepare(query(k_last_event_sql, sessions))),
        m_name(db.prepare("SELECT text FROM names WHERE id = ?1")) {}
  Impl(const Impl&) = delete;  // m_name_texts refers to it
  Impl& operator=(const Impl&) = delete;

  void load(ProcessRows& rows) {
    std::vector<ProcessRows*> one{&rows};
    load(one);
  }

  // Sessions::many: all of `rows` at once; Sessions::one: one after the other.
  // Of each, only its regions, children and events that began before event
  // `before_seq` (the exporter's slice of a huge session).
  void load(const std::vector<ProcessRows*>& rows, std::int64_t before_seq = std::numeric_limits<std::int64_t>::max()) {
    if (rows.empty()) {
      return;
    }
    m_before_seq = before_seq;
    // Names are few and repeat (threads, categories, labels); the cache
    // lives for one load, so a hostile sender's million labels do not stay.
    m_names.clear();
    // The rows by session id, sorted, for every statement of this load: a
    // hash map made for each statement cost a node a session, four times.
    m_by_id.clear();
    if (m_sessions == Sessions::many) {
      m_by_id.reserve(rows.size());
      for (ProcessRows* r : rows) {
        m_by_id.emplace_back(r->info.session_id, r);
      }
      std::stable_sort(m_by_id.begin(), m_by_id.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    }
    run(m_regions, rows, [this](const db::Statement& s, ProcessRows& r) { read_region_row(s, r); });
    m_name.reset();
    run(m_children, rows, [this](const db::Statement& s, ProcessRows& r) {
      ChildInfo& c = read_child_columns(s, r);
      const std::optional<std::string>* thread = s.column_is_null(2) ? nullptr : &cached_name(s.column_int(2));
      c.thread = thread != nullptr && *thread ? **thread : std::string("main");
    });
    std::unordered_map<ProcessRows*, EventScan> scans;
    run(m_events, rows, [&](const db::Statement& s, ProcessRows& r) { read_event(s, r, scans[&r]); });
    m_name.reset();
    // Only a session that never said how long it ran ends at its last
    // event: finding it reads every event's row, most sessions need not.
    std::vector<ProcessRows*> unfinished;
    for (ProcessRows* r : rows) {
      r->info.last_event_us.reset();
      if (!r->info.elapsed) {
        unfinished.push_back(r);
      }
    }
    run(m_last_event, unfinished, [](const db::Statement& s, ProcessRows& r) {
      // time_base_us + max(time_us), as SQL added them: a sum past 64 bits
      // (a hostile time) is a real there, read back as the nearest integer.
      const std::optional<std::int64_t> last = s.column_optional_int(0);
      std::int64_t sum = 0;
      if (!last || !r.info.time_base_us) {
        r.info.last_event_us.reset();
      } else if (__builtin_add_overflow(*r.info.time_base_us, *last, &sum)) {
        r.info.last_event_us =
            *last > 0 ? std::numeric_limits<std::int64_t>::max() : std::numeric_limits<std::int64_t>::min();
      } else {
        r.info.last_event_us = sum;
      }
    });
    for (ProcessRows* r : rows) {
      finish(*r, scans[r]);
    }
    m_by_id.clear();  // its capacity kept; no pointer kept past the load
  }

 private:
  // Each statement names its sessions by id ({id}).
  // All but m_last_event read up to m_before_seq (?2).
  template <typename Read>
  void run(db::Statement& stmt, const std::vector<ProcessRows*>& rows, const Read& read) {
    const bool sliced = &stmt != &m_last_event;
    if (m_sessions == Sessions::one) {
      for (ProcessRows* r : rows) {
        stmt.reset();
        stmt.bind_int(1, r->info.session_id);
        if (sliced) {
          stmt.bind_int(2, m_before_seq);
        }
        while (stmt.step()) {
          read(stmt, *r);
        }
      }
      return;
    }
    std::string ids = "[";
    for (ProcessRows* r : rows) {
      if (ids.size() > 1) {
        ids += ',';
      }
      append_integer(ids, r->info.session_id);
    }
    ids += ']';
    stmt.reset();
    stmt.bind_text(1, ids);
    if (sliced) {
      stmt.bind_int(2, m_before_seq);
    }
    const int id_column = stmt.column_count() - 1;
    ProcessRows* last = nullptr;  // rows come session by session: most need no lookup
    while (stmt.step()) {
      const std::int64_t id = stmt.column_int(id_column);
      if (last == nullptr || last->info.session_id != id) {
        // The first of its id, as a map's emplace kept it.
        const auto found = std::lower_bound(m_by_id.begin(), m_by_id.end(), id,
                                            [](const auto& entry, std::int64_t key) { return entry.first < key; });
        last = found == m_by_id.end() || found->first != id ? nullptr : found->second;
      }
      if (last != nullptr) {
        read(stmt, *last);
      }
    }
    stmt.reset();
  }

  // The codec's names: the cache's.
  class CachedNameTexts final : public db::NameTexts {
   public:
    explicit CachedNameTexts(Impl& loader) : m_loader(loader) {}
    std::optional<std::string_view> text(std::int64_t id) override {
      const std::optional<std::string>& text = m_loader.cached_name(id);
      return text ? std::optional<std::string_view>(*text) : std::nullopt;
    }

   private:
    Impl& m_loader;
  };

  // names.text of an id, from the cache.
  const std::optional<std::string>& cached_name(std::int64_t id) {
    auto found = m_names.find(id);
    if (found == m_names.end()) {
      m_name.reset();
      m_name.bind_int(1, id);
      found = m_names.emplace(id, m_name.step() ? m_name.column_optional_text(0) : std::nullopt).first;
    }
    return found->second;
  }

  // names.text of an id, else `fallback` (the regions view's coalesce()).
  std::string name(const db::Statement& stmt, int id_column, int text_column) {
    if (!stmt.column_is_null(id_column)) {
      if (const std::optional<std::string>& text = cached_name(stmt.column_int(id_column))) {
        return *text;
      }
    }
    return text_or_empty(stmt, text_column);
  }

  // One row of k_region_rows_sql.
  void read_region_row(const db::Statement& stmt, ProcessRows& rows) {
    RegionInfo& r = rows.regions.emplace_back();
    r.seq = stmt.column_int(0);
    r.leave_seq = stmt.column_optional_int(1);
    r.parent_seq = stmt.column_optional_int(2);
    r.thread = name(stmt, 3, 11);
    r.nesting = stmt.column_optional_int(4);
    r.category = name(stmt, 5, 12);
    r.label = name(stmt, 6, 13);
    r.msg = text_or_empty(stmt, 7);
    r.repo = stmt.column_optional_int(8);
    r.t_start = stmt.column_optional_double(9);
    r.elapsed = stmt.column_optional_double(10);
  }

  // One row of k_events_sql.
  void read_event(const db::Statement& stmt, ProcessRows& rows, EventScan& scan) {
    const std::optional<std::int64_t> time_us = stmt.column_optional_int(2);
    const std::int64_t type = stmt.column_int(1);
    const std::int64_t seq = stmt.column_int(0);
    const std::optional<std::int64_t> thread_id = stmt.column_optional_int(4);
    // A thread_exit's thread is not read (it names the thread it ends).
    std::optional<std::string_view> thread;
    if (thread_id && type != k_thread_exit) {
      if (const std::optional<std::string>& text = cached_name(*thread_id)) {
        thread = *text;
      }
    }
    const std::optional<std::int64_t>& time_base = rows.info.time_base_us;
    const std::optional<std::int64_t>& process_start = rows.info.start_us;
    // Seconds since the process start, as the threads view computes them.
    std::optional<double> t;
    if (time_us && time_base && process_start) {
      t = static_cast<double>(*time_base + *time_us - *process_start) / 1e6;
    }
    if (type == k_thread_start) {  // nothing of its text is read
      ThreadInfo& info = rows.threads.emplace_back();
      info.name = thread ? std::string(*thread) : std::string();
      info.start_seq = seq;
      info.t_start = t;
      scan.thread_ids.push_back(thread_id);
      return;
    }
    const bool wanted =
        type == k_thread_exit || type == k_exec || type == k_exec_result || (type == k_error && m_options.errors) ||
        (type == k_def_param && m_options.params) ||
        (type >= k_data && type <= k_th_counter && m_options.annotations) ||
        ((type == k_cmd_ancestry || type == k_alias || type == k_def_repo || type == k_printf) && m_options.details);
    if (!wanted) {
      return;
    }
    // The event_parts view's obj's members (k_events_sql's body, the
    // leading columns from column 5). A category's and a label's names
    // come from the cache: a lookup in SQL for each row cost more than the
    // rest of the row.
    StoredEventMembers event;
    const bool parsed =
        event.parse(stmt.column_text(3), db::read_leading_columns(stmt, 5), m_name_texts, m_parser, m_obj);
    if (type == k_thread_exit) {  // a thread's first exit ends it
      if (thread_id && !scan.thread_exits.contains(*thread_id)) {
        scan.thread_exits.emplace(*thread_id, parsed ? as_double(event["t_rel"]) : std::nullopt);
      }
      return;
    }
    if (!parsed) {
      return;  // not an object (a producer's odd line, stored whole): nothing to read
    }
    switch (type) {
      case k_exec:
      case k_exec_result:
        add_exec_event(type, seq, thread, event.rest(), t, rows, scan.exec_results);
        break;
      case k_error: {
        ErrorInfo& e = rows.info.errors.emplace_back();
        e.seq = seq;
        e.thread = thread ? std::string(*thread) : std::string();
        e.msg = text_or_empty(event["msg"]);
        e.fmt = text_or_empty(event["fmt"]);
        if (time_us && time_base) {
          e.time_us = *time_base + *time_us;
        }
        break;
      }
      case k_def_param: {
        ParamInfo& param = rows.info.params.emplace_back(
            ParamInfo{text_or_empty(event["param"]), text_or_empty(event["value"]), std::nullopt});
        param.scope = as_text(event["scope"]);
        break;
      }
      case k_cmd_ancestry:
        if (simdjson::dom::element ancestry; event.rest()["ancestry"].get(ancestry) == simdjson::SUCCESS) {
          rows.info.ancestry = string_array(ancestry);
        }
        break;
      case k_alias:
        rows.info.alias = text_or_empty(event["alias"]);
        if (simdjson::dom::element argv; event.rest()["argv"].get(argv) == simdjson::SUCCESS) {
          rows.info.alias_argv = string_array(argv);
        }
        break;
      case k_def_repo:
        if (const std::optional<std::int64_t> repo = event.integer("repo")) {  // none: not a repository git named
          rows.info.repos.push_back(RepoInfo{*repo, text_or_empty(event["worktree"])});
        }
        break;
      case k_printf:
        rows.info.printf_messages.push_back(text_or_empty(event["msg"]));
        break;
      case k_data:
      case k_data_json: {
        add_data(type, event, thread, rows.info.annotations, m_value_parser);
        Annotation& a = rows.info.annotations.back();
        a.seq = seq;
        a.nesting = event.integer("nesting");
        break;
      }
      case k_counter:
      case k_th_counter: {
        Annotation& a = add_annotation(rows.info.annotations, "counter", thread, event, "name");
        const std::optional<std::string> count = as_text(event["count"]);
        a.json_value = count ? as_json(*count, m_value_parser) : std::string("null");
        a.seq = seq;
        a.per_thread = type == k_th_counter;
        break;
      }
      case k_timer:
      case k_th_timer: {
        Annotation& a = add_annotation(rows.info.annotations, "timer", thread, event, "name");
        std::string value = "{";
        for (const std::string_view key : {"intervals", "t_total", "t_min", "t_max"}) {
          if (value.size() > 1) {
            value += ',';
          }
          value += '"';
          value += key;
          value += "\":";
          SqlValue member_value = event[key];
          if (member_value.kind == SqlValue::Kind::json) {
            // Through the view an array is text to json_object(): quoted.
            member_value.kind = SqlValue::Kind::text;
            member_value.text = member_value.json;
          }
          a.timer_fields.push_back(sql_json(member_value));
          value += a.timer_fields.back();
        }
        value += '}';
        a.json_value = as_json(value, m_value_parser);
        a.seq = seq;
        a.per_thread = type == k_th_timer;
        break;
      }
      default:
        break;  // k_events_sql reads no other type
    }
  }

  void finish(ProcessRows& rows, EventScan& scan) {
    for (std::size_t i = 0; i < rows.threads.size() && i < scan.thread_ids.size(); ++i) {
      if (!scan.thread_ids[i]) {
        continue;
      }
      if (const auto exit = scan.thread_exits.find(*scan.thread_ids[i]); exit != scan.thread_exits.end()) {
        rows.threads[i].elapsed = exit->second;
      }
    }
    pair_exec_results(rows, scan.exec_results);
  }

  Sessions m_sessions;
  LoadOptions m_options;
  std::int64_t m_before_seq = std::numeric_limits<std::int64_t>::max();
  db::Statement m_regions;
  db::Statement m_children;
  db::Statement m_events;
  db::Statement m_last_event;
  db::Statement m_name;
  std::unordered_map<std::int64_t, std::optional<std::string>> m_names;
  CachedNameTexts m_name_texts{*this};
  std::vector<std::pair<std::int64_t, ProcessRows*>> m_by_id;  // Sessions::many: this load's rows, by id
  simdjson::dom::parser m_parser;
  simdjson::dom::parser m_value_parser;  // as_json() while an event is parsed in m_parser
  std::string m_obj;
};

FullLoader::FullLoader(db::Database& db, const LoadOptions& options, Sessions sessions)
    : m_impl(std::make_unique<Impl>(db, options, sessions)) {}

FullLoader::~FullLoader() = default;

void FullLoader::load(ProcessRows& rows) {
  m_impl->load(rows);
}

void FullLoader::load(const std::vector<ProcessRows*>& rows, std::int64_t before_seq) {
  m_impl->load(rows, before_seq);
}

}  // namespace trace2d::model::loading
