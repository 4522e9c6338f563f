#include "proto/redact.hpp"

namespace trace2d::proto {
namespace {

// Where the userinfo of a URL starting at `authority` (just after "://")
// has its password: [colon + 1, at). Stops at the end of the authority or of
// the JSON string; escaped characters (\" \\ \uXXXX) belong to the text.
struct Password {
  std::size_t begin = 0;
  std::size_t end = 0;
};

bool find_password(std::string_view line, std::size_t authority, Password& found) {
  std::size_t colon = std::string_view::npos;
  for (std::size_t i = authority; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '\\') {
      ++i;  // an escaped character, part of the userinfo
      continue;
    }
    if (c == '"' || c == '/' || c == '?' || c == '#' || c == ' ') {
      return false;  // the end of the authority or of the string: no userinfo
    }
    if (c == ':' && colon == std::string_view::npos) {
      colon = i;
    } else if (c == '@') {
      if (colon == std::string_view::npos || colon + 1 == i) {
        return false;  // a user name alone, or an empty password
      }
      found = {colon + 1, i};
      return true;
    }
  }
  return false;
}

}  // namespace

bool redact_url_credentials(std::string_view line, std::string& out) {
  std::size_t at = line.find("://");
  if (at == std::string_view::npos) {
    return false;
  }
  std::string result;
  std::size_t copied = 0;
  for (; at != std::string_view::npos; at = line.find("://", at + 3)) {
    Password password;
    if (!find_password(line, at + 3, password) || password.begin < copied) {
      continue;
    }
    result.append(line.substr(copied, password.begin - copied));
    result.append(k_redacted);
    copied = password.end;
    at = password.end - 3;  // the next search starts right after the password
  }
  if (copied == 0) {
    return false;
  }
  result.append(line.substr(copied));
  out = std::move(result);
  return true;
}

}  // namespace trace2d::proto
