#include "otlp/span_builder.hpp"

#include <fmt/compile.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <map>
#include <string_view>
#include <tuple>

#include "otlp/span_ids.hpp"
#include "proto/utf8.hpp"

namespace trace2d::otlp {
namespace {

std::string_view last_component(std::string_view sid) {
  const auto slash = sid.rfind('/');
  return slash == std::string_view::npos ? sid : sid.substr(slash + 1);
}

// The component before the last: the parent process's, in trace2receiver's ids.
std::string_view parent_component(std::string_view sid) {
  const auto slash = sid.rfind('/');
  return last_component(sid.substr(0, slash));
}

// The pieces one after the other, allocated once (a span's name).
std::string concat(std::initializer_list<std::string_view> pieces) {
  std::size_t size = 0;
  for (const std::string_view piece : pieces) {
    size += piece.size();
  }
  std::string out;
  out.reserve(size);
  for (const std::string_view piece : pieces) {
    out.append(piece);
  }
  return out;
}

// The value made in place, from what is given: through a temporary
// AttributeValue it was moved once more, a variant visit each.
template <typename Value>
void add(std::vector<Attribute>& attributes, AttributeKey key, Value&& value) {
  attributes.emplace_back(std::move(key), std::forward<Value>(value));
}

// `text` is the tree's: the attribute is a view of it.
void add_if(std::vector<Attribute>& attributes, AttributeKey key, const std::string& text) {
  if (!text.empty()) {
    add(attributes, std::move(key), Text::view_of(text));
  }
}

// Distinct region names a process span's summary lists at most: git uses a
// few dozen; a session that sends a million invented labels gets a bounded
// attribute that says it was cut.
constexpr std::size_t k_max_summary_entries = 256;

// Where a process's span hangs: given by the node above it (a child span,
// a process span, or none at all), or, at the top of what is built,
// derived from its SID as trace2receiver derives it.
struct Parent {
  std::optional<SpanId> id;
  bool given = false;
  // The code the parent's child_exit reported for the child_start that ran
  // this process, when it hangs under one: what is known of how a process
  // that never said ended.
  std::optional<std::int64_t> launcher_code;
};

// The code of the child_start that ran the processes below `node`, when it
// is one.
std::optional<std::int64_t> launcher_code_of(const model::Node& node) {
  const model::ChildInfo* child = node.child();
  return child != nullptr ? child->code : std::nullopt;
}

// A process that replaced itself (an exec with no exec_result: git-shell
// becoming git-upload-pack) sends nothing more and ends incomplete, which
// is not a failure. Its own nodes only, not the processes below.
bool replaced_itself(const model::Node& node) {
  for (const model::Node& inner_node : node.children) {
    if (inner_node.process() != nullptr) {
      continue;
    }
    if (const model::ExecInfo* e = inner_node.exec(); e != nullptr && !e->code) {
      return true;
    }
    if (replaced_itself(inner_node)) {
      return true;
    }
  }
  return false;
}

// git runs a child it reaped after a signal with the code 128 + the signal
// (run-command.c, wait_or_whine(), as a POSIX shell reports it).
constexpr std::int64_t k_signal_code_base = 128;
constexpr std::int64_t k_max_signal = 64;

// Why a process span is ERROR (docs/otlp.md, "Status"); "" when it is not.
std::string process_error(const model::Node& node, const model::ProcessInfo& p,
                          std::optional<std::int64_t> launcher_code) {
  if (p.exit_code && *p.exit_code != 0) {
    return fmt::format("exit code {}", *p.exit_code);
  }
  if (p.signo) {
    return fmt::format("killed by signal {}", *p.signo);
  }
  // A git killed by a signal other than SIGPIPE says nothing more: it ends
  // incomplete, its connection closed without an exit. Its parent, when it
  // ran it, saw how it ended.
  if (p.status == "incomplete" && !p.exit_code && !replaced_itself(node)) {
    if (!launcher_code) {
      return "ended without exiting: killed by a signal, or crashed";
    }
    if (*launcher_code > k_signal_code_base && *launcher_code <= k_signal_code_base + k_max_signal) {
      return fmt::format("killed by signal {}", *launcher_code - k_signal_code_base);
    }
    if (*launcher_code != 0) {
      return fmt::format("exit code {} (as its parent saw it)", *launcher_code);
    }
    // Its parent saw it exit 0: only its last events were not seen.
  }
  if (p.error_count > 0) {
    return !p.errors.empty() && !p.errors.front().msg.empty() ? p.errors.front().msg : std::string("error event");
  }
  return {};
}

// git's probe for a dashed command: for `git co`, git first tries to run
// `git-co` (child class "dashed"), which fails to start (-1, or 127 from a
// shell) unless such a program exists, and then expands the alias. Every
// alias run does it: an expected outcome, not an error.
bool is_dashed_probe(const model::ChildInfo& c) {
  return c.child_class == "dashed" && c.code && (*c.code == -1 || *c.code == 127);
}

// JSON object text from sorted (name, JSON value) pairs.
template <typename Map>
std::string json_object(const Map& entries, bool cut) {
  // Sized once, for text without escapes: grown by appends, it was
  // reallocated several times an object.
  std::size_t size = 16;
  for (const auto& [name, value] : entries) {
    size += name.size() + value.size() + 4;
  }
  std::string out;
  out.reserve(size);
  out += '{';
  for (const auto& [name, value] : entries) {
    if (out.size() > 1) {
      out += ',';
    }
    proto::append_json_string(out, name);
    out += ':';
    out += value;
  }
  if (cut) {
    out += out.size() > 1 ? ",\"...\":true" : "\"...\":true";
  }
  out += '}';
  return out;
}

// The region timers of one process (its regions on every thread, not its
// child processes'): count and total seconds per "category/label", in the
// order of their names. The builder keeps one from process to process, its
// memory reused: a std::map<std::string, ...> made a node, and a string for
// a long name, for each name of each process (about one allocation a span).
class RegionTimers {
 public:
  void clear() {
    m_names.clear();
    m_entries.clear();
    m_cut = false;
  }

  void add(std::string_view category, std::string_view label, double seconds) {
    m_name.assign(category).append(1, '/').append(label);
    auto it = std::lower_bound(m_entries.begin(), m_entries.end(), std::string_view(m_name),
                               [this](const Entry& entry, std::string_view name) { return name_of(entry) < name; });
    if (it == m_entries.end() || name_of(*it) != m_name) {
      if (m_entries.size() >= k_max_summary_entries) {
        m_cut = true;
        return;
      }
      it = m_entries.insert(it, Entry{m_names.size(), m_name.size()});
      m_names += m_name;
    }
    ++it->count;
    it->seconds += seconds;
  }

  [[nodiscard]] bool empty() const { return m_entries.empty(); }

  // {"category/label":{"count":n,"seconds":s},...}, by name.
  [[nodiscard]] std::string json() const {
    // Sized once: a name's quotes and a timer's members, its numbers at
    // their usual width (grown by appends, it was reallocated several times).
    std::string out;
    out.reserve(m_names.size() + m_entries.size() * 48 + 16);
    out += '{';
    for (const Entry& entry : m_entries) {
      if (out.size() > 1) {
        out += ',';
      }
      proto::append_json_string(out, name_of(entry));
      // Compiled: a format string parsed for each timer cost more than the numbers.
      fmt::format_to(std::back_inserter(out), FMT_COMPILE(":{{\"count\":{},\"seconds\":{:.6f}}}"), entry.count,
                     entry.seconds);
    }
    if (m_cut) {
      out += ",\"...\":true";
    }
    out += '}';
    return out;
  }

 private:
  struct Entry {
    std::size_t offset = 0;  // of its name in m_names
    std::size_t size = 0;
    std::int64_t count = 0;
    double seconds = 0;
  };
  [[nodiscard]] std::string_view name_of(const Entry& entry) const {
    return std::string_view(m_names).substr(entry.offset, entry.size);
  }

  std::string m_names;           // the names, one after another
  std::string m_name;            // the name looked up
  std::vector<Entry> m_entries;  // by name
  bool m_cut = false;            // a name left out: over k_max_summary_entries
};

void collect_region_timers(const model::Node& node, RegionTimers& timers) {
  for (const model::Node& inner_node : node.children) {
    if (inner_node.process() != nullptr) {
      continue;  // its own span has its own summary
    }
    if (const model::RegionInfo* r = inner_node.region(); r != nullptr && r->elapsed) {
      timers.add(r->category, r->label, *r->elapsed);
    }
    collect_region_timers(inner_node, timers);
  }
}

// The summaries every level but drop carries on the process span: region
// timers ("trace2d.summary.regions") and error events grouped by their
// message pattern, git's printf format ("trace2d.summary.errors").
// `timers` is the caller's, reused.
void add_summaries(std::vector<Attribute>& a, const model::Node& node, const model::ProcessInfo& p,
                   RegionTimers& timers) {
  timers.clear();
  collect_region_timers(node, timers);
  if (!timers.empty()) {
    add(a, "trace2d.summary.regions", timers.json());
  }
  if (!p.errors.empty()) {
    std::map<std::string, std::int64_t> patterns;
    bool errors_cut = false;
    for (const model::ErrorInfo& error : p.errors) {
      const std::string& pattern = error.fmt.empty() ? error.msg : error.fmt;
      if (patterns.size() >= k_max_summary_entries && !patterns.contains(pattern)) {
        errors_cut = true;
        continue;
      }
      ++patterns[pattern];
    }
    std::map<std::string, std::string> values;
    for (const auto& [pattern, count] : patterns) {
      values.emplace(pattern, std::to_string(count));
    }
    add(a, "trace2d.summary.errors", json_object(values, errors_cut));
  }
}

// trace2receiver's process data, timers and counters: JSON text
// {"category": {"name": value}} per kind.
// `sorted` is the caller's, reused: the annotations are put in order by
// (kind, category, name), the last of each name winning as git's last
// value does, and written as they come; a map of maps of maps copied
// every kind, category, name and value into nodes of its own.
void add_annotations(std::vector<Attribute>& a, const model::ProcessInfo& p,
                     std::vector<const model::Annotation*>& sorted) {
  sorted.clear();
  for (const model::Annotation& annotation : p.annotations) {
    sorted.push_back(&annotation);
  }
  std::stable_sort(sorted.begin(), sorted.end(), [](const model::Annotation* x, const model::Annotation* y) {
    return std::tie(x->kind, x->category, x->name) < std::tie(y->kind, y->category, y->name);
  });
  for (std::size_t at = 0; at < sorted.size();) {
    const std::string& kind = sorted[at]->kind;
    std::size_t size = 2;
    for (std::size_t i = at; i < sorted.size() && sorted[i]->kind == kind; ++i) {
      size += sorted[i]->category.size() + sorted[i]->name.size() + sorted[i]->json_value.size() + 8;
    }
    std::string out;
    out.reserve(size);
    out += '{';
    while (at < sorted.size() && sorted[at]->kind == kind) {
      const std::string& category = sorted[at]->category;
      if (out.size() > 1) {
        out += ',';
      }
      proto::append_json_string(out, category);
      out += ":{";
      bool first = true;
      for (; at < sorted.size() && sorted[at]->kind == kind && sorted[at]->category == category; ++at) {
        if (at + 1 < sorted.size() && sorted[at + 1]->kind == kind && sorted[at + 1]->category == category &&
            sorted[at + 1]->name == sorted[at]->name) {
          continue;  // a later value of the same name wins
        }
        if (!first) {
          out += ',';
        }
        first = false;
        proto::append_json_string(out, sorted[at]->name);
        out += ':';
        out += sorted[at]->json_value;
      }
      out += '}';
    }
    out += '}';
    AttributeKey key = kind == "data"    ? AttributeKey("trace2.process.data")
                       : kind == "timer" ? AttributeKey("trace2.process.timers")
                                         : AttributeKey("trace2.process.counters");
    add(a, std::move(key), std::move(out));
  }
}

class Builder {
 public:
  Builder(const model::ProcessTree& tree, std::vector<Span>& spans, const ProcessFilter& include,
          const ExportRules& rules, std::vector<std::int64_t>* session_of, std::size_t max_spans_per_process)
      : m_tree(tree),
        m_spans(spans),
        m_include(include),
        m_rules(rules),
        m_session_of(session_of),
        m_max_spans(max_spans_per_process) {}

  void process(const model::Node& node, Parent parent, std::uint64_t parent_start) {
    const model::ProcessInfo& p = *node.process();
    const bool emit = !m_include || m_include(p);
    const DetailLevel level = m_rules.level_of(p);
    std::optional<SpanId> parent_id = parent.id;
    // trace2receiver's parent, from the SID; none for the top of a tree
    // re-rooted for ownership: the session its SID names is another
    // owner's, in another trace.
    if (!parent.given && p.sid.find('/') != std::string::npos && p.tree_sid != p.sid) {
      parent_id = process_span_id(parent_component(p.sid));
    }
    const std::uint64_t start = time_of(node.offset).value_or(parent_start);
    if (level == DetailLevel::drop) {
      if (emit) {
        ++m_stats.dropped;
        m_stats.dropped_sessions.push_back(p.session_id);
      }
      // Its descendants hang where it would have, so the tree stays
      // connected; below a dropped top process they keep trace2receiver's
      // parent id (the dropped span's), as a trace2receiver fleet has it.
      if (parent_id) {
        Owner owner{p.session_id};
        inner(node, p, parent_id, start, DetailLevel::drop, false, owner);
      } else {
        inner_derived(node, start);
      }
      return;
    }
    const SpanId id = process_span_id(last_component(p.sid));
    Owner owner{p.session_id};
    if (emit) {
      ++m_stats.processes;
      push(process_span(node, p, level, trace_of(p), id, parent_id, start, parent.launcher_code), owner);
    }
    inner(node, p, id, start, level, emit, owner);
  }

  [[nodiscard]] BuildStats stats() const {
    BuildStats stats = m_stats;
    for (const auto& [session, count] : m_left_out) {
      stats.left_out.emplace_back(session, count);
    }
    return stats;
  }

 private:
  Span process_span(const model::Node& node, const model::ProcessInfo& p, DetailLevel level, const TraceId& trace,
                    const SpanId& id, const std::optional<SpanId>& parent, std::uint64_t start,
                    std::optional<std::int64_t> launcher_code) {
    Span span;
    span.trace_id = trace;
    span.span_id = id;
    span.parent_span_id = parent;
    span.name = process_name(p);
    span.kind = SpanKind::server;
    span.start_time_unix_nano = start;
    span.end_time_unix_nano = process_end(p, node, span.start_time_unix_nano);

    auto& a = span.attributes;
    a.reserve(24);  // a process span's usual count: growing one by one copies them again and again
    add(a, "trace2.span.type", Text("process"));
    add(a, "trace2.cmd.sid", Text::view_of(p.sid));
    add(a, "trace2.cmd.argv", TextList::view_of(p.argv));
    add_if(a, "trace2.cmd.name", p.cmd_name);
    add_if(a, "trace2.cmd.mode", p.cmd_mode);
    add_if(a, "trace2.cmd.hierarchy", p.hierarchy);
    add_if(a, "trace2.cmd.version", p.version);
    add(a, "process.command_args", TextList::view_of(p.argv));
    if (!p.argv.empty()) {
      add(a, "process.executable.name", Text::view_of(program_name(p.argv.front())));
    }
    if (p.pid) {
      add(a, "process.pid", *p.pid);
    }
    if (p.exit_code) {
      add(a, "trace2.cmd.exit_code", std::to_string(*p.exit_code));  // trace2receiver sends numbers as text
      add(a, "process.exit.code", *p.exit_code);
    }
    if (p.signo) {
      add(a, "trace2.cmd.signal", std::to_string(*p.signo));
    }
    add(a, "trace2d.session.status", Text::view_of(p.status));
    if (p.lines_lost > 0) {
      add(a, "trace2d.lines_lost", p.lines_lost);  // not whole: docs/otlp.md
    }
    add(a, "trace2d.placed_by", Text::view_of(p.placed_by));
    if (p.tree_sid.find('/') != std::string::npos) {
      // A tree re-rooted for ownership: its trace id is this text's, not
      // the SID's first component's (trace_id_of_tree()).
      add(a, "trace2d.tree_sid", Text::view_of(p.tree_sid));
    }
    add(a, "trace2d.detail", Text::view_of(to_string(level)));  // a literal's view
    if (p.events_left_out > 0) {
      // A huge session sent as its first events: the rest are counted, not
      // loaded (docs/otlp.md, "Delivery").
      add(a, "trace2d.events_left_out", p.events_left_out);
    }
    if (!m_rules.nickname_key.empty()) {
      // The last setting wins, as in git's config.
      for (auto it = p.params.rbegin(); it != p.params.rend(); ++it) {
        if (it->param == m_rules.nickname_key) {
          add_if(a, "trace2.repo.nickname", it->value);
          break;
        }
      }
    }
    if (!m_rules.important_data.empty()) {
      std::string key;
      for (const model::Annotation& annotation : p.annotations) {
        if (annotation.kind != "data") {
          continue;
        }
        key = annotation.category + '/' + annotation.name;
        if (m_rules.important_data.contains(key)) {
          add(a, "trace2.data." + annotation.category + '.' + annotation.name, Text::view_of(annotation.text));
        }
      }
    }
    add_summaries(a, node, p, m_timers);
    if (level >= DetailLevel::process) {
      add_annotations(a, p, m_annotations);
    }

    for (const model::ErrorInfo& error : p.errors) {
      SpanEvent event;
      event.name = "error";
      event.time_unix_nano = error.time_us ? static_cast<std::uint64_t>(*error.time_us) * 1000 : span.start_time_unix_nano;
      add_if(event.attributes, "trace2.cmd.error.message", error.msg);
      add_if(event.attributes, "trace2.cmd.error.format", error.fmt);
      add_if(event.attributes, "thread.name", error.thread);
      span.events.push_back(std::move(event));
    }
    if (std::string error = process_error(node, p, launcher_code); !error.empty()) {
      span.status = StatusCode::error;
      span.status_message = std::move(error);
    }
    return span;
  }

  // Absolute time of a tree offset (seconds since the tree's origin).
  std::optional<std::uint64_t> time_of(const std::optional<double>& offset) const {
    if (!offset || !m_tree.origin_us || !std::isfinite(*offset)) {
      return std::nullopt;
    }
    // Checked in doubles (stored times are any 64-bit values), then summed
    // in integers: exact to git's microsecond whatever the origin is, so the
    // exporter, which loads part of a tree (model::load_export_rows), sends
    // the times a build of the whole tree gives.
    const double approx = static_cast<double>(*m_tree.origin_us) * 1000.0 + *offset * 1e9;
    if (approx <= 0 || approx >= 9e18 || std::abs(*offset) >= 9e9 ||
        std::abs(static_cast<double>(*m_tree.origin_us)) >= 9e15) {
      return std::nullopt;
    }
    const std::int64_t ns = *m_tree.origin_us * 1000 + std::llround(*offset * 1e9);
    return ns <= 0 ? std::nullopt : std::optional<std::uint64_t>(static_cast<std::uint64_t>(ns));
  }

  static std::uint64_t after(std::uint64_t start, const std::optional<double>& elapsed) {
    if (!elapsed || !std::isfinite(*elapsed) || *elapsed <= 0) {
      return start;
    }
    return start + static_cast<std::uint64_t>(*elapsed * 1e9);
  }

  // A process that never said how long it ran ends at its last event.
  static std::uint64_t process_end(const model::ProcessInfo& p, const model::Node& node, std::uint64_t start) {
    if (node.elapsed) {
      return after(start, node.elapsed);
    }
    if (p.last_event_us && static_cast<std::uint64_t>(*p.last_event_us) * 1000 > start) {
      return static_cast<std::uint64_t>(*p.last_event_us) * 1000;
    }
    return start;
  }

  // The processes below a dropped top process: each derives its parent from
  // its SID.
  void inner_derived(const model::Node& parent_node, std::uint64_t parent_start) {
    for (const model::Node& node : parent_node.children) {
      if (node.process() != nullptr) {
        process(node, Parent{std::nullopt, false, launcher_code_of(parent_node)}, parent_start);
      } else {
        inner_derived(node, time_of(node.offset).value_or(parent_start));
      }
    }
  }

  // A process's session and the spans built of it so far: counted in its
  // walk, where a map by session id was a lookup a span and a node a session.
  struct Owner {
    std::int64_t session_id = 0;
    std::size_t built = 0;
  };

  void push(Span span, Owner& owner) {
    if (owner.built < m_max_spans) {
      ++owner.built;
    } else {
      ++m_left_out[owner.session_id];
      return;
    }
    m_spans.push_back(std::move(span));
    if (m_session_of != nullptr) {
      m_session_of->push_back(owner.session_id);
    }
  }

  // The regions, children and threads of one process. Walked even when the
  // process sends no spans (`emit` false: not sent now, or dropped), for
  // the processes below, which get the parents they would have in a whole
  // build: ids are derived, not looked up. A node the level leaves out
  // (regions and threads below verbose, children below process) gives its
  // contents to its parent.
  void inner(const model::Node& parent_node, const model::ProcessInfo& process_info,
             const std::optional<SpanId>& parent, std::uint64_t parent_start, DetailLevel level, bool emit,
             Owner& owner) {
    const std::string& sid = process_info.sid;
    for (const model::Node& node : parent_node.children) {
      if (node.process() != nullptr) {
        process(node, Parent{parent, true, launcher_code_of(parent_node)}, parent_start);
        continue;
      }
      const std::optional<std::uint64_t> start = time_of(node.offset);
      const bool launch = node.child() != nullptr || node.exec() != nullptr;
      const bool shown = launch ? level >= DetailLevel::process : level >= DetailLevel::verbose;
      if (!start || !shown) {
        if (!start && shown && emit) {
          ++m_stats.untimed;  // nothing to place it by: no span, its children go to its parent
        }
        inner(node, process_info, parent, start.value_or(parent_start), level, emit, owner);
        continue;
      }
      Span span;
      span.trace_id = trace_of(process_info);
      span.parent_span_id = parent;
      span.start_time_unix_nano = *start;
      span.end_time_unix_nano = after(*start, node.elapsed);
      auto& a = span.attributes;
      if (emit) {
        a.reserve(8);  // a region's or child's; growing one by one cost more
      }
      if (const model::RegionInfo* r = node.region()) {
        span.span_id = inner_span_id(sid, "region ", r->seq);
        if (emit) {
          span.name = concat({"region(", r->category, ",", r->label, ")"});
          add(a, "trace2.span.type", Text("region"));
          add_if(a, "trace2.region.category", r->category);
          add_if(a, "trace2.region.label", r->label);
          add_if(a, "trace2.region.message", r->msg);
          if (r->nesting) {
            add(a, "trace2.region.nesting", std::to_string(*r->nesting));
          }
          if (r->repo) {
            add(a, "trace2.region.repoid", std::to_string(*r->repo));
          }
          add_if(a, "thread.name", r->thread);
        }
      } else if (const model::ChildInfo* c = node.child()) {
        span.span_id = inner_span_id(sid, "child ", c->child_id);
        span.kind = SpanKind::client;
        if (emit) {
          if (!c->hook_name.empty()) {
            span.name = concat({"child(hook:", c->hook_name, ")"});
          } else if (!c->child_class.empty()) {
            span.name = concat({"child(class:", c->child_class, ")"});
          } else {
            const std::string_view program = c->argv.empty() ? std::string_view("?") : program_name(c->argv.front());
            span.name = concat({"child(", program, ")"});
          }
          add(a, "trace2.span.type", Text("child"));
          add(a, "trace2.child.id", std::to_string(c->child_id));
          add(a, "trace2.child.argv", TextList::view_of(c->argv));
          add_if(a, "trace2.child.class", c->child_class);
          add_if(a, "trace2.child.hook", c->hook_name);
          add_if(a, "trace2.child.ready", c->ready);
          if (c->pid) {
            add(a, "trace2.child.pid", std::to_string(*c->pid));
          }
          if (c->code) {
            add(a, "trace2.child.exitcode", std::to_string(*c->code));
            if (*c->code != 0 && !is_dashed_probe(*c)) {
              span.status = StatusCode::error;
              span.status_message = fmt::format("exit code {}", *c->code);
            }
          }
          add_if(a, "thread.name", c->thread);
        }
      } else if (const model::ExecInfo* e = node.exec()) {
        // By seq, not exec_id: only the event's place in its session is unique.
        span.span_id = inner_span_id(sid, "exec ", e->seq);
        span.kind = SpanKind::client;  // as a child's: the process that replaced this one hangs below
        if (emit) {
          const std::string_view program = !e->exe.empty()    ? program_name(e->exe)
                                           : !e->argv.empty() ? program_name(e->argv.front())
                                                              : std::string_view("?");
          span.name = fmt::format("exec({})", program);
          add(a, "trace2.span.type", Text("exec"));
          add(a, "trace2.exec.id", std::to_string(e->exec_id));
          add_if(a, "trace2.exec.exe", e->exe);
          add(a, "trace2.exec.argv", TextList::view_of(e->argv));
          if (e->code) {
            add(a, "trace2.exec.exitcode", std::to_string(*e->code));
            if (*e->code != 0) {
              span.status = StatusCode::error;
              span.status_message = fmt::format("exec failed, code {}", *e->code);
            }
          }
          add_if(a, "thread.name", e->thread);
        }
      } else if (const model::ThreadInfo* t = node.thread()) {
        span.span_id = inner_span_id(sid, "thread " + t->name);
        if (emit) {
          span.name = fmt::format("thread({})", t->name);
          add(a, "trace2.span.type", Text("thread"));
          add(a, "thread.name", Text::view_of(t->name));
        }
      }
      const SpanId id = span.span_id;
      if (emit) {
        push(std::move(span), owner);
      }
      inner(node, process_info, id, *start, level, emit, owner);
    }
  }

  // The trace of a process's spans: its tree's (trace_id_of_tree(); rows
  // that name no tree, as tests build them, its SID's root's), hashed once
  // for the processes of a tree and their spans, not once a process.
  const TraceId& trace_of(const model::ProcessInfo& p) {
    const std::string_view tree =
        p.tree_sid.empty() ? std::string_view(p.sid).substr(0, p.sid.find('/')) : std::string_view(p.tree_sid);
    if (m_trace_root != tree) {
      m_trace_root = tree;
      m_trace = trace_id_of_tree(tree);
    }
    return m_trace;
  }

  const model::ProcessTree& m_tree;
  std::vector<Span>& m_spans;
  std::optional<std::string> m_trace_root;
  TraceId m_trace{};
  const ProcessFilter& m_include;
  const ExportRules& m_rules;
  std::vector<std::int64_t>* m_session_of;
  std::size_t m_max_spans;
  std::map<std::int64_t, std::size_t> m_left_out;            // spans left out, by session
  BuildStats m_stats;
  RegionTimers m_timers;  // a process span's, reused
  std::vector<const model::Annotation*> m_annotations;  // a process span's, reused
};

}  // namespace

BuildStats append_spans(const model::ProcessTree& tree, std::vector<Span>& spans, const ProcessFilter& include,
                        const ExportRules& rules, std::vector<std::int64_t>* session_of,
                        std::size_t max_spans_per_process) {
  Builder builder(tree, spans, include, rules, session_of, max_spans_per_process);
  for (const model::Node& node : tree.processes) {
    if (node.process() != nullptr) {
      builder.process(node, Parent{}, 0);
    }
  }
  return builder.stats();
}

}  // namespace trace2d::otlp
