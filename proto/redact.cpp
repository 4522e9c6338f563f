#include "proto/redact.hpp"

#include <algorithm>
#include <array>
#include <cstring>

namespace trace2d::proto {
namespace {

// Where the userinfo of the URL whose authority starts at `begin` (just
// after "://") lies: [begin, end), `end` at its last '@'. `colon` is the
// first ':' inside it (npos when none): the user name is [begin, colon).
struct Userinfo {
  std::size_t begin = 0;
  std::size_t end = 0;
  std::size_t colon = std::string_view::npos;
};

bool equals_ignoring_case(std::string_view text, std::string_view lower) {
  return std::equal(text.begin(), text.end(), lower.begin(), lower.end(),
                    [](char a, char b) { return (a >= 'A' && a <= 'Z' ? static_cast<char>(a + 32) : a) == b; });
}

// What a JSON escape at `i` (line[i] == '\\') stands for, as far as the
// authority's shape goes: '/', '@', ':' or anything else ('\0'), and how
// many bytes it takes.
char escaped_character(std::string_view line, std::size_t i, std::size_t& length) {
  if (i + 1 >= line.size()) {
    length = 1;
    return '\0';
  }
  const char next = line[i + 1];
  if (next != 'u' || i + 6 > line.size()) {
    length = 2;
    return next == '/' ? '/' : '\0';
  }
  length = 6;
  const std::string_view hex = line.substr(i + 2, 4);
  if (equals_ignoring_case(hex, "002f")) {
    return '/';
  }
  if (equals_ignoring_case(hex, "0040")) {
    return '@';
  }
  return equals_ignoring_case(hex, "003a") ? ':' : '\0';
}

// The next "://" at or after `from` (also written ":\/\/" or with
// \u002f, as JSON writers that escape '/' do): where its authority
// begins, or npos. One memchr per ':' of the line, as a plain substring
// search does.
std::size_t next_authority(std::string_view line, std::size_t from) {
  const char* const data = line.data();
  const std::size_t size = line.size();
  while (from + 3 <= size) {
    const void* found = std::memchr(data + from, ':', size - from - 2);
    if (found == nullptr) {
      return std::string_view::npos;
    }
    const std::size_t after = static_cast<std::size_t>(static_cast<const char*>(found) - data) + 1;
    from = after;
    // Almost every ':' of a line separates a key from its value: one
    // comparison tells.
    if (data[after] == '/') {
      if (data[after + 1] == '/') {
        return after + 2;
      }
      continue;
    }
    if (data[after] != '\\') {
      continue;
    }
    std::size_t i = after;
    int slashes = 0;
    while (slashes < 2 && i < size) {
      std::size_t length = 1;
      const char c = data[i] == '\\' ? escaped_character(line, i, length) : data[i];
      if (c != '/') {
        break;
      }
      ++slashes;
      i += length;
    }
    if (slashes == 2) {
      return i;
    }
  }
  return std::string_view::npos;
}

bool find_userinfo(std::string_view line, std::size_t begin, Userinfo& found) {
  std::size_t last_at = std::string_view::npos;
  std::size_t first_colon = std::string_view::npos;
  for (std::size_t i = begin; i < line.size();) {
    char c = line[i];
    std::size_t length = 1;
    if (c == '"') {
      break;  // the end of the JSON string
    }
    if (c == '\\') {
      c = escaped_character(line, i, length);
    }
    if (c == '/') {
      break;  // the end of the authority ("://" of a next URL included)
    }
    if (c == '@') {
      last_at = i;
    } else if (c == ':' && first_colon == std::string_view::npos) {
      first_colon = i;
    }
    i += length;
  }
  if (last_at == std::string_view::npos) {
    return false;
  }
  found.begin = begin;
  found.end = last_at;
  found.colon = first_colon < last_at ? first_colon : std::string_view::npos;
  return true;
}

// The span of `info` to replace, or an empty span when nothing in it is
// secret (no userinfo, a well-known name alone, or already redacted).
struct Span {
  std::size_t begin = 0;
  std::size_t end = 0;
};

Span secret_part(std::string_view line, const Userinfo& info) {
  const std::string_view whole = line.substr(info.begin, info.end - info.begin);
  if (info.colon == std::string_view::npos) {
    if (whole.empty() || whole == k_redacted || is_well_known_url_user(whole)) {
      return {};
    }
    return {info.begin, info.end};
  }
  const std::string_view user = line.substr(info.begin, info.colon - info.begin);
  // The colon may be written \u003a: the password starts after the escape.
  const std::size_t password_begin = info.colon + (line[info.colon] == '\\' ? 6 : 1);
  const std::string_view password = line.substr(password_begin, info.end - std::min(info.end, password_begin));
  if (password.empty() && (user.empty() || is_well_known_url_user(user))) {
    return {};
  }
  if (is_well_known_url_user(user)) {
    return password == k_redacted ? Span{} : Span{password_begin, info.end};
  }
  return {info.begin, info.end};
}

}  // namespace

bool is_well_known_url_user(std::string_view user) {
  // Names hosting services document as fixed user names, the secret being
  // the password: SSH's and HTTP's "git", GitLab's "oauth2" and
  // "gitlab-ci-token", GitHub Apps' "x-access-token", Bitbucket's
  // "x-token-auth", and "anonymous". Compared exactly: "Git" is a user.
  static constexpr std::array<std::string_view, 6> k_names = {"git", "oauth2", "x-access-token", "gitlab-ci-token",
                                                              "x-token-auth", "anonymous"};
  return std::find(k_names.begin(), k_names.end(), user) != k_names.end();
}

bool redact_url_credentials(std::string_view line, std::string& out) {
  std::size_t authority = next_authority(line, 0);
  bool changed = false;
  std::size_t copied = 0;
  while (authority != std::string_view::npos) {
    Userinfo info;
    if (!find_userinfo(line, authority, info)) {
      authority = next_authority(line, authority);
      continue;
    }
    const Span secret = secret_part(line, info);
    if (secret.end > secret.begin) {
      if (!changed) {
        out.clear();  // keeps its capacity: no allocation once grown
        changed = true;
      }
      out.append(line.substr(copied, secret.begin - copied));
      out.append(k_redacted);
      copied = secret.end;
    }
    authority = next_authority(line, info.end);
  }
  if (!changed) {
    return false;
  }
  out.append(line.substr(copied));
  return true;
}

}  // namespace trace2d::proto
