#include "otlp/span_ids.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <charconv>
#include <initializer_list>
#include <memory>
#include <stdexcept>

namespace trace2d::otlp {
namespace {

using Digest = std::array<std::uint8_t, 32>;

// Fetched once: EVP_sha256() looks the algorithm up on every call, under
// OpenSSL's locks, which cost the exporter more than the hashing.
const EVP_MD* sha256_md() {
  static const std::unique_ptr<EVP_MD, decltype(&EVP_MD_free)> md(EVP_MD_fetch(nullptr, "SHA256", nullptr),
                                                                  &EVP_MD_free);
  return md ? md.get() : EVP_sha256();
}

// The SHA-256 of the pieces one after the other: an inner span's text
// (SID, separator, name) is hashed without being built.
Digest sha256(std::initializer_list<std::string_view> pieces) {
  // One context for the thread: EVP_Digest() allocates and frees one per
  // call, every span id.
  thread_local const std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> context(EVP_MD_CTX_new(),
                                                                                       &EVP_MD_CTX_free);
  Digest digest{};
  unsigned int size = 0;
  bool ok = context && EVP_DigestInit_ex(context.get(), sha256_md(), nullptr) == 1;
  for (const std::string_view piece : pieces) {
    ok = ok && EVP_DigestUpdate(context.get(), piece.data(), piece.size()) == 1;
  }
  if (!ok || EVP_DigestFinal_ex(context.get(), digest.data(), &size) != 1 || size != digest.size()) {
    throw std::runtime_error("SHA-256 failed (OpenSSL EVP_DigestInit_ex/Update/Final_ex)");
  }
  return digest;
}

SpanId span_id_of(const Digest& digest) {
  SpanId id{};
  std::copy_n(digest.begin() + 16, id.size(), id.begin());
  return id;
}

// Cannot be in a SID git writes, so no two inputs meet.
constexpr std::string_view k_separator = "\x1f";

std::string_view first_component(std::string_view sid) { return sid.substr(0, sid.find('/')); }

template <std::size_t N>
std::string hex(const std::array<std::uint8_t, N>& bytes) {
  static constexpr char k_digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * N);
  for (const std::uint8_t b : bytes) {
    out.push_back(k_digits[b >> 4]);
    out.push_back(k_digits[b & 0xf]);
  }
  return out;
}

}  // namespace

TraceId trace_id_of(std::string_view sid) {
  const Digest digest = sha256({first_component(sid)});
  TraceId id{};
  std::copy_n(digest.begin(), id.size(), id.begin());
  return id;
}

TraceId trace_id_of_tree(std::string_view tree_sid) {
  if (tree_sid.find('/') == std::string_view::npos) {
    return trace_id_of(tree_sid);
  }
  const Digest digest = sha256({tree_sid});
  TraceId id{};
  std::copy_n(digest.begin(), id.size(), id.begin());
  return id;
}

SpanId process_span_id(std::string_view sid_component) { return span_id_of(sha256({sid_component})); }

SpanId inner_span_id(std::string_view sid, std::string_view what) {
  return span_id_of(sha256({sid, k_separator, what}));
}

SpanId inner_span_id(std::string_view sid, std::string_view what, std::int64_t number) {
  std::array<char, 24> digits{};
  const auto end = std::to_chars(digits.data(), digits.data() + digits.size(), number).ptr;
  return span_id_of(sha256({sid, k_separator, what, std::string_view(digits.data(), end)}));
}

std::string to_hex(const TraceId& id) { return hex(id); }
std::string to_hex(const SpanId& id) { return hex(id); }

}  // namespace trace2d::otlp
