#include "tests/ctl/png_image.hpp"

#include <zlib.h>

#include <cstdlib>
#include <cstring>
#include <set>
#include <stdexcept>
#include <tuple>

namespace trace2d::test {
namespace {

std::uint32_t be32(const std::string& bytes, std::size_t at) {
  if (at + 4 > bytes.size()) {
    throw std::runtime_error("PNG: truncated");
  }
  const auto b = [&](std::size_t i) { return static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[at + i])); };
  return b(0) << 24 | b(1) << 16 | b(2) << 8 | b(3);
}

std::string inflate_all(const std::string& data, std::size_t expected) {
  std::string out(expected, '\0');
  uLongf size = static_cast<uLongf>(expected);
  const int rc = ::uncompress(reinterpret_cast<Bytef*>(out.data()), &size,
                              reinterpret_cast<const Bytef*>(data.data()), static_cast<uLong>(data.size()));
  if (rc != Z_OK || size != expected) {
    throw std::runtime_error("PNG: bad image data (zlib " + std::to_string(rc) + ")");
  }
  return out;
}

int paeth(int a, int b, int c) {
  const int p = a + b - c;
  const int pa = std::abs(p - a);
  const int pb = std::abs(p - b);
  const int pc = std::abs(p - c);
  return pa <= pb && pa <= pc ? a : (pb <= pc ? b : c);
}

}  // namespace

std::size_t PngImage::count(const Rgb& colour, int tolerance) const {
  std::size_t n = 0;
  for (const Rgb& p : pixels) {
    if (std::abs(p.r - colour.r) <= tolerance && std::abs(p.g - colour.g) <= tolerance &&
        std::abs(p.b - colour.b) <= tolerance) {
      ++n;
    }
  }
  return n;
}

std::size_t PngImage::distinct_colours() const {
  std::set<std::tuple<int, int, int>> seen;
  for (const Rgb& p : pixels) {
    seen.insert({p.r, p.g, p.b});
  }
  return seen.size();
}

PngImage decode_png(const std::string& bytes) {
  if (bytes.size() < 8 || std::memcmp(bytes.data(), "\x89PNG\r\n\x1a\n", 8) != 0) {
    throw std::runtime_error("not a PNG file");
  }
  PngImage image;
  int channels = 0;
  std::string compressed;
  for (std::size_t at = 8; at + 8 <= bytes.size();) {
    const std::uint32_t length = be32(bytes, at);
    const std::string type = bytes.substr(at + 4, 4);
    const std::size_t data = at + 8;
    if (data + length > bytes.size()) {
      throw std::runtime_error("PNG: truncated chunk " + type);
    }
    if (type == "IHDR") {
      image.width = static_cast<int>(be32(bytes, data));
      image.height = static_cast<int>(be32(bytes, data + 4));
      const int depth = static_cast<unsigned char>(bytes[data + 8]);
      const int colour_type = static_cast<unsigned char>(bytes[data + 9]);
      const int interlace = static_cast<unsigned char>(bytes[data + 12]);
      channels = colour_type == 6 ? 4 : (colour_type == 2 ? 3 : 0);
      if (depth != 8 || channels == 0 || interlace != 0) {
        throw std::runtime_error("PNG: only 8-bit RGB/RGBA, not interlaced");
      }
    } else if (type == "IDAT") {
      compressed.append(bytes, data, length);
    } else if (type == "IEND") {
      break;
    }
    at = data + length + 4;  // + CRC
  }
  if (channels == 0 || image.width <= 0 || image.height <= 0) {
    throw std::runtime_error("PNG: no header");
  }
  const auto stride = static_cast<std::size_t>(image.width) * static_cast<std::size_t>(channels);
  const auto height = static_cast<std::size_t>(image.height);
  const std::string raw = inflate_all(compressed, (stride + 1) * height);
  std::vector<int> previous(stride, 0);
  std::vector<int> current(stride, 0);
  const auto bpp = static_cast<std::size_t>(channels);
  image.pixels.reserve(static_cast<std::size_t>(image.width) * height);
  for (std::size_t y = 0; y < height; ++y) {
    const std::size_t row = y * (stride + 1);
    const int filter = static_cast<unsigned char>(raw[row]);
    for (std::size_t x = 0; x < stride; ++x) {
      const int value = static_cast<unsigned char>(raw[row + 1 + x]);
      const int left = x >= bpp ? current[x - bpp] : 0;
      const int up = previous[x];
      const int up_left = x >= bpp ? previous[x - bpp] : 0;
      int predicted = 0;
      switch (filter) {
        case 0: break;
        case 1: predicted = left; break;
        case 2: predicted = up; break;
        case 3: predicted = (left + up) / 2; break;
        case 4: predicted = paeth(left, up, up_left); break;
        default: throw std::runtime_error("PNG: bad filter " + std::to_string(filter));
      }
      current[x] = (value + predicted) & 0xFF;
    }
    for (std::size_t x = 0; x < stride; x += bpp) {
      image.pixels.push_back({static_cast<std::uint8_t>(current[x]), static_cast<std::uint8_t>(current[x + 1]),
                              static_cast<std::uint8_t>(current[x + 2])});
    }
    std::swap(previous, current);
  }
  return image;
}

}  // namespace trace2d::test
