#include "proto/sid.hpp"

#include <algorithm>

namespace trace2d::proto {

std::optional<std::string_view> sid_parent(std::string_view sid) {
  const auto slash = sid.rfind('/');
  if (slash == std::string_view::npos) {
    return std::nullopt;
  }
  return sid.substr(0, slash);
}

std::string_view sid_root(std::string_view sid) { return sid.substr(0, sid.find('/')); }

std::size_t sid_depth(std::string_view sid) {
  return static_cast<std::size_t>(std::count(sid.begin(), sid.end(), '/'));
}

std::string_view sid_leaf(std::string_view sid) {
  const auto slash = sid.rfind('/');
  return slash == std::string_view::npos ? sid : sid.substr(slash + 1);
}

}  // namespace trace2d::proto
