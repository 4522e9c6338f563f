#pragma once
// What the stitcher may keep in memory for live sessions, and how much.
//
// A session's summary (argv, cmd_name, hierarchy, ...), its open regions
// and its open children stay in memory while it runs, and one git line can
// hold megabytes of text. Every local user can send, so what the stitcher
// keeps is bounded twice: each text value it keeps (for the sessions,
// regions and children columns) is cut to a size, and what one uid's live
// sessions hold in all is accounted and bounded per uid. What is over
// either bound is that uid's loss: the value is cut or not kept, a problem
// on the event says so, and the event itself is stored whole
// (docs/schema.md, "Values cut in memory").

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "proto/event.hpp"

namespace trace2d::stitch {

// A value as it is kept: whole, or its start.
struct KeptText {
  std::string text;
  bool cut = false;
};

// `value`'s first `max_bytes` at most, cut between UTF-8 characters.
[[nodiscard]] KeptText kept_text(std::string_view value, std::size_t max_bytes);

// The bytes an optional text value holds (0 when absent).
[[nodiscard]] inline std::size_t text_size(const std::optional<std::string>& text) {
  return text ? text->size() : 0;
}

// `items` as a JSON array of strings of at most `max_bytes`: the leading
// elements that fit, so that a cut value is still a valid array.
[[nodiscard]] KeptText kept_json_array(proto::StringList items, std::size_t max_bytes);

// Bytes held per uid, against one bound for each. The unknown uid (a
// trusted sender such as `trace2d import`) is counted but never bounded.
class UidMemory {
 public:
  static constexpr std::int64_t k_unknown_uid = -1;

  explicit UidMemory(std::size_t bound_per_uid) : m_bound(bound_per_uid) {}

  [[nodiscard]] bool fits(std::int64_t uid, std::size_t more) const;
  void charge(std::int64_t uid, std::size_t bytes);
  void release(std::int64_t uid, std::size_t bytes);
  [[nodiscard]] std::size_t held(std::int64_t uid) const;
  [[nodiscard]] std::size_t total() const { return m_total; }
  [[nodiscard]] std::size_t bound() const { return m_bound; }

 private:
  std::size_t m_bound;
  std::size_t m_total = 0;
  // One entry per uid holding anything: as many as there are users.
  std::unordered_map<std::int64_t, std::size_t> m_held;
};

}  // namespace trace2d::stitch
