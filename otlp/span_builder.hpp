#pragma once
// A process tree (model/process_tree.hpp) as OpenTelemetry spans, attribute
// by attribute as docs/otlp.md describes: one span per process, and spans
// for its regions (nested per thread), threads and child processes; a child
// git's process span hangs under the child span that ran it.

#include <cstdint>
#include <functional>
#include <vector>

#include "model/process_tree.hpp"
#include "otlp/span.hpp"

namespace trace2d::otlp {

struct BuildStats {
  std::size_t processes = 0;
  std::size_t untimed = 0;  // regions, children, threads without times: not sent
};

// Which processes' spans to build (with their regions, children and
// threads); the others are only walked through, for their descendants.
using ProcessFilter = std::function<bool(const model::ProcessInfo&)>;

// Appends the spans of `tree` to `spans`. The tree should be loaded with
// its errors (model::LoadOptions::errors): they become span events. The
// exporter builds a whole tree, for placement, but spans only for the
// sessions it sends now (`include`; empty: all).
BuildStats append_spans(const model::ProcessTree& tree, std::vector<Span>& spans,
                        const ProcessFilter& include = {});

}  // namespace trace2d::otlp
