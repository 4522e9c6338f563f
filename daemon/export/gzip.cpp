#include "daemon/export/gzip.hpp"

#include <zlib.h>

#include <stdexcept>

namespace trace2d::exporter {

std::string gzip(std::string_view data) {
  z_stream z{};
  // 15 + 16: a gzip header and trailer, not zlib's; level 6, zlib's default.
  if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    throw std::runtime_error("gzip: deflateInit2 failed");
  }
  std::string out(deflateBound(&z, static_cast<uLong>(data.size())) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&z, Z_FINISH);
  const std::size_t size = out.size() - z.avail_out;
  deflateEnd(&z);
  if (rc != Z_STREAM_END) {
    throw std::runtime_error("gzip: deflate failed (" + std::to_string(rc) + ")");
  }
  out.resize(size);
  return out;
}

}  // namespace trace2d::exporter
