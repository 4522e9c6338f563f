#pragma once
// Where a line came from: which kind of source, which connection, and the
// peer's credentials as the kernel reported them (never from the payload).

#include <cstdint>
#include <optional>
#include <string_view>

namespace trace2d::ingest {

enum class SourceKind : std::uint8_t { stream, dgram, dir, import };

[[nodiscard]] constexpr std::string_view to_string(SourceKind kind) {
  switch (kind) {
    case SourceKind::stream: return "stream";
    case SourceKind::dgram: return "dgram";
    case SourceKind::dir: return "dir";
    case SourceKind::import: return "import";
  }
  return "unknown";
}

struct Origin {
  SourceKind kind = SourceKind::stream;
  // Unique within one daemon run; identifies a stream connection, a file, ...
  std::uint64_t channel = 0;
  std::optional<std::int64_t> peer_pid;
  std::optional<std::int64_t> peer_uid;
};

}  // namespace trace2d::ingest
