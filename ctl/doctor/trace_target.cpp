#include "ctl/doctor/trace_target.hpp"

#include <algorithm>
#include <cctype>

namespace trace2d::ctl::doctor {
namespace {

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

TraceTarget parse_trace_target(std::string_view value) {
  TraceTarget target;
  if (value.empty() || value == "0" || equals_ignoring_case(value, "false")) {
    return target;
  }
  if (value == "1" || equals_ignoring_case(value, "true")) {
    target.kind = TraceTarget::Kind::standard_error;
    return target;
  }
  if (value.size() == 1 && value[0] >= '2' && value[0] <= '9') {
    target.kind = TraceTarget::Kind::descriptor;
    return target;
  }
  constexpr std::string_view k_unix = "af_unix:";
  if (value.starts_with(k_unix)) {
    std::string_view rest = value.substr(k_unix.size());
    if (rest.starts_with("stream:")) {
      target.socket_type = TraceTarget::SocketType::stream;
      rest.remove_prefix(7);
    } else if (rest.starts_with("dgram:")) {
      target.socket_type = TraceTarget::SocketType::dgram;
      rest.remove_prefix(6);
    }
    target.path = std::string(rest);
    if (!rest.starts_with('/')) {
      target.kind = TraceTarget::Kind::invalid;
      target.why = "git takes only an absolute path after af_unix: and traces nothing with '" + target.path + "'";
      return target;
    }
    target.kind = TraceTarget::Kind::socket;
    return target;
  }
  if (value.starts_with('/')) {
    target.kind = TraceTarget::Kind::path;
    target.path = std::string(value);
    return target;
  }
  target.kind = TraceTarget::Kind::invalid;
  target.path = std::string(value);
  target.why = "git understands an absolute path, af_unix:PATH, or 0/1/true/false and 2 to 9; it warns "
               "and traces nothing with '" + target.path + "'";
  return target;
}

}  // namespace trace2d::ctl::doctor
