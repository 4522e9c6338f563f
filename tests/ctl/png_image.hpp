#pragma once
// Just enough of a PNG decoder to look at browser screenshots in tests:
// 8-bit RGB or RGBA, not interlaced (what Chromium writes).

#include <cstdint>
#include <string>
#include <vector>

namespace trace2d::test {

struct Rgb {
  std::uint8_t r = 0;
  std::uint8_t g = 0;
  std::uint8_t b = 0;
  bool operator==(const Rgb&) const = default;
};

struct PngImage {
  int width = 0;
  int height = 0;
  std::vector<Rgb> pixels;  // row by row

  // Pixels within `tolerance` (per channel) of `colour`.
  [[nodiscard]] std::size_t count(const Rgb& colour, int tolerance = 6) const;
  [[nodiscard]] std::size_t distinct_colours() const;
};

// Throws std::runtime_error for anything it cannot read.
[[nodiscard]] PngImage decode_png(const std::string& bytes);

}  // namespace trace2d::test
