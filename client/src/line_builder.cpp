#include "client/src/line_builder.hpp"

#include <cstdio>

#include "client/src/clock.hpp"
#include "proto/json_quote.hpp"

namespace trace2d::client::detail {
namespace {

// "YYYY-MM-DDTHH:MM:SS." changes once a second: keep it per thread.
struct SecondCache {
  std::int64_t second = -1;
  char text[k_time_extended_len] = {};
};
thread_local SecondCache t_second;

void append_time(std::string& out, std::int64_t unix_us) {
  const std::int64_t second = unix_us / 1000000;
  if (second != t_second.second) {
    format_time_extended(t_second.text, unix_us);
    t_second.second = second;
  }
  char* micros = t_second.text + 20;  // after "YYYY-MM-DDTHH:MM:SS."
  std::int64_t us = unix_us % 1000000;
  for (int i = 5; i >= 0; --i) {
    micros[i] = static_cast<char>('0' + us % 10);
    us /= 10;
  }
  out.append(t_second.text, k_time_extended_len);
}

// CLOCK_REALTIME minus CLOCK_MONOTONIC, re-read every 100 ms per thread:
// both clocks are slewed alike, so in between the difference only moves
// when someone steps the wall clock.
struct WallOffset {
  std::int64_t synced_at = -1;
  std::int64_t offset = 0;
};
thread_local WallOffset t_wall;

std::int64_t wall_us_at(std::int64_t mono_now_us) {
  if (t_wall.synced_at < 0 || mono_now_us - t_wall.synced_at > 100000 ||
      mono_now_us < t_wall.synced_at) {
    t_wall.offset = real_us() - mono_us();
    t_wall.synced_at = mono_now_us;
  }
  return mono_now_us + t_wall.offset;
}

}  // namespace

void LineBuilder::begin(std::string_view event, const CommonFields& common, Where where, int repo,
                        bool time_in_brief) {
  const bool with_time = !common.brief || time_in_brief;
  // Derived like begin_at()'s, so that a thread's times never go backwards.
  common_fields(with_time ? wall_us_at(mono_us()) : 0, event, common, where, repo, with_time);
}

void LineBuilder::begin_at(std::int64_t mono_now_us, std::string_view event,
                           const CommonFields& common, Where where, int repo) {
  common_fields(common.brief ? 0 : wall_us_at(mono_now_us), event, common, where, repo,
                !common.brief);
}

void LineBuilder::common_fields(std::int64_t unix_us, std::string_view event,
                                const CommonFields& common, Where where, int repo, bool with_time) {
  m_out.append("{\"event\":\"");
  m_out.append(event);  // event names need no quoting
  m_out.push_back('"');
  m_out.append(common.sid_json);
  m_out.append(common.thread_json);
  if (with_time) {
    m_out.append(",\"time\":\"");
    append_time(m_out, unix_us);
    m_out.push_back('"');
  }
  if (!common.brief && where.file_size != 0) {
    string("file", where.file());
    integer("line", where.line);
  }
  if (repo > 0) {
    integer("repo", repo);
  }
}

void LineBuilder::key(std::string_view name) {
  m_out.append(",\"");
  m_out.append(name);
  m_out.append("\":");
}

void LineBuilder::string(std::string_view name, std::string_view value) {
  key(name);
  proto::append_json_quoted(m_out, value);
}

void LineBuilder::integer(std::string_view name, std::int64_t value) {
  key(name);
  char digits[24];
  m_out.append(digits, format_int(digits, value));
}

void LineBuilder::seconds(std::string_view name, std::int64_t us) {
  key(name);
  char digits[32];
  m_out.append(digits, format_seconds(digits, us));
}

void LineBuilder::seconds_ns(std::string_view name, std::uint64_t ns) {
  key(name);
  // Not on a hot path (timers at exit): the same double rounding as git.
  char digits[64];
  const int n =
      std::snprintf(digits, sizeof digits, "%.6f", static_cast<double>(ns) / 1000000000.0);
  m_out.append(digits, n > 0 ? static_cast<std::size_t>(n) : 0);
}

void LineBuilder::boolean(std::string_view name, bool value) {
  key(name);
  m_out.append(value ? "true" : "false");
}

void LineBuilder::strings(std::string_view name, std::span<const std::string_view> values) {
  key(name);
  m_out.push_back('[');
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) {
      m_out.push_back(',');
    }
    proto::append_json_quoted(m_out, values[i]);
  }
  m_out.push_back(']');
}

void LineBuilder::strings(std::string_view name, std::span<const std::string> values) {
  key(name);
  m_out.push_back('[');
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) {
      m_out.push_back(',');
    }
    proto::append_json_quoted(m_out, values[i]);
  }
  m_out.push_back(']');
}

void LineBuilder::raw(std::string_view name, std::string_view json) {
  key(name);
  m_out.append(json);
}

}  // namespace trace2d::client::detail
