#pragma once
// Reads the sessions of one process tree from the database: the session
// `root` and the sessions below it (their SIDs start with `root` + "/") of
// its tree and owner (sessions.tree_sid, peer_uid: docs/schema.md); or,
// when `root` is only a prefix (a GIT_TRACE2_PARENT_SID such as
// "ci-job 42"), one owner's sessions under it whose tree begins at or above
// it. Another uid's sessions under a SID are never in its tree, whatever
// their SIDs say. Each with its regions, children and threads (the
// `regions`, `children` and `threads` views), and optionally the data,
// counters and timers it reported.

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "model/process_tree.hpp"
#include "db/sqlite.hpp"

namespace trace2d::model {

struct LoadOptions {
  bool annotations = false;  // data, counters, timers (for the Chrome export)
  bool errors = false;       // error events (for the OTLP export)
  bool params = false;       // def_param events (the OTLP export's nickname)
  // cmd_ancestry, alias, def_repo and printf events (the OTLP export's
  // trace2receiver attributes: ProcessInfo::ancestry, ...).
  bool details = false;
  // Whose tree: under a prefix that is no session, when several owners
  // have sessions there; for a session's SID of another owner, this
  // owner's sessions under it whose tree begins at or above it (as under a
  // prefix: the SID was sent after they were).
  std::optional<Owner> owner;
  // Of a session with more events, only the regions, children and events
  // that began within its first this many are loaded, the rest counted in
  // ProcessInfo::events_left_out: what a report draws of a session is
  // bounded, whatever it holds. load_process_rows() only.
  std::optional<std::int64_t> max_events_per_session = std::nullopt;
};

// load_process_rows() of a prefix under which several owners have trees,
// and no owner asked for.
class SeveralOwnersError : public std::runtime_error {
 public:
  SeveralOwnersError(const std::string& root, std::vector<Owner> owners);
  [[nodiscard]] const std::vector<Owner>& owners() const { return m_owners; }

 private:
  std::vector<Owner> m_owners;
};

// Run it inside a ReadTransaction, so that a live daemon's commits do not
// tear the tree. Empty when no session is `root` or under it.
[[nodiscard]] std::vector<ProcessRows> load_process_rows(db::Database& db, const std::string& root,
                                                         const LoadOptions& options = {});

// A session to export, the top of its tree (its sessions.tree_sid) and its
// owner. Nothing above the top is looked at, and no session of another
// owner or tree: a session re-rooted for ownership is a tree of its own,
// and must not be placed in the tree its SID names.
struct ExportSession {
  std::string sid;
  std::string root;
  Owner owner;
  // A session too big to load whole is loaded as a slice: its regions,
  // children and events that began before event `before_seq` (its process
  // row, and its end, whole); `events_left_out` says how many events that
  // leaves out (ProcessInfo::events_left_out). docs/otlp.md, "Delivery".
  std::optional<std::int64_t> before_seq = std::nullopt;
  std::int64_t events_left_out = 0;
  // Its sessions.id, when the caller knows it (the export queue does): the
  // rows of such sessions are read in one statement.
  std::optional<std::int64_t> session_id = std::nullopt;
};

// The rows of one tree, for build_process_tree(root, rows).
struct TreeRows {
  std::string root;
  Owner owner;
  std::vector<ProcessRows> rows;
};

// The rows that build the spans of `sessions` as a build of their whole
// trees would (the exporter's, docs/otlp.md), without loading those trees:
// each of these sessions in full (or as its slice: ExportSession::before_seq),
// and of every session above them (their
// SIDs' prefixes, down to their roots) only its row, the child_starts that
// may have run them, and the regions and threads around those
// child_starts. So a session's export costs the same however many sessions
// its tree holds. One tree each, in the order their first session comes.
// Run it inside a ReadTransaction too.
[[nodiscard]] std::vector<TreeRows> load_export_rows(db::Database& db, const std::vector<ExportSession>& sessions,
                                                     const LoadOptions& options = {});

// load_export_rows() with its statements prepared once, for the exporter,
// which loads every round (preparing the view queries cost more than
// running them), and with the sessions of a round loaded together (one
// execution of each query for all of them). Use it on the connection it
// was made with.
class ExportRowLoader {
 public:
  ExportRowLoader(db::Database& db, const LoadOptions& options);
  ~ExportRowLoader();
  ExportRowLoader(const ExportRowLoader&) = delete;
  ExportRowLoader& operator=(const ExportRowLoader&) = delete;

  [[nodiscard]] std::vector<TreeRows> load(const std::vector<ExportSession>& sessions);

 private:
  class Impl;
  std::unique_ptr<Impl> m_impl;
};

// `root` as the commands take it: a trailing "/" ("ci-job 42/", as
// GIT_TRACE2_PARENT_SID often ends) is dropped.
[[nodiscard]] std::string normalise_root(std::string root);

// A JSON array of strings (argv as stored) as a list; other JSON values give
// one element holding the text as it is, so nothing is lost.
[[nodiscard]] std::vector<std::string> parse_string_array(std::string_view json);

}  // namespace trace2d::model
