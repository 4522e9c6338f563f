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

std::optional<std::int64_t> sid_pid(std::string_view sid) {
  const std::string_view leaf = sid_leaf(sid);
  const auto p = leaf.rfind("-P");
  if (p == std::string_view::npos || leaf.size() - p - 2 != 8) {
    return std::nullopt;
  }
  std::int64_t pid = 0;
  for (const char c : leaf.substr(p + 2)) {
    const int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (digit < 0) {
      return std::nullopt;
    }
    pid = pid * 16 + digit;
  }
  return pid;
}

}  // namespace trace2d::proto
