#pragma once
// Splits a byte stream into lines across arbitrary read boundaries.
//
// A line longer than `max_line_bytes` is never held whole: its first
// `kept_bytes` are kept (for the reject row) and the rest is counted and
// discarded up to the next '\n'. The connection stays open either way.
// A reader can also cut the unfinished line short (cut_short) when its
// sender holds too much memory in unfinished lines; it then ends the same
// way, with fewer bytes kept than received.

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace trace2d::ingest {

// The longest event line accepted by default (limits.max_line_bytes): git's
// events of 4 MiB and a margin. Every part that bounds lines starts from it.
inline constexpr std::size_t k_default_max_line_bytes = 4608 * 1024;

class LineFramer {
 public:
  struct Limits {
    std::size_t max_line_bytes = k_default_max_line_bytes;
    std::size_t kept_bytes = 64 * 1024;        // of a line over the limit
  };

  explicit LineFramer(Limits limits) : m_limits(limits) {}

  // Calls sink(std::string_view line, std::uint64_t full_size) per complete
  // line. full_size > line.size() marks a line cut short (over
  // max_line_bytes, or by cut_short()).
  template <typename Sink>
  void feed(std::string_view bytes, Sink&& sink) {
    feed_lines(bytes, sink, false);
  }

  // As feed(), for lines that are only counted, not stored (their sender is
  // over its share): an unfinished line keeps just its head, where its SID
  // is, and ends cut short. Copying megabyte lines only to drop them made
  // a flood of them cost the reader more than reading.
  template <typename Sink>
  void feed_heads(std::string_view bytes, Sink&& sink) {
    feed_lines(bytes, sink, true);
  }

  // What feed_heads() keeps of an unfinished line (lost_lines.hpp looks at
  // less than this for the SID).
  static constexpr std::size_t k_head_bytes = 2048;

  // Keeps at most `keep` bytes of the unfinished line; the rest of it, up to
  // its '\n', is counted and discarded.
  void cut_short(std::size_t keep) {
    if (m_partial_size == 0) {
      return;
    }
    m_cut_keep = keep;
    if (m_partial.size() > keep) {
      m_partial.resize(keep);
    }
    m_partial.shrink_to_fit();
  }

  // End of stream: a last line without '\n' still counts.
  template <typename Sink>
  void finish(Sink&& sink) {
    if (m_partial_size > 0) {
      emit_held(sink);
    }
  }

  // Reading resumes (after a restart) inside a line an earlier run already
  // found over the limit and discarded: the rest is discarded up to the next
  // '\n' and reported as a line cut short (its head went with that run; the
  // head of the rest is kept instead).
  void resume_inside_long_line() {
    m_partial.clear();
    m_partial_size = m_limits.max_line_bytes + 1;
  }
  // Inside a line over the limit: what arrives is discarded, not held.
  [[nodiscard]] bool discarding() const { return m_partial_size > m_limits.max_line_bytes; }

  // Memory held between reads for an incomplete line (its allocation).
  [[nodiscard]] std::size_t buffered_bytes() const { return m_partial.capacity(); }
  // Bytes of the incomplete line kept so far.
  [[nodiscard]] std::size_t kept_bytes() const { return m_partial.size(); }
  [[nodiscard]] bool has_partial_line() const { return m_partial_size > 0; }
  // Bytes of the incomplete line received so far (including discarded ones).
  [[nodiscard]] std::uint64_t partial_size() const { return m_partial_size; }

 private:
  template <typename Sink>
  void feed_lines(std::string_view bytes, Sink&& sink, bool heads_only) {
    while (!bytes.empty()) {
      const std::size_t newline = bytes.find('\n');
      const std::string_view piece = bytes.substr(0, newline);
      if (newline == std::string_view::npos) {
        if (heads_only && !m_cut_keep) {
          m_cut_keep = std::max(m_partial.size(), k_head_bytes);
        }
        hold(piece);
        return;
      }
      if (m_partial_size == 0 && piece.size() <= m_limits.max_line_bytes) {
        sink(piece, piece.size());  // the common case: no copy
      } else {
        hold(piece);
        emit_held(sink);
      }
      bytes.remove_prefix(newline + 1);
    }
  }

  void hold(std::string_view piece) {
    const std::uint64_t total = m_partial_size + piece.size();
    if (m_cut_keep) {
      if (m_partial.size() < *m_cut_keep) {
        m_partial.append(piece.substr(0, *m_cut_keep - m_partial.size()));
      }
    } else if (total <= m_limits.max_line_bytes) {
      m_partial.append(piece);
    } else if (m_partial.size() < m_limits.kept_bytes) {
      m_partial.append(piece.substr(0, m_limits.kept_bytes - m_partial.size()));
    }
    if (!m_cut_keep && total > m_limits.max_line_bytes && m_partial.size() > m_limits.kept_bytes) {
      m_partial.resize(m_limits.kept_bytes);  // crossed the limit: keep only the head
    }
    m_partial_size = total;
  }

  template <typename Sink>
  void emit_held(Sink&& sink) {
    sink(std::string_view(m_partial), m_partial_size);
    m_partial.clear();
    if (m_partial.capacity() > k_kept_capacity) {
      m_partial.shrink_to_fit();  // idle connections must stay small
    }
    m_partial_size = 0;
    m_cut_keep.reset();
  }

  // What an idle connection may keep allocated between lines (readers
  // charge what framers hold to the memory budget).
  static constexpr std::size_t k_kept_capacity = 16 * 1024;

  Limits m_limits;
  std::optional<std::size_t> m_cut_keep;  // set by cut_short() until the line ends
  std::string m_partial;
  std::uint64_t m_partial_size = 0;
};

}  // namespace trace2d::ingest
