#include "client/src/session_id.hpp"

#include <limits.h>
#include <unistd.h>

#include <cstring>

#include "client/src/clock.hpp"

namespace trace2d::client::detail {
namespace {

// SHA-1's compression function over one 64-byte block.
std::uint32_t rotl(std::uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

void compress(std::array<std::uint32_t, 5>& h, const std::uint8_t* block) {
  std::uint32_t w[80];
  for (int i = 0; i < 16; ++i) {
    w[i] = static_cast<std::uint32_t>(block[4 * i]) << 24 |
           static_cast<std::uint32_t>(block[4 * i + 1]) << 16 |
           static_cast<std::uint32_t>(block[4 * i + 2]) << 8 | block[4 * i + 3];
  }
  for (int i = 16; i < 80; ++i) {
    w[i] = rotl(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
  }
  std::uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
  for (int i = 0; i < 80; ++i) {
    std::uint32_t f = 0;
    std::uint32_t k = 0;
    if (i < 20) {
      f = (b & c) | (~b & d);
      k = 0x5A827999;
    } else if (i < 40) {
      f = b ^ c ^ d;
      k = 0x6ED9EBA1;
    } else if (i < 60) {
      f = (b & c) | (b & d) | (c & d);
      k = 0x8F1BBCDC;
    } else {
      f = b ^ c ^ d;
      k = 0xCA62C1D6;
    }
    const std::uint32_t temp = rotl(a, 5) + f + e + k + w[i];
    e = d;
    d = c;
    c = rotl(b, 30);
    b = a;
    a = temp;
  }
  h[0] += a;
  h[1] += b;
  h[2] += c;
  h[3] += d;
  h[4] += e;
}

}  // namespace

std::array<std::uint8_t, 20> sha1(std::string_view data) {
  std::array<std::uint32_t, 5> h = {0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(data.data());
  std::size_t whole = data.size() / 64 * 64;
  for (std::size_t i = 0; i < whole; i += 64) {
    compress(h, bytes + i);
  }
  // The tail, the 0x80 marker and the bit length fill one or two blocks.
  std::uint8_t tail[128] = {};
  const std::size_t rest = data.size() - whole;
  if (rest > 0) {
    std::memcpy(tail, bytes + whole, rest);
  }
  tail[rest] = 0x80;
  const std::size_t tail_size = rest + 1 + 8 <= 64 ? 64 : 128;
  const std::uint64_t bits = static_cast<std::uint64_t>(data.size()) * 8;
  for (int i = 0; i < 8; ++i) {
    tail[tail_size - 1 - static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(bits >> (8 * i));
  }
  for (std::size_t i = 0; i < tail_size; i += 64) {
    compress(h, tail + i);
  }
  std::array<std::uint8_t, 20> digest{};
  for (std::size_t i = 0; i < 5; ++i) {
    for (std::size_t j = 0; j < 4; ++j) {
      digest[4 * i + j] = static_cast<std::uint8_t>(h[i] >> (24 - 8 * j));
    }
  }
  return digest;
}

std::string sha1_hex(std::string_view data) {
  static constexpr char k_hex[] = "0123456789abcdef";
  std::string out;
  for (const std::uint8_t byte : sha1(data)) {
    out.push_back(k_hex[byte >> 4]);
    out.push_back(k_hex[byte & 0xF]);
  }
  return out;
}

std::string host_component(std::string_view hostname) {
  return "H" + sha1_hex(hostname).substr(0, 8);
}

std::string host_component() {
  char hostname[HOST_NAME_MAX + 1] = {};
  if (::gethostname(hostname, sizeof hostname) != 0) {
    return "Localhost";
  }
  hostname[sizeof hostname - 1] = '\0';  // git's xgethostname() does the same
  return host_component(std::string_view(hostname, std::strlen(hostname)));
}

std::string sid_component(std::int64_t unix_us, pid_t pid, std::string_view host) {
  static constexpr char k_hex[] = "0123456789abcdef";
  char time_text[k_time_compact_len];
  format_time_compact(time_text, unix_us);
  std::string out(time_text, sizeof time_text);
  out.push_back('-');
  out.append(host);
  out.append("-P");
  const auto value = static_cast<std::uint32_t>(pid);
  for (int shift = 28; shift >= 0; shift -= 4) {
    out.push_back(k_hex[(value >> shift) & 0xF]);
  }
  return out;
}

std::string make_sid(std::string_view parent_sid, std::string_view own_component) {
  std::string sid;
  if (!parent_sid.empty()) {
    sid.append(parent_sid);
    sid.push_back('/');
  }
  sid.append(own_component);
  return sid;
}

}  // namespace trace2d::client::detail
