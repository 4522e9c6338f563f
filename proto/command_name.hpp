#pragma once
// How a process is named in rules about commands, as trace2receiver names
// it: "exe:verb#mode" ("git:checkout#branch"), "exe:verb" ("git:fetch"),
// "exe" ("git-remote-https"). The OTLP detail rules and the storage rule
// both match this way, so a pattern means the same in either list.

#include <string>
#include <string_view>

namespace trace2d::proto {

// A program's name from its path: the basename, ".exe" dropped.
[[nodiscard]] std::string_view program_name(std::string_view path);

// The "exe" of a process as trace2receiver takes it: the program name of
// its argv[0], "git" when that is empty (no `start` event, or an empty argv).
[[nodiscard]] std::string_view executable_name(std::string_view argv0);

// The entry of `rules` (a map or set keyed by std::string) for the most
// specific name of a process: "exe:verb#mode", then "exe:verb", then
// "exe"; rules.end() when none names it. An empty verb or mode is not
// known yet, and the names that need it are skipped. Three hash lookups at
// most, however many rules there are.
template <typename Rules>
[[nodiscard]] typename Rules::const_iterator find_command_rule(const Rules& rules, std::string_view exe,
                                                                std::string_view verb, std::string_view mode) {
  if (rules.empty()) {
    return rules.end();
  }
  std::string name(exe);
  if (!verb.empty()) {
    name += ':';
    name += verb;
    if (!mode.empty()) {
      const std::size_t verb_length = name.size();
      name += '#';
      name += mode;
      if (const auto found = rules.find(name); found != rules.end()) {
        return found;
      }
      name.resize(verb_length);
    }
    if (const auto found = rules.find(name); found != rules.end()) {
      return found;
    }
    name.resize(exe.size());
  }
  return rules.find(name);
}

}  // namespace trace2d::proto
