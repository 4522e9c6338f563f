#include "daemon/stitch/argv_key.hpp"

#include <fmt/format.h>

#include <iterator>

#include "proto/fnv1a.hpp"
#include "proto/utf8.hpp"

namespace trace2d::stitch {
namespace {

std::string key_of(const std::vector<std::string_view>& words) {
  // Only the key's start is kept: a digest stands for the rest (argv_key.hpp).
  std::string key;
  std::size_t length = 0;
  proto::Fnv1a digest;
  const auto add = [&](std::string_view part) {
    length += part.size();
    digest.add(part);
    if (key.size() < k_max_argv_key_bytes) {
      key.append(part.substr(0, k_max_argv_key_bytes - key.size()));
    }
  };
  for (std::size_t i = 0; i < words.size(); ++i) {
    std::string_view word = words[i];
    if (i == 0) {
      word = word.substr(word.rfind('/') == std::string_view::npos ? 0 : word.rfind('/') + 1);
    } else {
      add("\x1f");
    }
    add(word);
  }
  if (length <= k_max_argv_key_bytes) {
    return key;
  }
  constexpr std::size_t k_digest_text = 1 + 16;  // '\x1e' and 16 hex digits
  key.resize(proto::utf8_prefix(key, k_max_argv_key_bytes - k_digest_text).size());
  fmt::format_to(std::back_inserter(key), "\x1e{:016x}", digest.value());
  return key;
}

}  // namespace

std::vector<std::string> shell_words(std::string_view command) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (std::size_t i = 0; i < command.size(); ++i) {
    const char c = command[i];
    if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) {
        words.push_back(std::move(word));
        word.clear();
        in_word = false;
      }
      continue;
    }
    in_word = true;
    if (c == '\'') {
      const auto end = command.find('\'', i + 1);
      word.append(command.substr(i + 1, end == std::string_view::npos ? std::string_view::npos : end - i - 1));
      i = end == std::string_view::npos ? command.size() : end;
    } else if (c == '"') {
      for (++i; i < command.size() && command[i] != '"'; ++i) {
        if (command[i] == '\\' && i + 1 < command.size() &&
            std::string_view("\\\"$`\n").find(command[i + 1]) != std::string_view::npos) {
          ++i;
        }
        word.push_back(command[i]);
      }
    } else if (c == '\\' && i + 1 < command.size()) {
      word.push_back(command[++i]);
    } else {
      word.push_back(c);
    }
  }
  if (in_word) {
    words.push_back(std::move(word));
  }
  return words;
}

std::string argv_key(proto::StringList argv) {
  return key_of(std::vector<std::string_view>(argv.begin(), argv.end()));
}

std::string child_argv_key(proto::StringList argv, bool use_shell) {
  if (!use_shell || argv.empty()) {
    return argv_key(argv);
  }
  // git runs `sh -c '<argv[0]> "$@"' <argv[0]> <argv[1..]>`: the command's
  // words, then the remaining arguments as they are.
  const std::vector<std::string> words = shell_words(argv[0]);
  std::vector<std::string_view> all(words.begin(), words.end());
  all.insert(all.end(), argv.begin() + 1, argv.end());
  return key_of(all);
}

}  // namespace trace2d::stitch
