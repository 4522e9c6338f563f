#pragma once
// Which HTTP proxy, if any, the exporter reaches its collector through, by
// the environment's conventions that curl, Go and most HTTP clients share:
// `https_proxy`/`HTTPS_PROXY` for an https:// endpoint, `http_proxy`/
// `HTTP_PROXY` for http:// (the lower-case name first), and
// `no_proxy`/`NO_PROXY` naming the hosts reached directly. Decided once, at
// start: the endpoint does not change while trace2d runs.

#include <optional>
#include <string>
#include <string_view>

#include "daemon/export/http_client.hpp"

namespace trace2d::exporter {

struct ProxyEnvironment {
  std::string http_proxy;   // for http:// endpoints
  std::string https_proxy;  // for https:// endpoints
  std::string no_proxy;
  // The variables as this process has them; each from its lower-case name
  // when set, else its upper-case one. `source` names them for the log.
  static ProxyEnvironment of_process();
  std::string http_source = "HTTP_PROXY";
  std::string https_source = "HTTPS_PROXY";
};

// The proxy for `target`: nullopt when none is set for its scheme, when
// its host is loopback (`localhost`, 127.0.0.0/8, ::1: a Collector agent on
// the same host, which a proxy elsewhere could not reach; Go's rule), or
// when NO_PROXY names it. Throws std::invalid_argument naming the variable
// for a proxy URL it cannot use (not http://, no host, a bad port).
[[nodiscard]] std::optional<Proxy> proxy_for(const Endpoint& target, const ProxyEnvironment& environment);

// Whether `no_proxy` (comma-separated: `*`; host names, matching the name
// and every name under it, with or without a leading `.` or `*.`; IP
// addresses and CIDR blocks; each optionally with `:port`) names `host` on
// `port`.
[[nodiscard]] bool is_loopback(std::string_view host);
[[nodiscard]] bool bypasses_proxy(std::string_view host, std::string_view port, std::string_view no_proxy);

// "http://[user:password@]host[:port][/]" (the scheme may be left out);
// the credentials, percent-decoded, become a Basic Proxy-Authorization.
[[nodiscard]] std::optional<Proxy> parse_proxy(std::string_view url, std::string& error);

}  // namespace trace2d::exporter
