#pragma once
// OTLP/JSON: an ExportTraceServiceRequest as the OTLP specification encodes
// it in JSON (lowerCamelCase names, hex ids, enums as integers, 64-bit
// integers as decimal strings), on one line, as the Collector's
// `otlpjsonfile` receiver reads it.

#include <string>

#include "otlp/span.hpp"

namespace trace2d::otlp {

void append_json_request(std::string& out, const TraceBatch& batch);

}  // namespace trace2d::otlp
