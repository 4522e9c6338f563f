#pragma once
// Session ids: a child's SID is its parent's SID + "/" + its own component.
// The prefix is free text chosen by whoever started the tree.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace trace2d::proto {

// Everything before the last '/', or nullopt for a top-level SID.
[[nodiscard]] std::optional<std::string_view> sid_parent(std::string_view sid);
// Everything before the first '/' (the whole SID when it has none).
[[nodiscard]] std::string_view sid_root(std::string_view sid);
// Number of '/' in the SID.
[[nodiscard]] std::size_t sid_depth(std::string_view sid);
// The last component.
[[nodiscard]] std::string_view sid_leaf(std::string_view sid);
// git's pid: "…-P<8 hex digits>" at the end of the last component.
[[nodiscard]] std::optional<std::int64_t> sid_pid(std::string_view sid);

}  // namespace trace2d::proto
