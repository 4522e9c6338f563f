#pragma once
// What trace2receiver's PII options add to a process span
// (trace2.pii.hostname, trace2.pii.username; off unless asked for: they
// may be personal data): this host's name, and a sender's user name.

#include <cstdint>
#include <optional>
#include <string>

namespace trace2d::otlp {

// gethostname(), "" when it fails.
[[nodiscard]] std::string this_host_name();

// The name of a uid in the password database (getpwuid_r), nullopt when it
// has none.
[[nodiscard]] std::optional<std::string> user_name_of(std::int64_t uid);

}  // namespace trace2d::otlp
