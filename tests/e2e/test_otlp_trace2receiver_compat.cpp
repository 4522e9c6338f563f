// The default export against trace2receiver's emit rules
// (tests/data/trace2receiver/emit_rules.json, written from its source):
// real git workloads (a fetch with its children from a local upstream, git
// and shell aliases, a hook, a failing command, git-shell's exec, index
// threads) go through a real trace2d to the loopback receiver, which
// decodes every request with the official definitions; at each detail
// level every span's name, kind, resource and trace2receiver attributes
// must be what trace2receiver would send for the same events. What
// trace2receiver would send is worked out here, from the events as git
// wrote them (the `events` view's `json`, git's exact text), by the rules
// of the table, not by trace2d's exporter code.

#include <gtest/gtest.h>
#include <pwd.h>
#include <signal.h>
#include <simdjson.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/e2e/daemon_fixture.hpp"
#include "tests/e2e/otlp_receiver.hpp"

namespace trace2d::test {
namespace {

// ---------------------------------------------------------------------
// JSON helpers: values compared by meaning (keys in any order, numbers as
// numbers within a microsecond), since trace2receiver's text is Go's.

std::string canonical(simdjson::dom::element e);

std::string json_quoted(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buffer[8];
      std::snprintf(buffer, sizeof buffer, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
      out += buffer;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string canonical(simdjson::dom::element e) {
  switch (e.type()) {
    case simdjson::dom::element_type::OBJECT: {
      std::map<std::string, std::string> members;
      for (auto [key, value] : e.get_object()) {
        members[std::string(key)] = canonical(value);
      }
      std::string out = "{";
      for (const auto& [key, value] : members) {
        out += (out.size() > 1 ? "," : "") + json_quoted(key) + ":" + value;
      }
      return out + "}";
    }
    case simdjson::dom::element_type::ARRAY: {
      std::string out = "[";
      for (simdjson::dom::element item : e.get_array()) {
        out += (out.size() > 1 ? "," : "") + canonical(item);
      }
      return out + "]";
    }
    case simdjson::dom::element_type::STRING:
      return json_quoted(e.get_string().value());
    case simdjson::dom::element_type::INT64:
    case simdjson::dom::element_type::UINT64:
    case simdjson::dom::element_type::DOUBLE: {
      // Rounded to microseconds: git's times have six decimals, and a
      // region's seconds are its end minus its start either way.
      char buffer[64];
      std::snprintf(buffer, sizeof buffer, "%.6f", e.get_double().value());
      return std::string("#") + buffer;
    }
    case simdjson::dom::element_type::BOOL:
      return e.get_bool().value() ? "true" : "false";
    case simdjson::dom::element_type::NULL_VALUE:
      return "null";
  }
  return "?";
}

// The canonical form of JSON text; "<not JSON: ...>" when it is not.
std::string canonical_text(const std::string& text) {
  simdjson::dom::parser parser;
  simdjson::dom::element e;
  if (parser.parse(text).get(e) != simdjson::SUCCESS) {
    return "<not JSON: " + text + ">";
  }
  return canonical(e);
}

std::string str(simdjson::dom::element e, std::string_view key, std::string otherwise = {}) {
  std::string_view text;
  return e[key].get(text) == simdjson::SUCCESS ? std::string(text) : otherwise;
}

std::optional<std::int64_t> integer(simdjson::dom::element e, std::string_view key) {
  std::int64_t n = 0;
  return e[key].get(n) == simdjson::SUCCESS ? std::optional<std::int64_t>(n) : std::nullopt;
}

double real(simdjson::dom::element e, std::string_view key) {
  double x = 0;
  return e[key].get(x) == simdjson::SUCCESS ? x : 0;
}

std::string minified(simdjson::dom::element e, std::string_view key) {
  simdjson::dom::element v;
  return e[key].get(v) == simdjson::SUCCESS ? std::string(simdjson::minify(v)) : std::string();
}

std::vector<std::string> strings(simdjson::dom::element e, std::string_view key) {
  std::vector<std::string> out;
  simdjson::dom::array array;
  if (e[key].get(array) == simdjson::SUCCESS) {
    for (simdjson::dom::element item : array) {
      std::string_view text;
      out.emplace_back(item.get(text) == simdjson::SUCCESS ? std::string(text) : std::string(simdjson::minify(item)));
    }
  }
  return out;
}

std::string json_array(const std::vector<std::string>& items) {
  std::string out = "[";
  for (const std::string& item : items) {
    out += (out.size() > 1 ? "," : "") + json_quoted(item);
  }
  return out + "]";
}

// ---------------------------------------------------------------------
// The emit rules table.

struct AttributeRule {
  std::string key;
  std::string shape;
  std::set<std::string> levels;  // empty: every level of its span
};

struct SpanRule {
  std::set<std::string> levels;
  std::string kind;
  std::vector<AttributeRule> attributes;
  [[nodiscard]] const AttributeRule* find(const std::string& key) const {
    for (const AttributeRule& a : attributes) {
      if (a.key == key) {
        return &a;
      }
    }
    return nullptr;
  }
};

struct EmitRules {
  std::map<std::string, SpanRule> spans;
  std::vector<AttributeRule> resource;
};

EmitRules load_emit_rules() {
  const std::string path = std::string(TRACE2D_TEST_DATA) + "/trace2receiver/emit_rules.json";
  static simdjson::dom::parser parser;
  simdjson::dom::element root;
  EXPECT_EQ(parser.load(path).get(root), simdjson::SUCCESS) << path;
  EmitRules rules;
  const auto attributes = [](simdjson::dom::element list) {
    std::vector<AttributeRule> out;
    for (simdjson::dom::element a : list.get_array()) {
      AttributeRule rule{str(a, "key"), str(a, "shape"), {}};
      simdjson::dom::array levels;
      if (a["levels"].get(levels) == simdjson::SUCCESS) {
        for (simdjson::dom::element level : levels) {
          rule.levels.emplace(level.get_string().value());
        }
      }
      out.push_back(std::move(rule));
    }
    return out;
  };
  rules.resource = attributes(root["resource"]["attributes"]);
  for (auto [type, span] : root["spans"].get_object()) {
    SpanRule rule;
    rule.kind = str(span, "kind");
    for (simdjson::dom::element level : span["levels"].get_array()) {
      rule.levels.emplace(level.get_string().value());
    }
    rule.attributes = attributes(span["attributes"]);
    rules.spans.emplace(std::string(type), std::move(rule));
  }
  return rules;
}

int kind_number(const std::string& kind) { return kind == "SERVER" ? 2 : kind == "CLIENT" ? 3 : 1; }

// ---------------------------------------------------------------------
// What trace2receiver would send for one process, from its events, by the
// table's rules.

struct Expected {
  std::string type;
  std::string name;
  int kind = 1;
  std::map<std::string, std::string> attributes;  // key → value (JSON shapes canonical)
};

// What the test asks of trace2d, as trace2receiver's filter, summary and
// PII settings would ask it.
struct Settings {
  std::string level;
  bool pii = false;
  std::string nickname_key = "otel.trace2.nickname";
  std::string summary_message_field = "pathspec_errors";
  std::string summary_message_prefix = "pathspec";
  std::string summary_region_category = "index";
  std::string summary_region_label = "do_read_index";
  std::string summary_region_count = "read_index_count";
  std::string summary_region_time = "read_index_seconds";
  std::string important_field = "negotiation";
  std::string important_category = "negotiation_v2";
  std::string important_prefix = "total";
};

std::string go_arch() {
  utsname u{};
  ::uname(&u);
  const std::string machine = u.machine;
  if (machine == "x86_64") return "amd64";
  if (machine == "aarch64") return "arm64";
  if (machine == "i686" || machine == "i386") return "386";
  return machine;
}

std::string this_user() {
  const passwd* entry = ::getpwuid(::getuid());
  return entry != nullptr ? entry->pw_name : "";
}

std::string this_host() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  return host;
}

std::string normalised(std::string text, const char* otherwise) {
  if (text.empty()) {
    return otherwise;
  }
  for (char& c : text) {
    if (c == ' ' || c == '-' || c == '.' || c == ',' || c == ':' || c == '(' || c == ')') {
      c = '_';
    } else if (c >= 'A' && c <= 'Z') {
      c = static_cast<char>(c - 'A' + 'a');
    }
  }
  return text;
}

std::string basename_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// {"category":{"name":value}} from (category, name, value JSON) in order,
// the last value of a name winning.
using Nested = std::map<std::string, std::map<std::string, std::string>>;
std::string nested_json(const Nested& values) {
  std::string out = "{";
  for (const auto& [category, names] : values) {
    out += (out.size() > 1 ? "," : "") + json_quoted(category) + ":{";
    bool first = true;
    for (const auto& [name, value] : names) {
      out += (first ? "" : ",") + json_quoted(name) + ":" + value;
      first = false;
    }
    out += "}";
  }
  return out + "}";
}

struct Region {
  std::string category;
  std::string label;
  std::string message;
  std::int64_t nesting = 0;
  std::int64_t repo = 1;
  std::string thread;
  Nested data;
  double start_us = 0;
  double end_us = 0;
  double t_rel = 0;   // git's own elapsed (region_leave's t_rel, the monotonic clock)
  bool left = false;  // closed by its region_leave
};

struct Child {
  std::string cls;
  std::string hook;
  std::vector<std::string> argv;
  std::int64_t pid = -1;
  std::int64_t code = -1;
  std::string ready;
};

struct Exec {
  std::string exe;
  std::vector<std::string> argv;
  std::int64_t code = -1;
};

// Microseconds of git's "2026-11-28T18:00:00.123456Z" within its day (a
// region's seconds are a difference; git's regions do not cross midnight
// in a test).
double time_us(const std::string& time) {
  int h = 0;
  int m = 0;
  double s = 0;
  if (time.size() < 20 || std::sscanf(time.c_str() + 11, "%d:%d:%lf", &h, &m, &s) != 3) {
    return 0;
  }
  return (h * 3600.0 + m * 60.0) * 1e6 + std::round(s * 1e6);
}

// The summary's region seconds by git's own clock, and how far
// trace2receiver's (from the events' wall clock times) are from them.
struct SummaryClocks {
  double git_seconds = 0;  // the matched regions' t_rel, summed
  double gap = 0;          // the sum of |wall clock difference - t_rel|
};

std::vector<Expected> expected_spans(const std::string& sid, const std::vector<std::string>& events,
                                     const Settings& settings, const EmitRules& rules,
                                     std::map<std::string, std::string>& resource, std::set<std::string>& known_threads,
                                     SummaryClocks& clocks) {
  simdjson::dom::parser parser;
  std::string version;
  std::vector<std::string> argv;
  std::string verb;
  std::string hierarchy;
  std::string mode;
  std::optional<std::int64_t> exit_code;
  std::optional<std::string> alias;
  std::vector<std::string> alias_argv;
  std::vector<std::string> ancestry;
  std::optional<std::pair<std::string, std::string>> error;  // fmt, msg
  std::vector<std::string> messages;                          // error and printf, for the summary
  std::map<std::string, std::string> repos;
  std::map<std::string, std::pair<int, std::string>> params;
  Nested process_data;
  Nested timers;
  Nested counters;
  std::map<std::string, Nested> thread_timers;
  std::map<std::string, Nested> thread_counters;
  std::map<std::string, std::vector<std::string>> important;
  std::vector<std::string> thread_order;
  std::map<std::string, std::vector<Region>> stacks;  // per known thread
  std::vector<Region> regions;
  std::map<std::int64_t, Child> children;
  std::vector<std::int64_t> child_order;
  std::map<std::int64_t, Exec> execs;
  std::vector<std::int64_t> exec_order;
  stacks["main"];
  const auto scope_priority = [](const std::optional<std::string>& scope) {
    if (!scope) return 100;
    const std::vector<std::string> order = {"system", "global", "local", "worktree", "command", "submodule", "unknown"};
    const auto found = std::find(order.begin(), order.end(), *scope);
    return found == order.end() ? 99 : static_cast<int>(found - order.begin()) + 1;
  };
  const auto data_value = [](simdjson::dom::element e) { return minified(e, "value"); };
  const auto timer_value = [](simdjson::dom::element e) {
    return "{\"intervals\":" + minified(e, "intervals") + ",\"total_sec\":" + minified(e, "t_total") +
           ",\"min_sec\":" + minified(e, "t_min") + ",\"max_sec\":" + minified(e, "t_max") + "}";
  };
  for (const std::string& line : events) {
    simdjson::dom::element e;
    if (parser.parse(line).get(e) != simdjson::SUCCESS) {
      continue;
    }
    const std::string event = str(e, "event");
    const std::string thread = str(e, "thread", "main");
    if (event == "version") {
      version = str(e, "exe");
    } else if (event == "start") {
      argv = strings(e, "argv");
    } else if (event == "exit" || event == "atexit") {
      exit_code = integer(e, "code");
    } else if (event == "signal") {
      exit_code = 128 + integer(e, "signo").value_or(0);
    } else if (event == "error") {
      if (!error || error->first.empty()) {
        error = std::pair{str(e, "fmt"), str(e, "msg")};
      }
      messages.push_back(str(e, "msg"));
    } else if (event == "printf") {
      messages.push_back(str(e, "msg"));
    } else if (event == "cmd_ancestry") {
      ancestry = strings(e, "ancestry");
    } else if (event == "cmd_name") {
      verb = str(e, "name");
      hierarchy = str(e, "hierarchy");
    } else if (event == "cmd_mode") {
      mode = str(e, "name");
    } else if (event == "alias") {
      alias = str(e, "alias");
      alias_argv = strings(e, "argv");
    } else if (event == "def_repo") {
      repos[std::to_string(integer(e, "repo").value_or(0))] = str(e, "worktree");
    } else if (event == "def_param") {
      std::optional<std::string> scope;
      if (std::string_view text; e["scope"].get(text) == simdjson::SUCCESS) {
        scope = std::string(text);
      }
      const int priority = scope_priority(scope);
      const std::string param = str(e, "param");
      if (const auto found = params.find(param); found == params.end() || priority > found->second.first) {
        params[param] = {priority, str(e, "value")};
      }
    } else if (event == "thread_start") {
      if (!stacks.contains(thread)) {
        stacks[thread];
        thread_order.push_back(thread);
      }
    } else if (event == "thread_exit") {
      if (auto found = stacks.find(thread); found != stacks.end() && thread != "main") {
        for (auto it = found->second.rbegin(); it != found->second.rend(); ++it) {
          it->end_us = time_us(str(e, "time"));
          regions.push_back(*it);
        }
        found->second.clear();
      }
    } else if (event == "region_enter") {
      auto found = stacks.find(thread);
      const std::int64_t nesting = integer(e, "nesting").value_or(0);
      if (found == stacks.end() || static_cast<std::int64_t>(found->second.size()) != nesting - 1) {
        continue;
      }
      Region r;
      r.category = str(e, "category");
      r.label = str(e, "label");
      r.message = str(e, "msg");
      r.nesting = nesting;
      r.repo = integer(e, "repo").value_or(1);
      r.thread = thread;
      r.start_us = time_us(str(e, "time"));
      found->second.push_back(std::move(r));
    } else if (event == "region_leave") {
      auto found = stacks.find(thread);
      if (found == stacks.end() || found->second.empty() ||
          found->second.back().nesting != integer(e, "nesting").value_or(0)) {
        continue;
      }
      Region r = std::move(found->second.back());
      found->second.pop_back();
      r.end_us = time_us(str(e, "time"));
      r.t_rel = real(e, "t_rel");
      r.left = true;
      regions.push_back(std::move(r));
    } else if (event == "data" || event == "data_json") {
      const std::string category = str(e, "category");
      const std::string key = str(e, "key");
      if (category == settings.important_category && key.starts_with(settings.important_prefix)) {
        important[settings.important_field].push_back(data_value(e));
      }
      const std::int64_t nesting = integer(e, "nesting").value_or(1);
      if (nesting <= 1) {
        process_data[category][key] = data_value(e);
        continue;
      }
      auto found = stacks.find(thread);
      if (found == stacks.end() || static_cast<std::int64_t>(found->second.size()) <= nesting - 2) {
        continue;
      }
      Region& r = found->second[static_cast<std::size_t>(nesting - 2)];
      if (r.nesting == nesting - 1) {
        r.data[category][key] = data_value(e);
      }
    } else if (event == "timer") {
      timers[str(e, "category")][str(e, "name")] = timer_value(e);
    } else if (event == "th_timer") {
      if (stacks.contains(thread)) {
        thread_timers[thread][str(e, "category")][str(e, "name")] = timer_value(e);
      }
    } else if (event == "counter") {
      counters[str(e, "category")][str(e, "name")] = minified(e, "count");
    } else if (event == "th_counter") {
      if (stacks.contains(thread)) {
        thread_counters[thread][str(e, "category")][str(e, "name")] = minified(e, "count");
      }
    } else if (event == "child_start") {
      const std::int64_t id = integer(e, "child_id").value_or(-1);
      if (children.contains(id)) {
        continue;
      }
      Child c;
      c.cls = str(e, "child_class");
      c.hook = str(e, "hook_name", "??");
      c.argv = strings(e, "argv");
      children[id] = c;
      child_order.push_back(id);
    } else if (event == "child_exit") {
      if (auto found = children.find(integer(e, "child_id").value_or(-1)); found != children.end()) {
        found->second.pid = integer(e, "pid").value_or(-1);
        found->second.code = integer(e, "code").value_or(-1);
      }
    } else if (event == "child_ready") {
      if (auto found = children.find(integer(e, "child_id").value_or(-1)); found != children.end()) {
        found->second.pid = integer(e, "pid").value_or(-1);
        found->second.code = -1;
        found->second.ready = str(e, "ready");
      }
    } else if (event == "exec") {
      const std::int64_t id = integer(e, "exec_id").value_or(-1);
      if (execs.contains(id)) {
        continue;
      }
      execs[id] = Exec{str(e, "exe"), strings(e, "argv"), -1};
      exec_order.push_back(id);
    } else if (event == "exec_result") {
      if (auto found = execs.find(integer(e, "exec_id").value_or(-1)); found != execs.end()) {
        found->second.code = integer(e, "code").value_or(-1);
      }
    }
  }
  // At the end of the stream, the regions still open close (trace2receiver
  // pops every stack).
  for (auto& [thread, stack] : stacks) {
    for (auto it = stack.rbegin(); it != stack.rend(); ++it) {
      regions.push_back(*it);
    }
  }
  for (const auto& [thread, stack] : stacks) {
    known_threads.insert(thread);
  }

  const std::string& level = settings.level;
  const auto at_least = [&level](const std::string& floor) {
    const std::vector<std::string> order = {"summary", "process", "verbose"};
    return std::find(order.begin(), order.end(), level) >= std::find(order.begin(), order.end(), floor);
  };
  std::string exe = basename_of(argv.empty() ? std::string() : argv.front());
  if (exe.size() > 4 && (exe.ends_with(".exe") || exe.ends_with(".EXE"))) {
    exe.resize(exe.size() - 4);
  }
  std::string name_verb = exe;
  if (!verb.empty()) {
    name_verb += ":" + (verb == "_run_dashed_" && argv.size() > 1 ? argv[1] : verb);
  }
  const std::string name_verb_mode = mode.empty() ? name_verb : name_verb + "#" + mode;

  resource = {{"service.namespace", "trace2"}, {"service.name", name_verb_mode}, {"service.version", version},
              {"service.instance.id", sid},    {"trace2.cmd.version", version},   {"trace2.cmd.sid", sid}};

  std::vector<Expected> out;
  Expected p{"process", name_verb_mode, kind_number(rules.spans.at("process").kind), {}};
  auto& a = p.attributes;
  a["trace2.span.type"] = "process";
  a["trace2.machine.arch"] = go_arch();
  a["trace2.machine.os"] = "linux";
  if (settings.pii) {
    a["trace2.pii.hostname"] = this_host();
    a["trace2.pii.username"] = this_user();
  }
  a["trace2.cmd.name"] = exe;
  a["trace2.cmd.name_verb"] = name_verb;
  a["trace2.cmd.name_verb_mode"] = name_verb_mode;
  a["trace2.cmd.hierarchy"] = hierarchy;
  a["trace2.cmd.exit_code"] = std::to_string(exit_code.value_or(-1));
  a["trace2.cmd.argv"] = canonical_text(json_array(argv));
  if (at_least("process")) {
    if (!ancestry.empty()) {
      a["trace2.cmd.ancestry"] = canonical_text(json_array(ancestry));
    }
    if (alias && !alias->empty()) {
      a["trace2.cmd.alias.key"] = *alias;
      if (!alias_argv.empty()) {
        a["trace2.cmd.alias.value"] = canonical_text(json_array(alias_argv));
      }
    }
  }
  if (error && !error->first.empty()) {
    a["trace2.cmd.error.format"] = error->first;
  }
  if (error && !error->second.empty()) {
    a["trace2.cmd.error.message"] = error->second;
  }
  if (!repos.empty()) {
    std::string json = "{";
    for (const auto& [id, worktree] : repos) {
      json += (json.size() > 1 ? "," : "") + json_quoted(id) + ":" + json_quoted(worktree);
    }
    a["trace2.repo.set"] = canonical_text(json + "}");
  }
  if (!params.empty()) {
    std::string json = "{";
    for (const auto& [param, value] : params) {
      json += (json.size() > 1 ? "," : "") + json_quoted(param) + ":" + json_quoted(value.second);
    }
    a["trace2.param.set"] = canonical_text(json + "}");
    if (const auto found = params.find(settings.nickname_key); found != params.end() && !found->second.second.empty()) {
      a["trace2.repo.nickname"] = found->second.second;
    }
  }
  if (at_least("verbose")) {
    if (thread_timers.contains("main")) {
      a["trace2.thread.timers"] = canonical_text(nested_json(thread_timers["main"]));
    }
    if (thread_counters.contains("main")) {
      a["trace2.thread.counters"] = canonical_text(nested_json(thread_counters["main"]));
    }
  }
  {
    std::map<std::string, std::string> summary;
    const auto matched = std::count_if(messages.begin(), messages.end(), [&](const std::string& m) {
      return m.starts_with(settings.summary_message_prefix);
    });
    if (matched > 0) {
      summary[settings.summary_message_field] = std::to_string(matched);
    }
    std::int64_t count = 0;
    double seconds = 0;
    for (const Region& r : regions) {
      if (r.left && r.category == settings.summary_region_category && r.label == settings.summary_region_label) {
        ++count;
        seconds += (r.end_us - r.start_us) / 1e6;
        clocks.git_seconds += r.t_rel;
        clocks.gap += std::abs((r.end_us - r.start_us) / 1e6 - r.t_rel);
      }
    }
    if (count > 0) {
      summary[settings.summary_region_count] = std::to_string(count);
    }
    if (seconds > 0) {
      char buffer[64];
      std::snprintf(buffer, sizeof buffer, "%.6f", seconds);
      summary[settings.summary_region_time] = buffer;
    }
    if (!summary.empty()) {
      std::string json = "{";
      for (const auto& [field, value] : summary) {
        json += (json.size() > 1 ? "," : "") + json_quoted(field) + ":" + value;
      }
      a["trace2.process.summary"] = json + "}";  // compared by summary_form()
    }
  }
  if (!important.empty()) {
    std::string json = "{";
    for (const auto& [field, values] : important) {
      json += (json.size() > 1 ? "," : "") + json_quoted(field) + ":[";
      for (std::size_t i = 0; i < values.size(); ++i) {
        json += (i > 0 ? "," : "") + values[i];
      }
      json += "]";
    }
    a["trace2.process.important_events"] = json + "}";
  }
  if (at_least("process")) {
    if (!process_data.empty()) {
      a["trace2.process.data"] = nested_json(process_data);
    }
    if (!timers.empty()) {
      a["trace2.process.timers"] = canonical_text(nested_json(timers));
    }
    if (!counters.empty()) {
      a["trace2.process.counters"] = canonical_text(nested_json(counters));
    }
  }
  out.push_back(std::move(p));

  if (at_least("process")) {
    for (const std::int64_t id : child_order) {
      const Child& c = children.at(id);
      std::string name;
      if (c.cls == "hook") {
        name = "child(hook:" + c.hook + ")";
      } else if (c.cls == "git_alias") {
        name = "child(alias:git)";
      } else if (c.cls == "shell_alias") {
        name = "child(alias:shell)";
      } else if (c.cls == "dashed") {
        name = "child(dashed:" + (c.argv.empty() ? std::string() : c.argv.front()) + ")";
      } else if (c.cls == "cred") {
        std::string op = "unknown";
        if (c.argv.size() > 1) {
          op = c.argv[1];
        } else if (!c.argv.empty()) {
          for (const char* suffix : {"get", "store", "erase"}) {
            if (c.argv.front().ends_with(suffix)) {
              op = suffix;
              break;
            }
          }
        }
        name = "child(cred:" + op + ")";
      } else if (c.cls == "?") {
        name = "child(class:unknown)";
      } else {
        name = "child(class:" + c.cls + ")";
      }
      Expected s{"child", name, kind_number(rules.spans.at("child").kind), {}};
      s.attributes["trace2.span.type"] = "child";
      if (!c.argv.empty()) {
        s.attributes["trace2.child.argv"] = canonical_text(json_array(c.argv));
      }
      s.attributes["trace2.child.pid"] = std::to_string(c.pid);
      s.attributes["trace2.child.exitcode"] = std::to_string(c.code);
      if (!c.ready.empty()) {
        s.attributes["trace2.child.ready"] = c.ready;
      }
      s.attributes["trace2.child.class"] = c.cls;
      if (c.cls == "hook") {
        s.attributes["trace2.child.hook"] = c.hook;
      }
      out.push_back(std::move(s));
    }
    for (const std::int64_t id : exec_order) {
      const Exec& x = execs.at(id);
      const std::string program = !x.exe.empty() ? basename_of(x.exe) : !x.argv.empty() ? basename_of(x.argv.front()) : "?";
      Expected s{"exec", "exec(" + program + ")", kind_number(rules.spans.at("exec").kind), {}};
      s.attributes["trace2.span.type"] = "exec";
      if (!x.argv.empty()) {
        s.attributes["trace2.exec.argv"] = canonical_text(json_array(x.argv));
      }
      s.attributes["trace2.exec.exe"] = x.exe;
      s.attributes["trace2.exec.exitcode"] = std::to_string(x.code);
      out.push_back(std::move(s));
    }
  }
  if (at_least("verbose")) {
    for (const std::string& thread : thread_order) {
      Expected s{"thread", thread, kind_number(rules.spans.at("thread").kind), {}};
      s.attributes["trace2.span.type"] = "thread";
      if (thread_timers.contains(thread)) {
        s.attributes["trace2.thread.timers"] = canonical_text(nested_json(thread_timers[thread]));
      }
      if (thread_counters.contains(thread)) {
        s.attributes["trace2.thread.counters"] = canonical_text(nested_json(thread_counters[thread]));
      }
      out.push_back(std::move(s));
    }
    for (const Region& r : regions) {
      Expected s{"region", "region(" + normalised(r.category, "C") + "," + normalised(r.label, "L") + ")",
                 kind_number(rules.spans.at("region").kind), {}};
      s.attributes["trace2.span.type"] = "region";
      s.attributes["trace2.region.repoid"] = std::to_string(r.repo);
      s.attributes["trace2.region.nesting"] = std::to_string(r.nesting);
      if (!r.message.empty()) {
        s.attributes["trace2.region.message"] = r.message;
      }
      if (!r.data.empty()) {
        s.attributes["trace2.region.data"] = nested_json(r.data);
      }
      out.push_back(std::move(s));
    }
  }
  return out;
}

// ---------------------------------------------------------------------
// What trace2d sent: the receiver's accepted spans, with their resources.

using Actual = AcceptedSpan;

// trace2.process.summary with its seconds field set aside (`seconds` gets
// it): a region's seconds are its times' difference for trace2receiver and
// git's elapsed for trace2d, which may differ in the last microsecond.
std::string summary_form(const std::string& json, const std::string& time_field, double* seconds) {
  simdjson::dom::parser parser;
  simdjson::dom::element e;
  if (parser.parse(json).get(e) != simdjson::SUCCESS) {
    return "<not JSON: " + json + ">";
  }
  std::string out = "{";
  std::map<std::string, std::string> members;
  for (auto [key, value] : e.get_object()) {
    if (key == time_field) {
      if (seconds != nullptr) {
        *seconds = value.get_double().value();
      }
      members[std::string(key)] = "<seconds>";
    } else {
      members[std::string(key)] = canonical(value);
    }
  }
  for (const auto& [key, value] : members) {
    out += (out.size() > 1 ? "," : "") + json_quoted(key) + ":" + value;
  }
  return out + "}";
}

// A value of a trace2receiver attribute in the form expected_spans() gives.
std::string comparable(const std::string& shape, const std::string& value) {
  return shape == "json-array" || shape == "json-object" ? canonical_text(value) : value;
}

// One span as text for comparison: its type, name, kind and the
// attributes trace2receiver has for its type.
std::string describe(const std::string& type, const std::string& name, int kind,
                     const std::map<std::string, std::string>& attributes) {
  std::string out = type + " " + name + " kind=" + std::to_string(kind);
  for (const auto& [key, value] : attributes) {
    out += "\n    " + key + " = " + value;
  }
  return out;
}

// The workloads, through `daemon`: the processes they ran.
void run_workloads(const TempDir& dir, const RunningDaemon& daemon) {
  const std::map<std::string, std::string> traced{{"GIT_TRACE2_EVENT", daemon.git_target()},
                                                  {"GIT_TRACE2_CONFIG_PARAMS", "otel.trace2.nickname"}};
  // A fetch from a local upstream: upload-pack, pack-objects, index-pack.
  const std::string clone = clone_behind(dir);
  ProcessResult ran = run_git(clone, {"-c", "otel.trace2.nickname=compat", "fetch", "--no-auto-gc", "origin"}, traced);
  ASSERT_EQ(ran.exit_code, 0) << ran.err;
  // A git alias (with git's probe for a dashed git-st) and a shell alias.
  ran = run_git(clone, {"-c", "alias.st=status --short", "st"}, traced);
  ASSERT_EQ(ran.exit_code, 0) << ran.err;
  ran = run_git(clone, {"-c", "alias.hi=!echo 'hi <&>'", "hi"}, traced);
  ASSERT_EQ(ran.exit_code, 0) << ran.err;
  // A hook that runs git.
  const std::string hook = clone + "/.git/hooks/post-commit";
  write_file(hook, "#!/bin/sh\ngit rev-parse HEAD >/dev/null\n");
  std::filesystem::permissions(hook, std::filesystem::perms::owner_all);
  write_file(clone + "/hooked.txt", "x\n");
  ASSERT_EQ(run_git(clone, {"add", "hooked.txt"}).exit_code, 0);
  ran = run_git(clone, {"commit", "-qm", "hooked"}, traced);
  ASSERT_EQ(ran.exit_code, 0) << ran.err;
  // A failing command with an error event.
  ran = run_git(clone, {"checkout", "no-such-branch-or-path"}, traced);
  ASSERT_NE(ran.exit_code, 0);
  // Index threads (git 2.39's extension thread sends regions without a thread_start).
  ran = run_git(clone, {"-c", "index.threads=4", "status"}, traced);
  ASSERT_EQ(ran.exit_code, 0) << ran.err;
  // git-shell exec's git-upload-pack.
  ProcessSpec shell = git_spec(dir.path(), {}, traced);
  shell.argv = {"git-shell", "-c", "git-upload-pack '" + clone + "'"};
  shell.stdin_data = "0000";
  ran = run_process(shell);
  ASSERT_EQ(ran.exit_code, 0) << ran.err;
}

void expect_like_trace2receiver(const std::string& level, bool pii) {
  SCOPED_TRACE("level " + level);
  const EmitRules rules = load_emit_rules();
  ASSERT_EQ(rules.spans.size(), 5u);
  Settings settings;
  settings.level = level;
  settings.pii = pii;
  TempDir dir;
  Receiver receiver(dir);
  std::vector<std::string> args = {"--otlp-endpoint",        receiver.endpoint(),
                                   "--otlp-detail",          level,
                                   "--otlp-summary-message", settings.summary_message_field + "=" + settings.summary_message_prefix,
                                   "--otlp-summary-region",  settings.summary_region_category + "/" + settings.summary_region_label + "=" +
                                                                 settings.summary_region_count + "," + settings.summary_region_time,
                                   "--otlp-important-event", settings.important_field + "=" + settings.important_category + "/" +
                                                                 settings.important_prefix};
  if (pii) {
    args.insert(args.end(), {"--otlp-pii-user-name", "--otlp-pii-host-name"});
  }
  RunningDaemon daemon(dir, args);
  run_workloads(dir, daemon);
  if (::testing::Test::HasFatalFailure()) {
    return;
  }
  ASSERT_TRUE(wait_until([&] { return all_exported(daemon.db_path(), 10); }, std::chrono::seconds(30)))
      << daemon.process().err_so_far();

  // The events of every stored session, as git wrote them.
  std::map<std::string, std::vector<std::string>> events;
  {
    db::Database db = open_db(daemon.db_path());
    db::Statement stmt = db.prepare("SELECT sid, json FROM events ORDER BY sid, seq");
    while (stmt.step()) {
      events[std::string(stmt.column_text(0))].emplace_back(stmt.column_text(1));
    }
  }
  const std::vector<Actual> actual = accepted_spans(receiver.accepted_file());
  ASSERT_FALSE(actual.empty());

  // Every span: its SID's process, its type's level, the shapes the table gives.
  std::map<std::string, std::vector<const Actual*>> actual_by_sid;
  std::set<std::string> types_seen;
  for (const Actual& a : actual) {
    ASSERT_FALSE(a.sid.empty()) << a.name << " has no service.instance.id on its resource";
    ASSERT_TRUE(rules.spans.contains(a.type)) << a.name << ": trace2.span.type '" << a.type << "'";
    EXPECT_TRUE(rules.spans.at(a.type).levels.contains(level)) << a.type << " span " << a.name << " at " << level;
    for (const AttributeRule& rule : rules.spans.at(a.type).attributes) {
      const auto shape = a.shapes.find(rule.key);
      if (shape == a.shapes.end()) {
        continue;
      }
      // Every trace2receiver value is a string: numbers as text, lists and maps as JSON text.
      EXPECT_EQ(shape->second, "string") << a.name << " " << rule.key;
      if (rule.shape == "decimal") {
        const std::string& v = a.attributes.at(rule.key);
        EXPECT_TRUE(!v.empty() && v.find_first_not_of("-0123456789") == std::string::npos) << rule.key << " = " << v;
      } else if (rule.shape == "json-array" || rule.shape == "json-object") {
        const std::string c = canonical_text(a.attributes.at(rule.key));
        EXPECT_EQ(c.front(), rule.shape == "json-array" ? '[' : '{') << rule.key << " = " << a.attributes.at(rule.key);
      }
    }
    for (const AttributeRule& rule : rules.resource) {
      EXPECT_TRUE(a.resource.contains(rule.key)) << a.name << ": resource " << rule.key;
    }
    actual_by_sid[a.sid].push_back(&a);
    types_seen.insert(a.type);
  }
  EXPECT_TRUE(types_seen.contains("process"));
  if (level != "summary") {
    EXPECT_TRUE(types_seen.contains("child"));
    EXPECT_TRUE(types_seen.contains("exec"));
  }
  if (level == "verbose") {
    EXPECT_TRUE(types_seen.contains("region"));
  }

  // Each process: the same spans as trace2receiver's, name, kind and attributes.
  EXPECT_EQ(actual_by_sid.size(), events.size());
  std::size_t compared = 0;
  std::map<std::string, double> expected_seconds;
  std::map<std::string, double> actual_seconds;
  std::map<std::string, SummaryClocks> clocks;
  std::set<std::string> keys_compared;
  for (const auto& [sid, lines] : events) {
    SCOPED_TRACE("sid " + sid);
    std::map<std::string, std::string> resource;
    std::set<std::string> known_threads;
    const std::vector<Expected> expected =
        expected_spans(sid, lines, settings, rules, resource, known_threads, clocks[sid]);
    const auto found = actual_by_sid.find(sid);
    ASSERT_NE(found, actual_by_sid.end()) << "no spans for " << sid;
    std::multiset<std::string> want;
    for (const Expected& e : expected) {
      std::map<std::string, std::string> attributes;
      for (const auto& [key, value] : e.attributes) {
        keys_compared.insert(key);
        if (key == "trace2.process.summary") {
          attributes[key] = summary_form(value, settings.summary_region_time, &expected_seconds[sid]);
        } else {
          attributes[key] = key == "trace2.process.important_events" || key == "trace2.process.data" ||
                                    key == "trace2.region.data"
                                ? canonical_text(value)
                                : value;
        }
      }
      want.insert(describe(e.type, e.name, e.kind, attributes));
    }
    std::multiset<std::string> got;
    for (const Actual* a : found->second) {
      // trace2d also sends the regions of a thread git announced no
      // thread_start for (git 2.39's index extension thread), which
      // trace2receiver ignores: an addition, not compared.
      if (a->type == "region" && !known_threads.contains(a->attributes.count("thread.name") ? a->attributes.at("thread.name") : "main")) {
        continue;
      }
      std::map<std::string, std::string> attributes;
      for (const AttributeRule& rule : rules.spans.at(a->type).attributes) {
        if (const auto value = a->attributes.find(rule.key); value != a->attributes.end()) {
          attributes[rule.key] = rule.key == "trace2.process.summary"
                                     ? summary_form(value->second, settings.summary_region_time, &actual_seconds[sid])
                                     : comparable(rule.shape, value->second);
        }
      }
      got.insert(describe(a->type, a->name, a->kind, attributes));
      if (a->type == "process") {
        for (const auto& [key, value] : resource) {
          EXPECT_EQ(a->resource.count(key) ? a->resource.at(key) : "<absent>", value) << "resource " << key;
        }
      }
    }
    std::vector<std::string> missing;
    std::set_difference(want.begin(), want.end(), got.begin(), got.end(), std::back_inserter(missing));
    std::vector<std::string> extra;
    std::set_difference(got.begin(), got.end(), want.begin(), want.end(), std::back_inserter(extra));
    std::string report;
    for (const std::string& m : missing) {
      report += "\n  trace2receiver would send, trace2d did not:\n  " + m;
    }
    for (const std::string& x : extra) {
      report += "\n  trace2d sent, trace2receiver would not:\n  " + x;
    }
    EXPECT_TRUE(missing.empty() && extra.empty()) << report;
    compared += want.size();
  }
  // One process span each at summary; more spans below it.
  if (level == "summary") {
    EXPECT_EQ(compared, events.size());
  } else {
    EXPECT_GT(compared, events.size());
  }
  // The workloads gave every kind of value the table has something to say about.
  std::set<std::string> wanted_keys = {"trace2.cmd.error.format", "trace2.cmd.error.message", "trace2.param.set",
                                       "trace2.repo.set", "trace2.repo.nickname", "trace2.process.summary",
                                       "trace2.process.important_events"};
  if (level != "summary") {
    wanted_keys.insert({"trace2.cmd.ancestry", "trace2.cmd.alias.key", "trace2.cmd.alias.value", "trace2.process.data",
                        "trace2.child.argv", "trace2.child.hook", "trace2.exec.argv", "trace2.exec.exe"});
  }
  if (level == "verbose") {
    wanted_keys.insert({"trace2.region.data", "trace2.region.nesting", "trace2.pii.username", "trace2.pii.hostname"});
  }
  for (const std::string& key : wanted_keys) {
    EXPECT_TRUE(keys_compared.contains(key)) << key << " was never compared";
  }
  for (const auto& [sid, seconds] : expected_seconds) {
    // trace2d sums git's own elapsed (monotonic), trace2receiver the
    // difference of the events' wall clock times. They differ by a few
    // microseconds, and on a loaded host by however long git waited
    // between reading the two clocks for an event (1.4 ms seen under ASan):
    // the gap the events themselves show is allowed, nothing more. By
    // git's own clock, the seconds are the matched regions' exactly.
    EXPECT_NEAR(actual_seconds[sid], seconds, 1e-4 + clocks[sid].gap)
        << sid << ": the summary's region seconds (clocks " << clocks[sid].gap << " s apart)";
    EXPECT_NEAR(actual_seconds[sid], clocks[sid].git_seconds, 1e-5) << sid << ": the matched regions' t_rel";
  }
  EXPECT_EQ(daemon.stop().exit_code, 0);
}

TEST(OtlpTrace2receiverCompat, SummaryLevelSendsWhatTrace2receiverSends) { expect_like_trace2receiver("summary", false); }

TEST(OtlpTrace2receiverCompat, ProcessLevelSendsWhatTrace2receiverSends) { expect_like_trace2receiver("process", false); }

TEST(OtlpTrace2receiverCompat, VerboseLevelWithPiiSendsWhatTrace2receiverSends) {
  expect_like_trace2receiver("verbose", true);
}

}  // namespace
}  // namespace trace2d::test
