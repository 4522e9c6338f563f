#pragma once
// A process tree (model/process_tree.hpp) as OpenTelemetry spans, attribute
// by attribute as docs/otlp.md describes: one span per process, and spans
// for its regions (nested per thread), threads, child processes and execs;
// a child git's process span hangs under the child span that ran it, and a
// git that replaced its parent by exec under that exec's span.

#include <cstdint>
#include <functional>
#include <vector>

#include "model/process_tree.hpp"
#include "otlp/export_rules.hpp"
#include "otlp/span.hpp"

namespace trace2d::otlp {

struct BuildStats {
  std::size_t processes = 0;
  std::size_t untimed = 0;  // regions, children, threads without times: not sent
  std::size_t dropped = 0;  // processes a detail rule dropped (ExportRules)
};

// Which processes' spans to build (with their regions, children and
// threads); the others are only walked through, for their descendants.
using ProcessFilter = std::function<bool(const model::ProcessInfo&)>;

// Appends the spans of `tree` to `spans`, each process at the detail level
// `rules` give it (a process below a dropped one hangs under the dropped
// one's parent; one below a process without child spans under that
// process). The tree should be loaded with its errors, params and
// annotations (model::LoadOptions): errors become span events, the params
// give the nickname, the annotations the data, timers and counters. The
// exporter builds a whole tree, for placement, but spans only for the
// sessions it sends now (`include`; empty: all).
BuildStats append_spans(const model::ProcessTree& tree, std::vector<Span>& spans,
                        const ProcessFilter& include = {}, const ExportRules& rules = {});

}  // namespace trace2d::otlp
