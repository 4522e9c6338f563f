#pragma once
// What a collector's answer carries besides its status, read straight from
// the protobuf it is written in (no generated code, as the requests are
// written by otlp/otlp_protobuf.cpp): the spans a partial success
// rejected. Whatever cannot be read counts as absent: an answer's extras
// never fail a delivery.

#include <cstdint>
#include <string_view>

namespace trace2d::exporter {

// ExportTraceServiceResponse { partial_success 1 { rejected_spans 1 } }:
// the spans the collector refused in an accepted request (0 when there is
// no partial_success, or it cannot be read).
[[nodiscard]] std::int64_t rejected_spans_in(std::string_view response);

}  // namespace trace2d::exporter
