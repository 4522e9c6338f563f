#pragma once
// The typed model of a Trace2 EVENT-format line (evt 1 to 4).
//
// An Event is a view: its strings point into the line being parsed or into
// the parser's string buffer, and stay valid until the parser's next call.
// Consumers copy what they keep. Fields git may omit are std::optional; a
// field that arrived with the wrong JSON type is absent here and described
// in Event::problems (the event itself is still stored whole). An optional
// string sent as null (other producers do) is absent, with no problem.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace trace2d::proto {

enum class EventKind : std::uint8_t {
  version,
  too_many_files,
  start,
  exit,
  atexit,
  signal,
  error,
  cmd_path,
  cmd_ancestry,
  cmd_name,
  cmd_mode,
  alias,
  child_start,
  child_exit,
  child_ready,
  thread_start,
  thread_exit,
  exec,
  exec_result,
  def_param,
  def_repo,
  region_enter,
  region_leave,
  data,
  data_json,
  timer,
  th_timer,
  counter,
  th_counter,
  printf,
  command,  // not git's: repo's {"name":"repo","subcommands":["sync"]}
  unknown,  // an event name this build does not know: kept, not dropped
};

// The canonical name: git's, for the kinds git defines.
[[nodiscard]] std::string_view to_string(EventKind kind);
// Also knows other producers' spellings of git's events ("data-json").
[[nodiscard]] EventKind event_kind_from_name(std::string_view name);
// exit, atexit and signal end a process: after them git sends nothing more.
[[nodiscard]] bool is_terminal(EventKind kind);

using StringList = std::span<const std::string_view>;

struct Version {
  std::optional<std::string_view> evt;
  std::optional<std::string_view> exe;
};
struct TooManyFiles {};
struct Start {
  std::optional<double> t_abs;
  StringList argv;
};
// exit and atexit
struct Exit {
  std::optional<double> t_abs;
  std::optional<std::int64_t> code;
};
struct Signal {
  std::optional<double> t_abs;
  std::optional<std::int64_t> signo;
};
struct Error {
  std::optional<std::string_view> msg;
  std::optional<std::string_view> fmt;
};
struct CmdPath {
  std::optional<std::string_view> path;
};
struct CmdAncestry {
  StringList ancestry;  // nearest parent first
};
struct CmdName {
  std::optional<std::string_view> name;
  std::optional<std::string_view> hierarchy;
};
struct CmdMode {
  std::optional<std::string_view> name;
};
struct Alias {
  std::optional<std::string_view> alias;
  StringList argv;
};
struct ChildStart {
  std::optional<double> t_abs;  // not git's: Git Credential Manager writes it
  std::optional<std::int64_t> child_id;
  std::optional<std::string_view> child_class;
  std::optional<std::string_view> hook_name;
  std::optional<std::string_view> cd;
  std::optional<bool> use_shell;
  StringList argv;
};
struct ChildExit {
  std::optional<std::int64_t> child_id;
  std::optional<std::int64_t> pid;
  std::optional<std::int64_t> code;
  std::optional<double> t_rel;
  std::optional<double> t_abs;  // not git's: Git Credential Manager writes it
};
struct ChildReady {
  std::optional<std::int64_t> child_id;
  std::optional<std::int64_t> pid;
  std::optional<std::string_view> ready;  // "ready", "timeout" or "error"
  std::optional<double> t_rel;
};
struct ThreadStart {};
struct ThreadExit {
  std::optional<double> t_rel;
};
struct Exec {
  std::optional<std::int64_t> exec_id;
  std::optional<std::string_view> exe;
  StringList argv;
};
struct ExecResult {
  std::optional<std::int64_t> exec_id;
  std::optional<std::int64_t> code;
};
struct DefParam {
  std::optional<std::string_view> scope;
  std::optional<std::string_view> param;
  std::optional<std::string_view> value;
};
struct DefRepo {
  std::optional<std::string_view> worktree;
};
// region_enter and region_leave (t_rel only on leave)
struct Region {
  std::optional<std::int64_t> nesting;
  std::optional<std::string_view> category;
  std::optional<std::string_view> label;
  std::optional<std::string_view> msg;
  std::optional<double> t_rel;
  std::optional<double> t_abs;  // not git's: Git Credential Manager writes it on both
};
// data and data_json
struct Data {
  std::optional<double> t_abs;
  std::optional<double> t_rel;
  std::optional<std::int64_t> nesting;
  std::optional<std::string_view> category;
  std::optional<std::string_view> key;
  // The value: decoded text for a JSON string, else the value's JSON text
  // (old producers send integers; data_json sends any JSON).
  std::optional<std::string_view> value;
  bool value_is_json = false;
};
// timer and th_timer
struct Timer {
  std::optional<std::string_view> category;
  std::optional<std::string_view> name;
  std::optional<std::int64_t> intervals;
  std::optional<double> t_total;
  std::optional<double> t_min;
  std::optional<double> t_max;
};
// counter and th_counter
struct Counter {
  std::optional<std::string_view> category;
  std::optional<std::string_view> name;
  std::optional<std::int64_t> count;
};
struct Printf {
  std::optional<double> t_abs;
  std::optional<std::string_view> msg;
};
// repo's command event: its name ("repo") and subcommands (["sync"]).
struct Command {
  std::optional<std::string_view> name;
  StringList subcommands;
};
struct Unknown {};

using Payload = std::variant<Version, TooManyFiles, Start, Exit, Signal, Error, CmdPath,
                             CmdAncestry, CmdName, CmdMode, Alias, ChildStart, ChildExit,
                             ChildReady, ThreadStart, ThreadExit, Exec, ExecResult, DefParam,
                             DefRepo, Region, Data, Timer, Counter, Printf, Command, Unknown>;

struct Event {
  // Fields every event may carry.
  // The event name as sent; for another producer's spelling of a known event
  // ("data-json"), the canonical name (`json` keeps what was sent).
  std::string_view event;
  EventKind kind = EventKind::unknown;
  std::string_view sid;
  std::optional<std::string_view> thread;
  std::optional<std::string_view> time_text;  // "time" exactly as sent (decoded)
  std::optional<std::int64_t> time_us;        // "time" as microseconds since the epoch
  std::optional<std::string_view> file;
  std::optional<std::int64_t> line;
  std::optional<std::int64_t> repo;

  Payload payload = Unknown{};

  // The line as valid UTF-8 JSON text: the received bytes, or a repaired copy
  // (invalid sequences replaced by U+FFFD) when utf8_repaired is set.
  std::string_view json;
  bool utf8_repaired = false;

  // Field-level anomalies ("code: expected an integer, got a string"),
  // "; "-separated.
  // Empty for every well-formed event.
  std::string problems;

  template <typename T>
  [[nodiscard]] const T* as() const {
    return std::get_if<T>(&payload);
  }
};

}  // namespace trace2d::proto
