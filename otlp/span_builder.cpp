#include "otlp/span_builder.hpp"

#include <fmt/format.h>

#include <cmath>
#include <string_view>

#include "otlp/span_ids.hpp"

namespace trace2d::otlp {
namespace {

std::string_view basename_of(std::string_view path) {
  const auto slash = path.find_last_of("/\\");
  if (slash != std::string_view::npos) {
    path.remove_prefix(slash + 1);
  }
  if (path.size() > 4 && path.substr(path.size() - 4) == ".exe") {
    path.remove_suffix(4);
  }
  return path;
}

// trace2receiver's name for a process: "exe:verb#mode" ("git:fetch",
// "git:checkout#branch"), "git" when the verb is not known.
std::string process_name(const model::ProcessInfo& p) {
  std::string name(p.argv.empty() ? std::string_view("git") : basename_of(p.argv.front()));
  if (name.empty()) {
    name = "git";
  }
  if (!p.cmd_name.empty()) {
    name += ':' + p.cmd_name;
    if (!p.cmd_mode.empty()) {
      name += '#' + p.cmd_mode;
    }
  }
  return name;
}

std::string_view last_component(std::string_view sid) {
  const auto slash = sid.rfind('/');
  return slash == std::string_view::npos ? sid : sid.substr(slash + 1);
}

// The component before the last: the parent process's, in trace2receiver's ids.
std::string_view parent_component(std::string_view sid) {
  const auto slash = sid.rfind('/');
  return last_component(sid.substr(0, slash));
}

void add(std::vector<Attribute>& attributes, std::string key, AttributeValue value) {
  attributes.push_back(Attribute{std::move(key), std::move(value)});
}

void add_if(std::vector<Attribute>& attributes, std::string key, const std::string& text) {
  if (!text.empty()) {
    add(attributes, std::move(key), text);
  }
}

class Builder {
 public:
  Builder(const model::ProcessTree& tree, std::vector<Span>& spans, const ProcessFilter& include)
      : m_tree(tree), m_spans(spans), m_include(include) {}

  void process(const model::Node& node, std::optional<SpanId> parent, std::uint64_t parent_start) {
    const model::ProcessInfo& p = *node.process();
    if (m_include && !m_include(p)) {
      skip(node, p.sid, parent_start);
      return;
    }
    ++m_stats.processes;
    Span span;
    span.trace_id = trace_id_of(p.sid);
    span.span_id = process_span_id(last_component(p.sid));
    if (parent) {
      span.parent_span_id = parent;
    } else if (p.sid.find('/') != std::string::npos) {
      span.parent_span_id = process_span_id(parent_component(p.sid));  // trace2receiver's parent
    }
    span.name = process_name(p);
    span.kind = SpanKind::server;
    span.start_time_unix_nano = time_of(node.offset).value_or(parent_start);
    span.end_time_unix_nano = process_end(p, node, span.start_time_unix_nano);

    auto& a = span.attributes;
    add(a, "trace2.span.type", std::string("process"));
    add(a, "trace2.cmd.sid", p.sid);
    add(a, "trace2.cmd.argv", p.argv);
    add_if(a, "trace2.cmd.name", p.cmd_name);
    add_if(a, "trace2.cmd.mode", p.cmd_mode);
    add_if(a, "trace2.cmd.hierarchy", p.hierarchy);
    add_if(a, "trace2.cmd.version", p.version);
    add(a, "process.command_args", p.argv);
    if (!p.argv.empty()) {
      add(a, "process.executable.name", std::string(basename_of(p.argv.front())));
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
    add(a, "trace2d.session.status", p.status);
    add(a, "trace2d.placed_by", p.placed_by);

    for (const model::ErrorInfo& error : p.errors) {
      SpanEvent event;
      event.name = "error";
      event.time_unix_nano = error.time_us ? static_cast<std::uint64_t>(*error.time_us) * 1000 : span.start_time_unix_nano;
      add_if(event.attributes, "trace2.cmd.error.message", error.msg);
      add_if(event.attributes, "trace2.cmd.error.format", error.fmt);
      add_if(event.attributes, "thread.name", error.thread);
      span.events.push_back(std::move(event));
    }
    if (p.exit_code && *p.exit_code != 0) {
      span.status = StatusCode::error;
      span.status_message = fmt::format("exit code {}", *p.exit_code);
    } else if (p.signo) {
      span.status = StatusCode::error;
      span.status_message = fmt::format("killed by signal {}", *p.signo);
    } else if (p.error_count > 0) {
      span.status = StatusCode::error;
      span.status_message = !p.errors.empty() && !p.errors.front().msg.empty() ? p.errors.front().msg
                                                                               : std::string("error event");
    }
    const SpanId id = span.span_id;
    const std::uint64_t start = span.start_time_unix_nano;
    m_spans.push_back(std::move(span));
    inner(node, p.sid, id, start);
  }

  [[nodiscard]] BuildStats stats() const { return m_stats; }

 private:
  // A process not sent now: its descendant processes may be, with the
  // parents their spans would have had (ids are derived, not looked up).
  void skip(const model::Node& node, const std::string& sid, std::uint64_t parent_start) {
    for (const model::Node& inner_node : node.children) {
      if (inner_node.process() != nullptr) {
        process(inner_node, process_span_id(last_component(sid)), parent_start);
      } else if (const model::ChildInfo* c = inner_node.child()) {
        descend(inner_node, inner_span_id(sid, fmt::format("child {}", c->child_id)), parent_start);
      } else {
        skip(inner_node, sid, parent_start);
      }
    }
  }
  // Below a child span of a process not sent now: only processes.
  void descend(const model::Node& node, const SpanId& parent, std::uint64_t parent_start) {
    for (const model::Node& inner_node : node.children) {
      if (inner_node.process() != nullptr) {
        process(inner_node, parent, parent_start);
      } else {
        descend(inner_node, parent, parent_start);
      }
    }
  }

  // Absolute time of a tree offset (seconds since the tree's origin).
  std::optional<std::uint64_t> time_of(const std::optional<double>& offset) const {
    if (!offset || !m_tree.origin_us || !std::isfinite(*offset)) {
      return std::nullopt;
    }
    const double ns = static_cast<double>(*m_tree.origin_us) * 1000.0 + *offset * 1e9;
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

  void inner(const model::Node& parent_node, const std::string& sid, const SpanId& parent,
             std::uint64_t parent_start) {
    for (const model::Node& node : parent_node.children) {
      if (node.process() != nullptr) {
        process(node, parent, parent_start);
        continue;
      }
      const std::optional<std::uint64_t> start = time_of(node.offset);
      if (!start) {
        ++m_stats.untimed;  // nothing to place it by: no span, its children go to its parent
        inner(node, sid, parent, parent_start);
        continue;
      }
      Span span;
      span.trace_id = trace_id_of(sid);
      span.parent_span_id = parent;
      span.start_time_unix_nano = *start;
      span.end_time_unix_nano = after(*start, node.elapsed);
      auto& a = span.attributes;
      if (const model::RegionInfo* r = node.region()) {
        span.span_id = inner_span_id(sid, fmt::format("region {}", r->seq));
        span.name = fmt::format("region({},{})", r->category, r->label);
        add(a, "trace2.span.type", std::string("region"));
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
      } else if (const model::ChildInfo* c = node.child()) {
        span.span_id = inner_span_id(sid, fmt::format("child {}", c->child_id));
        span.kind = SpanKind::client;
        if (!c->hook_name.empty()) {
          span.name = fmt::format("child(hook:{})", c->hook_name);
        } else if (!c->child_class.empty()) {
          span.name = fmt::format("child(class:{})", c->child_class);
        } else {
          span.name = fmt::format("child({})", c->argv.empty() ? std::string_view("?") : basename_of(c->argv.front()));
        }
        add(a, "trace2.span.type", std::string("child"));
        add(a, "trace2.child.id", std::to_string(c->child_id));
        add(a, "trace2.child.argv", c->argv);
        add_if(a, "trace2.child.class", c->child_class);
        add_if(a, "trace2.child.hook", c->hook_name);
        add_if(a, "trace2.child.ready", c->ready);
        if (c->pid) {
          add(a, "trace2.child.pid", std::to_string(*c->pid));
        }
        if (c->code) {
          add(a, "trace2.child.exitcode", std::to_string(*c->code));
          if (*c->code != 0) {
            span.status = StatusCode::error;
            span.status_message = fmt::format("exit code {}", *c->code);
          }
        }
        add_if(a, "thread.name", c->thread);
      } else if (const model::ThreadInfo* t = node.thread()) {
        span.span_id = inner_span_id(sid, "thread " + t->name);
        span.name = fmt::format("thread({})", t->name);
        add(a, "trace2.span.type", std::string("thread"));
        add(a, "thread.name", t->name);
      }
      const SpanId id = span.span_id;
      m_spans.push_back(std::move(span));
      inner(node, sid, id, *start);
    }
  }

  const model::ProcessTree& m_tree;
  std::vector<Span>& m_spans;
  const ProcessFilter& m_include;
  BuildStats m_stats;
};

}  // namespace

BuildStats append_spans(const model::ProcessTree& tree, std::vector<Span>& spans, const ProcessFilter& include) {
  Builder builder(tree, spans, include);
  for (const model::Node& node : tree.processes) {
    if (node.process() != nullptr) {
      builder.process(node, std::nullopt, 0);
    }
  }
  return builder.stats();
}

}  // namespace trace2d::otlp
