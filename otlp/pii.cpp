#include "otlp/pii.hpp"

#include <pwd.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <vector>

namespace trace2d::otlp {

std::string this_host_name() {
  std::array<char, 256> host{};
  if (::gethostname(host.data(), host.size() - 1) != 0) {
    return {};
  }
  return host.data();
}

std::optional<std::string> user_name_of(std::int64_t uid) {
  if (uid < 0) {
    return std::nullopt;
  }
  std::vector<char> buffer(1024);
  while (true) {
    passwd entry{};
    passwd* found = nullptr;
    const int error = ::getpwuid_r(static_cast<uid_t>(uid), &entry, buffer.data(), buffer.size(), &found);
    if (error == ERANGE && buffer.size() < (1U << 20)) {
      buffer.resize(buffer.size() * 2);  // a long entry: ask again with room for it
      continue;
    }
    if (error != 0 || found == nullptr || found->pw_name == nullptr) {
      return std::nullopt;  // no such user (a uid from a container): no attribute, as trace2receiver on a failed lookup
    }
    return std::string(found->pw_name);
  }
}

}  // namespace trace2d::otlp
