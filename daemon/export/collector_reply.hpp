#pragma once
// What a collector's answer carries besides its status, read straight from
// the protobuf it is written in (no generated code, as the requests are
// written by otlp/otlp_protobuf.cpp): the spans a partial success rejected,
// and when a gRPC collector says to come back. Whatever cannot be read
// counts as absent: an answer's extras never fail a delivery.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>

namespace trace2d::exporter {

// ExportTraceServiceResponse { partial_success 1 { rejected_spans 1 } }:
// the spans the collector refused in an accepted request (0 when there is
// no partial_success, or it cannot be read).
[[nodiscard]] std::int64_t rejected_spans_in(std::string_view response);

// A gRPC status's details (its grpc-status-details-bin trailer, a
// google.rpc.Status { details 3: Any { type_url 1, value 2 } }): the delay
// of the google.rpc.RetryInfo { retry_delay 1: Duration { seconds 1,
// nanos 2 } } among them, within [0, 1 hour] as a Retry-After is; nullopt
// when there is none.
[[nodiscard]] std::optional<std::chrono::milliseconds> retry_delay_in(std::string_view status_details);

}  // namespace trace2d::exporter
