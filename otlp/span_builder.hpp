#pragma once
// A process tree (model/process_tree.hpp) as OpenTelemetry spans, attribute
// by attribute as docs/otlp.md describes: one span per process, and spans
// for its regions (nested per thread), threads, child processes and execs;
// a child git's process span hangs under the child span that ran it, and a
// git that replaced its parent by exec under that exec's span.

#include <cstdint>
#include <functional>
#include <limits>
#include <utility>
#include <vector>

#include "model/process_tree.hpp"
#include "otlp/export_rules.hpp"
#include "otlp/span.hpp"

namespace trace2d::otlp {

struct BuildStats {
  std::size_t processes = 0;
  std::size_t untimed = 0;  // regions, children, threads without times: not sent
  std::size_t dropped = 0;  // processes a detail rule dropped (ExportRules)
  std::vector<std::int64_t> dropped_sessions;  // their session ids
  // (session id, spans not built) of processes over max_spans_per_process.
  std::vector<std::pair<std::int64_t, std::size_t>> left_out;
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
// `session_of`, when given, gets for each span appended the session id of
// the process it belongs to (the exporter builds a tree's queued sessions
// in one walk and sends each session's spans as one unit). A process sends
// at most `max_spans_per_process` spans, its process span first: one
// session may hold any number of regions (anyone can send them), and what
// is built stays bounded; the rest are counted in BuildStats::left_out.
//
// The spans refer to `tree`: most of their text values and every argv are
// views of the tree's strings and vectors (otlp::Text, otlp::TextList),
// not copies. The tree must stay alive, unchanged and where it is until
// the spans are encoded for the last time, and no longer used after; a
// temporary tree does not compile.
BuildStats append_spans(const model::ProcessTree& tree, std::vector<Span>& spans,
                        const ProcessFilter& include = {}, const ExportRules& rules = {},
                        std::vector<std::int64_t>* session_of = nullptr,
                        std::size_t max_spans_per_process = std::numeric_limits<std::size_t>::max());
BuildStats append_spans(model::ProcessTree&& tree, std::vector<Span>& spans, const ProcessFilter& include = {},
                        const ExportRules& rules = {}, std::vector<std::int64_t>* session_of = nullptr,
                        std::size_t max_spans_per_process = std::numeric_limits<std::size_t>::max()) = delete;

}  // namespace trace2d::otlp
