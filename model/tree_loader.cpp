// load_process_rows(): the sessions of a tree (or under a prefix), each
// in full (full_loader.hpp). The exporter's loader, which loads only what
// places its sessions, is export_row_loader.cpp.

#include "model/tree_loader.hpp"

#include <simdjson.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "model/full_loader.hpp"
#include "model/loader_sql.hpp"
#include "model/row_readers.hpp"

namespace trace2d::model {
namespace {

using loading::FullLoader;
using loading::LastEvent;
using loading::read_process;
using loading::sessions_sql;
using loading::string_array;
using loading::text_or_empty;

// (A row that trace2d did not write may lack tree_sid: its root_sid stands
// for it, as the migration that added the column set it.)
//
// The session itself and every SID below it, of one tree and owner
// (?2, ?3: the session's tree_sid and peer_uid). The range keeps the
// primary key index usable ('/' sorts just before '0') and is only where
// rows are looked for; the second test drops SIDs that merely share the
// prefix ("abc-x" for "abc"); tree_sid and peer_uid say which of them are
// the tree: another uid's sessions under the SID, and sessions re-rooted
// below it, are trees of their own.
constexpr std::string_view k_tree_where = R"sql(
  FROM sessions
 WHERE sid >= ?1 AND sid < ?1 || '0'
   AND (sid = ?1 OR substr(sid, 1, length(?1) + 1) = ?1 || '/')
   AND coalesce(tree_sid, root_sid) = ?2 AND peer_uid IS ?3
)sql";

// Under a prefix that is no session ("ci-job 42"): the sessions whose tree
// begins at or above it (not re-rooted below it), of one owner (?3).
constexpr std::string_view k_prefix_where = R"sql(
  FROM sessions
 WHERE sid >= ?1 AND sid < ?1 || '0'
   AND substr(sid, 1, length(?1) + 1) = ?1 || '/'
   AND length(coalesce(tree_sid, root_sid)) <= length(?1) AND peer_uid IS ?3
)sql";

// Who has such sessions under a prefix: a tree is one owner's. At most a
// few are reported; reading the owners costs what the range holds.
constexpr std::string_view k_prefix_owners_sql = R"sql(
SELECT DISTINCT peer_uid
  FROM sessions
 WHERE sid >= ?1 AND sid < ?1 || '0'
   AND substr(sid, 1, length(?1) + 1) = ?1 || '/'
   AND length(coalesce(tree_sid, root_sid)) <= length(?1)
 LIMIT 8
)sql";

}  // namespace

std::string normalise_root(std::string root) {
  while (root.size() > 1 && root.back() == '/') {
    root.pop_back();
  }
  return root;
}

std::vector<std::string> parse_string_array(std::string_view json) {
  // One parser for the thread: argv is parsed for every session and child,
  // and a parser's first use allocates its buffers.
  thread_local simdjson::dom::parser parser;
  simdjson::dom::element value;
  if (parser.parse(json.data(), json.size()).get(value) != simdjson::SUCCESS || !value.is_array()) {
    return {std::string(json)};
  }
  return string_array(value);
}

SeveralOwnersError::SeveralOwnersError(const std::string& root, std::vector<Owner> owners)
    : std::runtime_error([&] {
        std::string text = "sessions of several owners are under '" + root + "' (";
        for (std::size_t i = 0; i < owners.size(); ++i) {
          text += i > 0 ? ", " : "";
          text += owners[i].uid ? "uid " + std::to_string(*owners[i].uid) : std::string("imported, no uid");
        }
        return text + "), and a tree is one owner's: name one of their SIDs, or the owner";
      }()),
      m_owners(std::move(owners)) {}

std::vector<ProcessRows> load_process_rows(db::Database& db, const std::string& root,
                                           const LoadOptions& options) {
  std::vector<ProcessRows> all;
  {
    // A session names its tree and owner. Under a prefix that is no
    // session, or that is another owner's session (sent after the owner
    // asked for had sessions under it), the tree is the owner's asked for,
    // or the only one's there.
    std::optional<std::string> tree_sid;
    Owner owner;
    db::Statement session = db.prepare("SELECT coalesce(tree_sid, root_sid), peer_uid FROM sessions WHERE sid = ?1");
    session.bind_text(1, root);
    if (session.step()) {
      tree_sid = text_or_empty(session, 0);
      owner = Owner{session.column_optional_int(1)};
    }
    session.reset();
    if (options.owner && (!tree_sid || *options.owner != owner)) {
      tree_sid.reset();
      owner = *options.owner;
    } else if (!tree_sid) {
      db::Statement owners = db.prepare(k_prefix_owners_sql);
      owners.bind_text(1, root);
      std::vector<Owner> found;
      while (owners.step()) {
        found.push_back(Owner{owners.column_optional_int(0)});
      }
      if (found.size() > 1) {
        throw SeveralOwnersError(root, std::move(found));
      }
      if (found.empty()) {
        return all;
      }
      owner = found.front();
    }
    // FullLoader finds their last event (k_last_event_sql).
    db::Statement sessions = db.prepare(sessions_sql(tree_sid ? k_tree_where : k_prefix_where, LastEvent::not_wanted));
    sessions.bind_text(1, root);
    if (tree_sid) {
      sessions.bind_text(2, *tree_sid);
    }
    sessions.bind(3, owner.uid);
    while (sessions.step()) {
      all.push_back(ProcessRows{read_process(sessions), {}, {}, {}, {}});
    }
  }
  if (all.empty()) {
    return all;
  }
  FullLoader loader(db, options);
  if (!options.max_events_per_session) {
    for (ProcessRows& rows : all) {
      loader.load(rows);
    }
    return all;
  }
  // Where each session is cut: its event past the bound, through the
  // primary key (reading the bound's keys, not the events).
  db::Statement cut = db.prepare("SELECT seq FROM event_store WHERE session = ?1 ORDER BY seq LIMIT 1 OFFSET ?2");
  db::Statement rest = db.prepare("SELECT count(*) FROM event_store WHERE session = ?1 AND seq >= ?2");
  for (ProcessRows& rows : all) {
    cut.reset();
    cut.bind_int(1, rows.info.session_id);
    cut.bind_int(2, std::max<std::int64_t>(1, *options.max_events_per_session));
    if (!cut.step()) {
      loader.load(rows);
      continue;
    }
    const std::int64_t before_seq = cut.column_int(0);
    cut.reset();
    rest.reset();
    rest.bind_int(1, rows.info.session_id);
    rest.bind_int(2, before_seq);
    rows.info.events_left_out = rest.step() ? rest.column_int(0) : 0;
    rest.reset();
    std::vector<ProcessRows*> one{&rows};
    loader.load(one, before_seq);
  }
  return all;
}

}  // namespace trace2d::model
