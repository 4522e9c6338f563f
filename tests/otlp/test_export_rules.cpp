// Rules for what leaves the host: detail levels matched as trace2receiver
// matches them, and the span builder at each level (nickname, important
// data, summaries, a child git below a dropped or summarised parent).

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

#include "model/process_tree.hpp"
#include "otlp/export_rules.hpp"
#include "otlp/span_builder.hpp"
#include "otlp/span_ids.hpp"
#include "tests/otlp/span_lookup.hpp"

namespace trace2d::otlp {
namespace {

using span_lookup::attribute;
using span_lookup::named;
using span_lookup::text;

model::ProcessInfo process(std::string exe, std::string verb, std::string mode) {
  model::ProcessInfo p;
  p.argv = {std::move(exe), "x"};
  p.cmd_name = std::move(verb);
  p.cmd_mode = std::move(mode);
  return p;
}

TEST(ExportRules, MostSpecificFirstThenTheDefault) {
  ExportRules rules;
  rules.default_level = DetailLevel::summary;
  rules.add_rule("git:checkout#branch=verbose");
  rules.add_rule("git:checkout=process");
  rules.add_rule("git=drop");
  rules.add_rule("git-upload-pack:upload-pack=dl:verbose");  // trace2receiver's spelling
  EXPECT_EQ(rules.level_of(process("/usr/bin/git", "checkout", "branch")), DetailLevel::verbose);
  EXPECT_EQ(rules.level_of(process("/usr/bin/git", "checkout", "path")), DetailLevel::process);
  EXPECT_EQ(rules.level_of(process("git", "checkout", "")), DetailLevel::process);
  EXPECT_EQ(rules.level_of(process("C:\\git\\git.exe", "status", "")), DetailLevel::drop);  // exe alone
  EXPECT_EQ(rules.level_of(process("git", "", "")), DetailLevel::drop);
  EXPECT_EQ(rules.level_of(process("git-upload-pack", "upload-pack", "")), DetailLevel::verbose);
  EXPECT_EQ(rules.level_of(process("scalar", "run", "")), DetailLevel::summary);  // no rule: the default
  rules.add_rule("git=verbose");  // a later rule for the same pattern replaces it
  EXPECT_EQ(rules.level_of(process("git", "status", "")), DetailLevel::verbose);
}

TEST(ExportRules, BadRulesAreRefusedWithTheReason) {
  ExportRules rules;
  EXPECT_THROW(rules.add_rule("git:status"), std::invalid_argument);
  EXPECT_THROW(rules.add_rule("=drop"), std::invalid_argument);
  EXPECT_THROW(rules.add_rule("git:status=loud"), std::invalid_argument);
  EXPECT_NE(detail_rule_problem("git:status=loud").find("loud"), std::string::npos);
  EXPECT_EQ(detail_rule_problem("git:status=drop"), "");
  EXPECT_EQ(important_data_problem("fetch/remote"), "");
  EXPECT_NE(important_data_problem("fetch"), "");
  EXPECT_NE(important_data_problem("/remote"), "");
  EXPECT_EQ(parse_detail_level("dl:summary"), DetailLevel::summary);
  EXPECT_FALSE(parse_detail_level("dl:"));
  EXPECT_EQ(process_name(process("/usr/bin/git", "checkout", "branch")), "git:checkout#branch");
}

// A fetch (region, child 0 inside it, two errors with one format, data,
// a nickname) that ran an upload-pack through child 0.
model::ProcessTree fetch_tree() {
  const std::int64_t t0 = 1'700'000'000'000'000;
  model::ProcessRows fetch;
  fetch.info.session_id = 1;
  fetch.info.sid = "R-P00000010";
  fetch.info.cmd_name = "fetch";
  fetch.info.argv = {"/usr/bin/git", "fetch"};
  fetch.info.start_us = t0;
  fetch.info.elapsed = 0.5;
  fetch.info.exit_code = 0;
  fetch.info.status = "complete";
  fetch.info.params = {{"otel.trace2.nickname", "old", "global"}, {"core.x", "y", std::nullopt},
                       {"otel.trace2.nickname", "monorepo", "local"}};
  fetch.info.errors.push_back({7, "main", "bad ref a", "bad ref %s", t0 + 1});
  fetch.info.errors.push_back({8, "main", "bad ref b", "bad ref %s", t0 + 2});
  fetch.info.annotations.push_back({"data", "main", "fetch", "remote", "\"origin\"", 0.1, "origin"});
  fetch.info.annotations.push_back({"data", "main", "fetch", "other", "5", 0.1, "5"});
  fetch.info.annotations.push_back({"counter", "main", "pack", "objects", "12", std::nullopt, ""});
  for (std::int64_t i = 0; i < 2; ++i) {
    model::RegionInfo region;
    region.seq = 3 + i * 10;
    region.leave_seq = 9 + i * 10;
    region.thread = "main";
    region.nesting = 1;
    region.category = "fetch";
    region.label = "remote_refs";
    region.t_start = 0.1 + static_cast<double>(i) * 0.2;
    region.elapsed = 0.1;
    fetch.regions.push_back(region);
  }
  model::ChildInfo child;
  child.child_id = 0;
  child.start_seq = 4;
  child.thread = "main";
  child.child_class = "transport/file";
  child.argv = {"git-upload-pack", "/srv/repo"};
  child.t_start = 0.15;
  child.elapsed = 0.02;
  child.child_sid = "R-P00000010/U-P00000011";
  fetch.children.push_back(child);

  model::ProcessRows upload;
  upload.info.session_id = 2;
  upload.info.sid = "R-P00000010/U-P00000011";
  upload.info.parent_sid = "R-P00000010";
  upload.info.depth = 1;
  upload.info.cmd_name = "upload-pack";
  upload.info.argv = {"git-upload-pack", "/srv/repo"};
  upload.info.start_us = t0 + 160'000;
  upload.info.elapsed = 0.01;
  upload.info.status = "complete";
  std::vector<model::ProcessRows> rows;
  rows.push_back(std::move(fetch));
  rows.push_back(std::move(upload));
  return model::build_process_tree("R-P00000010", std::move(rows));
}

// One tree for every test: the spans built from it refer to its strings.
const model::ProcessTree& the_tree() {
  static const model::ProcessTree tree = fetch_tree();
  return tree;
}

std::vector<Span> build(const ExportRules& rules, BuildStats* stats = nullptr) {
  std::vector<Span> spans;
  const BuildStats s = append_spans(the_tree(), spans, {}, rules);
  if (stats != nullptr) {
    *stats = s;
  }
  return spans;
}

const Span* find_named(const std::vector<Span>& spans, const std::string& name) {
  const auto it = std::find_if(spans.begin(), spans.end(), [&](const Span& s) { return s.name == name; });
  return it == spans.end() ? nullptr : &*it;
}

ExportRules at(DetailLevel level) {
  ExportRules rules;
  rules.default_level = level;
  return rules;
}

TEST(SpanBuilderLevels, EachLevelAddsItsSpans) {
  EXPECT_EQ(build(at(DetailLevel::verbose)).size(), 5u);  // 2 processes, 2 regions, 1 child
  EXPECT_EQ(build(at(DetailLevel::process)).size(), 3u);  // 2 processes, 1 child
  EXPECT_EQ(build(at(DetailLevel::summary)).size(), 2u);  // the processes
  BuildStats stats;
  EXPECT_TRUE(build(at(DetailLevel::drop), &stats).empty());
  EXPECT_EQ(stats.dropped, 2u);
  EXPECT_EQ(stats.processes, 0u);
}

TEST(SpanBuilderLevels, AChildGitHangsUnderWhatItsParentSends) {
  const std::vector<Span> verbose = build(at(DetailLevel::verbose));
  ASSERT_NE(find_named(verbose, "child(class:transport/file)"), nullptr);
  EXPECT_EQ(find_named(verbose, "git-upload-pack:upload-pack")->parent_span_id,
            find_named(verbose, "child(class:transport/file)")->span_id);
  // process: no region spans; the child span hangs under the process.
  const std::vector<Span> process = build(at(DetailLevel::process));
  EXPECT_EQ(find_named(process, "child(class:transport/file)")->parent_span_id, process_span_id("R-P00000010"));
  // summary: no child span; the child git hangs under its parent process.
  const std::vector<Span> summary = build(at(DetailLevel::summary));
  EXPECT_EQ(find_named(summary, "git-upload-pack:upload-pack")->parent_span_id, process_span_id("R-P00000010"));
  // Its parent, the top process, dropped: it keeps trace2receiver's parent
  // id (a dropped process below another would give it that one's parent).
  ExportRules drop_fetch = at(DetailLevel::verbose);
  drop_fetch.add_rule("git:fetch=drop");
  BuildStats stats;
  const std::vector<Span> dropped = build(drop_fetch, &stats);
  ASSERT_EQ(dropped.size(), 1u);
  EXPECT_EQ(dropped[0].name, "git-upload-pack:upload-pack");
  EXPECT_EQ(dropped[0].parent_span_id, process_span_id("R-P00000010"));
  EXPECT_EQ(stats.dropped, 1u);
  EXPECT_EQ(stats.processes, 1u);
}

TEST(SpanBuilderLevels, OnlyTheSessionsAskedForWhateverTheLevel) {
  // The exporter builds one session at a time: the child git's parent is
  // the same as in a whole build.
  ExportRules rules = at(DetailLevel::summary);
  std::vector<Span> spans;
  append_spans(the_tree(), spans, [](const model::ProcessInfo& p) { return p.session_id == 2; }, rules);
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0].parent_span_id, process_span_id("R-P00000010"));
}

TEST(SpanBuilderLevels, NicknameImportantDataAndSummariesAtEveryLevel) {
  ExportRules rules = at(DetailLevel::summary);
  rules.important_data.insert("fetch/remote");
  const std::vector<Span> spans = build(rules);
  const Span& fetch = *find_named(spans, "git:fetch");
  EXPECT_EQ(text(fetch, "trace2.repo.nickname"), "monorepo");  // local over global, as trace2receiver
  EXPECT_EQ(text(fetch, "trace2.data.fetch.remote"), "origin");  // verbatim, not JSON
  EXPECT_EQ(text(fetch, "trace2.data.fetch.other"), "<absent>");  // not important
  EXPECT_EQ(text(fetch, "trace2d.detail"), "summary");
  EXPECT_EQ(text(fetch, "trace2d.summary.regions"), R"({"fetch/remote_refs":{"count":2,"seconds":0.200000}})");
  EXPECT_EQ(text(fetch, "trace2d.summary.errors"), R"({"bad ref %s":2})");
  EXPECT_EQ(text(fetch, "trace2.process.data"), "<absent>");  // process level and above
  EXPECT_EQ(text(*find_named(spans, "git-upload-pack:upload-pack"), "trace2.repo.nickname"), "<absent>");

  rules.default_level = DetailLevel::process;
  const std::vector<Span> process = build(rules);
  EXPECT_EQ(text(*find_named(process, "git:fetch"), "trace2.process.data"),
            R"({"fetch":{"other":5,"remote":"origin"}})");
  EXPECT_EQ(text(*find_named(process, "git:fetch"), "trace2.param.set"),
            R"({"core.x":"y","otel.trace2.nickname":"monorepo"})");
  EXPECT_EQ(text(*find_named(process, "git:fetch"), "trace2.process.counters"), R"({"pack":{"objects":12}})");

  rules.nickname_key = "";  // no nickname
  EXPECT_EQ(text(*find_named(build(rules), "git:fetch"), "trace2.repo.nickname"), "<absent>");
}

// A tree of one finished process (session 1) holding what `p` holds.
model::ProcessTree lone_process(model::ProcessRows p) {
  p.info.session_id = 1;
  p.info.sid = "S-P00000001";
  p.info.cmd_name = "status";
  p.info.start_us = 1'700'000'000'000'000;
  p.info.elapsed = 1;
  std::vector<model::ProcessRows> rows;
  rows.push_back(std::move(p));
  return model::build_process_tree("S-P00000001", std::move(rows));
}

// The region summary lists its names in byte order ('-' < '/' < '0': the
// order of the whole "category/label", not of the category first), counts
// a name again after the summary is full, and says that names were left
// out (the first 256 distinct names are kept, in the order they came).
TEST(SpanBuilderLevels, TheRegionSummaryIsInNameOrderAndCutAfter256Names) {
  model::ProcessRows p;
  std::int64_t seq = 0;
  const auto region = [&](std::string category, std::string label) {
    model::RegionInfo r;
    r.seq = ++seq;
    r.leave_seq = ++seq;
    r.thread = "main";
    r.category = std::move(category);
    r.label = std::move(label);
    r.t_start = 0.001;
    r.elapsed = 0.25;
    p.regions.push_back(std::move(r));
  };
  region("a0", "x");
  region("a", "y");
  region("a-b", "z");
  region("a", "y");
  for (int i = 0; i < 300; ++i) {
    region("n", fmt::format("{:03}", i));
  }
  region("a", "y");  // counted: admitted before the summary was full
  region("a", "w");  // not: new after it
  const model::ProcessTree tree = lone_process(std::move(p));
  std::vector<Span> spans;
  append_spans(tree, spans, {}, at(DetailLevel::summary));
  ASSERT_FALSE(spans.empty());
  std::string expected = R"({"a-b/z":{"count":1,"seconds":0.250000},"a/y":{"count":3,"seconds":0.750000},)"
                         R"("a0/x":{"count":1,"seconds":0.250000})";
  for (int i = 0; i < 253; ++i) {
    expected += fmt::format(R"(,"n/{:03}":{{"count":1,"seconds":0.250000}})", i);
  }
  expected += R"(,"...":true})";
  EXPECT_EQ(text(spans.front(), "trace2d.summary.regions"), expected);
}

// Data, timers and counters: one attribute a kind, categories and names
// in byte order, the last value of a name winning (as git's last data
// event does); a timer without its four members keeps its text.
TEST(SpanBuilderLevels, AnnotationsByKindCategoryAndNameTheLastValueWinning) {
  model::ProcessRows p;
  p.info.annotations.push_back({"data", "main", "b", "x", "1", 0.1, "1"});
  p.info.annotations.push_back({"timer", "main", "t", "n", R"({"count":1})", std::nullopt, ""});
  p.info.annotations.push_back({"data", "main", "a", "y", "2", 0.2, "2"});
  p.info.annotations.push_back({"counter", "main", "c", "k", "7", std::nullopt, ""});
  p.info.annotations.push_back({"data", "main", "a-b", "z", "\"q\"", 0.3, "q"});
  p.info.annotations.push_back({"data", "main", "a", "y", "3", 0.4, "3"});
  p.info.annotations.push_back({"data", "main", "a", "b", "4", 0.5, "4"});
  const model::ProcessTree tree = lone_process(std::move(p));
  std::vector<Span> spans;
  append_spans(tree, spans, {}, at(DetailLevel::process));
  ASSERT_FALSE(spans.empty());
  EXPECT_EQ(text(spans.front(), "trace2.process.data"), R"({"a":{"b":4,"y":3},"a-b":{"z":"q"},"b":{"x":1}})");
  EXPECT_EQ(text(spans.front(), "trace2.process.timers"), R"({"t":{"n":{"count":1}}})");
  EXPECT_EQ(text(spans.front(), "trace2.process.counters"), R"({"c":{"k":7}})");
}

// Detail by outcome: a failed or slow run goes at the outcome's level,
// never out of a drop; slow by a fixed bound or by its command's p99.
TEST(DetailByOutcome, FailedOrSlowRaisesTheLevelADropStays) {
  ExportRules rules = at(DetailLevel::summary);
  model::ProcessInfo fetch = process("git", "fetch", "");
  fetch.elapsed = 0.5;
  EXPECT_EQ(rules.raised_by(fetch, DetailLevel::summary, true), "");  // off
  rules.outcome_level = DetailLevel::verbose;
  EXPECT_EQ(rules.raised_by(fetch, DetailLevel::summary, true), "failed");
  EXPECT_EQ(rules.raised_by(fetch, DetailLevel::process, true), "failed");
  EXPECT_EQ(rules.raised_by(fetch, DetailLevel::drop, true), "");
  EXPECT_EQ(rules.raised_by(fetch, DetailLevel::verbose, true), "");  // there already
  EXPECT_EQ(rules.raised_by(fetch, DetailLevel::summary, false), "");  // neither failed nor slow
  rules.slow_seconds = 0.5;
  EXPECT_EQ(rules.raised_by(fetch, DetailLevel::summary, false), "slow");  // at least the bound
  rules.slow_seconds = 0.6;
  EXPECT_EQ(rules.raised_by(fetch, DetailLevel::summary, false), "");
  fetch.owner.uid = 1000;
  rules.command_p99.set(1001, "fetch", 0.1);  // another sender's fetches
  rules.command_p99.set(1000, "status", 0.1);
  rules.slow_by_p99 = true;
  EXPECT_EQ(rules.raised_by(fetch, DetailLevel::summary, false), "");  // no p99 of its sender's fetches
  rules.command_p99.set(1000, "fetch", 0.4);
  rules.slow_by_p99 = false;
  EXPECT_EQ(rules.raised_by(fetch, DetailLevel::summary, false), "");  // p99s not asked for
  rules.slow_by_p99 = true;
  EXPECT_EQ(rules.raised_by(fetch, DetailLevel::summary, false), "slow");  // over its command's
  rules.command_p99.set(1000, "fetch", 0.5);
  EXPECT_EQ(rules.raised_by(fetch, DetailLevel::summary, false), "");  // at the p99 is not over it
  fetch.elapsed.reset();  // never said how long it ran
  EXPECT_EQ(rules.raised_by(fetch, DetailLevel::summary, false), "");
}

TEST(DetailByOutcome, TheSlowProcessSendsItsRegionsAndChildrenTheOtherItsSpanAlone) {
  ExportRules rules = at(DetailLevel::summary);
  rules.outcome_level = DetailLevel::verbose;
  rules.slow_seconds = 0.4;  // the fetch took 0.5 s, its upload-pack 0.01 s
  const std::vector<Span> spans = build(rules);
  EXPECT_EQ(spans.size(), 5u);  // as verbose: 2 processes, 2 regions, 1 child
  const Span& fetch = *find_named(spans, "git:fetch");
  EXPECT_EQ(text(fetch, "trace2d.detail"), "verbose");
  EXPECT_EQ(text(fetch, "trace2d.detail_raised_by"), "slow");
  ASSERT_NE(find_named(spans, "child(class:transport/file)"), nullptr);
  const Span& upload = *find_named(spans, "git-upload-pack:upload-pack");
  EXPECT_EQ(text(upload, "trace2d.detail"), "summary");
  EXPECT_EQ(attribute(upload, "trace2d.detail_raised_by"), nullptr);
  // A rule that drops the fetch still drops it.
  rules.add_rule("git:fetch=drop");
  const std::vector<Span> dropped = build(rules);
  ASSERT_EQ(dropped.size(), 1u);
  EXPECT_EQ(dropped[0].name, "git-upload-pack:upload-pack");
}

}  // namespace
}  // namespace trace2d::otlp
