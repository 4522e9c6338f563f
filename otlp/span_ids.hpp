#pragma once
// Trace and span ids. A process's ids are trace2receiver's, so that a fleet
// that runs both stitches: split the SID on '/'; the trace id is
// SHA-256(first component)[0:16], a process's span id SHA-256(its last
// component)[16:24], and its parent process's SHA-256(the component before)
// [16:24]. The other spans' ids (regions, children, threads) are derived
// from the process's SID and what names the span in it, so that exporting a
// tree again gives the same ids (a collector can drop the repeat).

#include <string>
#include <string_view>

#include "otlp/span.hpp"

namespace trace2d::otlp {

[[nodiscard]] TraceId trace_id_of(std::string_view sid);
// The trace of a tree's spans, from its sessions' tree_sid (docs/otlp.md,
// "Ids"): for a tree that begins at a SID's root (no '/'), trace2receiver's,
// trace_id_of(); for a tree re-rooted for ownership (its top is a session
// whose SID names another uid's session, or a session under one, as its
// ancestor), SHA-256(the whole tree_sid)[0:16], so that it is a trace of its
// own and not the one its SID names. A deliberate difference from
// trace2receiver, which trusts SIDs.
[[nodiscard]] TraceId trace_id_of_tree(std::string_view tree_sid);
[[nodiscard]] SpanId process_span_id(std::string_view sid_component);
// `what` names the span within its process: "region 12", "child 3", ...
[[nodiscard]] SpanId inner_span_id(std::string_view sid, std::string_view what);
// inner_span_id(sid, what + the decimal number), without building the text:
// ("region ", 12) is "region 12".
[[nodiscard]] SpanId inner_span_id(std::string_view sid, std::string_view what, std::int64_t number);

[[nodiscard]] std::string to_hex(const TraceId& id);
[[nodiscard]] std::string to_hex(const SpanId& id);

}  // namespace trace2d::otlp
