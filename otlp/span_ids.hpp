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
[[nodiscard]] SpanId process_span_id(std::string_view sid_component);
// `what` names the span within its process: "region 12", "child 3", ...
[[nodiscard]] SpanId inner_span_id(std::string_view sid, std::string_view what);
// inner_span_id(sid, what + the decimal number), without building the text:
// ("region ", 12) is "region 12".
[[nodiscard]] SpanId inner_span_id(std::string_view sid, std::string_view what, std::int64_t number);

[[nodiscard]] std::string to_hex(const TraceId& id);
[[nodiscard]] std::string to_hex(const SpanId& id);

}  // namespace trace2d::otlp
