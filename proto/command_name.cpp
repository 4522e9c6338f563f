#include "proto/command_name.hpp"

namespace trace2d::proto {

std::string_view program_name(std::string_view path) {
  const auto slash = path.find_last_of("/\\");
  if (slash != std::string_view::npos) {
    path.remove_prefix(slash + 1);
  }
  if (path.size() > 4 && path.substr(path.size() - 4) == ".exe") {
    path.remove_suffix(4);
  }
  return path;
}

std::string_view executable_name(std::string_view argv0) {
  const std::string_view name = program_name(argv0);
  return name.empty() ? std::string_view("git") : name;
}

}  // namespace trace2d::proto
