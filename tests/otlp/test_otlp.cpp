// The OTLP span model and its encodings: ids as trace2receiver derives them,
// the resource from the OTel variables, a process tree's spans, and the
// protobuf encoding decoded by the official definitions (tests/otlp/otlp_check.js).

#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <optional>
#include <string>
#include <utility>

#include "model/process_tree.hpp"
#include "otlp/otlp_json.hpp"
#include "otlp/otlp_protobuf.hpp"
#include "otlp/resource.hpp"
#include "otlp/span_builder.hpp"
#include "otlp/span_ids.hpp"
#include "tests/support/process.hpp"
#include "tests/support/temp_dir.hpp"
#include "tests/otlp/span_lookup.hpp"

namespace trace2d::otlp {
namespace {

using span_lookup::attribute;
using span_lookup::named;
using span_lookup::text;

// A key made at run time is owned: copies and moves of its attribute keep
// its text after what it was made from is gone; a literal key is a view.
TEST(AttributeKey, OwnedKeysOutliveWhatTheyWereMadeFromLiteralsAreViews) {
  std::vector<Attribute> attributes;
  {
    std::string made = "trace2.data.category.a_key_longer_than_sso";
    attributes.push_back(Attribute{AttributeKey(made), std::string("v")});
    made.assign(made.size(), 'x');
  }
  attributes.push_back(Attribute{"trace2.region.label", std::int64_t{1}});
  std::vector<Attribute> copied = attributes;
  std::vector<Attribute> moved = std::move(attributes);
  for (const std::vector<Attribute>* list : {&copied, &moved}) {
    EXPECT_EQ((*list)[0].key.view(), "trace2.data.category.a_key_longer_than_sso");
    EXPECT_FALSE((*list)[0].key.is_ascii_literal());
    EXPECT_TRUE((*list)[1].key == "trace2.region.label");
    EXPECT_TRUE((*list)[1].key.is_ascii_literal());
  }
}

// A span's text is a view of the tree's strings (the tree outlives the
// spans) or owned; an owned value, copied or moved, keeps its text after
// what it was made from changes, and a view follows the string it views.
TEST(Text, OwnedValuesOutliveWhatTheyWereMadeFromViewsReadTheirString) {
  std::string tree_string = "a string longer than the inline buffer";
  const std::vector<std::string> tree_argv = {"git", "fetch"};
  std::vector<Attribute> attributes;
  {
    std::string made = "an owned value longer than the inline buffer";
    attributes.push_back(Attribute{"trace2.cmd.name", std::string(made)});
    made.assign(made.size(), 'x');
  }
  attributes.push_back(Attribute{"trace2.cmd.sid", Text::view_of(tree_string)});
  attributes.push_back(Attribute{"trace2.cmd.argv", TextList::view_of(tree_argv)});
  attributes.push_back(Attribute{"trace2.span.type", Text("process")});
  attributes.push_back(Attribute{"trace2.child.argv", std::vector<std::string>{"sh", "-c"}});
  const std::vector<Attribute> copied = attributes;
  const std::vector<Attribute> moved = std::move(attributes);
  tree_string.assign(tree_string.size(), 'y');
  for (const std::vector<Attribute>* list : {&copied, &moved}) {
    EXPECT_EQ(std::get<Text>((*list)[0].value).view(), "an owned value longer than the inline buffer");
    EXPECT_EQ(std::get<Text>((*list)[1].value).view(), tree_string);
    EXPECT_EQ(std::get<Text>((*list)[1].value).view().data(), tree_string.data());
    EXPECT_EQ(&std::get<TextList>((*list)[2].value).items(), &tree_argv);
    EXPECT_EQ(std::get<Text>((*list)[3].value).view(), "process");
    EXPECT_EQ(std::get<TextList>((*list)[4].value).items(), (std::vector<std::string>{"sh", "-c"}));
  }
}

// SHA-256("abc") = ba7816bf 8f01cfea 414140de 5dae2223 | b00361a3 96177a9c | b410ff61 f20015ad
TEST(SpanIds, AreTrace2receiversSha256Slices) {
  EXPECT_EQ(to_hex(trace_id_of("abc")), "ba7816bf8f01cfea414140de5dae2223");
  EXPECT_EQ(to_hex(trace_id_of("abc/xyz/def")), "ba7816bf8f01cfea414140de5dae2223");  // the first component's
  EXPECT_EQ(to_hex(process_span_id("abc")), "b00361a396177a9c");
  EXPECT_NE(inner_span_id("abc", "region 1"), inner_span_id("abc", "region 2"));
  EXPECT_EQ(inner_span_id("abc", "region 1"), inner_span_id("abc", "region 1"));  // stable across exports
}

// An inner span's id is SHA-256(SID, 0x1f, what names it)[16:24] (docs/otlp.md), whether the
// number is given as text or as a number; the digests are Python's hashlib's.
TEST(SpanIds, InnerIdsAreTheSha256OfTheSidAndTheirName) {
  EXPECT_EQ(to_hex(inner_span_id("abc", "region 12")), "59ec91c236641937");
  EXPECT_EQ(to_hex(inner_span_id("abc", "region ", 12)), "59ec91c236641937");
  EXPECT_EQ(to_hex(inner_span_id("abc", "child ", 0)), "319f285c68a8eb23");
  EXPECT_EQ(to_hex(inner_span_id("abc/def", "exec ", -3)), "6c1e9f376e3cc599");
  EXPECT_EQ(to_hex(inner_span_id("abc", "thread th01:worker")), "4e8b9234c78570e0");
  EXPECT_EQ(to_hex(inner_span_id("20231201T120000.123456Z-H1-P00000001", "region ", INT64_MAX)), "180ed34b9f8da39f");
}

TEST(Resource, ServiceNameHostAndTheOtelVariables) {
  ResourceSettings settings;
  settings.host_name = "build-7";
  settings.trace2d_version = "1.2.3";
  const auto value_of = [](const Resource& r, const std::string& key) -> std::string {
    for (const Attribute& a : r.attributes) {
      if (a.key == key) {
        return std::string(std::get<Text>(a.value).view());
      }
    }
    return "<absent>";
  };
  Resource plain = make_resource(settings);
  EXPECT_EQ(value_of(plain, "service.name"), "git");
  EXPECT_EQ(value_of(plain, "host.name"), "build-7");
  EXPECT_EQ(value_of(plain, "trace2d.version"), "1.2.3");

  settings.resource_attributes = "deployment.environment=ci, team=git%2Cinfra,broken,service.name=from-attrs";
  Resource with_attributes = make_resource(settings);
  EXPECT_EQ(value_of(with_attributes, "deployment.environment"), "ci");
  EXPECT_EQ(value_of(with_attributes, "team"), "git,infra");
  EXPECT_EQ(value_of(with_attributes, "service.name"), "from-attrs");
  EXPECT_TRUE(with_attributes.yielding.empty());  // set: it wins over a process's own name
  settings.service_name = "git-servers";  // OTEL_SERVICE_NAME wins
  EXPECT_EQ(value_of(make_resource(settings), "service.name"), "git-servers");
  EXPECT_EQ(percent_decode("a%20b%zz%4"), "a b%zz%4");
  // Without a variable, "git" is a default a process's resource replaces.
  EXPECT_EQ(plain.yielding, std::vector<std::string>{"service.name"});
  EXPECT_EQ(value_of(plain, "telemetry.sdk.name"), "trace2d");
  EXPECT_EQ(value_of(plain, "telemetry.sdk.language"), "cpp");
  EXPECT_EQ(value_of(plain, "telemetry.sdk.version"), "1.2.3");
  settings = ResourceSettings{};
  settings.host_name = "build-7";
  settings.include_host_name = false;  // [otlp] resource_host_name = false
  EXPECT_EQ(value_of(make_resource(settings), "host.name"), "<absent>");
}

// A fetch (exit 1, an error event) that ran an upload-pack (incomplete: no
// exit) through child 0, inside a region; the fetch saw the child end with
// `child_code`.
model::ProcessTree sample_tree(std::optional<std::int64_t> child_code = 0) {
  const std::int64_t t0 = 1'700'000'000'000'000;  // µs
  model::ProcessRows fetch;
  fetch.info.session_id = 1;
  fetch.info.sid = "ROOT-P00000010";
  fetch.info.cmd_name = "fetch";
  fetch.info.argv = {"/usr/bin/git", "fetch", "origin"};
  fetch.info.version = "2.39.5";
  fetch.info.pid = 16;
  fetch.info.start_us = t0;
  fetch.info.elapsed = 0.5;
  fetch.info.exit_code = 1;
  fetch.info.error_count = 1;
  fetch.info.status = "complete";
  fetch.info.errors.push_back({7, "main", "could not read from remote", "%s", t0 + 400'000});
  model::RegionInfo region;
  region.seq = 3;
  region.leave_seq = 9;
  region.thread = "main";
  region.nesting = 1;
  region.category = "fetch";
  region.label = "remote_refs";
  region.t_start = 0.1;
  region.elapsed = 0.3;
  fetch.regions.push_back(region);
  model::RegionInfo untimed = region;  // brief mode: no times
  untimed.seq = 10;
  untimed.leave_seq = std::nullopt;
  untimed.label = "untimed";
  untimed.t_start = std::nullopt;
  untimed.elapsed = std::nullopt;
  fetch.regions.push_back(untimed);
  model::ChildInfo child;
  child.child_id = 0;
  child.start_seq = 4;
  child.thread = "main";
  child.child_class = "transport/file";
  child.argv = {"git-upload-pack", "/srv/repo"};
  child.pid = 17;
  child.code = child_code;
  child.t_start = 0.15;
  child.elapsed = 0.2;
  child.child_sid = "ROOT-P00000010/UP-P00000011";
  fetch.children.push_back(child);

  model::ProcessRows upload;
  upload.info.session_id = 2;
  upload.info.sid = "ROOT-P00000010/UP-P00000011";
  upload.info.parent_sid = "ROOT-P00000010";
  upload.info.depth = 1;
  upload.info.cmd_name = "upload-pack";
  upload.info.argv = {"git-upload-pack", "/srv/repo"};
  upload.info.start_us = t0 + 160'000;
  upload.info.status = "incomplete";
  upload.info.last_event_us = t0 + 250'000;
  std::vector<model::ProcessRows> rows;
  rows.push_back(std::move(fetch));
  rows.push_back(std::move(upload));
  return model::build_process_tree("ROOT-P00000010", std::move(rows));
}

// A commit SIGKILLed while its post-commit hook ran: no exit, its last
// event the hook's child_start. The hook went on and ran a git 4 s later:
// the commit's span, and the hook's, which ends with it, last until that
// git ends, so it lies within them (not after a span of no length).
TEST(SpanBuilder, AKilledGitsSpanLastsUntilTheGitsItsUnendedChildRanEnd) {
  const std::int64_t t0 = 1'700'000'000'000'000;  // µs
  model::ProcessRows commit;
  commit.info.session_id = 1;
  commit.info.sid = "C-P00000010";
  commit.info.cmd_name = "commit";
  commit.info.argv = {"git", "commit"};
  commit.info.start_us = t0;
  commit.info.status = "incomplete";
  commit.info.last_event_us = t0 + 100'000;
  model::ChildInfo hook;
  hook.child_id = 0;
  hook.start_seq = 5;
  hook.thread = "main";
  hook.child_class = "hook";
  hook.hook_name = "post-commit";
  hook.argv = {".git/hooks/post-commit"};
  hook.t_start = 0.1;  // never ended
  commit.children.push_back(hook);
  model::ProcessRows log;
  log.info.session_id = 2;
  log.info.sid = "C-P00000010/L-P00000012";
  log.info.parent_sid = "C-P00000010";
  log.info.depth = 1;
  log.info.cmd_name = "log";
  log.info.argv = {"git", "log", "-1"};
  log.info.start_us = t0 + 4'100'000;
  log.info.elapsed = 0.05;
  log.info.status = "complete";
  std::vector<model::ProcessRows> rows;
  rows.push_back(std::move(commit));
  rows.push_back(std::move(log));
  const model::ProcessTree tree = model::build_process_tree("C-P00000010", std::move(rows));
  std::vector<Span> spans;
  (void)append_spans(tree, spans);
  const Span& commit_span = named(spans, "git:commit");
  const Span& hook_span = named(spans, "child(hook:post-commit)");
  const Span& log_span = named(spans, "git:log");
  EXPECT_EQ(log_span.parent_span_id, hook_span.span_id);
  EXPECT_EQ(log_span.end_time_unix_nano, 1'700'000'004'150'000'000ULL);
  EXPECT_GE(log_span.start_time_unix_nano, hook_span.start_time_unix_nano);
  EXPECT_EQ(hook_span.end_time_unix_nano, log_span.end_time_unix_nano);
  EXPECT_EQ(commit_span.end_time_unix_nano, log_span.end_time_unix_nano);
}

TEST(SpanBuilder, ProcessesRegionsAndChildrenWithTheChildGitUnderItsChildSpan) {
  std::vector<Span> spans;
  const model::ProcessTree tree = sample_tree();  // the spans refer to it
  const BuildStats stats = append_spans(tree, spans);
  EXPECT_EQ(stats.processes, 2u);
  EXPECT_EQ(stats.untimed, 1u);
  ASSERT_EQ(spans.size(), 4u);  // fetch, its region, its child, upload-pack

  const Span& fetch = named(spans, "git:fetch");
  EXPECT_EQ(fetch.kind, SpanKind::server);
  EXPECT_FALSE(fetch.parent_span_id);
  EXPECT_EQ(fetch.trace_id, trace_id_of("ROOT-P00000010"));
  EXPECT_EQ(fetch.span_id, process_span_id("ROOT-P00000010"));
  EXPECT_EQ(fetch.start_time_unix_nano, 1'700'000'000'000'000'000ULL);
  EXPECT_EQ(fetch.end_time_unix_nano, 1'700'000'000'500'000'000ULL);
  EXPECT_EQ(fetch.status, StatusCode::error);
  EXPECT_EQ(fetch.status_message, "exit code 1");
  ASSERT_EQ(fetch.events.size(), 1u);
  EXPECT_EQ(fetch.events[0].name, "error");
  EXPECT_EQ(fetch.events[0].time_unix_nano, 1'700'000'000'400'000'000ULL);

  const Span& region = named(spans, "region(fetch,remote_refs)");
  EXPECT_EQ(region.parent_span_id, fetch.span_id);
  EXPECT_EQ(region.start_time_unix_nano, fetch.start_time_unix_nano + 100'000'000);
  EXPECT_EQ(region.end_time_unix_nano, region.start_time_unix_nano + 300'000'000);

  const Span& child = named(spans, "child(class:transport/file)");
  EXPECT_EQ(child.kind, SpanKind::internal);  // trace2receiver's kind
  EXPECT_EQ(child.parent_span_id, region.span_id);  // started inside the region
  EXPECT_EQ(child.status, StatusCode::unset);

  const Span& upload = named(spans, "git-upload-pack:upload-pack");
  EXPECT_EQ(upload.parent_span_id, child.span_id);  // not the parent process: the child span that ran it
  EXPECT_EQ(upload.span_id, process_span_id("UP-P00000011"));
  EXPECT_EQ(upload.trace_id, fetch.trace_id);
  // Incomplete: it ends at its last event.
  EXPECT_EQ(upload.end_time_unix_nano, 1'700'000'000'250'000'000ULL);
}

TEST(SpanBuilder, ATopProcessWhoseParentIsNotExportedKeepsTrace2receiversParentId) {
  model::ProcessRows only;
  only.info.sid = "ci-job 42/G-P00000020";
  only.info.parent_sid = "ci-job 42";
  only.info.depth = 1;
  only.info.cmd_name = "status";
  only.info.start_us = 1'000'000;
  std::vector<model::ProcessRows> rows;
  rows.push_back(std::move(only));
  std::vector<Span> spans;
  const model::ProcessTree tree = model::build_process_tree("ci-job 42", std::move(rows));
  append_spans(tree, spans);
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0].parent_span_id, process_span_id("ci-job 42"));
  EXPECT_EQ(spans[0].trace_id, trace_id_of("ci-job 42"));
  EXPECT_EQ(spans[0].name, "git:status");
}

// A tree re-rooted for ownership (issue 24): uid 65534's session named a
// root session of another uid as its parent. Its spans are a trace of their
// own, from the whole tree_sid, and its process span has no parent; its
// child's parent is its span, in the same trace.
TEST(SpanBuilder, ATreeReRootedForOwnershipIsATraceOfItsOwnWithoutAParentSpan) {
  const std::string top = "V-P00000010/E-P00000011";
  model::ProcessRows evil;
  evil.info.sid = top;
  evil.info.parent_sid = "V-P00000010";
  evil.info.depth = 1;
  evil.info.tree_sid = top;
  evil.info.owner = model::Owner{65534};
  evil.info.cmd_name = "status";
  evil.info.start_us = 1'000'000;
  model::ProcessRows kid;
  kid.info.sid = top + "/K-P00000012";
  kid.info.parent_sid = top;
  kid.info.depth = 2;
  kid.info.tree_sid = top;
  kid.info.owner = model::Owner{65534};
  kid.info.cmd_name = "rev-parse";
  kid.info.start_us = 1'000'100;
  std::vector<model::ProcessRows> rows{evil, kid};
  std::vector<Span> spans;
  const model::ProcessTree tree = model::build_process_tree(top, std::move(rows));
  append_spans(tree, spans);
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_EQ(spans[0].parent_span_id, std::nullopt);
  EXPECT_EQ(spans[0].trace_id, trace_id_of_tree(top));
  EXPECT_NE(spans[0].trace_id, trace_id_of("V-P00000010")) << "not the trace its SID names";
  EXPECT_EQ(spans[1].parent_span_id, spans[0].span_id);
  EXPECT_EQ(spans[1].trace_id, spans[0].trace_id);
  const auto tree_attribute = std::find_if(spans[0].attributes.begin(), spans[0].attributes.end(),
                                           [](const Attribute& a) { return a.key == "trace2d.tree_sid"; });
  ASSERT_NE(tree_attribute, spans[0].attributes.end());
  // The child alone (its top not exported): its parent from its SID, its tree's trace.
  model::ProcessRows alone = kid;
  std::vector<Span> kid_spans;
  const model::ProcessTree kid_tree = model::build_process_tree(top, {alone});
  append_spans(kid_tree, kid_spans);
  ASSERT_EQ(kid_spans.size(), 1u);
  EXPECT_EQ(kid_spans[0].parent_span_id, process_span_id("E-P00000011"));
  EXPECT_EQ(kid_spans[0].trace_id, trace_id_of_tree(top));
}

TEST(SpanIds, ATreeAtASidsRootHasTrace2receiversTraceAReRootedOneTheWholeTreeSids) {
  EXPECT_EQ(trace_id_of_tree("ci-job 42"), trace_id_of("ci-job 42/G-P00000020"));
  EXPECT_EQ(to_hex(trace_id_of_tree("R-P1")), to_hex(trace_id_of("R-P1")));
  // SHA-256("a/b")[0:16]
  EXPECT_EQ(to_hex(trace_id_of_tree("a/b")), "c14cddc033f64b9dea80ea675cf280a0");
}

// git-shell (pid 0x20) whose first exec failed and whose second became
// `git upload-pack`: the SID's child with the same pid.
// `unknown_exit`: the shell ends as the client library's execvp() ends a
// wrapper, complete with the unknown code -1, not as git's exec does.
model::ProcessTree exec_tree(bool unknown_exit = false) {
  const std::int64_t t0 = 1'700'000'000'000'000;  // µs
  model::ProcessRows shell;
  shell.info.sid = "SH-P00000020";
  shell.info.argv = {"git-shell", "-c", "git-upload-pack 'r'"};
  shell.info.pid = 32;
  shell.info.start_us = t0;
  shell.info.status = "incomplete";  // a successful exec sends nothing more
  if (unknown_exit) {
    shell.info.status = "complete";
    shell.info.exit_code = -1;
  }
  shell.info.last_event_us = t0 + 300'000;
  model::ExecInfo failed;
  failed.exec_id = 0;
  failed.seq = 3;
  failed.thread = "main";
  failed.argv = {"/nonexistent/git", "upload-pack", "r"};
  failed.t_start = 0.1;
  failed.code = -1;
  failed.result_t = 0.2;
  model::ExecInfo worked = failed;
  worked.exec_id = 1;
  worked.seq = 5;
  worked.exe = "git";
  worked.argv = {"git", "upload-pack", "r"};
  worked.t_start = 0.3;
  worked.code = std::nullopt;
  worked.result_t = std::nullopt;
  shell.execs = {failed, worked};
  model::ProcessRows git;
  git.info.sid = "SH-P00000020/UP-P00000020";
  git.info.parent_sid = "SH-P00000020";
  git.info.depth = 1;
  git.info.cmd_name = "upload-pack";
  git.info.argv = {"git", "upload-pack", "r"};
  git.info.pid = 32;
  git.info.start_us = t0 + 400'000;
  git.info.elapsed = 0.5;
  git.info.exit_code = 0;
  git.info.status = "complete";
  std::vector<model::ProcessRows> rows;
  rows.push_back(std::move(shell));
  rows.push_back(std::move(git));
  return model::build_process_tree("SH-P00000020", std::move(rows));
}

TEST(SpanBuilder, ExecsAreSpansAndTheGitThatReplacedTheProcessHangsUnderItsExec) {
  std::vector<Span> spans;
  const model::ProcessTree tree = exec_tree();  // the spans refer to it
  append_spans(tree, spans);
  ASSERT_EQ(spans.size(), 4u);  // git-shell, two execs, upload-pack
  const auto attribute = [](const Span& span, const std::string& key) -> const AttributeValue* {
    for (const Attribute& a : span.attributes) {
      if (a.key == key) {
        return &a.value;
      }
    }
    return nullptr;
  };
  // Both are named by their program: the exe, else argv[0]'s.
  const auto exec_span = [&](const std::string& id) -> const Span& {
    for (const Span& span : spans) {
      const AttributeValue* value = attribute(span, "trace2.exec.id");
      if (value != nullptr && std::get<Text>(*value) == id) {
        EXPECT_EQ(span.name, "exec(git)");
        return span;
      }
    }
    throw std::runtime_error("no exec span " + id);
  };
  const Span& shell = named(spans, "git-shell");
  // Incomplete because it replaced itself, which is not a failure.
  EXPECT_EQ(shell.status, StatusCode::unset);
  const Span& worked = exec_span("1");
  EXPECT_EQ(worked.kind, SpanKind::internal);  // trace2receiver's kind
  EXPECT_EQ(worked.parent_span_id, shell.span_id);
  EXPECT_EQ(worked.trace_id, shell.trace_id);
  EXPECT_EQ(worked.status, StatusCode::unset);
  EXPECT_EQ(worked.start_time_unix_nano, 1'700'000'000'300'000'000ULL);
  // It lasts as long as the program that replaced the process.
  EXPECT_EQ(worked.end_time_unix_nano, 1'700'000'000'900'000'000ULL);
  ASSERT_NE(attribute(worked, "trace2.span.type"), nullptr);
  EXPECT_EQ(std::get<Text>(*attribute(worked, "trace2.span.type")).view(), "exec");
  EXPECT_EQ(std::get<Text>(*attribute(worked, "trace2.exec.exe")).view(), "git");
  // JSON text, as trace2receiver sends argv.
  EXPECT_EQ(std::get<Text>(*attribute(worked, "trace2.exec.argv")).view(), R"(["git","upload-pack","r"])");
  EXPECT_EQ(std::get<Text>(*attribute(worked, "trace2.exec.exitcode")).view(), "-1");  // it never returned

  const Span& failing = exec_span("0");
  EXPECT_EQ(failing.status, StatusCode::error);
  EXPECT_EQ(failing.status_message, "exec failed, code -1");
  EXPECT_EQ(std::get<Text>(*attribute(failing, "trace2.exec.exitcode")).view(), "-1");
  EXPECT_EQ(std::get<Text>(*attribute(failing, "trace2.exec.exe")).view(), "");  // trace2receiver sends it empty
  EXPECT_EQ(failing.start_time_unix_nano, 1'700'000'000'100'000'000ULL);
  EXPECT_EQ(failing.end_time_unix_nano, 1'700'000'000'200'000'000ULL);  // at its exec_result

  const Span& git = named(spans, "git:upload-pack");
  EXPECT_EQ(git.parent_span_id, worked.span_id);  // not the shell's process span
  EXPECT_EQ(git.span_id, process_span_id("UP-P00000020"));
  EXPECT_EQ(std::get<Text>(*attribute(git, "trace2d.placed_by")).view(), "exec");

  // At the summary level there are no exec spans: the git hangs under the shell.
  ExportRules rules;
  rules.default_level = DetailLevel::summary;
  std::vector<Span> summary;
  const model::ProcessTree summary_tree = exec_tree();  // the spans refer to it
  append_spans(summary_tree, summary, {}, rules);
  ASSERT_EQ(summary.size(), 2u);
  EXPECT_EQ(named(summary, "git:upload-pack").parent_span_id, named(summary, "git-shell").span_id);
}

// A wrapper that replaced itself with git through the client library ends
// with the unknown code -1: git's span has the code, the wrapper's is no
// error; -1 without an exec that replaced the process is one.
TEST(SpanBuilder, TheUnknownCodeOfAProcessThatReplacedItselfIsNoError) {
  std::vector<Span> spans;
  const model::ProcessTree tree = exec_tree(true);  // the spans refer to it
  append_spans(tree, spans);
  EXPECT_EQ(named(spans, "git-shell").status, StatusCode::unset);

  model::ProcessRows alone;
  alone.info.sid = "WR-P00000021";
  alone.info.argv = {"wrapper"};
  alone.info.start_us = 1'700'000'000'000'000;
  alone.info.status = "complete";
  alone.info.exit_code = -1;
  std::vector<model::ProcessRows> rows;
  rows.push_back(std::move(alone));
  const model::ProcessTree unknown = model::build_process_tree("WR-P00000021", std::move(rows));
  std::vector<Span> unknown_spans;
  append_spans(unknown, unknown_spans);
  ASSERT_EQ(unknown_spans.size(), 1u);
  EXPECT_EQ(unknown_spans[0].status, StatusCode::error);
  EXPECT_EQ(unknown_spans[0].status_message, "exit code -1");
}

// A git killed by a signal sends nothing more (only SIGPIPE sends a
// `signal` event): it ends incomplete, and its span is ERROR, with the signal
// when its parent saw it (child_exit's 128 + N), unless its parent saw it
// exit 0 (then only its last events were not seen).
TEST(SpanBuilder, AProcessThatEndedWithoutExitingIsAnErrorUnlessItsParentSawItExitZero) {
  const auto upload_of = [](std::optional<std::int64_t> child_code) {
    std::vector<Span> spans;
    const model::ProcessTree tree = sample_tree(child_code);
    append_spans(tree, spans);
    const Span& upload = named(spans, "git-upload-pack:upload-pack");
    return std::pair<StatusCode, std::string>(upload.status, upload.status_message);
  };
  EXPECT_EQ(upload_of(0), (std::pair<StatusCode, std::string>(StatusCode::unset, "")));
  EXPECT_EQ(upload_of(143), (std::pair<StatusCode, std::string>(StatusCode::error, "killed by signal 15")));
  EXPECT_EQ(upload_of(137), (std::pair<StatusCode, std::string>(StatusCode::error, "killed by signal 9")));
  EXPECT_EQ(upload_of(3), (std::pair<StatusCode, std::string>(StatusCode::error, "exit code 3 (as its parent saw it)")));
  // Still running in its parent (no child_exit yet), or a top process: all
  // that is known is that it ended without exiting.
  EXPECT_EQ(upload_of(std::nullopt).second, "ended without exiting: killed by a signal, or crashed");

  model::ProcessRows killed;
  killed.info.sid = "K-P00000030";
  killed.info.cmd_name = "cat-file";
  killed.info.argv = {"git", "cat-file", "--batch"};
  killed.info.start_us = 1'000'000;
  killed.info.status = "incomplete";
  std::vector<Span> spans;
  const model::ProcessTree tree = model::build_process_tree("K-P00000030", {killed});
  append_spans(tree, spans);
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0].status, StatusCode::error);
  EXPECT_EQ(spans[0].status_message, "ended without exiting: killed by a signal, or crashed");
  // A git that reported its signal (SIGPIPE) says which.
  killed.info.status = "complete";
  killed.info.signo = 13;
  spans.clear();
  const model::ProcessTree signalled = model::build_process_tree("K-P00000030", {killed});
  append_spans(signalled, spans);
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0].status, StatusCode::error);
  EXPECT_EQ(spans[0].status_message, "killed by signal 13");
}

// `git co` for an alias co = checkout: git first tries `git-co` (a child of
// class dashed that fails to start, code -1), then runs the alias. The
// probe is not an error; a dashed command that exists and fails is.
TEST(SpanBuilder, GitsDashedCommandProbeIsNotAnError) {
  const auto child_status = [](std::int64_t code) {
    model::ProcessRows alias;
    alias.info.sid = "A-P00000040";
    alias.info.cmd_name = "_run_git_alias_";
    alias.info.argv = {"git", "co", "main"};
    alias.info.start_us = 1'000'000;
    alias.info.elapsed = 0.1;
    alias.info.exit_code = 0;
    alias.info.status = "complete";
    model::ChildInfo probe;
    probe.child_id = 0;
    probe.start_seq = 4;
    probe.thread = "main";
    probe.child_class = "dashed";
    probe.argv = {"git-co", "main"};
    probe.pid = -1;
    probe.code = code;
    probe.t_start = 0.01;
    probe.elapsed = 0.0001;
    alias.children.push_back(probe);
    std::vector<Span> spans;
    const model::ProcessTree tree = model::build_process_tree("A-P00000040", {alias});
    append_spans(tree, spans);
    const Span& child = named(spans, "child(dashed:git-co)");
    return std::pair<StatusCode, std::string>(child.status, child.status_message);
  };
  EXPECT_EQ(child_status(-1), (std::pair<StatusCode, std::string>(StatusCode::unset, "")));
  EXPECT_EQ(child_status(127), (std::pair<StatusCode, std::string>(StatusCode::unset, "")));
  EXPECT_EQ(child_status(1), (std::pair<StatusCode, std::string>(StatusCode::error, "exit code 1")));
}

TEST(SpanBuilder, AProcessOverItsBoundSendsItsFirstSpansAndCountsTheRest) {
  // fetch has 3 spans (itself, its region, its child), upload-pack 1; one
  // walk builds both, each span tagged with its session.
  std::vector<Span> spans;
  std::vector<std::int64_t> owners;
  const model::ProcessTree tree = sample_tree();  // the spans refer to it
  const BuildStats stats = append_spans(tree, spans, {}, {}, &owners, 2);
  ASSERT_EQ(spans.size(), 3u);
  ASSERT_EQ(owners, (std::vector<std::int64_t>{1, 1, 2}));
  EXPECT_EQ(spans[0].name, "git:fetch");  // the process span comes first
  EXPECT_EQ(spans[1].name, "region(fetch,remote_refs)");
  EXPECT_EQ(spans[2].name, "git-upload-pack:upload-pack");
  // upload-pack still hangs under the child span left out: ids are derived.
  std::vector<Span> whole;
  const model::ProcessTree whole_tree = sample_tree();  // the spans refer to it
  append_spans(whole_tree, whole);
  EXPECT_EQ(spans[2].parent_span_id, named(whole, "child(class:transport/file)").span_id);
  ASSERT_EQ(stats.left_out.size(), 1u);
  EXPECT_EQ(stats.left_out[0], (std::pair<std::int64_t, std::size_t>{1, 1}));
}

// The official OTLP definitions (.ci/deps installs them) decode `pb` to
// the same request as `json`, with `spans` spans.
void expect_decoder_reads_the_same(const std::string& pb, const std::string& json, int spans) {
  test::TempDir dir;
  std::ofstream(dir.file("request.pb"), std::ios::binary) << pb;
  std::ofstream(dir.file("request.json"), std::ios::binary) << json;
  test::ProcessSpec spec;
  spec.argv = {"node", TRACE2D_OTLP_CHECK_JS, TRACE2D_OTLP_DECODER_DIR, "compare", dir.file("request.pb"),
               dir.file("request.json")};
  const test::ProcessResult result = test::run_process(spec);
  ASSERT_EQ(result.exit_code, 0) << result.err << "\n(the decoder is installed by .ci/deps)";
  EXPECT_EQ(result.out, "{\"same\":true,\"spans\":" + std::to_string(spans) + "}\n") << result.out;
}

// Every value kind, an invalid UTF-8 string, a negative integer and a long
// value, through both encoders: the official decoder must read the protobuf
// back as the same request the JSON says.
TEST(Encoding, ProtobufDecodesWithTheOfficialDefinitionsToTheSameRequestAsTheJson) {
  std::vector<Span> spans;
  const model::ProcessTree tree = sample_tree();  // the spans refer to it
  append_spans(tree, spans);
  Span& fetch = spans.front();
  fetch.attributes.push_back({"test.double", 2.5});
  fetch.attributes.push_back({"test.bool", true});
  fetch.attributes.push_back({"test.negative", std::int64_t{-5}});
  fetch.attributes.push_back({"test.bytes", std::string("caf\xc3\xa9 \xff")});
  // Longer than the encoder's first buffer, with lengths of three bytes in
  // front of it and of the span that holds it.
  fetch.attributes.push_back({"test.long", std::string(100000, 'x')});
  ResourceSettings settings;
  settings.host_name = "h";
  settings.trace2d_version = "0";
  const Resource resource = make_resource(settings);
  const Scope scope{"trace2d", "0.1.0"};
  const TraceBatch batch{&resource, &scope, spans};

  std::string pb;
  append_protobuf_request(pb, batch);
  std::string json;
  append_json_request(json, batch);
  expect_decoder_reads_the_same(pb, json, 4);

  simdjson::dom::parser parser;
  const simdjson::dom::element request = parser.parse(json);
  // One resource per process, as trace2receiver: fetch's three spans, then upload-pack's.
  ASSERT_EQ(request["resourceSpans"].get_array().size(), 2u);
  const simdjson::dom::array out = request["resourceSpans"].at(0)["scopeSpans"].at(0)["spans"].get_array();
  EXPECT_EQ(out.size(), 3u);
  EXPECT_EQ(request["resourceSpans"].at(1)["scopeSpans"].at(0)["spans"].get_array().size(), 1u);
  EXPECT_EQ(std::string_view(out.at(0)["traceId"].get_string()), to_hex(fetch.trace_id));
  EXPECT_EQ(std::string_view(out.at(0)["startTimeUnixNano"].get_string()), "1700000000000000000");
  EXPECT_EQ(int64_t(out.at(0)["status"]["code"].get_int64()), 2);
}

// The encoder keeps room for each length at its likely size and moves a
// message only when the length takes another: many short spans (each and
// the request shorter than guessed) must decode as the JSON says too, and
// a request appended to a string that holds text, with room left from a
// bigger one, is the same bytes after that text.
TEST(Encoding, ShortSpansAndAStringReusedGiveTheSameRequest) {
  std::vector<Span> spans(200);
  for (std::size_t i = 0; i < spans.size(); ++i) {
    spans[i].trace_id[0] = 1;
    spans[i].span_id[7] = static_cast<std::uint8_t>(i);
    spans[i].name = "s";
    spans[i].start_time_unix_nano = 1700000000000000000 + i;
    spans[i].end_time_unix_nano = spans[i].start_time_unix_nano + 1;
  }
  const Scope scope{"trace2d", "0.1.0"};
  const TraceBatch batch{nullptr, &scope, spans};

  std::string pb;
  append_protobuf_request(pb, batch);
  std::string json;
  append_json_request(json, batch);
  expect_decoder_reads_the_same(pb, json, 200);

  std::string reused(pb.size() * 3, 'z');
  reused.assign("before");
  append_protobuf_request(reused, batch);
  EXPECT_EQ(reused, "before" + pb);
}

}  // namespace
}  // namespace trace2d::otlp
