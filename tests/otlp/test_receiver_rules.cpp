// trace2receiver's rules in trace2d's export (tests/data/trace2receiver/
// emit_rules.json): its names, its JSON text, its filter settings (ruleset
// key, nicknames, named rulesets), its process, child, exec, thread and
// region attributes, its summary and important events, one resource per
// process.

#include <gtest/gtest.h>
#include <simdjson.h>

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/process_tree.hpp"
#include "otlp/export_rules.hpp"
#include "otlp/otlp_json.hpp"
#include "otlp/receiver_json.hpp"
#include "otlp/receiver_names.hpp"
#include "otlp/resource.hpp"
#include "otlp/resource_groups.hpp"
#include "otlp/span_builder.hpp"
#include "tests/otlp/span_lookup.hpp"

namespace trace2d::otlp {
namespace {

using span_lookup::attribute;
using span_lookup::named;
using span_lookup::text;

std::string go_quoted(std::string_view text) {
  std::string out;
  append_go_json_string(out, text);
  return out;
}

// Go's encoding/json, as trace2receiver writes its JSON text: HTML
// characters, U+2028/9 and control characters escaped, invalid UTF-8 as
// \ufffd byte by byte, valid UTF-8 as it is.
TEST(ReceiverJson, StringsAreQuotedAsGoQuotesThem) {
  EXPECT_EQ(go_quoted("git log --format=<%h> & more"), R"("git log --format=\u003c%h\u003e \u0026 more")");
  EXPECT_EQ(go_quoted("a\"b\\c\n\t\r\b\f\x01\x7f"), "\"a\\\"b\\\\c\\n\\t\\r\\b\\f\\u0001\x7f\"");
  EXPECT_EQ(go_quoted("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x99\x82"), "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x99\x82\"");
  EXPECT_EQ(go_quoted("\xe2\x80\xa8|\xe2\x80\xa9"), R"("\u2028|\u2029")");
  EXPECT_EQ(go_quoted("x\xff\xc3(\xed\xa0\x80y"), R"("x\ufffd\ufffd(\ufffd\ufffd\ufffdy")");  // a surrogate is invalid too
  EXPECT_EQ(go_json_string_array({"git", "fetch", ""}), R"(["git","fetch",""])");
  EXPECT_EQ(go_json_string_array({}), "[]");
  EXPECT_EQ(go_json_nested({{"b", {{"x", "1"}}}, {"a", {{"z", "\"q\""}, {"y", "2"}}}}),
            R"({"a":{"y":2,"z":"q"},"b":{"x":1}})");
}

TEST(ReceiverNames, RegionsAreNormalisedAsTrace2receiverDoes) {
  EXPECT_EQ(region_span_name("pack-objects", "enumerate-objects"), "region(pack_objects,enumerate_objects)");
  EXPECT_EQ(region_span_name("Index", "do_read_index"), "region(index,do_read_index)");
  EXPECT_EQ(region_span_name("a b.c,d:e(f)", "x"), "region(a_b_c_d_e_f_,x)");
  EXPECT_EQ(region_span_name("", ""), "region(C,L)");
}

model::ChildInfo child(std::string cls, std::vector<std::string> argv, std::string hook = {}) {
  model::ChildInfo c;
  c.child_class = std::move(cls);
  c.argv = std::move(argv);
  c.hook_name = std::move(hook);
  return c;
}

TEST(ReceiverNames, ChildrenByTheirClassExecsByTheirProgram) {
  EXPECT_EQ(child_span_name(child("hook", {"sh"}, "post-commit")), "child(hook:post-commit)");
  EXPECT_EQ(child_span_name(child("git_alias", {"git", "status"})), "child(alias:git)");
  EXPECT_EQ(child_span_name(child("shell_alias", {"echo hi"})), "child(alias:shell)");
  EXPECT_EQ(child_span_name(child("dashed", {"git-st"})), "child(dashed:git-st)");
  EXPECT_EQ(child_span_name(child("cred", {"git-credential-store", "get"})), "child(cred:get)");
  EXPECT_EQ(child_span_name(child("cred", {"git credential-cache store"})), "child(cred:store)");
  EXPECT_EQ(child_span_name(child("cred", {"helper"})), "child(cred:unknown)");
  EXPECT_EQ(child_span_name(child("?", {"x"})), "child(class:unknown)");
  EXPECT_EQ(child_span_name(child("editor", {"vi"})), "child(class:editor)");
  EXPECT_EQ(child_span_name(child("transport/file", {"git-upload-pack"})), "child(class:transport/file)");
  model::ExecInfo e;
  e.argv = {"/usr/lib/git-core/git-upload-pack", "r"};
  EXPECT_EQ(exec_span_name(e), "exec(git-upload-pack)");
  e.exe = "/usr/bin/git";
  EXPECT_EQ(exec_span_name(e), "exec(git)");
  EXPECT_EQ(exec_span_name(model::ExecInfo{}), "exec(?)");
}

model::ProcessInfo process(std::vector<std::string> argv, std::string verb, std::string mode = {}) {
  model::ProcessInfo p;
  p.argv = std::move(argv);
  p.cmd_name = std::move(verb);
  p.cmd_mode = std::move(mode);
  return p;
}

TEST(ReceiverNames, TheVerbOfADashedRunIsArgvOne) {
  const model::ProcessInfo dashed = process({"git", "remote-https", "origin"}, "_run_dashed_");
  EXPECT_EQ(name_verb(dashed), "git:remote-https");
  EXPECT_EQ(process_name(dashed), "git:remote-https");
  EXPECT_EQ(name_verb(process({"git", "co"}, "_run_git_alias_")), "git:_run_git_alias_");
  EXPECT_EQ(name_verb(process({"/usr/bin/git"}, "")), "git");
  EXPECT_EQ(process_name(process({"git", "checkout", "x"}, "checkout", "branch")), "git:checkout#branch");
  EXPECT_FALSE(machine_arch().empty());
  EXPECT_EQ(machine_os(), "linux");
}

TEST(ReceiverRules, ParamsCollapseByScopePriorityTheFirstOfEqualOnesWinning) {
  model::ProcessInfo p;
  p.params = {{"k", "system", "system"}, {"k", "local", "local"}, {"k", "global", "global"},
              {"e", "first", std::nullopt}, {"e", "second", std::nullopt}, {"w", "odd", "odd-scope"},
              {"w", "worktree", "worktree"}};
  EXPECT_EQ(param_value(p, "k").value_or("<none>"), "local");
  EXPECT_EQ(param_value(p, "e").value_or("<none>"), "first");
  EXPECT_EQ(param_value(p, "w").value_or("<none>"), "odd");  // an unknown scope (99) over worktree (4)
  EXPECT_FALSE(param_value(p, "none").has_value());
}

model::ProcessInfo with_params(model::ProcessInfo p, std::vector<model::ParamInfo> params) {
  p.params = std::move(params);
  return p;
}

TEST(ReceiverRules, RulesetKeyThenNicknameThenTheDefaultRules) {
  ExportRules rules;
  rules.default_level = DetailLevel::verbose;
  rules.add_rule("git:status=drop");
  rules.ruleset_key = "otel.trace2.ruleset";
  rules.add_nickname("monorepo=process");
  rules.add_nickname("big=rs:fetchy");
  rules.add_ruleset("rs:fetchy git:fetch=verbose git:checkout#branch=process *=drop");
  rules.add_ruleset("rs:plain git:fetch=summary");
  const model::ProcessInfo fetch = process({"git", "fetch"}, "fetch");
  const model::ProcessInfo status = process({"git", "status"}, "status");
  const model::ProcessInfo branch = process({"git", "checkout", "b"}, "checkout", "branch");
  // Nothing named: trace2d's own rules.
  EXPECT_EQ(rules.level_of(fetch), DetailLevel::verbose);
  EXPECT_EQ(rules.level_of(status), DetailLevel::drop);
  // A nickname listed: its level, or its ruleset's.
  EXPECT_EQ(rules.level_of(with_params(status, {{"otel.trace2.nickname", "monorepo", "local"}})), DetailLevel::process);
  EXPECT_EQ(rules.level_of(with_params(fetch, {{"otel.trace2.nickname", "big", "local"}})), DetailLevel::verbose);
  EXPECT_EQ(rules.level_of(with_params(branch, {{"otel.trace2.nickname", "big", "local"}})), DetailLevel::process);
  EXPECT_EQ(rules.level_of(with_params(status, {{"otel.trace2.nickname", "big", "local"}})), DetailLevel::drop);
  // A nickname not listed: the default rules.
  EXPECT_EQ(rules.level_of(with_params(status, {{"otel.trace2.nickname", "other", "local"}})), DetailLevel::drop);
  // The ruleset key wins over the nickname; a level or a ruleset.
  EXPECT_EQ(rules.level_of(with_params(status, {{"otel.trace2.nickname", "monorepo", "local"},
                                                {"otel.trace2.ruleset", "dl:verbose", "local"}})),
            DetailLevel::verbose);
  EXPECT_EQ(rules.level_of(with_params(status, {{"otel.trace2.ruleset", "rs:plain", "command"}})),
            DetailLevel::summary);  // a ruleset without "*=": summary
  EXPECT_EQ(rules.level_of(with_params(fetch, {{"otel.trace2.ruleset", "rs:plain", "command"}})), DetailLevel::summary);
  // A name that is neither a level nor a ruleset: trace2receiver's builtin summary.
  EXPECT_EQ(rules.level_of(with_params(fetch, {{"otel.trace2.ruleset", "rs:nope", "command"}})), DetailLevel::summary);
  // The key's value by scope priority: command over local.
  EXPECT_EQ(rules.level_of(with_params(fetch, {{"otel.trace2.ruleset", "drop", "command"},
                                               {"otel.trace2.ruleset", "verbose", "local"}})),
            DetailLevel::drop);
}

TEST(ReceiverRules, EntriesAreCheckedWithTheReason) {
  EXPECT_EQ(nickname_problem("monorepo=verbose"), "");
  EXPECT_EQ(nickname_problem("big=rs:fetch"), "");
  EXPECT_NE(nickname_problem("monorepo"), "");
  EXPECT_NE(nickname_problem("monorepo=loud"), "");
  EXPECT_EQ(ruleset_problem("rs:x git:status=verbose *=drop"), "");
  EXPECT_EQ(ruleset_problem("rs:x"), "");
  EXPECT_NE(ruleset_problem("x git:status=verbose"), "");
  EXPECT_NE(ruleset_problem("rs:x git:status"), "");
  // A nickname naming a ruleset nobody defined (a typo) would get summary
  // without a word: refused with the rulesets in view.
  EXPECT_EQ(undefined_ruleset_problem({"big=rs:fetch", "small=drop"}, {"rs:fetch git:fetch=verbose"}), "");
  EXPECT_EQ(undefined_ruleset_problem({"big=rs:fetch"}, {"rs:fech git:fetch=verbose"}),
            "'big=rs:fetch' names the ruleset 'rs:fetch', which no ruleset entry defines (its processes would get "
            "summary)");
  EXPECT_EQ(summary_message_problem("f=fatal: "), "");
  EXPECT_NE(summary_message_problem("=fatal"), "");
  EXPECT_EQ(summary_region_problem("index/do_read_index=n,t"), "");
  EXPECT_EQ(summary_region_problem("index/do_read_index=,t"), "");
  EXPECT_NE(summary_region_problem("index/do_read_index=n"), "");
  EXPECT_NE(summary_region_problem("index=n,t"), "");
  EXPECT_NE(summary_region_problem("index/x=,"), "");
  EXPECT_EQ(important_event_problem("f=gvfs-helper/error/"), "");
  EXPECT_NE(important_event_problem("f=gvfs-helper"), "");
  ExportRules rules;
  EXPECT_THROW(rules.add_ruleset("x"), std::invalid_argument);
  EXPECT_THROW(rules.add_nickname("x=loud"), std::invalid_argument);
}

// A verbose process with everything trace2receiver reads: a thread with
// regions, data at three nestings, timers and counters of the process and
// of threads, a hook without a name or an exit, a child sent to the
// background, errors, printf messages, repos, an alias, a SIGPIPE.
model::ProcessTree full_tree() {
  const std::int64_t t0 = 1'700'000'000'000'000;
  model::ProcessRows p;
  p.info.session_id = 1;
  p.info.sid = "F-P00000001";
  p.info.cmd_name = "fetch";
  p.info.hierarchy = "fetch";
  p.info.argv = {"/usr/bin/git", "fetch", "--format=<x>"};
  p.info.version = "2.39.5";
  p.info.start_us = t0;
  p.info.elapsed = 1;
  p.info.signo = 13;
  p.info.status = "complete";
  p.info.ancestry = {"bash", "sshd"};
  p.info.alias = "f";
  p.info.alias_argv = {"fetch", "--all"};
  p.info.repos = {{1, "/w/a"}, {2, "/w/b"}, {1, "/w/c"}};
  p.info.params = {{"otel.trace2.nickname", "mono", "local"}};
  p.info.errors = {{5, "main", "first without format", "", t0 + 1},
                   {6, "main", "bad ref x", "bad ref %s", t0 + 2},
                   {7, "main", "bad ref y", "bad ref %s", t0 + 3}};
  p.info.printf_messages = {"bad ref z from printf"};
  const auto annotation = [&](std::string kind, std::string thread, std::string category, std::string name,
                              std::string json, std::string text, std::int64_t seq,
                              std::optional<std::int64_t> nesting, bool per_thread = false) {
    model::Annotation a{std::move(kind), std::move(thread), std::move(category), std::move(name), std::move(json),
                        std::nullopt, std::move(text)};
    a.seq = seq;
    a.nesting = nesting;
    a.per_thread = per_thread;
    p.info.annotations.push_back(std::move(a));
  };
  annotation("data", "main", "fetch", "top", "\"<t>\"", "<t>", 2, 1);
  annotation("data", "main", "fetch", "in_region", "\"r\"", "r", 11, 2);
  annotation("data", "main", "fetch", "too_deep", "\"d\"", "d", 12, 3);  // no region at nesting 2 open
  annotation("data", "th01:w", "th", "k", "7", "7", 31, 2);
  annotation("counter", "main", "c", "n", "3", "", 13, std::nullopt);
  annotation("counter", "main", "c", "main_only", "4", "", 14, std::nullopt, true);
  annotation("counter", "th01:w", "c", "thread_only", "5", "", 32, std::nullopt, true);
  model::Annotation timer{"timer", "main", "t", "x", "{}", std::nullopt, ""};
  timer.timer_fields = {"2", "0.5", "0.1", "0.4"};
  p.info.annotations.push_back(timer);
  timer.per_thread = true;
  timer.thread = "th01:w";
  p.info.annotations.push_back(timer);

  model::RegionInfo region;
  region.seq = 10;
  region.leave_seq = 20;
  region.thread = "main";
  region.nesting = 1;
  region.category = "Fetch";
  region.label = "remote-refs";
  region.t_start = 0.1;
  region.elapsed = 0.25;
  p.regions.push_back(region);
  region.seq = 30;
  region.leave_seq = 40;
  region.thread = "th01:w";
  region.category = "th";
  region.label = "work";
  region.repo = 2;
  region.t_start = 0.5;
  region.elapsed = 0.1;
  p.regions.push_back(region);
  model::ThreadInfo thread;
  thread.name = "th01:w";
  thread.start_seq = 29;
  thread.t_start = 0.45;
  thread.elapsed = 0.3;
  p.threads.push_back(thread);
  model::ChildInfo hook = child("hook", {"sh", "hook"});
  hook.child_id = 0;
  hook.start_seq = 3;
  hook.thread = "main";
  hook.t_start = 0.05;
  hook.elapsed = 0.01;  // no child_exit: no pid, no code
  p.children.push_back(hook);
  model::ChildInfo background = child("background", {"git", "maintenance"});
  background.child_id = 1;
  background.start_seq = 50;
  background.thread = "main";
  background.t_start = 0.9;
  background.elapsed = 0.01;
  background.pid = 77;
  background.ready = "ready";
  p.children.push_back(background);
  std::vector<model::ProcessRows> rows;
  rows.push_back(std::move(p));
  return model::build_process_tree("F-P00000001", std::move(rows));
}

const model::ProcessTree& the_full_tree() {
  static const model::ProcessTree tree = full_tree();
  return tree;
}

std::vector<Span> build_at(DetailLevel level, ExportRules rules = {}) {
  rules.default_level = level;
  std::vector<Span> spans;
  append_spans(the_full_tree(), spans, {}, rules);
  return spans;
}

TEST(ReceiverAttributes, TheProcessSpanAtEachLevel) {
  ExportRules rules;
  rules.add_summary_message("bad_refs=bad ref");
  rules.add_summary_region("Fetch/remote-refs=fetch_count,fetch_seconds");
  rules.add_summary_region("th/work=,work_seconds");
  rules.add_summary_region("none/none=never,never_seconds");  // zero: left out
  rules.add_important_event("tees=fetch/t");  // by key prefix, at any nesting
  rules.add_important_event("regional=fetch/in");
  const std::vector<Span> summary = build_at(DetailLevel::summary, rules);
  ASSERT_EQ(summary.size(), 1u);
  const Span& p = summary.front();
  EXPECT_EQ(p.name, "git:fetch");
  EXPECT_EQ(p.kind, SpanKind::server);
  EXPECT_EQ(text(p, "trace2.cmd.name"), "git");
  EXPECT_EQ(text(p, "trace2.cmd.name_verb"), "git:fetch");
  EXPECT_EQ(text(p, "trace2.cmd.name_verb_mode"), "git:fetch");
  EXPECT_EQ(text(p, "trace2.cmd.hierarchy"), "fetch");
  EXPECT_EQ(text(p, "trace2.cmd.exit_code"), "141");  // 128 + SIGPIPE
  EXPECT_EQ(text(p, "trace2.cmd.argv"), R"(["/usr/bin/git","fetch","--format=\u003cx\u003e"])");
  EXPECT_EQ(text(p, "trace2.cmd.error.format"), "bad ref %s");  // the first with a format
  EXPECT_EQ(text(p, "trace2.cmd.error.message"), "bad ref x");
  EXPECT_EQ(text(p, "trace2.repo.set"), R"({"1":"/w/c","2":"/w/b"})");
  EXPECT_EQ(text(p, "trace2.param.set"), R"({"otel.trace2.nickname":"mono"})");
  EXPECT_EQ(text(p, "trace2.repo.nickname"), "mono");
  EXPECT_EQ(text(p, "trace2.machine.os"), "linux");
  EXPECT_EQ(text(p, "trace2.process.summary"),
            R"({"bad_refs":3,"fetch_count":1,"fetch_seconds":0.25,"work_seconds":0.1})");
  EXPECT_EQ(text(p, "trace2.process.important_events"), R"({"regional":["r"],"tees":["\u003ct\u003e","d"]})");
  // Process level and above only.
  for (const char* key : {"trace2.cmd.ancestry", "trace2.cmd.alias.key", "trace2.process.data",
                          "trace2.process.timers", "trace2.process.counters", "trace2.thread.counters"}) {
    EXPECT_EQ(text(p, key), "<absent>") << key;
  }
  EXPECT_EQ(text(p, "trace2.pii.username"), "<absent>");  // opt-in
  EXPECT_EQ(text(p, "trace2.pii.hostname"), "<absent>");

  const std::vector<Span> process = build_at(DetailLevel::process, rules);
  const Span& pp = named(process, "git:fetch");
  EXPECT_EQ(text(pp, "trace2.cmd.ancestry"), R"(["bash","sshd"])");
  EXPECT_EQ(text(pp, "trace2.cmd.alias.key"), "f");
  EXPECT_EQ(text(pp, "trace2.cmd.alias.value"), R"(["fetch","--all"])");
  EXPECT_EQ(text(pp, "trace2.process.data"), R"({"fetch":{"top":"\u003ct\u003e"}})");  // nesting 1 only
  EXPECT_EQ(text(pp, "trace2.process.timers"),
            R"({"t":{"x":{"intervals":2,"total_sec":0.5,"min_sec":0.1,"max_sec":0.4}}})");
  EXPECT_EQ(text(pp, "trace2.process.counters"), R"({"c":{"n":3}})");  // not the threads'
  EXPECT_EQ(text(pp, "trace2.thread.counters"), "<absent>");  // verbose only

  rules.pii_user_name = true;
  rules.pii_host_name = true;
  const std::vector<Span> verbose = build_at(DetailLevel::verbose, rules);
  const Span& pv = named(verbose, "git:fetch");
  EXPECT_EQ(text(pv, "trace2.thread.counters"), R"({"c":{"main_only":4}})");
  EXPECT_EQ(text(pv, "trace2.thread.timers"), "<absent>");
  EXPECT_NE(text(pv, "trace2.pii.hostname"), "<absent>");
  EXPECT_EQ(text(pv, "trace2.pii.username"), "<absent>");  // a session with no uid (imported) has no user
}

TEST(ReceiverAttributes, ChildrenExecsThreadsAndRegions) {
  const std::vector<Span> spans = build_at(DetailLevel::verbose);
  const Span& hook = named(spans, "child(hook:)");
  EXPECT_EQ(hook.kind, SpanKind::internal);
  EXPECT_EQ(text(hook, "trace2.child.class"), "hook");
  EXPECT_EQ(text(hook, "trace2.child.hook"), "??");  // trace2receiver's, without a hook name
  EXPECT_EQ(text(hook, "trace2.child.pid"), "-1");
  EXPECT_EQ(text(hook, "trace2.child.exitcode"), "-1");
  EXPECT_EQ(text(hook, "trace2.child.argv"), R"(["sh","hook"])");
  const Span& background = named(spans, "child(class:background)");
  EXPECT_EQ(text(background, "trace2.child.pid"), "77");
  EXPECT_EQ(text(background, "trace2.child.ready"), "ready");
  EXPECT_EQ(text(background, "trace2.child.exitcode"), "-1");

  const Span& thread = named(spans, "th01:w");  // not wrapped
  EXPECT_EQ(thread.kind, SpanKind::internal);
  EXPECT_EQ(text(thread, "trace2.span.type"), "thread");
  EXPECT_EQ(text(thread, "trace2.thread.counters"), R"({"c":{"thread_only":5}})");
  EXPECT_EQ(text(thread, "trace2.thread.timers"),
            R"({"t":{"x":{"intervals":2,"total_sec":0.5,"min_sec":0.1,"max_sec":0.4}}})");

  const Span& fetch_region = named(spans, "region(fetch,remote_refs)");
  EXPECT_EQ(text(fetch_region, "trace2.region.repoid"), "1");  // git named none
  EXPECT_EQ(text(fetch_region, "trace2.region.nesting"), "1");
  EXPECT_EQ(text(fetch_region, "trace2.region.data"), R"({"fetch":{"in_region":"r"}})");
  EXPECT_EQ(text(fetch_region, "trace2.region.category"), "Fetch");  // trace2d's, as git sent it
  const Span& work = named(spans, "region(th,work)");
  EXPECT_EQ(text(work, "trace2.region.repoid"), "2");
  EXPECT_EQ(text(work, "trace2.region.data"), R"({"th":{"k":7}})");  // its thread's
}

TEST(ReceiverResource, OneResourcePerProcessTheHostsAttributesMerged) {
  std::vector<Span> spans;
  append_spans(the_full_tree(), spans);
  ASSERT_FALSE(spans.empty());
  ResourceSettings settings;
  settings.host_name = "h";
  settings.trace2d_version = "9";
  settings.resource_attributes = "deployment.environment=ci,service.namespace=mine";
  const Resource host = make_resource(settings);
  const TraceBatch batch{&host, nullptr, spans};
  const std::vector<ResourceGroup> groups = group_by_resource(batch);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].spans.size(), spans.size());
  std::map<std::string, std::string> values;
  for (const Attribute* a : groups[0].attributes) {
    EXPECT_FALSE(values.contains(std::string(a->key.view()))) << a->key.view() << " twice";
    values[std::string(a->key.view())] = std::string(std::get<Text>(a->value).view());
  }
  EXPECT_EQ(values["service.name"], "git:fetch");  // the process's, over the default "git"
  EXPECT_EQ(values["service.namespace"], "mine");  // OTEL_RESOURCE_ATTRIBUTES chose it: it wins
  EXPECT_EQ(values["service.version"], "2.39.5");
  EXPECT_EQ(values["service.instance.id"], "F-P00000001");
  EXPECT_EQ(values["trace2.cmd.sid"], "F-P00000001");
  EXPECT_EQ(values["trace2.cmd.version"], "2.39.5");
  EXPECT_EQ(values["host.name"], "h");
  EXPECT_EQ(values["deployment.environment"], "ci");

  // Two processes' spans, interleaved: two ResourceSpans, each span under its own.
  std::vector<Span> two = spans;
  Span other;
  other.name = "other";
  model::ProcessInfo info;
  info.sid = "O-P00000002";
  info.argv = {"git", "status"};
  info.cmd_name = "status";
  other.resource = make_process_resource(info);
  two.insert(two.begin() + 1, other);
  std::string json;
  append_json_request(json, TraceBatch{&host, nullptr, two});
  simdjson::dom::parser parser;
  const simdjson::dom::element request = parser.parse(json);
  ASSERT_EQ(request["resourceSpans"].get_array().size(), 2u);
  EXPECT_EQ(request["resourceSpans"].at(0)["scopeSpans"].at(0)["spans"].get_array().size(), spans.size());
  EXPECT_EQ(std::string_view(request["resourceSpans"].at(1)["scopeSpans"].at(0)["spans"].at(0)["name"].get_string()),
            "other");
}

}  // namespace
}  // namespace trace2d::otlp
