#include "ctl/render/chrome_trace.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <vector>

#include "ctl/output/json.hpp"
#include "ctl/render/describe.hpp"
#include "proto/timestamp.hpp"

namespace trace2d::ctl::render {
namespace {

// Made-up ids start far above Linux's pid_max (4194304), so they never
// collide with the real pids taken from SIDs.
constexpr std::int64_t k_first_made_up_tid = 10'000'000;
constexpr std::int64_t k_first_made_up_pid = 20'000'000;
constexpr std::string_view k_main_thread = "main";

// At most this many "child processes" tracks per process.
constexpr std::size_t k_max_child_lanes = 256;

struct Span {
  std::int64_t start = 0;
  std::int64_t end = 0;
};

// Stored times are whatever a line said (t_rel 1e308, NaN from inf - inf):
// bounded to ±1e15 µs (31 years), so that differences of them never
// overflow and llround() is always defined.
std::int64_t to_us(double seconds) {
  constexpr double k_limit_us = 1e15;
  const double us = seconds * 1e6;
  return std::isnan(us) ? 0 : std::llround(std::clamp(us, -k_limit_us, k_limit_us));
}

// `span` moved inside `outer`, keeping its start where possible.
Span clamp(Span span, const Span& outer) {
  span.start = std::clamp(span.start, outer.start, outer.end);
  span.end = std::clamp(span.end, span.start, outer.end);
  return span;
}

// Child processes and execs: another program run for this process, laid
// out on the "child processes" tracks with the process they hold.
bool launches(const model::Node& node) { return node.child() != nullptr || node.exec() != nullptr; }

struct Event {
  bool metadata = false;
  std::int64_t ts = 0;
  std::int64_t dur = 0;
  std::string json;
};

// Builds a JSON object member by member.
class Object {
 public:
  Object& text(std::string_view key, std::string_view value) {
    append_key(key);
    append_json_string(m_text, value);
    return *this;
  }
  Object& number(std::string_view key, std::int64_t value) {
    append_key(key);
    m_text += std::to_string(value);
    return *this;
  }
  // `json` is valid JSON: an event's value as stored, or built here.
  Object& raw(std::string_view key, std::string_view json) {
    append_key(key);
    append_json_text(m_text, json);
    return *this;
  }
  [[nodiscard]] std::string str() const { return m_text + "}"; }
  [[nodiscard]] bool empty() const { return m_text.size() == 1; }

 private:
  void append_key(std::string_view key) {
    if (m_text.size() > 1) {
      m_text.push_back(',');
    }
    append_json_string(m_text, key);
    m_text.push_back(':');
  }
  std::string m_text = "{";
};

std::string strings_json(const std::vector<std::string>& values) {
  std::string out = "[";
  for (const std::string& value : values) {
    out += out.size() > 1 ? "," : "";
    append_json_string(out, value);
  }
  return out + "]";
}

// One process's ids and the spans of its child processes.
struct ProcessTrack {
  std::int64_t pid = 0;
  Span span;
  std::map<std::string, std::int64_t> tids;
  std::vector<std::pair<const model::Node*, Span>> children;
};

class ChromeWriter {
 public:
  void process(const model::Node& node, const std::optional<std::int64_t>& flow_in) {
    const model::ProcessInfo& info = *node.process();
    ProcessTrack track;
    track.pid = info.pid && *info.pid > 0 && m_pids.insert(*info.pid).second ? *info.pid : m_next_pid++;
    track.tids.emplace(k_main_thread, track.pid);
    ++m_stats.processes;
    const std::string pid_text = info.pid ? std::to_string(*info.pid) : std::string("?");
    metadata("process_name", track.pid, track.pid, Object().text("name", process_name(info) + " (pid " + pid_text + ")"));
    const auto order = static_cast<std::int64_t>(m_stats.processes);
    metadata("process_sort_index", track.pid, track.pid, Object().number("sort_index", order));
    metadata("process_labels", track.pid, track.pid, Object().text("labels", info.sid));
    metadata("thread_name", track.pid, track.pid, Object().text("name", std::string(k_main_thread)));
    if (!node.offset) {
      m_stats.untimed += count(node);
      return;
    }
    const std::int64_t start = to_us(*node.offset);
    track.span = {start, node.elapsed ? start + to_us(*node.elapsed) : latest_end(node, start)};
    Object args;
    args.text("sid", info.sid).raw("argv", strings_json(info.argv)).text("status", info.status);
    if (info.exit_code) {
      args.number("exit_code", *info.exit_code);
    }
    annotations(info, track, args);
    slice(track.pid, track.pid, "process", process_name(info), track.span, args);
    if (flow_in) {
      flow("f", *flow_in, track.pid, track.pid, track.span.start);
    }
    walk(node.children, track, {{track.pid, track.span}});
    child_lanes(track);
  }

  void write(std::string& out, const model::ProcessTree& tree) {
    std::stable_sort(m_events.begin(), m_events.end(), [](const Event& a, const Event& b) {
      if (a.metadata != b.metadata) {
        return a.metadata;
      }
      return a.ts != b.ts ? a.ts < b.ts : a.dur > b.dur;
    });
    out += "{\"traceEvents\":[";
    for (std::size_t i = 0; i < m_events.size(); ++i) {
      out += i > 0 ? ",\n" : "\n";
      out += m_events[i].json;
    }
    Object other;
    other.text("root", tree.root).text("generator", "trace2ctl export");
    if (tree.origin_us) {
      other.text("origin_time", proto::format_utc_timestamp(*tree.origin_us));
    }
    out += "\n],\"displayTimeUnit\":\"ms\",\"otherData\":" + other.str() + "}\n";
    m_stats.events = m_events.size();
  }

  [[nodiscard]] const ChromeTraceStats& stats() const { return m_stats; }

 private:
  // Emits `nodes` (siblings) and what they hold. `enclosing` is the span
  // each thread's slices must stay in.
  void walk(const std::vector<model::Node>& nodes, ProcessTrack& track,
            const std::map<std::int64_t, Span>& enclosing) {
    std::vector<std::optional<std::pair<std::int64_t, Span>>> placed(nodes.size());
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      const model::Node& node = nodes[i];
      if (node.process() != nullptr || launches(node)) {
        continue;
      }
      if (!node.offset) {
        m_stats.untimed += count(node);
        continue;
      }
      const std::int64_t start = to_us(*node.offset);
      const std::int64_t tid =
          tid_for(track, node.region() != nullptr ? node.region()->thread : node.thread()->name);
      const Span outer = enclosing.contains(tid) ? enclosing.at(tid) : track.span;
      placed[i] = {tid, clamp({start, node.elapsed ? start + to_us(*node.elapsed) : outer.end}, outer)};
    }
    // git times a region's enter and its length with different clocks, so a
    // region can seem to end a microsecond after the next one began: end
    // it there, or the track would not nest.
    std::map<std::int64_t, std::size_t> previous;  // tid -> sibling placed last
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      if (!placed[i]) {
        continue;
      }
      const auto [tid, span] = *placed[i];
      if (const auto found = previous.find(tid); found != previous.end()) {
        Span& before = placed[found->second]->second;
        before.end = std::max(before.start, std::min(before.end, span.start));
      }
      previous[tid] = i;
    }
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      const model::Node& node = nodes[i];
      if (node.process() != nullptr) {
        process(node, std::nullopt);
      } else if (launches(node) && node.offset) {
        // Laid out once all of them are known: see child_lanes().
        const std::int64_t start = to_us(*node.offset);
        track.children.emplace_back(&node, clamp({start, node.elapsed ? start + to_us(*node.elapsed) : track.span.end},
                                                 track.span));
      } else if (launches(node)) {
        m_stats.untimed += count(node);
      } else if (placed[i]) {
        const auto [tid, span] = *placed[i];
        emit_slice(node, track, tid, span);
        std::map<std::int64_t, Span> inner = enclosing;
        inner[tid] = span;
        walk(node.children, track, inner);
      }
    }
  }

  void emit_slice(const model::Node& node, const ProcessTrack& track, std::int64_t tid, const Span& span) {
    Object args;
    if (const auto* region = node.region()) {
      args.text("category", region->category).text("label", region->label);
      if (!region->msg.empty()) {
        args.text("msg", region->msg);
      }
      if (region->nesting) {
        args.number("nesting", *region->nesting);
      }
      if (!node.elapsed) {
        args.raw("unclosed", "true");
      }
      slice(track.pid, tid, region->category.empty() ? "region" : region->category, region->label, span, args);
    } else {
      slice(track.pid, tid, "thread", "thread " + node.thread()->name, span, args);
    }
  }

  // Child spans on as few "child processes" tracks as keep them apart: a
  // span goes to the first lane where nothing still runs. The children of
  // one process are siblings; one drawn inside another (a viewer nests the
  // slices of a track by their times) would look like its child, as fetch's
  // unpack-objects inside its transport's upload-pack did.
  void child_lanes(ProcessTrack& track) {
    std::stable_sort(track.children.begin(), track.children.end(), [](const auto& a, const auto& b) {
      return a.second.start != b.second.start ? a.second.start < b.second.start : a.second.end > b.second.end;
    });
    std::vector<std::vector<Span>> lanes;
    for (auto& entry : track.children) {
      // Not a structured binding: clang 14 will not let the lambda below capture one.
      const auto& node = entry.first;
      Span& span = entry.second;
      std::size_t lane = 0;
      for (; lane < lanes.size(); ++lane) {
        std::vector<Span>& open = lanes[lane];
        std::erase_if(open, [&](const Span& s) { return s.end <= span.start; });
        if (open.empty()) {
          break;
        }
      }
      if (lane == k_max_child_lanes) {
        // Thousands of children running at once (hostile data): rather than
        // a lane each (time quadratic in them), the last lane, the span cut
        // to end with the one it starts in, so the lane still nests.
        lane = k_max_child_lanes - 1;
        span = clamp(span, lanes[lane].back());
      } else if (lane == lanes.size()) {
        lanes.emplace_back();
      }
      lanes[lane].push_back(span);
      const std::string lane_name = "child processes" + (lane == 0 ? std::string() : " (" + std::to_string(lane + 1) + ")");
      const std::int64_t tid = tid_for(track, lane_name);
      Object args;
      if (const model::ExecInfo* exec = node->exec()) {
        args.raw("argv", strings_json(exec->argv));
        if (!exec->exe.empty()) {
          args.text("exe", exec->exe);
        }
        if (exec->code) {
          args.number("code", *exec->code);
        }
        slice(track.pid, tid, "exec", exec_name(*exec) + ": " + join_argv(exec->argv), span, args);
      } else {
        const model::ChildInfo& child = *node->child();
        args.raw("argv", strings_json(child.argv)).raw("use_shell", child.use_shell ? "true" : "false");
        if (!child.child_class.empty()) {
          args.text("child_class", child.child_class);
        }
        if (child.pid) {
          args.number("pid", *child.pid);
        }
        if (child.code) {
          args.number("code", *child.code);
        }
        if (child.child_sid) {
          args.text("child_sid", *child.child_sid);
        }
        slice(track.pid, tid, "child", child_name(child) + ": " + join_argv(child.argv, child.use_shell), span, args);
      }
      for (const model::Node& process_node : node->children) {
        const std::int64_t id = ++m_flow_id;
        flow("s", id, track.pid, tid, span.start);
        process(process_node, id);
      }
    }
  }

  void annotations(const model::ProcessInfo& info, ProcessTrack& track, Object& args) {
    Object counters;
    Object timers;
    for (const model::Annotation& a : info.annotations) {
      const std::string name = a.category.empty() ? a.name : a.category + "/" + a.name;
      if (a.kind == "data") {
        if (!a.t_abs) {
          continue;
        }
        const std::int64_t tid = tid_for(track, a.thread.empty() ? std::string(k_main_thread) : a.thread);
        Object event;
        event.text("ph", "i").text("s", "t").text("cat", a.category.empty() ? "data" : a.category).text("name", a.name);
        add(false, track.span.start + to_us(*a.t_abs), 0,
            event.number("pid", track.pid).number("tid", tid).number("ts", track.span.start + to_us(*a.t_abs))
                .raw("args", Object().raw("value", a.json_value).str()));
      } else if (a.kind == "counter") {
        counters.raw(name, a.json_value);
        Object event;
        event.text("ph", "C").text("name", name).number("pid", track.pid).number("ts", track.span.end);
        add(false, track.span.end, 0, event.raw("args", Object().raw("count", a.json_value).str()));
      } else {
        timers.raw(name, a.json_value);
      }
    }
    if (!counters.empty()) {
      args.raw("counters", counters.str());
    }
    if (!timers.empty()) {
      args.raw("timers", timers.str());
    }
  }

  std::int64_t tid_for(ProcessTrack& track, const std::string& thread) {
    const auto [it, added] = track.tids.emplace(thread, m_next_tid);
    if (added) {
      ++m_next_tid;
      metadata("thread_name", track.pid, it->second, Object().text("name", thread));
      const auto order = static_cast<std::int64_t>(track.tids.size());
      metadata("thread_sort_index", track.pid, it->second, Object().number("sort_index", order));
    }
    return it->second;
  }

  void slice(std::int64_t pid, std::int64_t tid, const std::string& cat, const std::string& name, const Span& span,
             const Object& args) {
    Object event;
    event.text("ph", "X").text("cat", cat).text("name", name).number("pid", pid).number("tid", tid);
    event.number("ts", span.start).number("dur", span.end - span.start).raw("args", args.str());
    add(false, span.start, span.end - span.start, event);
  }

  void flow(const char* phase, std::int64_t id, std::int64_t pid, std::int64_t tid, std::int64_t ts) {
    Object event;
    event.text("ph", phase).text("cat", "child").text("name", "child process").number("id", id);
    event.number("pid", pid).number("tid", tid).number("ts", ts);
    if (std::string_view(phase) == "f") {
      event.text("bp", "e");  // binds to the slice it lands in: the child process
    }
    add(false, ts, 0, event);
  }

  void metadata(const char* name, std::int64_t pid, std::int64_t tid, const Object& args) {
    Object event;
    event.text("ph", "M").text("name", name).number("pid", pid).number("tid", tid).raw("args", args.str());
    add(true, 0, 0, event);
  }

  void add(bool is_metadata, std::int64_t ts, std::int64_t dur, const Object& event) {
    m_events.push_back({is_metadata, ts, dur, event.str()});
  }

  static std::int64_t latest_end(const model::Node& node, std::int64_t floor) {
    std::int64_t end = floor;
    for (const model::Node& child : node.children) {
      if (const auto e = child.end()) {
        end = std::max(end, to_us(*e));
      }
      end = std::max(end, latest_end(child, floor));
    }
    return end;
  }

  static std::size_t count(const model::Node& node) {
    std::size_t n = 1;
    for (const model::Node& child : node.children) {
      n += count(child);
    }
    return n;
  }

  std::vector<Event> m_events;
  std::set<std::int64_t> m_pids;
  std::int64_t m_next_pid = k_first_made_up_pid;
  std::int64_t m_next_tid = k_first_made_up_tid;
  std::int64_t m_flow_id = 0;
  ChromeTraceStats m_stats;
};

}  // namespace

ChromeTraceStats append_chrome_trace(std::string& out, const model::ProcessTree& tree) {
  ChromeWriter writer;
  for (const model::Node& process : tree.processes) {
    writer.process(process, std::nullopt);
  }
  writer.write(out, tree);
  return writer.stats();
}

}  // namespace trace2d::ctl::render
