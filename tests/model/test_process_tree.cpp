// The process-tree model (ctl/analysis): where regions, children, threads
// and sessions go, from hand-made rows, and the display filters.

#include <gtest/gtest.h>

#include "model/process_tree.hpp"
#include "model/tree_filter.hpp"

namespace trace2d::test {
namespace {

using model::ChildInfo;
using model::Node;
using model::ProcessRows;
using model::ProcessTree;
using model::RegionInfo;
using model::ThreadInfo;

constexpr std::int64_t k_base_us = 1'800'000'000'000'000;

ProcessRows process(const std::string& sid, std::int64_t start_offset_us = 0, double elapsed = 1.0) {
  ProcessRows rows;
  rows.info.sid = sid;
  // As the stitcher stores it: the SID's parent.
  if (const auto slash = sid.rfind('/'); slash != std::string::npos) {
    rows.info.parent_sid = sid.substr(0, slash);
  }
  rows.info.cmd_name = sid;
  rows.info.start_us = k_base_us + start_offset_us;
  rows.info.elapsed = elapsed;
  rows.info.status = "complete";
  return rows;
}

RegionInfo region(std::int64_t seq, std::optional<std::int64_t> leave, std::optional<std::int64_t> parent,
                  const std::string& label, double t_start, std::optional<double> elapsed,
                  const std::string& thread = "main") {
  RegionInfo r;
  r.seq = seq;
  r.leave_seq = leave;
  r.parent_seq = parent;
  r.thread = thread;
  r.category = "test";
  r.label = label;
  r.t_start = t_start;
  r.elapsed = elapsed;
  return r;
}

ChildInfo child(std::int64_t id, std::int64_t seq, double t_start, double elapsed,
                std::optional<std::string> child_sid = std::nullopt) {
  ChildInfo c;
  c.child_id = id;
  c.start_seq = seq;
  c.thread = "main";
  c.argv = {"git", "child" + std::to_string(id)};
  c.t_start = t_start;
  c.elapsed = elapsed;
  c.child_sid = std::move(child_sid);
  return c;
}

// "kind:name" per node, depth-first, indented by two spaces per level.
void outline(const std::vector<Node>& nodes, int depth, std::string& out) {
  for (const Node& node : nodes) {
    out += std::string(static_cast<std::size_t>(depth) * 2, ' ');
    if (const auto* p = node.process()) {
      out += "process:" + p->sid + "(" + p->placed_by + ")";
    } else if (const auto* r = node.region()) {
      out += "region:" + r->label;
    } else if (const auto* c = node.child()) {
      out += "child:" + std::to_string(c->child_id);
    } else if (const auto* e = node.exec()) {
      out += "exec:" + std::to_string(e->exec_id);
    } else if (const auto* t = node.thread()) {
      out += "thread:" + t->name;
    }
    out += "\n";
    outline(node.children, depth + 1, out);
  }
}

std::string outline(const ProcessTree& tree) {
  std::string out;
  outline(tree.processes, 0, out);
  return out;
}

TEST(ProcessTree, ChildStartGoesIntoTheInnermostRegionOpenWhenItWasSent) {
  ProcessRows p = process("p");
  p.regions = {region(1, 10, std::nullopt, "outer", 0.1, 0.5), region(2, 5, 1, "inner", 0.2, 0.1)};
  p.children = {child(0, 3, 0.25, 0.01), child(1, 6, 0.35, 0.4), child(2, 11, 0.7, 0.1)};
  const ProcessTree tree = model::build_process_tree("p", {p});
  // child 1 started after "inner" closed; child 2 after "outer" did.
  EXPECT_EQ(outline(tree),
            "process:p(root)\n"
            "  region:outer\n"
            "    region:inner\n"
            "      child:0\n"
            "    child:1\n"
            "  child:2\n");
  const Node& outer = tree.processes.at(0).children.at(0);
  EXPECT_DOUBLE_EQ(*outer.offset, 0.1);
  EXPECT_DOUBLE_EQ(*outer.elapsed, 0.5);
}

TEST(ProcessTree, ChildProcessesHangUnderTheirChildStartWithOffsetsFromTheFirstStart) {
  ProcessRows parent = process("p");
  parent.regions = {region(1, 4, std::nullopt, "work", 0.001, 0.01)};
  parent.children = {child(0, 2, 0.002, 0.008, "p/c")};
  ProcessRows c = process("p/c", 3000, 0.004);
  c.regions = {region(5, 6, std::nullopt, "inside", 0.001, 0.002)};
  const ProcessTree tree = model::build_process_tree("p", {c, parent});
  EXPECT_EQ(outline(tree),
            "process:p(root)\n"
            "  region:work\n"
            "    child:0\n"
            "      process:p/c(child_sid)\n"
            "        region:inside\n");
  const Node& child_process = tree.processes[0].children[0].children[0].children[0];
  EXPECT_DOUBLE_EQ(*child_process.offset, 0.003);
  EXPECT_DOUBLE_EQ(*child_process.children[0].offset, 0.004);  // 3 ms + its own 1 ms
  EXPECT_EQ(tree.origin_us, k_base_us);
  EXPECT_EQ(model::count_processes(tree), 2u);
}

TEST(ProcessTree, UnclaimedSessionsHangUnderARunningChildOrTheirNearestAncestor) {
  ProcessRows parent = process("p");
  parent.children = {child(0, 1, 0.010, 0.020), child(1, 2, 0.040, 0.005, "p/claimed")};
  // Started while child 0 (a hook script, say) ran: under it.
  ProcessRows during_hook = process("p/hook-git", 15000, 0.001);
  // Started while only child 1 ran, which has its own session: not under it.
  ProcessRows during_claimed = process("p/other", 41000, 0.001);
  // Its parent "p/missing" never sent anything: under "p".
  ProcessRows grandchild = process("p/missing/g", 60000, 0.001);
  const ProcessTree tree = model::build_process_tree(
      "p", {parent, during_hook, during_claimed, grandchild, process("p/claimed", 40500, 0.004)});
  EXPECT_EQ(outline(tree),
            "process:p(root)\n"
            "  child:0\n"
            "    process:p/hook-git(child_window)\n"
            "  child:1\n"
            "    process:p/claimed(child_sid)\n"
            "  process:p/other(parent_sid)\n"
            "  process:p/missing/g(parent_sid)\n");
}

// Brief mode (trace2.eventBrief): git's child_start and child_exit carry no
// time, only the child's elapsed. A hook's git goes under the one child that
// claims no session and could hold it; with two such, under neither.
TEST(ProcessTree, InBriefModeAGitGoesUnderTheOnlyUnclaimedChildThatCouldHoldIt) {
  const auto timeless = [](std::int64_t id, std::int64_t seq, double elapsed,
                           std::optional<std::string> sid = std::nullopt) {
    ChildInfo c = child(id, seq, 0, elapsed, std::move(sid));
    c.t_start.reset();
    return c;
  };
  {
    ProcessRows commit = process("p");
    // The pre-commit hook (0.5 s), a pager too short to hold a 0.1 s git,
    // and maintenance, linked by its SID.
    commit.children = {timeless(0, 1, 0.5), timeless(1, 2, 0.01), timeless(2, 3, 0.2, "p/maint")};
    const ProcessTree tree =
        model::build_process_tree("p", {commit, process("p/diff", 100000, 0.1), process("p/maint", 700000, 0.15)});
    EXPECT_EQ(outline(tree),
              "process:p(root)\n"
              "  child:0\n"
              "    process:p/diff(child_window)\n"
              "  child:1\n"
              "  child:2\n"
              "    process:p/maint(child_sid)\n");
  }
  {
    ProcessRows commit = process("p");
    commit.children = {timeless(0, 1, 0.5), timeless(1, 2, 0.5)};  // pre-commit and commit-msg hooks
    const ProcessTree tree = model::build_process_tree("p", {commit, process("p/diff", 100000, 0.1)});
    EXPECT_EQ(outline(tree),
              "process:p(root)\n"
              "  child:0\n"
              "  child:1\n"
              "  process:p/diff(parent_sid)\n");
  }
}

model::ExecInfo exec(std::int64_t id, std::int64_t seq, double t_start, std::optional<std::int64_t> code = std::nullopt) {
  model::ExecInfo e;
  e.exec_id = id;
  e.seq = seq;
  e.thread = "main";
  e.exe = "git";
  e.argv = {"git", "upload-pack", "r"};
  e.t_start = t_start;
  if (code) {
    e.code = code;
    e.result_t = t_start + 0.001;
  }
  return e;
}

// git-shell execs git: the new git's SID is the shell's child, with the
// shell's pid. It hangs under the exec that worked (not the one that
// failed, not when the pid differs), and that exec lasts until it ends.
TEST(ProcessTree, AProgramThatReplacedItsParentHangsUnderTheExecThatWorked) {
  ProcessRows shell = process("s", 0, 0.010);
  shell.info.pid = 32;
  shell.regions = {region(1, 5, std::nullopt, "setup", 0.001, 0.004)};
  shell.execs = {exec(0, 3, 0.002, -1), exec(1, 6, 0.008)};
  ProcessRows git = process("s/g", 9000, 0.050);
  git.info.pid = 32;
  ProcessRows other = process("s/o", 9500, 0.001);  // another pid: not what the exec became
  other.info.pid = 33;
  const ProcessTree tree = model::build_process_tree("s", {git, shell, other});
  EXPECT_EQ(outline(tree),
            "process:s(root)\n"
            "  region:setup\n"
            "    exec:0\n"
            "  exec:1\n"
            "    process:s/g(exec)\n"
            "  process:s/o(parent_sid)\n");
  const Node& failed = tree.processes[0].children[0].children[0];
  EXPECT_DOUBLE_EQ(*failed.elapsed, 0.001);  // until its exec_result
  const Node& worked = tree.processes[0].children[1];
  EXPECT_DOUBLE_EQ(*worked.offset, 0.008);
  EXPECT_DOUBLE_EQ(*worked.elapsed, 0.009 + 0.050 - 0.008);  // until the new git ended
}

TEST(ProcessTree, APrefixWithoutSessionHoldsEverySessionUnderIt) {
  const ProcessTree tree =
      model::build_process_tree("ci-job 42", {process("ci-job 42/b", 2000), process("ci-job 42/a", 5000)});
  EXPECT_EQ(outline(tree),
            "process:ci-job 42/b(root)\n"
            "process:ci-job 42/a(root)\n");
  EXPECT_DOUBLE_EQ(*tree.processes[1].offset, 0.003);
}

TEST(ProcessTree, ASessionTwoChildStartsMatchGoesToTheFirst) {
  ProcessRows parent = process("p");
  parent.children = {child(0, 1, 0.001, 0.1, "p/c"), child(1, 2, 0.002, 0.1, "p/c")};
  const ProcessTree tree = model::build_process_tree("p", {parent, process("p/c", 1500)});
  EXPECT_EQ(outline(tree),
            "process:p(root)\n"
            "  child:0\n"
            "    process:p/c(child_sid)\n"
            "  child:1\n");
}

TEST(ProcessTree, DepthLimitsProcessLevelsButKeepsChildEntries) {
  ProcessRows parent = process("p");
  parent.children = {child(0, 1, 0.001, 0.1, "p/c")};
  ProcessRows c = process("p/c", 1000);
  c.children = {child(0, 3, 0.001, 0.05, "p/c/d")};
  const std::vector<ProcessRows> rows{parent, c, process("p/c/d", 2500), process("p/orphan", 9000)};
  EXPECT_EQ(outline(model::build_process_tree("p", rows, {0})), "process:p(root)\n  child:0\n");
  EXPECT_EQ(outline(model::build_process_tree("p", rows, {1})),
            "process:p(root)\n"
            "  child:0\n"
            "    process:p/c(child_sid)\n"
            "      child:0\n"
            "  process:p/orphan(parent_sid)\n");
}

TEST(ProcessTree, ThreadRegionsGoUnderTheirThreadEvenWithoutAThreadStart) {
  ProcessRows p = process("p");
  p.regions = {region(1, 20, std::nullopt, "main-work", 0.001, 0.02),
               region(3, 4, std::nullopt, "t1-work", 0.003, 0.001, "th01:worker"),
               region(6, 7, std::nullopt, "t2-work", 0.005, 0.002, "th02:unknown")};
  p.threads = {ThreadInfo{"th01:worker", 2, 0.002, 0.004}};
  const ProcessTree tree = model::build_process_tree("p", {p});
  EXPECT_EQ(outline(tree),
            "process:p(root)\n"
            "  region:main-work\n"
            "    thread:th01:worker\n"
            "      region:t1-work\n"
            "    thread:th02:unknown\n"
            "      region:t2-work\n");
  const Node& made_up = tree.processes[0].children[0].children[1];
  EXPECT_DOUBLE_EQ(*made_up.offset, 0.005);
  EXPECT_DOUBLE_EQ(*made_up.elapsed, 0.002);  // the span of its regions
}

// Issue 10, item 9: a region and, after it closed, a child_start on a
// thread that sent no thread_start. The region hangs under a made-up thread
// entry; looking for the region open at the child_start walked from the
// region up into that thread entry and read it as a region
// (std::get: wrong index for variant), failing tree, export and report.
TEST(ProcessTree, AChildAfterTheLastRegionOfAThreadWithoutThreadStartGoesUnderTheThread) {
  ProcessRows p = process("p", 0, 1e9);
  p.regions = {region(2, 3, std::nullopt, "work", 0.001, 0.001, "th01:worker")};
  p.children = {child(0, 4, 0.003, 1e9)};
  p.children[0].thread = "th01:worker";
  const ProcessTree tree = model::build_process_tree("p", {p});
  EXPECT_EQ(outline(tree),
            "process:p(root)\n"
            "  thread:th01:worker\n"
            "    region:work\n"
            "    child:0\n");
}

// The same with a thread_start, and with the child still inside the region:
// the walk stops at the thread either way, never reading it as a region.
TEST(ProcessTree, AThreadsChildGoesIntoItsOpenRegionElseItsThread) {
  ProcessRows p = process("p");
  p.threads = {ThreadInfo{"th01:worker", 1, 0.0005, 0.01}};
  p.regions = {region(2, 5, std::nullopt, "outer", 0.001, 0.004, "th01:worker"),
               region(3, 4, 2, "inner", 0.002, 0.001, "th01:worker")};
  p.children = {child(0, 6, 0.006, 0.001), child(1, 7, 0.002, 0.001)};
  p.children[0].thread = "th01:worker";
  p.children[1].thread = "th01:worker";
  p.children[1].start_seq = 4;  // sent with inner's leave (4): inside outer only
  const ProcessTree tree = model::build_process_tree("p", {p});
  EXPECT_EQ(outline(tree),
            "process:p(root)\n"
            "  thread:th01:worker\n"
            "    region:outer\n"
            "      region:inner\n"
            "      child:1\n"
            "    child:0\n");
}

// Corrupt parent links (two regions each other's parent, a region its own
// parent) end neither in a loop nor a crash: every region is kept.
TEST(ProcessTree, RegionsWhoseParentsFormALoopAreKept) {
  ProcessRows p = process("p");
  p.regions = {region(1, std::nullopt, 2, "a", 0.001, std::nullopt), region(2, std::nullopt, 1, "b", 0.002, std::nullopt),
               region(3, std::nullopt, 3, "self", 0.003, std::nullopt)};
  p.children = {child(0, 4, 0.004, 0.001)};
  p.threads = {ThreadInfo{"th01:x", 5, 0.005, 0.001}};
  const ProcessTree tree = model::build_process_tree("p", {p});
  EXPECT_EQ(model::count_nodes(tree), 6u) << outline(tree);
}

// A session that nests regions far deeper than git ever does (one user can
// send a million region_enter events) is cut to a depth every renderer's
// recursion takes: the regions below the limit are kept, one level up.
TEST(ProcessTree, RegionsNestedTooDeepAreFlattenedAtTheDepthLimit) {
  ProcessRows p = process("p");
  constexpr std::int64_t k_regions = 100000;
  for (std::int64_t seq = 1; seq <= k_regions; ++seq) {
    p.regions.push_back(region(seq, std::nullopt, seq > 1 ? std::optional<std::int64_t>(seq - 1) : std::nullopt,
                               "r" + std::to_string(seq), 0.001, std::nullopt));
  }
  const ProcessTree tree = model::build_process_tree("p", {p});
  EXPECT_EQ(model::count_nodes(tree), static_cast<std::size_t>(k_regions) + 1);
  std::size_t depth = 0;
  for (const Node* node = &tree.processes[0]; !node->children.empty(); node = &node->children.front()) {
    ++depth;
  }
  EXPECT_EQ(depth, model::k_max_tree_depth - 1);
}

TEST(ProcessTree, WithoutTimesSiblingsKeepEventOrder) {
  ProcessRows p = process("p");
  p.info.start_us.reset();  // brief mode: no times at all
  p.regions = {region(5, 6, std::nullopt, "second", 0, 0.1), region(1, 2, std::nullopt, "first", 0, 0.1)};
  p.regions[0].t_start.reset();
  p.regions[1].t_start.reset();
  p.children = {child(0, 3, 0, 0.1)};
  p.children[0].t_start.reset();
  const ProcessTree tree = model::build_process_tree("p", {p});
  EXPECT_EQ(outline(tree), "process:p(root)\n  region:first\n  child:0\n  region:second\n");
  EXPECT_FALSE(tree.origin_us.has_value());
  EXPECT_FALSE(tree.processes[0].children[0].offset.has_value());
}

// git reads a region's start from the wall clock as the enter line is
// written, its length from the monotonic clock: a preempted enter makes a
// nested region seem to start late and end after its parent. It is drawn
// within it, moved earlier with its length kept, cut only when longer.
TEST(ProcessTree, ANestedRegionIsDrawnWithinItsParent) {
  ProcessRows p = process("p");
  p.regions = {region(1, 10, std::nullopt, "outer", 0.100000, 0.001400),
               region(2, 5, 1, "late", 0.101383, 0.000038),  // ends 21 µs after "outer"
               region(3, 4, 2, "later", 0.101390, 0.000040), region(6, 7, 1, "early", 0.099990, 0.000100)};
  const ProcessTree tree = model::build_process_tree("p", {p});
  ASSERT_EQ(outline(tree), "process:p(root)\n  region:outer\n    region:early\n    region:late\n      region:later\n");
  const Node& outer = tree.processes.at(0).children.at(0);
  EXPECT_DOUBLE_EQ(*outer.offset, 0.1);
  EXPECT_DOUBLE_EQ(*outer.elapsed, 0.0014);  // the parent keeps its times
  const Node& late = outer.children.at(1);
  EXPECT_NEAR(*late.offset, 0.101362, 1e-12);  // 21 µs earlier, its length kept
  EXPECT_NEAR(*late.elapsed, 0.000038, 1e-12);
  const Node& later = late.children.at(0);  // within its parent's new place: longer than it, so cut
  EXPECT_NEAR(*later.offset, 0.101362, 1e-12);
  EXPECT_NEAR(*later.offset + *later.elapsed, 0.1014, 1e-12);
  const Node& early = outer.children.at(0);
  EXPECT_DOUBLE_EQ(*early.offset, 0.1);
  EXPECT_NEAR(*early.elapsed, 0.0001, 1e-12);
  EXPECT_DOUBLE_EQ(*late.region()->elapsed, 0.000038);  // git's own figure is kept
  EXPECT_DOUBLE_EQ(*later.region()->elapsed, 0.00004);
}

// The same at the top: a preempted enter of git status's last region
// ("status/print") made it end 7 ms after the process's exit under load
// (an OTLP span outside its process span). It ends at the exit instead; a
// thread too.
TEST(ProcessTree, AnOutermostRegionOrThreadIsDrawnWithinItsProcess) {
  ProcessRows p = process("p", 0, 0.017433);
  p.regions = {region(1, 2, std::nullopt, "print", 0.016828, 0.007989)};
  ThreadInfo thread;
  thread.name = "th01:preload";
  thread.t_start = 0.0169;
  thread.elapsed = 0.001;
  p.threads = {thread};
  const ProcessTree tree = model::build_process_tree("p", {p});
  const Node& process_node = tree.processes.at(0);
  ASSERT_EQ(process_node.children.size(), 2U);
  for (const Node& inner : process_node.children) {
    EXPECT_GE(*inner.offset, *process_node.offset);
    EXPECT_NEAR(*inner.offset + *inner.elapsed, *process_node.offset + 0.017433, 1e-12);
  }
  const Node& print = process_node.children.at(0);
  EXPECT_NEAR(*print.offset - *process_node.offset, 0.017433 - 0.007989, 1e-12);  // moved, not cut
  EXPECT_NEAR(*print.elapsed, 0.007989, 1e-12);
}

TEST(ProcessTree, UnclosedRegionsKeepWhatStartedInsideThem) {
  ProcessRows p = process("p");
  // git died inside "open"; "lost" names a parent region that is not there.
  p.regions = {region(1, std::nullopt, std::nullopt, "open", 0.001, std::nullopt),
               region(4, 5, 99, "lost", 0.004, 0.001)};
  p.children = {child(0, 2, 0.002, 0.5)};
  const ProcessTree tree = model::build_process_tree("p", {p});
  EXPECT_EQ(outline(tree), "process:p(root)\n  region:open\n    child:0\n  region:lost\n");
  EXPECT_FALSE(tree.processes[0].children[0].elapsed.has_value());
}

TEST(ProcessTreeFilter, MinimumKeepsShortNodesThatHoldLongOnes) {
  ProcessRows parent = process("p");
  parent.regions = {region(1, 3, std::nullopt, "short-with-child", 0.001, 0.002),
                    region(4, 5, std::nullopt, "short", 0.010, 0.0005),
                    region(6, 7, std::nullopt, "long", 0.020, 0.010)};
  parent.children = {child(0, 2, 0.0015, 0.030, "p/c")};
  ProcessTree tree = model::build_process_tree("p", {parent, process("p/c", 1600, 0.025)});
  model::filter_tree(tree, {0.005, std::nullopt});
  // The 2 ms region stays: the 30 ms child it started outlives it.
  EXPECT_EQ(outline(tree),
            "process:p(root)\n"
            "  region:short-with-child\n"
            "    child:0\n"
            "      process:p/c(child_sid)\n"
            "  region:long\n");
}

TEST(ProcessTreeFilter, RegionDepthMovesChildrenUpToTheRegionsKept) {
  ProcessRows p = process("p");
  p.regions = {region(1, 10, std::nullopt, "a", 0.001, 0.01), region(2, 9, 1, "b", 0.002, 0.008),
               region(3, 8, 2, "c", 0.003, 0.006)};
  p.children = {child(0, 4, 0.004, 0.001), child(1, 11, 0.02, 0.001)};
  const ProcessTree full = model::build_process_tree("p", {p});

  ProcessTree one = full;
  model::filter_tree(one, {std::nullopt, 1});
  EXPECT_EQ(outline(one), "process:p(root)\n  region:a\n    child:0\n  child:1\n");

  ProcessTree none = full;
  model::filter_tree(none, {std::nullopt, 0});
  EXPECT_EQ(outline(none), "process:p(root)\n  child:0\n  child:1\n");
  EXPECT_EQ(model::count_nodes(none), 3u);
}

}  // namespace
}  // namespace trace2d::test
