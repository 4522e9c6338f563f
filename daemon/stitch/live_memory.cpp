#include "daemon/stitch/live_memory.hpp"

#include <algorithm>

#include "proto/json_quote.hpp"
#include "proto/utf8.hpp"

namespace trace2d::stitch {

KeptText kept_text(std::string_view value, std::size_t max_bytes) {
  const std::string_view kept = proto::utf8_prefix(value, max_bytes);
  return KeptText{std::string(kept), kept.size() < value.size()};
}

KeptText kept_json_array(proto::StringList items, std::size_t max_bytes) {
  KeptText kept{"[", false};
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::size_t before = kept.text.size();
    // Quoting adds at least the two quotes: an element that cannot fit is
    // not quoted at all (it can be megabytes long).
    const std::size_t separator = i > 0 ? 1 : 0;
    if (before + separator + items[i].size() + 2 + 1 > max_bytes) {
      kept.cut = true;
      break;
    }
    if (separator > 0) {
      kept.text.push_back(',');
    }
    proto::append_json_quoted(kept.text, items[i]);
    if (kept.text.size() + 1 > max_bytes) {
      kept.text.resize(before);
      kept.cut = true;
      break;
    }
  }
  kept.text.push_back(']');
  return kept;
}

bool UidMemory::fits(std::int64_t uid, std::size_t more) const {
  return uid == k_unknown_uid || held(uid) + more <= m_bound;
}

void UidMemory::charge(std::int64_t uid, std::size_t bytes) {
  if (bytes == 0) {
    return;
  }
  m_held[uid] += bytes;
  m_total += bytes;
}

void UidMemory::release(std::int64_t uid, std::size_t bytes) {
  if (bytes == 0) {
    return;
  }
  const auto found = m_held.find(uid);
  if (found == m_held.end()) {
    return;
  }
  const std::size_t released = std::min(bytes, found->second);
  found->second -= released;
  m_total -= released;
  if (found->second == 0) {
    m_held.erase(found);
  }
}

std::size_t UidMemory::held(std::int64_t uid) const {
  const auto found = m_held.find(uid);
  return found == m_held.end() ? 0 : found->second;
}

}  // namespace trace2d::stitch
