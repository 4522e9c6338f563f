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

// One finished process "p" that ran `elapsed` seconds.
model::ProcessRows finished_process(double elapsed) {
  model::ProcessRows rows;
  rows.info.sid = "p";
  rows.info.start_us = 1'800'000'000'000'000;
  rows.info.elapsed = elapsed;
  rows.info.status = "complete";
  return rows;
}

TEST(ChromeTrace, ThousandsOfOverlappingChildrenUseBoundedLanesThatStillNest) {
  model::ProcessRows rows = finished_process(1000.0);
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

// fetch's unpack-objects runs while its transport's upload-pack still
// does: siblings, so not one slice inside the other on one track (a viewer
// would draw the second as the first's child), and the lane after that is
// free again for the next child.
TEST(ChromeTrace, AChildInsideASiblingsTimeGoesOnAnotherLane) {
  model::ProcessRows rows = finished_process(1.0);
  const auto add_child = [&rows](int id, double start, double elapsed) {
    model::ChildInfo& c = rows.children.emplace_back();
    c.child_id = id;
    c.start_seq = id;
    c.thread = "main";
    c.t_start = start;
    c.elapsed = elapsed;
  };
  add_child(0, 0.001, 0.014);  // the transport: 1..15 ms
  add_child(1, 0.011, 0.003);  // unpack-objects: 11..14 ms, inside it
  add_child(2, 0.020, 0.005);  // after both
  std::string trace;
  ctl::render::append_chrome_trace(trace, model::build_process_tree("p", {rows}));

  simdjson::dom::parser parser;
  simdjson::dom::element root;
  ASSERT_EQ(parser.parse(trace).get(root), simdjson::SUCCESS);
  std::map<std::int64_t, std::string> lane_names;  // tid -> its name
  std::map<std::string, std::int64_t> tid_of;      // child slice -> tid
  for (simdjson::dom::element event : root["traceEvents"].get_array()) {
    const std::string_view ph = event["ph"].get_string().value();
    if (ph == "M" && event["name"].get_string().value() == "thread_name") {
      lane_names[event["tid"].get_int64().value()] = std::string(event["args"]["name"].get_string().value());
    }
    if (ph == "X" && event["cat"].get_string().value() == "child") {
      const std::string name(event["name"].get_string().value());
      tid_of[name.substr(0, name.find(':'))] = event["tid"].get_int64().value();
    }
  }
  ASSERT_EQ(tid_of.size(), 3U);
  EXPECT_NE(tid_of.at("child 0"), tid_of.at("child 1"));
  EXPECT_EQ(tid_of.at("child 2"), tid_of.at("child 0"));
  EXPECT_EQ(lane_names[tid_of.at("child 0")], "child processes");
  EXPECT_EQ(lane_names[tid_of.at("child 1")], "child processes (2)");
}

}  // namespace
}  // namespace trace2d::test
