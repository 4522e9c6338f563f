#pragma once
// Formats one event line exactly as git's json-writer does in
// trace2/tr2_tgt_event.c: the common fields in git's order
//   {"event":..,"sid":..,"thread":..,"time":..,"file":..,"line":N,"repo":N
// then the event's own fields, no spaces, "%.6f" seconds, git's quoting,
// and a final "}\n".

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace trace2d::client::detail {

// Where an event was made: the caller's file and line. 16 bytes, so that
// it is passed in two registers: as {string_view, int} (24 bytes) it went
// through memory, and copying it into each call stalled on store-to-load
// forwarding (a tenth of a dropped event's time in perf).
struct Where {
  constexpr Where() = default;
  constexpr Where(std::string_view file, int line_number) noexcept
      : file_data(file.data()),
        file_size(static_cast<std::uint32_t>(file.size())),
        line(line_number) {}
  [[nodiscard]] constexpr std::string_view file() const noexcept { return {file_data, file_size}; }

  const char* file_data = nullptr;
  std::uint32_t file_size = 0;
  int line = 0;
};

struct CommonFields {
  std::string_view sid_json;     // ,"sid":"..."
  std::string_view thread_json;  // ,"thread":"..."
  bool brief = false;            // GIT_TRACE2_EVENT_BRIEF
};

class LineBuilder {
 public:
  // Formats into `out` (cleared first; its capacity is reused).
  explicit LineBuilder(std::string& out) : m_out(out) { m_out.clear(); }

  // `time_in_brief`: version and atexit keep "time" in brief mode.
  void begin(std::string_view event, const CommonFields& common, Where where, int repo = 0,
             bool time_in_brief = false);
  // The same, with "time" derived from `mono_now_us` (CLOCK_MONOTONIC) the
  // caller already read: one clock read per event instead of two.
  void begin_at(std::int64_t mono_now_us, std::string_view event, const CommonFields& common,
                Where where, int repo = 0);
  void string(std::string_view key, std::string_view value);
  void integer(std::string_view key, std::int64_t value);
  void seconds(std::string_view key, std::int64_t us);
  void seconds_ns(std::string_view key, std::uint64_t ns);  // git's NS_TO_SEC + "%.6f"
  void boolean(std::string_view key, bool value);
  void strings(std::string_view key, std::span<const std::string_view> values);
  void strings(std::string_view key, std::span<const std::string> values);
  // `json` must already be valid, compact JSON.
  void raw(std::string_view key, std::string_view json);
  void end() { m_out.append("}\n"); }

 private:
  void key(std::string_view name);
  void common_fields(std::int64_t unix_us, std::string_view event, const CommonFields& common,
                     Where where, int repo, bool with_time);

  std::string& m_out;
};

}  // namespace trace2d::client::detail
