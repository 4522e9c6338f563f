#include "otlp/span_builder.hpp"

#include <fmt/compile.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "otlp/pii.hpp"
#include "otlp/receiver_json.hpp"
#include "otlp/receiver_names.hpp"
#include "otlp/resource.hpp"
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
  // -1, the unknown code the client library's execvp() sends, is not an
  // error when the process replaced itself (git's exec sends no code).
  if (p.exit_code && *p.exit_code != 0 && !(*p.exit_code == -1 && replaced_itself(node))) {
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

// trace2receiver's exit code: git's, 128 + the signal after a signal
// event, -1 for a process that never said.
std::int64_t receiver_exit_code(const model::ProcessInfo& p) {
  if (p.exit_code) {
    return *p.exit_code;
  }
  if (p.signo) {
    return k_signal_code_base + *p.signo;
  }
  return -1;
}

// A data value as trace2receiver writes it in its JSON: a string Go's way
// (from the text git sent), anything else (an integer, a data_json's
// object) as its JSON text.
std::string receiver_data_value(const model::Annotation& annotation) {
  if (!annotation.json_value.empty() && annotation.json_value.front() == '"') {
    std::string out;
    append_go_json_string(out, annotation.text);
    return out;
  }
  return annotation.json_value.empty() ? std::string("null") : annotation.json_value;
}

// A timer as trace2receiver writes it: git's t_total, t_min and t_max
// under its names.
std::string receiver_timer_value(const model::Annotation& annotation) {
  if (annotation.timer_fields.size() != 4) {
    return annotation.json_value;
  }
  const std::vector<std::string>& f = annotation.timer_fields;
  return "{\"intervals\":" + f[0] + ",\"total_sec\":" + f[1] + ",\"min_sec\":" + f[2] + ",\"max_sec\":" + f[3] + "}";
}

// The timers or counters ("timer", "counter") among `annotations`,
// {"category":{"name":value}}; the last value of a name wins, as in
// trace2receiver's maps. "" when there is none.
template <typename Annotations, typename Pick>
std::string receiver_figures(const Annotations& annotations, std::string_view kind, Pick&& pick) {
  NestedJson values;
  for (const auto& item : annotations) {
    const model::Annotation& annotation = pick(item);
    if (annotation.kind != kind) {
      continue;
    }
    values[annotation.category].insert_or_assign(
        annotation.name, kind == "timer" ? receiver_timer_value(annotation) : annotation.json_value);
  }
  return values.empty() ? std::string() : go_json_nested(values);
}

// The process's own timers or counters (not a thread's: th_timer, th_counter).
std::string process_figures(const model::ProcessInfo& p, std::string_view kind) {
  std::vector<const model::Annotation*> own;
  for (const model::Annotation& annotation : p.annotations) {
    if (!annotation.per_thread && annotation.kind == kind) {
      own.push_back(&annotation);
    }
  }
  return receiver_figures(own, kind, [](const model::Annotation* a) -> const model::Annotation& { return *a; });
}

// Process data: data events at nesting 1 (or none given), {"category":{"key":value}}.
std::string receiver_process_data(const model::ProcessInfo& p) {
  NestedJson values;
  for (const model::Annotation& annotation : p.annotations) {
    if (annotation.kind == "data" && annotation.nesting.value_or(1) <= 1) {
      values[annotation.category].insert_or_assign(annotation.name, receiver_data_value(annotation));
    }
  }
  return values.empty() ? std::string() : go_json_nested(values);
}

// trace2.param.set: each param's value as param_value() chooses it (the
// highest scope priority, the first of equal ones), in one pass.
std::string receiver_param_set(const model::ProcessInfo& p) {
  std::map<std::string_view, std::pair<int, const std::string*>> chosen;
  for (const model::ParamInfo& param : p.params) {
    const int priority = param_scope_priority(param.scope);
    const auto [at, added] = chosen.try_emplace(param.param, priority, &param.value);
    if (!added && priority > at->second.first) {
      at->second = {priority, &param.value};
    }
  }
  std::map<std::string, std::string> values;
  for (const auto& [param, value] : chosen) {
    std::string quoted;
    append_go_json_string(quoted, *value.second);
    values.emplace(std::string(param), std::move(quoted));
  }
  return go_json_object(values);
}

// trace2.repo.set: {"<repo id>":"<worktree>"}, the last of each id.
std::string receiver_repo_set(const model::ProcessInfo& p) {
  std::map<std::string, std::string> values;
  for (const model::RepoInfo& repo : p.repos) {
    std::string quoted;
    append_go_json_string(quoted, repo.worktree);
    values.insert_or_assign(std::to_string(repo.repo), std::move(quoted));
  }
  return go_json_object(values);
}

// The closed regions of one process (on every thread; not its child
// processes').
template <typename Visit>
void for_each_closed_region(const model::Node& node, Visit&& visit) {
  for (const model::Node& inner_node : node.children) {
    if (inner_node.process() != nullptr) {
      continue;
    }
    if (const model::RegionInfo* r = inner_node.region(); r != nullptr && r->elapsed) {
      visit(*r);
    }
    for_each_closed_region(inner_node, visit);
  }
}

// trace2.process.summary: the configured counts and times that are not
// zero; "" when none.
std::string receiver_summary(const model::Node& node, const model::ProcessInfo& p, const ExportRules& rules) {
  std::map<std::string, std::string> fields;
  for (const SummaryMessage& rule : rules.summary_messages) {
    std::int64_t count = 0;
    for (const model::ErrorInfo& error : p.errors) {
      count += error.msg.starts_with(rule.prefix) ? 1 : 0;
    }
    for (const std::string& message : p.printf_messages) {
      count += message.starts_with(rule.prefix) ? 1 : 0;
    }
    if (count > 0) {
      fields.insert_or_assign(rule.field, std::to_string(count));
    }
  }
  for (const SummaryRegion& rule : rules.summary_regions) {
    std::int64_t count = 0;
    double seconds = 0;
    for_each_closed_region(node, [&](const model::RegionInfo& r) {
      if (r.category == rule.category && r.label == rule.label) {
        ++count;
        seconds += *r.elapsed;
      }
    });
    if (!rule.count_field.empty() && count > 0) {
      fields.insert_or_assign(rule.count_field, std::to_string(count));
    }
    if (!rule.time_field.empty() && seconds > 0) {
      fields.insert_or_assign(rule.time_field, fmt::format("{}", seconds));
    }
  }
  return fields.empty() ? std::string() : go_json_object(fields);
}

// trace2.process.important_events: {"field":[value,...]}, values in event
// order; "" when none matched.
std::string receiver_important_events(const model::ProcessInfo& p, const ExportRules& rules) {
  std::map<std::string, std::string> fields;  // field → the array's text, open
  for (const model::Annotation& annotation : p.annotations) {
    if (annotation.kind != "data") {
      continue;
    }
    for (const ImportantEvent& rule : rules.important_events) {
      if (annotation.category == rule.category && annotation.name.starts_with(rule.key_prefix)) {
        std::string& array = fields[rule.field];
        array += array.empty() ? '[' : ',';
        array += receiver_data_value(annotation);
      }
    }
  }
  if (fields.empty()) {
    return {};
  }
  for (auto& [field, array] : fields) {
    array += ']';
  }
  return go_json_object(fields);
}

// A process's th_timer and th_counter events by thread.
using ThreadFigures = std::map<std::string_view, std::vector<const model::Annotation*>>;

// trace2.thread.timers and trace2.thread.counters of one thread.
void add_thread_figures(std::vector<Attribute>& a, const ThreadFigures& figures, std::string_view thread) {
  const auto found = figures.find(thread);
  if (found == figures.end()) {
    return;
  }
  const auto pick = [](const model::Annotation* annotation) -> const model::Annotation& { return *annotation; };
  if (std::string timers = receiver_figures(found->second, "timer", pick); !timers.empty()) {
    add(a, "trace2.thread.timers", std::move(timers));
  }
  if (std::string counters = receiver_figures(found->second, "counter", pick); !counters.empty()) {
    add(a, "trace2.thread.counters", std::move(counters));
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
        m_max_spans(max_spans_per_process),
        m_host_name(rules.pii_host_name ? this_host_name() : std::string()) {}

  void process(const model::Node& node, Parent parent, std::uint64_t parent_start) {
    const model::ProcessInfo& p = *node.process();
    const bool emit = !m_include || m_include(p);
    const DetailLevel chosen = m_rules.level_of(p);
    std::string error = process_error(node, p, parent.launcher_code);
    // Detail by outcome: a failed or slow run goes at the outcome's level.
    const std::string_view raised_by =
        m_rules.outcome_level && chosen != DetailLevel::drop && chosen < *m_rules.outcome_level
            ? m_rules.raised_by(p, chosen, !error.empty())
            : std::string_view();
    const DetailLevel level = raised_by.empty() ? chosen : *m_rules.outcome_level;
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
        inner(node, p, parent_id, start, process_end(p, node, start), DetailLevel::drop, false, owner);
      } else {
        inner_derived(node, start);
      }
      return;
    }
    const SpanId id = process_span_id(last_component(p.sid));
    Owner owner{p.session_id};
    if (emit) {
      owner.resource = make_process_resource(p);
      if (level >= DetailLevel::verbose) {
        for (const model::Annotation& annotation : p.annotations) {
          if (annotation.kind == "data" && annotation.nesting.value_or(1) >= 2) {
            owner.region_data.push_back(&annotation);
          } else if (annotation.per_thread) {
            owner.thread_figures[annotation.thread].push_back(&annotation);
          }
        }
        std::stable_sort(owner.region_data.begin(), owner.region_data.end(),
                         [](const model::Annotation* x, const model::Annotation* y) {
                           return std::tie(x->thread, x->seq) < std::tie(y->thread, y->seq);
                         });
      }
      ++m_stats.processes;
      push(process_span(node, p, level, raised_by, trace_of(p), id, parent_id, start, std::move(error),
                        owner.thread_figures),
           owner);
    }
    inner(node, p, id, start, process_end(p, node, start), level, emit, owner);
  }

  [[nodiscard]] BuildStats stats() const {
    BuildStats stats = m_stats;
    for (const auto& [session, count] : m_left_out) {
      stats.left_out.emplace_back(session, count);
    }
    return stats;
  }

 private:
  Span process_span(const model::Node& node, const model::ProcessInfo& p, DetailLevel level, std::string_view raised_by,
                    const TraceId& trace, const SpanId& id, const std::optional<SpanId>& parent, std::uint64_t start,
                    std::string status_error, const ThreadFigures& thread_figures) {
    Span span;
    span.trace_id = trace;
    span.span_id = id;
    span.parent_span_id = parent;
    span.name = process_name(p);
    span.kind = SpanKind::server;
    span.start_time_unix_nano = start;
    span.end_time_unix_nano = process_end(p, node, span.start_time_unix_nano);

    auto& a = span.attributes;
    a.reserve(40);  // a process span's usual count: growing one by one copies them again and again
    // trace2receiver's attributes (docs/otlp.md, "Compared with trace2receiver").
    add(a, "trace2.span.type", Text("process"));
    add(a, "trace2.cmd.sid", Text::view_of(p.sid));
    add(a, "trace2.machine.arch", Text::view_of(machine_arch()));
    add(a, "trace2.machine.os", Text::view_of(machine_os()));
    if (m_rules.pii_host_name && !m_host_name.empty()) {
      add(a, "trace2.pii.hostname", m_host_name);  // a copy: the builder ends before its spans
    }
    if (m_rules.pii_user_name && p.owner.uid) {
      if (const std::optional<std::string>& user = user_name(*p.owner.uid)) {
        add(a, "trace2.pii.username", *user);  // a copy, as the host name
      }
    }
    add(a, "trace2.cmd.name", executable_name(p));
    add(a, "trace2.cmd.name_verb", name_verb(p));
    add(a, "trace2.cmd.name_verb_mode", span.name);
    add(a, "trace2.cmd.hierarchy", Text::view_of(p.hierarchy));
    add(a, "trace2.cmd.exit_code", std::to_string(receiver_exit_code(p)));  // trace2receiver sends numbers as text
    add(a, "trace2.cmd.argv", go_json_string_array(p.argv));
    if (level >= DetailLevel::process) {
      if (!p.ancestry.empty()) {
        add(a, "trace2.cmd.ancestry", go_json_string_array(p.ancestry));
      }
      if (p.alias && !p.alias->empty()) {
        add(a, "trace2.cmd.alias.key", Text::view_of(*p.alias));
        if (!p.alias_argv.empty()) {
          add(a, "trace2.cmd.alias.value", go_json_string_array(p.alias_argv));
        }
      }
    }
    // trace2receiver keeps one error: the first with a format (until one
    // has one, each replaces the one before). The span events have them all.
    const model::ErrorInfo* first_error = nullptr;
    for (const model::ErrorInfo& error : p.errors) {
      if (first_error == nullptr || first_error->fmt.empty()) {
        first_error = &error;
      }
    }
    if (first_error != nullptr) {
      add_if(a, "trace2.cmd.error.format", first_error->fmt);
      add_if(a, "trace2.cmd.error.message", first_error->msg);
    }
    if (!p.repos.empty()) {
      add(a, "trace2.repo.set", receiver_repo_set(p));
    }
    if (!p.params.empty()) {
      add(a, "trace2.param.set", receiver_param_set(p));
    }
    if (!m_rules.nickname_key.empty()) {
      if (std::optional<std::string> nickname = param_value(p, m_rules.nickname_key); nickname && !nickname->empty()) {
        add(a, "trace2.repo.nickname", std::move(*nickname));
      }
    }
    if (level >= DetailLevel::verbose) {
      // The main thread's own timers and counters (the other threads' are on their spans).
      add_thread_figures(a, thread_figures, "main");
    }
    if (!m_rules.summary_messages.empty() || !m_rules.summary_regions.empty()) {
      if (std::string summary = receiver_summary(node, p, m_rules); !summary.empty()) {
        add(a, "trace2.process.summary", std::move(summary));
      }
    }
    if (!m_rules.important_events.empty()) {
      if (std::string events = receiver_important_events(p, m_rules); !events.empty()) {
        add(a, "trace2.process.important_events", std::move(events));
      }
    }
    if (level >= DetailLevel::process) {
      if (std::string data = receiver_process_data(p); !data.empty()) {
        add(a, "trace2.process.data", std::move(data));
      }
      if (std::string timers = process_figures(p, "timer"); !timers.empty()) {
        add(a, "trace2.process.timers", std::move(timers));
      }
      if (std::string counters = process_figures(p, "counter"); !counters.empty()) {
        add(a, "trace2.process.counters", std::move(counters));
      }
    }
    // trace2d's own additions.
    add_if(a, "trace2.cmd.mode", p.cmd_mode);
    add_if(a, "trace2.cmd.version", p.version);
    add(a, "process.command_args", TextList::view_of(p.argv));
    if (!p.argv.empty()) {
      add(a, "process.executable.name", Text::view_of(program_name(p.argv.front())));
    }
    if (p.pid) {
      add(a, "process.pid", *p.pid);
    }
    if (p.exit_code) {
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
    if (!raised_by.empty()) {
      add(a, "trace2d.detail_raised_by", Text::view_of(raised_by));  // a literal's view
    }
    if (p.events_left_out > 0) {
      // A huge session sent as its first events: the rest are counted, not
      // loaded (docs/otlp.md, "Delivery").
      add(a, "trace2d.events_left_out", p.events_left_out);
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

    for (const model::ErrorInfo& error : p.errors) {
      SpanEvent event;
      event.name = "error";
      event.time_unix_nano = error.time_us ? static_cast<std::uint64_t>(*error.time_us) * 1000 : span.start_time_unix_nano;
      add_if(event.attributes, "trace2.cmd.error.message", error.msg);
      add_if(event.attributes, "trace2.cmd.error.format", error.fmt);
      add_if(event.attributes, "thread.name", error.thread);
      span.events.push_back(std::move(event));
    }
    if (!status_error.empty()) {
      span.status = StatusCode::error;
      span.status_message = std::move(status_error);
    }
    return span;
  }

  // A uid's user name, looked up once a build.
  const std::optional<std::string>& user_name(std::int64_t uid) {
    auto found = m_users.find(uid);
    if (found == m_users.end()) {
      found = m_users.emplace(uid, user_name_of(uid)).first;
    }
    return found->second;
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

  // A process that never said how long it ran (killed, cut off) ends at
  // its last event, or later where a git it ran ends: a SIGKILLed commit's
  // hook goes on, and its gits must lie within the hook's span, which ends
  // with the process. Each process's end is worked out once a build (the
  // walk below a process visits its nodes once; nested cut-off processes
  // would otherwise walk their subtrees again and again).
  std::uint64_t process_end(const model::ProcessInfo& p, const model::Node& node, std::uint64_t start) {
    if (node.elapsed) {
      return after(start, node.elapsed);
    }
    if (const auto known = m_unended_ends.find(&node); known != m_unended_ends.end()) {
      return known->second;
    }
    std::uint64_t end = start;
    if (p.last_event_us && static_cast<std::uint64_t>(*p.last_event_us) * 1000 > start) {
      end = static_cast<std::uint64_t>(*p.last_event_us) * 1000;
    }
    end = std::max(end, latest_process_end_below(node, start));
    m_unended_ends.emplace(&node, end);
    return end;
  }

  // The latest end of the processes under `node` (0 when none).
  std::uint64_t latest_process_end_below(const model::Node& node, std::uint64_t node_start) {
    std::uint64_t latest = 0;
    for (const model::Node& child : node.children) {
      const std::uint64_t child_start = time_of(child.offset).value_or(node_start);
      if (const model::ProcessInfo* process = child.process()) {
        latest = std::max(latest, process_end(*process, child, child_start));
      } else {
        latest = std::max(latest, latest_process_end_below(child, child_start));
      }
    }
    return latest;
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
    ProcessResource resource = nullptr;  // its spans' (trace2receiver's one resource per process)
    // Its data events nested in regions (nesting 2 and deeper), by thread
    // and seq: trace2.region.data (verbose only).
    std::vector<const model::Annotation*> region_data = {};
    // Its th_timer and th_counter events, by thread (verbose only): each
    // thread's span reads its own, not every annotation of the process.
    ThreadFigures thread_figures = {};
  };

  void push(Span span, Owner& owner) {
    if (owner.built < m_max_spans) {
      ++owner.built;
    } else {
      ++m_left_out[owner.session_id];
      return;
    }
    span.resource = owner.resource;
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
  //
  // A region or child whose end git never sent ends with what holds it: a
  // git that dies (die(), exit 128) sends no region_leave and no child_exit,
  // and its child may have run to the end all the same.
  void inner(const model::Node& parent_node, const model::ProcessInfo& process_info,
             const std::optional<SpanId>& parent, std::uint64_t parent_start, std::uint64_t parent_end,
             DetailLevel level, bool emit, Owner& owner) {
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
        inner(node, process_info, parent, start.value_or(parent_start), parent_end, level, emit, owner);
        continue;
      }
      Span span;
      span.trace_id = trace_of(process_info);
      span.parent_span_id = parent;
      span.start_time_unix_nano = *start;
      span.end_time_unix_nano = node.elapsed ? after(*start, node.elapsed) : std::max(*start, parent_end);
      const std::uint64_t end = span.end_time_unix_nano;
      auto& a = span.attributes;
      if (emit) {
        a.reserve(8);  // a region's or child's; growing one by one cost more
      }
      if (const model::RegionInfo* r = node.region()) {
        span.span_id = inner_span_id(sid, "region ", r->seq);
        if (emit) {
          span.name = region_span_name(r->category, r->label);
          add(a, "trace2.span.type", Text("region"));
          add(a, "trace2.region.repoid", std::to_string(r->repo.value_or(1)));  // trace2receiver's 1 when git names none
          if (r->nesting) {
            add(a, "trace2.region.nesting", std::to_string(*r->nesting));
          }
          add_if(a, "trace2.region.message", r->msg);
          if (std::string data = region_data(*r, owner); !data.empty()) {
            add(a, "trace2.region.data", std::move(data));
          }
          add_if(a, "trace2.region.category", r->category);
          add_if(a, "trace2.region.label", r->label);
          add_if(a, "thread.name", r->thread);
        }
      } else if (const model::ChildInfo* c = node.child()) {
        span.span_id = inner_span_id(sid, "child ", c->child_id);
        if (emit) {
          span.name = child_span_name(*c);
          add(a, "trace2.span.type", Text("child"));
          if (!c->argv.empty()) {
            add(a, "trace2.child.argv", go_json_string_array(c->argv));
          }
          add(a, "trace2.child.pid", std::to_string(c->pid.value_or(-1)));
          // After child_ready the child runs on: its code is not known (-1, as trace2receiver).
          add(a, "trace2.child.exitcode", std::to_string(c->ready.empty() ? c->code.value_or(-1) : -1));
          add_if(a, "trace2.child.ready", c->ready);
          add(a, "trace2.child.class", Text::view_of(c->child_class));
          if (c->child_class == "hook") {
            add(a, "trace2.child.hook", c->hook_name.empty() ? Text("??") : Text::view_of(c->hook_name));
          }
          add(a, "trace2.child.id", std::to_string(c->child_id));
          add_if(a, "thread.name", c->thread);
          if (c->code && *c->code != 0 && !is_dashed_probe(*c)) {
            span.status = StatusCode::error;
            span.status_message = fmt::format("exit code {}", *c->code);
          }
        }
      } else if (const model::ExecInfo* e = node.exec()) {
        // By seq, not exec_id: only the event's place in its session is unique.
        span.span_id = inner_span_id(sid, "exec ", e->seq);
        if (emit) {
          span.name = exec_span_name(*e);
          add(a, "trace2.span.type", Text("exec"));
          if (!e->argv.empty()) {
            add(a, "trace2.exec.argv", go_json_string_array(e->argv));
          }
          add(a, "trace2.exec.exe", Text::view_of(e->exe));
          add(a, "trace2.exec.exitcode", std::to_string(e->code.value_or(-1)));
          add(a, "trace2.exec.id", std::to_string(e->exec_id));
          add_if(a, "thread.name", e->thread);
          if (e->code && *e->code != 0) {
            span.status = StatusCode::error;
            span.status_message = fmt::format("exec failed, code {}", *e->code);
          }
        }
      } else if (const model::ThreadInfo* t = node.thread()) {
        span.span_id = inner_span_id(sid, "thread " + t->name);
        if (emit) {
          span.name = t->name;  // trace2receiver's: the thread's name alone
          add(a, "trace2.span.type", Text("thread"));
          add_thread_figures(a, owner.thread_figures, t->name);
          add(a, "thread.name", Text::view_of(t->name));
        }
      }
      const SpanId id = span.span_id;
      if (emit) {
        push(std::move(span), owner);
      }
      inner(node, process_info, id, *start, end, level, emit, owner);
    }
  }

  // trace2.region.data of a region: the data events of its thread at one
  // level deeper than it, while it was open; "" when none.
  static std::string region_data(const model::RegionInfo& r, const Owner& owner) {
    if (owner.region_data.empty() || !r.nesting) {
      return {};
    }
    const auto by_place = [](const model::Annotation* x, const std::pair<std::string_view, std::int64_t>& place) {
      return std::pair<std::string_view, std::int64_t>(x->thread, x->seq) < place;
    };
    const std::int64_t end = r.leave_seq.value_or(std::numeric_limits<std::int64_t>::max());
    NestedJson values;
    for (auto it = std::lower_bound(owner.region_data.begin(), owner.region_data.end(),
                                    std::pair<std::string_view, std::int64_t>(r.thread, r.seq + 1), by_place);
         it != owner.region_data.end() && (*it)->thread == r.thread && (*it)->seq < end; ++it) {
      if ((*it)->nesting == *r.nesting + 1) {
        values[(*it)->category].insert_or_assign((*it)->name, receiver_data_value(**it));
      }
    }
    return values.empty() ? std::string() : go_json_nested(values);
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
  std::string m_host_name;  // trace2.pii.hostname's, looked up once
  std::map<std::int64_t, std::optional<std::string>> m_users;  // trace2.pii.username's, by uid
  std::unordered_map<const model::Node*, std::uint64_t> m_unended_ends;  // process_end() of unended processes
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
