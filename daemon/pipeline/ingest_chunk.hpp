#pragma once
// Lines read from one source in one go, handed from a reader to the pipeline.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/source/origin.hpp"

namespace trace2d::pipeline {

struct IngestChunk {
  struct Line {
    std::uint32_t offset = 0;
    std::uint32_t size = 0;       // bytes kept (without the '\n')
    std::uint64_t full_size = 0;  // bytes received; larger than `size` when cut short
  };

  source::Origin origin;
  std::int64_t received_us = 0;
  // The lines back to back, followed by padding so they can be parsed in place.
  std::string bytes;
  std::vector<Line> lines;
  // The channel (connection, file) ended after these lines.
  bool end_of_channel = false;
  // Lines the reader read and dropped at the memory bound, since its last chunk.
  std::uint64_t dropped_lines = 0;
  std::uint64_t dropped_bytes = 0;

  void add_line(std::string_view line, std::uint64_t full_size) {
    lines.push_back(Line{static_cast<std::uint32_t>(bytes.size()),
                         static_cast<std::uint32_t>(line.size()), full_size});
    bytes.append(line);
  }
  // Call once all lines are in: adds the parser's padding after the last one.
  void seal(std::size_t padding) { bytes.append(padding, '\0'); }

  [[nodiscard]] std::string_view line_text(const Line& line) const {
    return std::string_view(bytes).substr(line.offset, line.size);
  }
  // Readable bytes after a line (the following lines and the padding).
  [[nodiscard]] std::size_t readable_after(const Line& line) const {
    return bytes.size() - line.offset - line.size;
  }
  [[nodiscard]] std::size_t memory_bytes() const {
    return bytes.capacity() + lines.capacity() * sizeof(Line) + sizeof(IngestChunk);
  }
};

}  // namespace trace2d::pipeline
