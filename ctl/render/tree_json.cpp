#include "ctl/render/tree_json.hpp"

#include "ctl/output/json.hpp"
#include "ctl/output/result_set.hpp"
#include "ctl/render/node_failure.hpp"
#include "proto/timestamp.hpp"

namespace trace2d::ctl::render {
namespace {

// Writes objects whose nested arrays ("entries", "processes") always come
// last, so one "first member" flag serves every level.
class JsonWriter {
 public:
  explicit JsonWriter(std::string& out) : m_out(out) {}

  void key(std::string_view name) {
    m_out += m_first ? "" : ",";
    m_first = false;
    append_json_string(m_out, name);
    m_out.push_back(':');
  }
  void text(std::string_view name, std::string_view value) {
    key(name);
    append_json_string(m_out, value);
  }
  void optional_text(std::string_view name, const std::optional<std::string>& value) {
    key(name);
    if (value) {
      append_json_string(m_out, *value);
    } else {
      m_out += "null";
    }
  }
  void integer(std::string_view name, const std::optional<std::int64_t>& value) {
    key(name);
    m_out += value ? std::to_string(*value) : std::string("null");
  }
  void real(std::string_view name, const std::optional<double>& value) {
    key(name);
    m_out += value ? format_real(*value) : std::string("null");
  }
  void boolean(std::string_view name, bool value) {
    key(name);
    m_out += value ? "true" : "false";
  }
  void strings(std::string_view name, const std::vector<std::string>& values) {
    key(name);
    m_out.push_back('[');
    for (std::size_t i = 0; i < values.size(); ++i) {
      m_out += i > 0 ? "," : "";
      append_json_string(m_out, values[i]);
    }
    m_out.push_back(']');
  }
  void open() {
    m_out.push_back('{');
    m_first = true;
  }
  void close() {
    m_out.push_back('}');
    m_first = false;
  }
  std::string& raw() { return m_out; }

 private:
  std::string& m_out;
  bool m_first = true;
};

std::optional<std::string> text_or_null(const std::string& text) {
  return text.empty() ? std::nullopt : std::optional<std::string>(text);
}

void append_node(JsonWriter& json, const model::Node& node);

void append_fields(JsonWriter& json, const model::ProcessInfo& p, const model::Node& node) {
  json.text("type", "process");
  json.text("sid", p.sid);
  json.optional_text("parent_sid", p.parent_sid);
  json.optional_text("cmd_name", text_or_null(p.cmd_name));
  json.optional_text("hierarchy", text_or_null(p.hierarchy));
  json.strings("argv", p.argv);
  json.integer("pid", p.pid);
  json.optional_text("start_time", p.start_time);
  json.text("status", p.status);
  json.integer("exit_code", p.exit_code);
  json.integer("signo", p.signo);
  // Why it failed, as the text tree says it beside the process; null when it did not.
  json.optional_text("reason", text_or_null(failure_reason(node)));
  json.text("placed_by", p.placed_by);
  if (p.events_left_out > 0) {  // only then: a tree read whole keeps its shape
    json.integer("events_left_out", p.events_left_out);
  }
}

void append_fields(JsonWriter& json, const model::RegionInfo& r, const model::Node& /*node*/) {
  json.text("type", "region");
  json.text("thread", r.thread);
  json.integer("nesting", r.nesting);
  json.text("category", r.category);
  json.text("label", r.label);
  json.optional_text("msg", text_or_null(r.msg));
  json.integer("repo", r.repo);
  json.real("t_start", r.t_start);
}

void append_fields(JsonWriter& json, const model::ChildInfo& c, const model::Node& /*node*/) {
  json.text("type", "child");
  json.integer("child_id", std::optional<std::int64_t>(c.child_id));
  json.text("thread", c.thread);
  json.optional_text("child_class", text_or_null(c.child_class));
  json.optional_text("hook_name", text_or_null(c.hook_name));
  json.strings("argv", c.argv);
  json.boolean("use_shell", c.use_shell);
  json.integer("pid", c.pid);
  json.integer("code", c.code);
  json.optional_text("ready", text_or_null(c.ready));
  json.real("t_start", c.t_start);
  json.optional_text("child_sid", c.child_sid);
}

void append_fields(JsonWriter& json, const model::ExecInfo& e, const model::Node& /*node*/) {
  json.text("type", "exec");
  json.integer("exec_id", std::optional<std::int64_t>(e.exec_id));
  json.text("thread", e.thread);
  json.optional_text("exe", text_or_null(e.exe));
  json.strings("argv", e.argv);
  json.integer("code", e.code);
  json.real("t_start", e.t_start);
}

void append_fields(JsonWriter& json, const model::ThreadInfo& t, const model::Node& /*node*/) {
  json.text("type", "thread");
  json.text("thread", t.name);
  json.real("t_start", t.t_start);
}

void append_fields(JsonWriter& json, const model::Boxed<model::ProcessInfo>& p, const model::Node& node) {
  append_fields(json, p.get(), node);
}

void append_node(JsonWriter& json, const model::Node& node) {
  json.open();
  std::visit([&json, &node](const auto& item) { append_fields(json, item, node); }, node.item);
  json.real("offset", node.offset);
  json.real("elapsed", node.elapsed);
  json.key("entries");
  json.raw().push_back('[');
  for (std::size_t i = 0; i < node.children.size(); ++i) {
    json.raw() += i > 0 ? "," : "";
    append_node(json, node.children[i]);
  }
  json.raw().push_back(']');
  json.close();
}

}  // namespace

void append_tree_json(std::string& out, const model::ProcessTree& tree) {
  JsonWriter json(out);
  json.open();
  json.text("root", tree.root);
  std::optional<std::string> origin_time;
  if (tree.origin_us) {
    origin_time = proto::format_utc_timestamp(*tree.origin_us);
  }
  json.optional_text("origin_time", origin_time);
  json.key("processes");
  out.push_back('[');
  for (std::size_t i = 0; i < tree.processes.size(); ++i) {
    out += i > 0 ? "," : "";
    append_node(json, tree.processes[i]);
  }
  out.push_back(']');
  json.close();
}

}  // namespace trace2d::ctl::render
