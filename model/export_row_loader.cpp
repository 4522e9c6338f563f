// The exporter's loader (load_export_rows, ExportRowLoader in
// tree_loader.hpp): the sessions of a round in full (full_loader.hpp), and
// of the sessions above them only what places them.

#include <simdjson.h>

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "model/full_loader.hpp"
#include "model/loader_sql.hpp"
#include "model/row_readers.hpp"
#include "model/tree_loader.hpp"

namespace trace2d::model {
namespace {

using loading::ExecResult;
using loading::FullLoader;
using loading::LastEvent;
using loading::pair_exec_results;
using loading::query;
using loading::read_child;
using loading::read_exec_event;
using loading::read_process;
using loading::read_region;
using loading::read_thread;
using loading::Sessions;
using loading::sessions_sql;

constexpr std::string_view k_regions_sql = R"sql(
SELECT enter_seq, leave_seq, parent_region & 4294967295, thread, nesting, category, label, msg, repo,
       t_start, elapsed, sid
  FROM regions WHERE sid {sid}
)sql";

// The thread a child_start came from is on its event row. (An ancestor's
// child, by SID; the sessions loaded in full read k_child_rows_sql.)
constexpr std::string_view k_children_sql = R"sql(
SELECT c.child_id, c.start_seq, th.text, c.child_class, c.hook_name, c.argv, c.use_shell, c.pid, c.code,
       c.ready, c.t_start, c.elapsed, c.child_sid, c.sid
  FROM children c
  LEFT JOIN event_store e ON e.session = {session} AND e.seq = c.start_seq
  LEFT JOIN names th ON th.id = e.thread
 WHERE c.sid {sid}
)sql";

// An ancestor's exec and exec_result events, in order,
// paired in pair_exec_results(), and its threads (the sessions sent read
// both from k_events_sql). Their times relative to the process start, as the
// threads view computes them.
constexpr std::string_view k_execs_sql = R"sql(
SELECT e.type, e.seq, th.text, e.obj,
       CASE WHEN e.time_us IS NULL OR s.process_start_us IS NULL THEN NULL
            ELSE (s.time_base_us + e.time_us - s.process_start_us) / 1e6 END,
       s.sid
  FROM sessions s
  JOIN event_parts e ON e.session = s.id
  LEFT JOIN names th ON th.id = e.thread
 WHERE s.sid {sid} AND {exec_types}
 ORDER BY e.session, e.seq
)sql";

constexpr std::string_view k_threads_sql = R"sql(
SELECT thread, start_seq, t_start, elapsed, sid FROM threads WHERE sid {sid}
)sql";

// The child_starts of a session that may have run a given session: the
// ones with its pid (git ran it), and the latest ones started before it
// (through a shell, or a hook's git: model/session_placement.hpp). Both
// through an index (schema v11), at most 16 of each: only a session with
// more child_starts running at once than that could be placed otherwise
// than in a build of its whole tree.
constexpr std::string_view k_children_by_pid_sql =
    "SELECT child_id FROM child_store WHERE session = ?1 AND pid = ?2 LIMIT 16";
constexpr std::string_view k_children_before_sql =
    "SELECT child_id FROM child_store WHERE session = ?1 AND start_us <= ?2 ORDER BY start_us DESC LIMIT 16";

// The latest region of a thread that began before an event, and a thread's
// first region (where a thread without thread_start begins).
constexpr std::string_view k_region_before_sql =
    "SELECT enter_seq FROM regions WHERE sid = ?1 AND thread = ?2 AND enter_seq < ?3 ORDER BY enter_seq DESC LIMIT 1";
constexpr std::string_view k_first_region_sql =
    "SELECT enter_seq FROM regions WHERE sid = ?1 AND thread = ?2 ORDER BY enter_seq LIMIT 1";

// How far up a region's parents are followed: as deep as a tree is drawn
// (k_max_tree_depth), with room for the levels above them.
constexpr int k_max_region_walk = 4 * static_cast<int>(k_max_tree_depth);

}  // namespace

// load_export_rows(): the given sessions in full, and of the sessions above
// them only what places them, each ancestor once.
class ExportRowLoader::Impl {
 public:
  Impl(db::Database& db, const LoadOptions& options)
      : m_full_loader(db, options, Sessions::many),
        m_session(db.prepare(sessions_sql(" FROM sessions WHERE sid = ?1", LastEvent::not_wanted))),
        m_sessions_by_id(db.prepare(
            sessions_sql(" FROM sessions WHERE id IN (SELECT value FROM json_each(?1))", LastEvent::not_wanted))),
        // An ancestor only of the tree's own: another owner's session, or
        // one re-rooted into a tree of its own, is skipped like a SID that
        // is no session.
        m_ancestor(db.prepare(sessions_sql(" FROM sessions WHERE sid = ?1 AND coalesce(tree_sid, root_sid) = ?2"
                                           " AND peer_uid IS ?3",
                                           LastEvent::not_wanted))),
        m_by_pid(db.prepare(k_children_by_pid_sql)),
        m_before(db.prepare(k_children_before_sql)),
        m_child(db.prepare(query(k_children_sql, Sessions::one) + " AND c.child_id = ?3")),
        m_region_before(db.prepare(k_region_before_sql)),
        m_first_region(db.prepare(k_first_region_sql)),
        m_region(db.prepare(query(k_regions_sql, Sessions::one) + " AND enter_seq = ?2")),
        m_thread(db.prepare(query(k_threads_sql, Sessions::one) + " AND thread = ?2")),
        m_execs(db.prepare(query(k_execs_sql, Sessions::one))),
        m_replacement(db.prepare(sessions_sql(" FROM sessions WHERE parent_sid = ?1 AND sid_pid = ?2"
                                              " AND coalesce(tree_sid, root_sid) = ?3 AND peer_uid IS ?4 LIMIT 16",
                                              LastEvent::wanted))) {}

  std::vector<TreeRows> load(const std::vector<ExportSession>& sessions) {
    m_rows.clear();
    m_parts.clear();
    m_index.clear();
    // A row moved as the vector grows is a ProcessInfo moved (736 bytes and
    // a dozen strings): room for the round's own rows at once.
    m_rows.reserve(sessions.size());
    m_parts.reserve(sessions.size());
    // A huge session's slice (before_seq) is loaded on its own; the others
    // together.
    std::map<std::int64_t, std::vector<std::size_t>> by_slice;  // before_seq -> rows
    read_rows_by_id(sessions);
    for (const ExportSession& session : sessions) {
      const Tree tree{session.root, session.owner};
      if (m_index.contains({tree, session.sid})) {
        continue;
      }
      std::optional<std::size_t> added;
      if (const auto read = session.session_id ? m_read_by_id.find(*session.session_id) : m_read_by_id.end();
          read != m_read_by_id.end() && read->second.sid == session.sid) {
        added = add_row(std::move(read->second), tree, true);
        m_read_by_id.erase(read);
      } else if (!session.session_id) {
        added = add(session.sid, tree, m_session, true);
      }
      if (added) {
        m_rows[*added].info.events_left_out = session.events_left_out;
        by_slice[session.before_seq.value_or(std::numeric_limits<std::int64_t>::max())].push_back(*added);
      }
    }
    // Before any ancestor is added: the pointers stay valid.
    for (const auto& [before_seq, indexes] : by_slice) {
      std::vector<ProcessRows*> full;
      full.reserve(indexes.size());
      for (const std::size_t i : indexes) {
        full.push_back(&m_rows[i]);
      }
      m_full_loader.load(full, before_seq);
    }
    // A successful exec lasts until the program that replaced the process
    // ends: that program's session (a child with the same pid) is read, as
    // a whole build has it, though nothing of it is sent unless queued.
    for (std::size_t i = 0, queued = m_rows.size(); i < queued; ++i) {
      const ProcessInfo& info = m_rows[i].info;
      const bool exec_worked =
          std::any_of(m_rows[i].execs.begin(), m_rows[i].execs.end(), [](const ExecInfo& e) { return !e.code; });
      if (exec_worked && info.pid) {
        add_replacements(i);
      }
    }
    // Rows are added as ancestors turn up; each is placed in turn.
    for (std::size_t i = 0; i < m_rows.size(); ++i) {
      const std::optional<std::size_t> ancestor = nearest_ancestor(i);
      if (ancestor && !m_parts[*ancestor].full) {
        add_placing_children(*ancestor, i);
      }
    }
    for (ProcessRows& rows : m_rows) {
      // Where two child_starts claim one session, the first keeps it, as in
      // a whole build, which reads them in this order (the rows of a batch,
      // or of an ancestor, may come in another).
      std::sort(rows.children.begin(), rows.children.end(),
                [](const ChildInfo& a, const ChildInfo& b) { return a.child_id < b.child_id; });
    }
    // A statement stopped on a row keeps its read transaction open, and an
    // open reader keeps the WAL from being checkpointed: none stays so.
    m_read_by_id.clear();
    for (db::Statement* statement :
         {&m_session, &m_sessions_by_id, &m_ancestor, &m_by_pid, &m_before, &m_child, &m_region_before, &m_first_region,
          &m_region, &m_thread, &m_execs, &m_replacement}) {
      statement->reset();
    }
    std::vector<TreeRows> trees;
    std::map<Tree, std::size_t> tree_of;
    std::vector<std::size_t> tree_of_row(m_rows.size());
    std::vector<std::size_t> rows_of_tree;
    for (std::size_t i = 0; i < m_parts.size(); ++i) {
      const auto [at, added] = tree_of.try_emplace(m_parts[i].tree, trees.size());
      if (added) {
        trees.push_back(TreeRows{m_parts[i].tree.root, m_parts[i].tree.owner, {}});
        rows_of_tree.push_back(0);
      }
      tree_of_row[i] = at->second;
      ++rows_of_tree[at->second];
    }
    for (std::size_t t = 0; t < trees.size(); ++t) {
      trees[t].rows.reserve(rows_of_tree[t]);
    }
    for (std::size_t i = 0; i < m_rows.size(); ++i) {
      trees[tree_of_row[i]].rows.push_back(std::move(m_rows[i]));
    }
    return trees;
  }

 private:
  // A tree: its top (tree_sid) and owner.
  struct Tree {
    std::string root;
    Owner owner;
    bool operator<(const Tree& other) const {
      return std::tie(root, owner.uid) < std::tie(other.root, other.owner.uid);
    }
  };

  // What a partly loaded ancestor holds so far.
  struct Parts {
    Tree tree;  // it was loaded for
    bool full = false;
    bool execs = false;  // its execs are loaded
    std::set<std::int64_t> children;
    std::set<std::int64_t> regions;
    std::set<std::string> threads;
  };

  std::optional<std::size_t> add(const std::string& sid, const Tree& tree, db::Statement& select, bool full) {
    select.reset();
    select.bind_text(1, sid);
    if (!full) {
      select.bind_text(2, tree.root);
      select.bind(3, tree.owner.uid);
    }
    if (!select.step()) {
      return std::nullopt;
    }
    return add_row(read_process(select), tree, full);
  }

  std::size_t add_row(ProcessInfo info, const Tree& tree, bool full) {
    const std::size_t index = m_rows.size();
    std::string sid = info.sid;
    m_rows.push_back(ProcessRows{std::move(info), {}, {}, {}, {}});
    m_parts.push_back(Parts{tree, full, false, {}, {}, {}});
    m_index.emplace(std::pair{tree, std::move(sid)}, index);
    return index;
  }

  // The rows of the sessions whose ids are known, in one statement (one
  // each cost a step and a reset per session), into m_read_by_id.
  void read_rows_by_id(const std::vector<ExportSession>& sessions) {
    m_read_by_id.clear();
    std::string ids = "[";
    for (const ExportSession& session : sessions) {
      if (session.session_id) {
        if (ids.size() > 1) {
          ids += ',';
        }
        loading::append_integer(ids, *session.session_id);
      }
    }
    if (ids.size() == 1) {
      return;
    }
    ids += ']';
    m_sessions_by_id.reset();
    m_sessions_by_id.bind_text(1, ids);
    while (m_sessions_by_id.step()) {
      ProcessInfo info = read_process(m_sessions_by_id);
      const std::int64_t id = info.session_id;
      m_read_by_id.emplace(id, std::move(info));
    }
    m_sessions_by_id.reset();
  }

  // The closest session above row `i` (by SID) in its tree, loaded when it
  // is not yet. SID prefixes that are no session are skipped, as placement
  // does; none shorter than the root is tried, nor more than a tree is deep.
  std::optional<std::size_t> nearest_ancestor(std::size_t i) {
    std::string sid = m_rows[i].info.sid;
    const Tree tree = m_parts[i].tree;
    for (std::size_t tries = 0; tries < k_max_tree_depth; ++tries) {
      const auto slash = sid.rfind('/');
      if (slash == std::string::npos || slash < tree.root.size()) {
        return std::nullopt;
      }
      sid.resize(slash);
      if (const auto found = m_index.find({tree, sid}); found != m_index.end()) {
        return found->second;
      }
      if (const auto added = add(sid, tree, m_ancestor, false)) {
        return added;
      }
    }
    return std::nullopt;
  }

  // The child_starts of `ancestor` that may have run row `session`, with
  // the regions and threads that hold them.
  void add_placing_children(std::size_t ancestor, std::size_t session) {
    const ProcessInfo& info = m_rows[session].info;
    std::vector<std::int64_t> ids;
    const std::int64_t ancestor_id = m_rows[ancestor].info.session_id;
    if (info.pid && *info.pid > 0) {  // as the children view claims by pid
      m_by_pid.reset();
      m_by_pid.bind_int(1, ancestor_id);
      m_by_pid.bind_int(2, *info.pid);
      while (m_by_pid.step()) {
        ids.push_back(m_by_pid.column_int(0));
      }
    }
    if (info.start_us) {
      m_before.reset();
      m_before.bind_int(1, ancestor_id);
      m_before.bind_int(2, *info.start_us);
      while (m_before.step()) {
        ids.push_back(m_before.column_int(0));
      }
    }
    for (const std::int64_t id : ids) {
      if (m_parts[ancestor].children.insert(id).second) {
        add_child(ancestor, id);
      }
    }
    // A program that replaced the ancestor by exec keeps its pid: only then
    // can one of the ancestor's execs place it (session_placement.cpp).
    if (info.pid && info.pid == m_rows[ancestor].info.pid && !m_parts[ancestor].execs) {
      m_parts[ancestor].execs = true;
      add_execs(ancestor);
    }
  }

  void add_replacements(std::size_t i) {
    const std::string sid = m_rows[i].info.sid;
    const Tree tree = m_parts[i].tree;
    std::vector<ProcessRows> found;
    m_replacement.reset();
    m_replacement.bind_text(1, sid);
    m_replacement.bind_int(2, *m_rows[i].info.pid);
    m_replacement.bind_text(3, tree.root);
    m_replacement.bind(4, tree.owner.uid);
    while (m_replacement.step()) {
      found.push_back(ProcessRows{read_process(m_replacement), {}, {}, {}, {}});
    }
    for (ProcessRows& rows : found) {
      if (m_index.emplace(std::pair{tree, rows.info.sid}, m_rows.size()).second) {
        m_parts.push_back(Parts{tree, false, false, {}, {}, {}});
        m_rows.push_back(std::move(rows));
      }
    }
  }

  void add_execs(std::size_t ancestor) {
    std::vector<ExecResult> results;
    m_execs.reset();
    m_execs.bind_text(1, m_rows[ancestor].info.sid);
    while (m_execs.step()) {
      read_exec_event(m_execs, m_rows[ancestor], results, m_parser);
    }
    pair_exec_results(m_rows[ancestor], results);
  }

  void add_child(std::size_t ancestor, std::int64_t child_id) {
    ProcessRows found;
    m_child.reset();
    m_child.bind_text(1, m_rows[ancestor].info.sid);
    m_child.bind_int(2, m_rows[ancestor].info.session_id);
    m_child.bind_int(3, child_id);
    while (m_child.step()) {
      read_child(m_child, found);
    }
    for (ChildInfo& child : found.children) {
      if (child.start_seq) {
        add_open_regions(ancestor, child.thread, *child.start_seq);
      }
      if (child.thread != "main") {
        add_thread(ancestor, child.thread);
      }
      m_rows[ancestor].children.push_back(std::move(child));
    }
  }

  // The regions a process tree looks at to find what of `thread` was open
  // at event `seq` (ProcessItems::open_region): the thread's last region
  // before it and that region's parents.
  void add_open_regions(std::size_t ancestor, const std::string& thread, std::int64_t seq) {
    m_region_before.reset();
    m_region_before.bind_text(1, m_rows[ancestor].info.sid);
    m_region_before.bind_text(2, thread);
    m_region_before.bind_int(3, seq);
    if (m_region_before.step()) {
      add_region_chain(ancestor, m_region_before.column_int(0));
    }
  }

  void add_region_chain(std::size_t ancestor, std::int64_t seq) {
    std::optional<std::int64_t> at = seq;
    for (int steps = 0; at && steps < k_max_region_walk; ++steps) {
      if (!m_parts[ancestor].regions.insert(*at).second) {
        return;  // it and its parents are there already
      }
      ProcessRows found;
      m_region.reset();
      m_region.bind_text(1, m_rows[ancestor].info.sid);
      m_region.bind_int(2, *at);
      while (m_region.step()) {
        read_region(m_region, found);
      }
      if (found.regions.empty()) {
        return;
      }
      at = found.regions.front().parent_seq;
      m_rows[ancestor].regions.push_back(std::move(found.regions.front()));
    }
  }

  // A thread's entry, and where it sits: its thread_start in the main
  // thread's open regions, or, without one, where its first region began.
  void add_thread(std::size_t ancestor, const std::string& thread) {
    if (!m_parts[ancestor].threads.insert(thread).second) {
      return;
    }
    const std::string& sid = m_rows[ancestor].info.sid;
    ProcessRows found;
    m_thread.reset();
    m_thread.bind_text(1, sid);
    m_thread.bind_text(2, thread);
    while (m_thread.step()) {
      read_thread(m_thread, found);
    }
    for (ThreadInfo& t : found.threads) {
      if (t.start_seq) {
        add_open_regions(ancestor, "main", *t.start_seq);
      }
      m_rows[ancestor].threads.push_back(std::move(t));
    }
    m_first_region.reset();
    m_first_region.bind_text(1, sid);
    m_first_region.bind_text(2, thread);
    if (m_first_region.step()) {
      const std::int64_t first = m_first_region.column_int(0);
      add_region_chain(ancestor, first);
      if (found.threads.empty()) {
        add_open_regions(ancestor, "main", first);
      }
    }
  }

  FullLoader m_full_loader;
  db::Statement m_session;
  db::Statement m_sessions_by_id;
  db::Statement m_ancestor;
  db::Statement m_by_pid;
  db::Statement m_before;
  db::Statement m_child;
  db::Statement m_region_before;
  db::Statement m_first_region;
  db::Statement m_region;
  db::Statement m_thread;
  db::Statement m_execs;
  db::Statement m_replacement;
  simdjson::dom::parser m_parser;
  std::vector<ProcessRows> m_rows;
  std::vector<Parts> m_parts;
  // (tree, SID) -> row: a session is loaded once for each tree it serves.
  std::map<std::pair<Tree, std::string>, std::size_t> m_index;
  std::unordered_map<std::int64_t, ProcessInfo> m_read_by_id;  // read_rows_by_id(), for one load
};

ExportRowLoader::ExportRowLoader(db::Database& db, const LoadOptions& options)
    : m_impl(std::make_unique<Impl>(db, options)) {}

ExportRowLoader::~ExportRowLoader() = default;

std::vector<TreeRows> ExportRowLoader::load(const std::vector<ExportSession>& sessions) {
  return m_impl->load(sessions);
}

std::vector<TreeRows> load_export_rows(db::Database& db, const std::vector<ExportSession>& sessions,
                                       const LoadOptions& options) {
  return ExportRowLoader(db, options).load(sessions);
}

}  // namespace trace2d::model
