#pragma once
// The process tree the analysis commands (tree, export, report) share: one
// git process and its descendants, across sessions, each process with its
// regions nested per thread and its child processes placed where they
// started.
//
// A tree is made of nodes of five kinds:
//   - process: one session (SID), with its regions, threads, children;
//   - region:  a region_enter/region_leave pair, nesting as git nested them;
//   - child:   a child_start (and its child_exit), holding the process it ran
//              when trace2d saw that process (children.child_sid);
//   - exec:    an exec (and its exec_result when the exec failed), holding
//              the session of the program that replaced the process, when
//              that program traced itself (a git: its SID is the exec'ing
//              session's child, with the same pid);
//   - thread:  a thread_start, holding the regions of that thread.
// Times are seconds. `offset` is measured from the tree's origin (the
// earliest process start), so nodes of different processes line up.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace trace2d::model {

// A data, counter or timer value a process reported, for annotations.
struct Annotation {
  std::string kind;  // "data", "counter", "timer"
  std::string thread;
  std::string category;
  std::string name;
  std::string json_value;       // the value as JSON text (a timer: an object)
  std::optional<double> t_abs;  // data: seconds since the process start
  std::string text;             // data: the value as git sent it (a string unquoted), for verbatim export
  // Where it came in its session (event seq) and, for data, its `nesting`:
  // trace2receiver gives data of nesting 1 to the process and deeper data
  // to the region of its thread open one level up (docs/otlp.md).
  std::int64_t seq = 0;
  std::optional<std::int64_t> nesting = std::nullopt;
  // A th_timer or th_counter: the thread's own figure, not the process's.
  bool per_thread = false;
  // A timer's members as JSON text: intervals, t_total, t_min, t_max.
  std::vector<std::string> timer_fields = {};
};

// A def_param event of a process (loaded only when asked for): a config
// setting git reports because trace2.configParams names it.
struct ParamInfo {
  std::string param;
  std::string value;
  std::optional<std::string> scope = std::nullopt;  // git's config scope ("global", "local", ...); none for an environment variable
};

// A def_repo event: a repository (id) and its worktree.
struct RepoInfo {
  std::int64_t repo = 0;
  std::string worktree;
};

// An `error` event of a process (loaded only when asked for).
struct ErrorInfo {
  std::int64_t seq = 0;
  std::string thread;
  std::string msg;
  std::string fmt;
  std::optional<std::int64_t> time_us;  // microseconds since the epoch
};

// Whose a session is: the uid that sent it (none for `trace2d import`'s).
// A tree is one owner's.
struct Owner {
  std::optional<std::int64_t> uid;
  bool operator==(const Owner&) const = default;
};

struct ProcessInfo {
  std::int64_t session_id = 0;
  std::string sid;
  std::optional<std::string> parent_sid;
  std::int64_t depth = 0;
  // The top of its owner's tree (sessions.tree_sid), and its owner: a
  // session hangs only under a session of the same tree and owner.
  std::string tree_sid;
  Owner owner;
  std::string cmd_name;
  std::string hierarchy;
  std::string cmd_mode;
  std::string version;  // the program's version (`exe` of its version event)
  std::vector<std::string> argv;
  std::optional<std::int64_t> pid;       // the P<hex> of its SID
  std::optional<std::string> start_time;
  std::optional<std::int64_t> start_us;  // process start, microseconds since the epoch
  std::optional<std::int64_t> time_base_us;  // its events' times are relative to this (sessions.time_base_us)
  std::optional<double> elapsed;
  std::optional<std::int64_t> exit_code;
  std::optional<std::int64_t> signo;
  std::string status;
  std::int64_t error_count = 0;
  // Lines of it lost to a bound before they were stored (sessions.lines_lost):
  // it is not whole, whatever its status.
  std::int64_t lines_lost = 0;
  // When its last event was written (microseconds since the epoch): where an
  // incomplete process, which never said how long it ran, ends. Loaded only
  // for a process without `elapsed`.
  std::optional<std::int64_t> last_event_us;
  // How the tree found its place: "child_sid" (the child_start that ran
  // it), "exec" (the exec of its parent session that it replaced: same
  // pid, started after it, no exec_result), "child_window" (started while
  // a child_start of its parent that ran no git, such as a hook script,
  // was running), "parent_sid" (top level of its nearest ancestor
  // session), "root" (top of the tree).
  std::string placed_by;
  std::vector<Annotation> annotations;  // loaded only when asked for
  std::vector<ErrorInfo> errors;         // loaded only when asked for
  std::vector<ParamInfo> params;         // loaded only when asked for
  // Loaded only when asked for (LoadOptions::details): the cmd_ancestry,
  // the alias (its name and expansion), the def_repo events and the
  // printf messages.
  std::vector<std::string> ancestry;
  std::optional<std::string> alias;
  std::vector<std::string> alias_argv;
  std::vector<RepoInfo> repos;
  std::vector<std::string> printf_messages;
  // Events of the session not loaded: a huge session is loaded as a slice,
  // what began within its first events (the OTLP exporter's
  // model::ExportSession, LoadOptions::max_events_per_session for reports).
  std::int64_t events_left_out = 0;
};

struct RegionInfo {
  std::int64_t seq = 0;  // of the region_enter
  std::optional<std::int64_t> leave_seq;
  std::optional<std::int64_t> parent_seq;
  std::string thread;
  std::optional<std::int64_t> nesting;
  std::string category;
  std::string label;
  std::string msg;
  std::optional<std::int64_t> repo;
  std::optional<double> t_start;  // seconds since its process started
  std::optional<double> elapsed;  // nullopt: never closed
};

struct ChildInfo {
  std::int64_t child_id = 0;
  std::optional<std::int64_t> start_seq;
  std::string thread;
  std::string child_class;
  std::string hook_name;
  std::vector<std::string> argv;
  bool use_shell = false;
  std::optional<std::int64_t> pid;
  std::optional<std::int64_t> code;
  std::string ready;
  std::optional<double> t_start;
  std::optional<double> elapsed;
  std::optional<std::string> child_sid;
};

// An exec event: the process asked to become another program. On Unix a
// successful exec sends nothing more (the program replaced it); a failed
// one is followed by an exec_result with the same exec_id.
struct ExecInfo {
  std::int64_t exec_id = 0;
  std::int64_t seq = 0;  // of the exec event
  std::string thread;
  std::string exe;  // optional in the event
  std::vector<std::string> argv;
  std::optional<double> t_start;  // seconds since its process started
  // From the exec_result: the exec failed (git sends -1; on Windows, where
  // exec waits for the program, its exit code).
  std::optional<std::int64_t> code;
  std::optional<double> result_t;  // when the exec_result came, seconds since the process started
};

struct ThreadInfo {
  std::string name;
  std::optional<std::int64_t> start_seq;
  std::optional<double> t_start;
  std::optional<double> elapsed;
};

// A value kept on the heap, copied as a value: what a node holds apart.
// Made empty, it holds T{} without allocating.
template <typename T>
class Boxed {
 public:
  Boxed() = default;
  explicit Boxed(T value) : m_value(std::make_unique<T>(std::move(value))) {}
  Boxed(const Boxed& other) : m_value(other.m_value ? std::make_unique<T>(*other.m_value) : nullptr) {}
  Boxed(Boxed&&) noexcept = default;
  Boxed& operator=(const Boxed& other) {
    if (this != &other) {
      m_value = other.m_value ? std::make_unique<T>(*other.m_value) : nullptr;
    }
    return *this;
  }
  Boxed& operator=(Boxed&&) noexcept = default;
  ~Boxed() = default;

  [[nodiscard]] const T& get() const {
    static const T k_empty;
    return m_value ? *m_value : k_empty;
  }

 private:
  std::unique_ptr<T> m_value;
};

struct Node {
  // A process's details are held apart: they are three times a region's
  // size, and a tree is mostly regions, whose nodes are moved as their
  // vectors grow and the tree is nested (a node was 808 bytes, now 360).
  std::variant<Boxed<ProcessInfo>, RegionInfo, ChildInfo, ExecInfo, ThreadInfo> item;
  std::optional<double> offset;   // seconds since the tree's origin
  std::optional<double> elapsed;  // seconds; nullopt: never closed (or unknown)
  // Order among siblings when times are missing: event seq in its process.
  std::int64_t seq = 0;
  std::vector<Node> children;

  [[nodiscard]] const ProcessInfo* process() const {
    const auto* process = std::get_if<Boxed<ProcessInfo>>(&item);
    return process != nullptr ? &process->get() : nullptr;
  }
  [[nodiscard]] const RegionInfo* region() const { return std::get_if<RegionInfo>(&item); }
  [[nodiscard]] const ChildInfo* child() const { return std::get_if<ChildInfo>(&item); }
  [[nodiscard]] const ExecInfo* exec() const { return std::get_if<ExecInfo>(&item); }
  [[nodiscard]] const ThreadInfo* thread() const { return std::get_if<ThreadInfo>(&item); }
  // The end of the node in tree time, when both its start and length are known.
  [[nodiscard]] std::optional<double> end() const;
};

struct ProcessTree {
  std::string root;                        // the SID or prefix asked for
  std::optional<std::int64_t> origin_us;   // earliest process start in the tree
  std::vector<Node> processes;             // one for a SID; several for a prefix
};

// Everything loaded for one process, before it is arranged into nodes.
struct ProcessRows {
  ProcessInfo info;
  std::vector<RegionInfo> regions;
  std::vector<ChildInfo> children;
  std::vector<ThreadInfo> threads;
  std::vector<ExecInfo> execs;
};

// The deepest a tree gets, in levels of nodes (a process alone is 1): git
// nests a few levels, one hostile session can nest a million, and every
// renderer walks the tree recursively. Entries deeper than this are moved
// up to the last level (kept, under their ancestor there); a process that
// would start below it is not expanded, as with --depth.
inline constexpr std::size_t k_max_tree_depth = 256;

struct BuildOptions {
  // Process levels shown below the processes asked for; nullopt: all.
  std::optional<int> max_depth;
};

// Arranges `rows` (the sessions under `root`, any order; see
// model/tree_loader.hpp for which) into a tree:
//   - regions nest by their parent region; a child_start goes into the
//     innermost region of its thread open when it was sent (by event order),
//     a thread_start into the innermost open main-thread region;
//   - an exec goes where a child_start would;
//   - a child process hangs under the child_start that launched it, a
//     program that replaced its parent by exec under that exec (an exec
//     without an exec_result ends where that program's session ends); a
//     session no child_start or exec claims (an "orphan") hangs under a child_start
//     of its parent that claims none and ran when it started (a hook), else
//     at the top level of its nearest ancestor session in the set, else at
//     the top of the tree (see ProcessInfo::placed_by); a session hangs
//     only under a session of its own tree and owner (ProcessInfo::tree_sid,
//     owner), found by its stored parent_sid;
//   - siblings are ordered by start time, or by event order where times
//     are missing.
[[nodiscard]] ProcessTree build_process_tree(const std::string& root, std::vector<ProcessRows> rows,
                                             const BuildOptions& options = {});

// Orders siblings: by offset when all have one, else by seq (stable).
void sort_siblings(std::vector<Node>& nodes);

// Process nodes anywhere in the tree.
[[nodiscard]] std::size_t count_processes(const ProcessTree& tree);

}  // namespace trace2d::model
