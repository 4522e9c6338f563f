#pragma once
// gzip for OTLP request bodies (Content-Encoding: gzip), through zlib.

#include <string>
#include <string_view>

namespace trace2d::exporter {

// Throws std::runtime_error naming zlib's error.
[[nodiscard]] std::string gzip(std::string_view data);

}  // namespace trace2d::exporter
