#pragma once
// A fixed table of short names grouped by length, for the lookups that run
// for every event and every field of a line (event names, the parser's
// keys): a first-byte check per name of the same length and one compare,
// with no hashing.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace trace2d::proto {

template <std::size_t MaxLength, std::size_t MaxPerLength>
class LengthBuckets {
 public:
  // The names are name_at(0) .. name_at(count - 1). A name longer than
  // MaxLength, or more than MaxPerLength names of one length, throws, which
  // fails the constant evaluation that builds the table.
  template <typename NameAt>
  constexpr LengthBuckets(std::size_t count, NameAt name_at) {
    for (std::size_t i = 0; i < count; ++i) {
      const std::size_t length = name_at(i).size();
      if (i > UINT8_MAX || length > MaxLength || m_count[length] == MaxPerLength) {
        throw "LengthBuckets too small";
      }
      m_entries[length][m_count[length]++] = static_cast<std::uint8_t>(i);
    }
  }

  // The index of `name` among the names, or nullopt.
  template <typename NameAt>
  [[nodiscard]] constexpr std::optional<std::size_t> find(std::string_view name, NameAt name_at) const {
    if (name.empty() || name.size() > MaxLength) {
      return std::nullopt;
    }
    for (std::size_t i = 0; i < m_count[name.size()]; ++i) {
      const std::size_t index = m_entries[name.size()][i];
      const std::string_view known = name_at(index);
      if (known.front() == name.front() && known == name) {
        return index;
      }
    }
    return std::nullopt;
  }

 private:
  std::array<std::array<std::uint8_t, MaxPerLength>, MaxLength + 1> m_entries{};
  std::array<std::uint8_t, MaxLength + 1> m_count{};
};

}  // namespace trace2d::proto
