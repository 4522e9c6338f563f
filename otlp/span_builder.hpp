#pragma once
// A process tree (model/process_tree.hpp) as OpenTelemetry spans, attribute
// by attribute as docs/otlp.md describes: one span per process, and spans
// for its regions (nested per thread), threads and child processes; a child
// git's process span hangs under the child span that ran it.

#include <cstdint>
#include <vector>

#include "model/process_tree.hpp"
#include "otlp/span.hpp"

namespace trace2d::otlp {

struct BuildStats {
  std::size_t processes = 0;
  std::size_t untimed = 0;  // regions, children, threads without times: not sent
};

// Appends the spans of `tree` to `spans`. The tree should be loaded with
// its errors (model::LoadOptions::errors): they become span events.
BuildStats append_spans(const model::ProcessTree& tree, std::vector<Span>& spans);

}  // namespace trace2d::otlp
