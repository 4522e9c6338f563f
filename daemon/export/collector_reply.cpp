#include "daemon/export/collector_reply.hpp"

#include <algorithm>

namespace trace2d::exporter {
namespace {

// One field of a protobuf message, as the wire format has it.
struct ReplyField {
  std::uint64_t number = 0;
  std::uint64_t wire_type = 0;  // 0 varint, 1 64-bit, 2 length-delimited, 5 32-bit
  std::uint64_t varint = 0;     // wire type 0
  std::string_view bytes;       // wire type 2
};

bool read_reply_varint(std::string_view& in, std::uint64_t& value) {
  value = 0;
  for (int shift = 0; shift < 64 && !in.empty(); shift += 7) {
    const auto byte = static_cast<std::uint8_t>(in.front());
    in.remove_prefix(1);
    value |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      return true;
    }
  }
  return false;
}

// The next field of `in`, consumed; false at its end, or at what is not
// protobuf (the rest is then ignored).
bool next_reply_field(std::string_view& in, ReplyField& field) {
  std::uint64_t tag = 0;
  if (in.empty() || !read_reply_varint(in, tag)) {
    return false;
  }
  field.number = tag >> 3;
  field.wire_type = tag & 7;
  switch (field.wire_type) {
    case 0:
      return read_reply_varint(in, field.varint);
    case 1:
    case 5: {
      const std::size_t size = field.wire_type == 1 ? 8 : 4;
      if (in.size() < size) {
        return false;
      }
      in.remove_prefix(size);
      return true;
    }
    case 2: {
      std::uint64_t length = 0;
      if (!read_reply_varint(in, length) || length > in.size()) {
        return false;
      }
      field.bytes = in.substr(0, length);
      in.remove_prefix(length);
      return true;
    }
    default:
      return false;  // groups (deprecated) and invalid types
  }
}

// The first length-delimited field `number` of `message`, if any.
std::optional<std::string_view> submessage(std::string_view message, std::uint64_t number) {
  ReplyField field;
  while (next_reply_field(message, field)) {
    if (field.number == number && field.wire_type == 2) {
      return field.bytes;
    }
  }
  return std::nullopt;
}

}  // namespace

std::int64_t rejected_spans_in(std::string_view response) {
  const std::optional<std::string_view> partial = submessage(response, 1);
  if (!partial) {
    return 0;
  }
  std::string_view rest = *partial;
  ReplyField field;
  while (next_reply_field(rest, field)) {
    if (field.number == 1 && field.wire_type == 0) {
      return static_cast<std::int64_t>(field.varint);
    }
  }
  return 0;
}

std::optional<std::chrono::milliseconds> retry_delay_in(std::string_view status_details) {
  constexpr std::string_view k_retry_info = "type.googleapis.com/google.rpc.RetryInfo";
  ReplyField detail;
  while (next_reply_field(status_details, detail)) {
    if (detail.number != 3 || detail.wire_type != 2) {
      continue;
    }
    std::string_view any = detail.bytes;
    std::string_view type_url;
    std::string_view value;
    ReplyField field;
    while (next_reply_field(any, field)) {
      if (field.wire_type == 2 && field.number == 1) {
        type_url = field.bytes;
      } else if (field.wire_type == 2 && field.number == 2) {
        value = field.bytes;
      }
    }
    if (type_url != k_retry_info) {
      continue;
    }
    // A RetryInfo without a delay says "retry", not when: at once (the
    // exporter still waits its poll interval).
    std::int64_t seconds = 0;
    std::int64_t nanos = 0;
    if (const std::optional<std::string_view> duration = submessage(value, 1)) {
      std::string_view rest = *duration;
      while (next_reply_field(rest, field)) {
        if (field.wire_type == 0 && field.number == 1) {
          seconds = static_cast<std::int64_t>(field.varint);
        } else if (field.wire_type == 0 && field.number == 2) {
          nanos = static_cast<std::int32_t>(field.varint);
        }
      }
    }
    constexpr std::int64_t k_hour_s = 3600;
    if (seconds < 0 || (seconds == 0 && nanos < 0)) {
      return std::chrono::milliseconds(0);
    }
    if (seconds >= k_hour_s) {
      return std::chrono::milliseconds(k_hour_s * 1000);
    }
    return std::chrono::milliseconds(seconds * 1000 + std::clamp<std::int64_t>(nanos, 0, 999'999'999) / 1'000'000);
  }
  return std::nullopt;
}

}  // namespace trace2d::exporter
