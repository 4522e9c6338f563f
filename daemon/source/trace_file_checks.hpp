#pragma once
// What makes a trace file unfit to read, decided from its stat() alone so
// that it is refused before a byte is read: a sparse file (a `truncate -s 1T`
// reads as a terabyte of zeros) or one over the size cap would hold a reader
// for hours. Shared by the directory watcher and `trace2d import`.

#include <sys/stat.h>

#include <cstdint>
#include <optional>
#include <string>

namespace trace2d::source {

// Why the file must not be read, or nullopt when it may be. `max_bytes` 0:
// no size cap.
[[nodiscard]] std::optional<std::string> oversized_or_sparse(const struct stat& st, std::uint64_t max_bytes);

}  // namespace trace2d::source
