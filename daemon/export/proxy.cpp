#include "daemon/export/proxy.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>

#include "otlp/resource.hpp"

namespace trace2d::exporter {
namespace {

std::string variable(const char* lower, const char* upper, std::string& source) {
  for (const char* name : {lower, upper}) {
    const char* value = std::getenv(name);
    if (value != nullptr && value[0] != '\0') {
      source = name;
      return value;
    }
  }
  return {};
}

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())) != 0) {
    text.remove_prefix(1);
  }
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())) != 0) {
    text.remove_suffix(1);
  }
  return text;
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

// An IPv4 or IPv6 address, as 16 bytes (IPv4 mapped into IPv6), or nullopt.
struct Address {
  std::array<unsigned char, 16> bytes{};
  bool v4 = false;
};
std::optional<Address> parse_address(std::string_view text) {
  const std::string s(text);
  Address a;
  in_addr v4{};
  if (::inet_pton(AF_INET, s.c_str(), &v4) == 1) {
    a.v4 = true;
    a.bytes[10] = 0xff;
    a.bytes[11] = 0xff;
    std::copy_n(reinterpret_cast<const unsigned char*>(&v4), 4, a.bytes.begin() + 12);
    return a;
  }
  in6_addr v6{};
  if (::inet_pton(AF_INET6, s.c_str(), &v6) == 1) {
    std::copy_n(reinterpret_cast<const unsigned char*>(&v6), 16, a.bytes.begin());
    return a;
  }
  return std::nullopt;
}

// Whether `host` is in the block `entry` ("10.0.0.0/8", "fd00::/8").
bool in_block(const Address& host, std::string_view entry) {
  const auto slash = entry.find('/');
  const auto network = parse_address(entry.substr(0, slash));
  if (!network) {
    return false;
  }
  int bits = network->v4 ? 32 : 128;
  if (slash != std::string_view::npos) {
    const std::string_view length = entry.substr(slash + 1);
    const auto [end, ec] = std::from_chars(length.data(), length.data() + length.size(), bits);
    if (ec != std::errc() || end != length.data() + length.size() || bits < 0 || bits > (network->v4 ? 32 : 128)) {
      return false;
    }
  }
  if (network->v4) {
    bits += 96;  // the mapped prefix
  }
  for (int i = 0; i < bits; ++i) {
    const unsigned char mask = static_cast<unsigned char>(0x80U >> (i % 8));
    if ((host.bytes[static_cast<std::size_t>(i / 8)] & mask) != (network->bytes[static_cast<std::size_t>(i / 8)] & mask)) {
      return false;
    }
  }
  return true;
}

std::string base64(std::string_view bytes) {
  static constexpr char k_alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const std::size_t n = std::min<std::size_t>(3, bytes.size() - i);
    std::uint32_t group = 0;
    for (std::size_t k = 0; k < 3; ++k) {
      group = (group << 8) | (k < n ? static_cast<unsigned char>(bytes[i + k]) : 0U);
    }
    for (std::size_t k = 0; k < 4; ++k) {
      out.push_back(k <= n ? k_alphabet[(group >> (18 - 6 * k)) & 0x3fU] : '=');
    }
  }
  return out;
}

}  // namespace

ProxyEnvironment ProxyEnvironment::of_process() {
  ProxyEnvironment e;
  e.http_proxy = variable("http_proxy", "HTTP_PROXY", e.http_source);
  e.https_proxy = variable("https_proxy", "HTTPS_PROXY", e.https_source);
  std::string ignored;
  e.no_proxy = variable("no_proxy", "NO_PROXY", ignored);
  return e;
}

bool bypasses_proxy(std::string_view host, std::string_view port, std::string_view no_proxy) {
  const std::optional<Address> host_address = parse_address(host);
  while (!no_proxy.empty()) {
    const auto comma = no_proxy.find(',');
    std::string_view entry = trimmed(no_proxy.substr(0, comma));
    no_proxy = comma == std::string_view::npos ? std::string_view() : no_proxy.substr(comma + 1);
    if (entry == "*") {
      return true;
    }
    if (entry.empty()) {
      continue;
    }
    // A port: "host:443", "[::1]:4318"; a bare IPv6 address has colons too.
    std::string_view entry_port;
    if (entry.front() == '[') {
      const auto close = entry.find(']');
      if (close == std::string_view::npos) {
        continue;
      }
      if (close + 1 < entry.size() && entry[close + 1] == ':') {
        entry_port = entry.substr(close + 2);
      }
      entry = entry.substr(1, close - 1);
    } else if (std::count(entry.begin(), entry.end(), ':') == 1) {
      const auto colon = entry.find(':');
      entry_port = entry.substr(colon + 1);
      entry = entry.substr(0, colon);
    }
    if (!entry_port.empty() && entry_port != port) {
      continue;
    }
    if (host_address) {
      if (in_block(*host_address, entry)) {
        return true;
      }
      continue;
    }
    if (entry.starts_with("*.")) {
      entry.remove_prefix(2);
    } else if (entry.starts_with('.')) {
      entry.remove_prefix(1);
    }
    if (iequals(host, entry) ||
        (host.size() > entry.size() && host[host.size() - entry.size() - 1] == '.' &&
         iequals(host.substr(host.size() - entry.size()), entry))) {
      return true;
    }
  }
  return false;
}

std::optional<Proxy> parse_proxy(std::string_view url, std::string& error) {
  std::string text(trimmed(url));
  if (text.find("://") == std::string::npos) {
    text = "http://" + text;  // "proxy:3128", as curl takes it
  }
  if (!text.starts_with("http://")) {
    error = "only http:// proxies are supported (the tunnel to an https collector is TLS end to end)";
    return std::nullopt;
  }
  std::string authorization;
  const std::size_t authority_start = 7;
  const std::size_t authority_end = std::min(text.find('/', authority_start), text.size());
  const std::size_t at = text.rfind('@', authority_end);
  if (at != std::string::npos && at >= authority_start) {
    authorization = "Basic " + base64(otlp::percent_decode(std::string_view(text).substr(authority_start, at - authority_start)));
    text.erase(authority_start, at + 1 - authority_start);
  }
  const std::size_t path = text.find('/', authority_start);
  if (path != std::string::npos && std::string_view(text).substr(path) != "/") {
    error = "a proxy URL has no path";
    return std::nullopt;
  }
  std::optional<Endpoint> endpoint = parse_endpoint(text, error);
  if (!endpoint) {
    return std::nullopt;
  }
  return Proxy{endpoint->host, endpoint->port, std::move(authorization)};
}

bool is_loopback(std::string_view host) {
  if (iequals(host, "localhost")) {
    return true;
  }
  const std::optional<Address> address = parse_address(host);
  return address && (in_block(*address, "127.0.0.0/8") || in_block(*address, "::1/128"));
}

std::optional<Proxy> proxy_for(const Endpoint& target, const ProxyEnvironment& environment) {
  const std::string& url = target.tls ? environment.https_proxy : environment.http_proxy;
  if (url.empty() || is_loopback(target.host) || bypasses_proxy(target.host, target.port, environment.no_proxy)) {
    return std::nullopt;
  }
  std::string error;
  std::optional<Proxy> proxy = parse_proxy(url, error);
  if (!proxy) {
    // Not the value: it may hold a password.
    throw std::invalid_argument((target.tls ? environment.https_source : environment.http_source) + ": " + error);
  }
  return proxy;
}

}  // namespace trace2d::exporter
