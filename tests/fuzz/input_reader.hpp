#pragma once
// Reads choices from a fuzz input, front to back: the fuzzer's bytes steer
// a generator. Like libFuzzer's FuzzedDataProvider, but plain C++ so that the
// fuzz targets also build with GCC for the replay tests; once the input is
// used up, every choice is its lowest value.

#include <cstddef>
#include <cstdint>
#include <string>
#include <limits>
#include <type_traits>

namespace trace2d::fuzz {

class InputReader {
 public:
  InputReader(const std::uint8_t* data, std::size_t size) : m_data(data), m_size(size) {}

  [[nodiscard]] std::size_t remaining() const { return m_size - m_at; }

  // An integer in [low, high], from as few bytes as the range needs.
  template <typename T>
  T integer(T low, T high) {
    static_assert(std::is_integral_v<T>);
    const auto range = static_cast<std::uint64_t>(high) - static_cast<std::uint64_t>(low);
    std::uint64_t value = 0;
    for (std::uint64_t left = range; left > 0 && m_at < m_size; left >>= 8) {
      value = (value << 8) | m_data[m_at++];
    }
    if (range != UINT64_MAX) {
      value %= range + 1;
    }
    return static_cast<T>(static_cast<std::uint64_t>(low) + value);
  }

  // Any value of T.
  template <typename T>
  T any() {
    return integer<T>(std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
  }

  bool boolean() { return (integer<std::uint8_t>(0, 255) & 1) != 0; }

  // Raw bytes up to `max_size`, ended early by a backslash followed by
  // anything but another backslash (a doubled backslash stands for one).
  std::string bytes(std::size_t max_size) {
    std::string out;
    while (out.size() < max_size && m_at < m_size) {
      char c = static_cast<char>(m_data[m_at++]);
      if (c == '\\' && m_at < m_size) {
        c = static_cast<char>(m_data[m_at++]);
        if (c != '\\') {
          break;
        }
      }
      out.push_back(c);
    }
    return out;
  }

 private:
  const std::uint8_t* m_data;
  std::size_t m_size;
  std::size_t m_at = 0;
};

}  // namespace trace2d::fuzz
