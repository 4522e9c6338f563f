#include "ctl/query/owner.hpp"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

namespace trace2d::ctl {
namespace {

std::size_t buffer_size() {
  const long suggested = ::sysconf(_SC_GETPW_R_SIZE_MAX);
  return suggested > 0 ? static_cast<std::size_t>(suggested) : 4096;
}

// The passwd entry of `uid` (or of `name`), retrying with a larger buffer
// on ERANGE. nullopt when there is none.
template <typename Lookup>
std::optional<passwd> look_up(std::vector<char>& buffer, Lookup&& lookup) {
  buffer.resize(buffer_size());
  for (;;) {
    passwd entry{};
    passwd* found = nullptr;
    const int error = lookup(&entry, buffer.data(), buffer.size(), &found);
    if (error == ERANGE && buffer.size() < (1u << 20)) {
      buffer.resize(buffer.size() * 2);
      continue;
    }
    if (error != 0 || found == nullptr) {
      return std::nullopt;  // no entry, or no password database to ask: the number is shown
    }
    return entry;
  }
}

}  // namespace

std::string owner_columns(std::string_view alias, Units units) {
  const std::string prefix = alias.empty() ? std::string() : std::string(alias) + ".";
  std::string sql = "CASE WHEN " + prefix + "source = 'import' THEN NULL ELSE " + prefix + "peer_uid END AS owner";
  return units == Units::seconds ? prefix + "peer_uid, " + sql : sql;
}

std::optional<std::string> UserNames::name_of(std::int64_t uid) {
  if (const auto known = m_names.find(uid); known != m_names.end()) {
    return known->second;
  }
  std::optional<std::string> name;
  if (uid >= 0 && uid <= static_cast<std::int64_t>(static_cast<uid_t>(-1))) {
    std::vector<char> buffer;
    if (const auto entry = look_up(buffer, [uid](passwd* e, char* b, std::size_t n, passwd** r) {
          return ::getpwuid_r(static_cast<uid_t>(uid), e, b, n, r);
        })) {
      name = entry->pw_name;
    }
  }
  m_names.emplace(uid, name);
  return name;
}

std::string UserNames::label_of(std::int64_t uid) {
  const std::optional<std::string> name = name_of(uid);
  if (!name || name->empty() || std::all_of(name->begin(), name->end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::to_string(uid);
  }
  std::vector<char> buffer;
  const auto back = look_up(buffer, [&name](passwd* e, char* b, std::size_t n, passwd** r) {
    return ::getpwnam_r(name->c_str(), e, b, n, r);
  });
  if (!back || static_cast<std::int64_t>(back->pw_uid) != uid) {
    return std::to_string(uid);  // two users share the name: only the number tells them apart
  }
  return *name;
}

}  // namespace trace2d::ctl
