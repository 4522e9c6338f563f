#include "ctl/commands/group_flags.hpp"

#include <set>

namespace trace2d::ctl {
namespace {

std::optional<GroupKey> key_named(const std::string& name) {
  if (name == "cmd") {
    return GroupKey::cmd;
  }
  if (name == "repo") {
    return GroupKey::repo;
  }
  if (name == "version") {
    return GroupKey::version;
  }
  if (name == "uid") {
    return GroupKey::uid;
  }
  if (name == "nickname") {
    return GroupKey::nickname;
  }
  return std::nullopt;
}

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    parts.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) {
      return parts;
    }
    start = comma + 1;
  }
}

}  // namespace

std::string describe_group_error(const std::string& by) {
  if (by == "commands" || by == "regions") {
    return {};
  }
  std::set<std::string> seen;
  for (const std::string& part : split(by)) {
    if (!key_named(part)) {
      return "'" + part + "' is not one of commands, regions, " + k_group_help;
    }
    if (!seen.insert(part).second) {
      return "'" + part + "' is named twice";
    }
  }
  return {};
}

std::optional<std::vector<GroupKey>> group_keys(const std::string& by) {
  if (by == "commands" || by == "regions") {
    return std::nullopt;
  }
  std::vector<GroupKey> keys;
  for (const std::string& part : split(by)) {
    if (const auto key = key_named(part)) {
      keys.push_back(*key);
    }
  }
  return keys;
}

}  // namespace trace2d::ctl
