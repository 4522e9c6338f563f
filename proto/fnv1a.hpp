#pragma once
// FNV-1a, 64 bits: stable across runs, builds and machines, unlike
// std::hash, for keys that are stored and compared later. Not a defence
// against someone crafting collisions: use it where a collision costs only
// its author.

#include <cstdint>
#include <string_view>

namespace trace2d::proto {

class Fnv1a {
 public:
  constexpr void add(std::string_view bytes) {
    for (const char c : bytes) {
      m_hash ^= static_cast<unsigned char>(c);
      m_hash *= 1099511628211ULL;
    }
  }
  [[nodiscard]] constexpr std::uint64_t value() const { return m_hash; }

 private:
  std::uint64_t m_hash = 14695981039346656037ULL;
};

[[nodiscard]] constexpr std::uint64_t fnv1a(std::string_view bytes) {
  Fnv1a hash;
  hash.add(bytes);
  return hash.value();
}

}  // namespace trace2d::proto
