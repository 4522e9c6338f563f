// The Chrome trace of a tree no git run makes but one user can store:
// thousands of children running at once.

#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "model/process_tree.hpp"
#include "ctl/render/chrome_trace.hpp"

namespace trace2d::test {
namespace {

TEST(ChromeTrace, ThousandsOfOverlappingChildrenUseBoundedLanesThatStillNest) {
  model::ProcessRows rows;
  rows.info.sid = "p";
  rows.info.start_us = 1'800'000'000'000'000;
  rows.info.elapsed = 1000.0;
  rows.info.status = "complete";
  for (int i = 0; i < 5000; ++i) {  // each starts after the last and ends after it: no two nest
    model::ChildInfo& c = rows.children.emplace_back();
    c.child_id = i;
    c.start_seq = i;
    c.thread = "main";
    c.t_start = 1.0 + 0.001 * i;
    c.elapsed = 100.0;
  }
  std::string trace;
  ctl::render::append_chrome_trace(trace, model::build_process_tree("p", {rows}));

  simdjson::dom::parser parser;
  simdjson::dom::element root;
  ASSERT_EQ(parser.parse(trace).get(root), simdjson::SUCCESS);
  std::set<std::string> lanes;
  std::map<std::int64_t, std::vector<std::pair<std::int64_t, std::int64_t>>> slices;  // tid -> (ts, end)
  std::size_t children = 0;
  for (simdjson::dom::element event : root["traceEvents"].get_array()) {
    const std::string_view ph = event["ph"].get_string().value();
    if (ph == "M" && event["name"].get_string().value() == "thread_name") {
      lanes.insert(std::string(event["args"]["name"].get_string().value()));
    }
    if (ph == "X" && event["cat"].get_string().value() == "child") {
      ++children;
      const std::int64_t ts = event["ts"].get_int64().value();
      slices[event["tid"].get_int64().value()].emplace_back(ts, ts + event["dur"].get_int64().value());
    }
  }
  EXPECT_EQ(children, 5000u);
  EXPECT_LE(lanes.size(), 1u + 256u);  // the main thread and at most 256 child lanes
  for (auto& [tid, spans] : slices) {
    std::sort(spans.begin(), spans.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first < b.first : a.second > b.second;
    });
    std::vector<std::int64_t> open_ends;
    for (const auto& [start, end] : spans) {
      while (!open_ends.empty() && open_ends.back() <= start) {
        open_ends.pop_back();
      }
      ASSERT_TRUE(open_ends.empty() || end <= open_ends.back()) << "lane " << tid << " does not nest at " << start;
      open_ends.push_back(end);
    }
  }
}

}  // namespace
}  // namespace trace2d::test
