#pragma once
// `trace2ctl export --format chrome`: a process tree as a Chrome Trace Event
// Format document (JSON object form), which ui.perfetto.dev and
// chrome://tracing open.
//
// Mapping (docs/reports.md has the details):
//   - each process is a process track: pid = the pid in its SID, or a
//     made-up one (from 20000000) when unknown or taken; its threads are
//     thread tracks (main: tid = pid; others made up from 10000000);
//   - the process itself, its regions and its threads are complete events
//     ("ph":"X", ts/dur in whole microseconds since the tree's first process
//     start), clamped into their parent so every track nests properly;
//     unclosed regions end with their parent;
//   - each child_start..child_exit span is an "X" on a "child processes"
//     track of the parent (more lanes when spans overlap without nesting),
//     with a flow arrow ("s"/"f") to the child process's own track;
//   - data events are instants ("ph":"i"), counters are "ph":"C" samples at
//     the process end and, with timers, args of the process slice;
//   - "ph":"M" metadata names and orders processes and threads.
// Only X, i, C, s, f and M events: there are no B/E pairs to match.

#include <string>

#include "model/process_tree.hpp"

namespace trace2d::ctl::render {

struct ChromeTraceStats {
  std::size_t events = 0;
  std::size_t processes = 0;
  std::size_t untimed = 0;  // nodes left out: their process sent no times (brief mode)
};

ChromeTraceStats append_chrome_trace(std::string& out, const model::ProcessTree& tree);

}  // namespace trace2d::ctl::render
