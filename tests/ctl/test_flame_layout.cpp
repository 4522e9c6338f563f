// The flame layout on trees no git run makes but one user can store: many
// bars at once must cost time and rows in proportion, not quadratically.

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <limits>

#include "model/process_tree.hpp"
#include "ctl/render/flame_layout.hpp"

namespace trace2d::test {
namespace {

using model::ChildInfo;
using model::ProcessRows;
using model::RegionInfo;

ProcessRows crowded_process(int regions, int children) {
  ProcessRows rows;
  rows.info.sid = "p";
  rows.info.cmd_name = "status";
  rows.info.start_us = 1'800'000'000'000'000;
  rows.info.elapsed = 1000.0;
  rows.info.status = "complete";
  std::int64_t seq = 0;
  for (int i = 0; i < regions; ++i) {  // one after the other: all fit on one row
    RegionInfo& r = rows.regions.emplace_back();
    r.seq = ++seq;
    r.leave_seq = ++seq;
    r.thread = "main";
    r.label = "r";
    r.t_start = i / 1024.0;  // binary fractions: each ends exactly where the next starts
    r.elapsed = 1 / 1024.0;
  }
  for (int i = 0; i < children; ++i) {  // all running at once, to the end
    ChildInfo& c = rows.children.emplace_back();
    c.child_id = i;
    c.start_seq = ++seq;
    c.thread = "main";
    c.t_start = 500.0 + 1e-6 * i;
    c.elapsed = 400.0;
  }
  return rows;
}

TEST(FlameLayout, ThousandsOfBarsAtOnceUseBoundedRows) {
  const auto tree = model::build_process_tree("p", {crowded_process(20000, 5000)});
  // Every bar (the report draws at most k_max_flame_bars: below).
  const ctl::render::FlameLayout layout = ctl::render::layout_flame(tree, std::numeric_limits<std::size_t>::max());
  ASSERT_EQ(layout.bars.size(), 1u + 20000u + 5000u);
  std::size_t on_row_one = 0;
  for (const ctl::render::Bar& bar : layout.bars) {
    EXPECT_GE(bar.row, 0);
    EXPECT_LT(bar.row, layout.rows);
    on_row_one += bar.kind == ctl::render::BarKind::region && bar.row == 1 ? 1 : 0;
  }
  EXPECT_EQ(on_row_one, 20000u);  // the regions overlap nothing: one row
  // 5,000 overlapping children would take 5,000 rows; past 512 tried, the
  // rest are drawn over the others.
  EXPECT_LE(layout.rows, 1 + 512);
}

TEST(FlameLayout, TimesThatAreNoNumberAreNotDrawn) {
  ProcessRows rows = crowded_process(2, 0);
  rows.regions[1].t_start = 1e308;
  rows.regions[1].elapsed = 1e308;  // ends at infinity
  const auto tree = model::build_process_tree("p", {rows});
  const ctl::render::FlameLayout layout = ctl::render::layout_flame(tree);
  EXPECT_EQ(layout.bars.size(), 2u);
  EXPECT_EQ(layout.untimed, 1u);
  EXPECT_TRUE(std::isfinite(layout.span));
}

// A session with 150,000 children made a report of 68 MB: a chart draws
// its first k_max_flame_bars bars, in tree order, and counts the rest.
TEST(FlameLayout, AChartDrawsAtMostItsBoundOfBarsAndCountsTheRest) {
  const auto tree = model::build_process_tree("p", {crowded_process(30000, 10000)});
  const auto started = std::chrono::steady_clock::now();
  const ctl::render::FlameLayout layout = ctl::render::layout_flame(tree);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(2));
  ASSERT_EQ(layout.bars.size(), ctl::render::k_max_flame_bars);
  EXPECT_EQ(layout.folded, 1u + 30000u + 10000u - ctl::render::k_max_flame_bars);
  EXPECT_EQ(layout.bars.front().kind, ctl::render::BarKind::process);  // the process first, then what it holds
}

}  // namespace
}  // namespace trace2d::test
