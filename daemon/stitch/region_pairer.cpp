#include "daemon/stitch/region_pairer.hpp"

#include "daemon/stitch/live_memory.hpp"

namespace trace2d::stitch {

std::size_t RegionPairer::held_cost(const RegionRecord& record) {
  // The thread name twice: in the record and as its stack's key. The fixed
  // part stands for the record, the stack entry and the map node.
  constexpr std::size_t k_fixed = sizeof(Open) + 64;
  return k_fixed + 2 * text_size(record.thread) + text_size(record.category) + text_size(record.label) +
         text_size(record.msg);
}

void RegionPairer::enter(RegionRecord record, std::vector<RegionRecord>& out, Room room) {
  auto& stack = m_stacks[record.thread.value_or("")];
  // An enter at nesting n says its sender has n - 1 regions open on the
  // thread: those left behind by an out-of-order leave (below) that the
  // sender no longer counts were never closed, and go unclosed now.
  if (record.nesting) {
    while (!stack.empty() && stack.back().behind && static_cast<std::int64_t>(stack.size()) >= *record.nesting) {
      write_unclosed(stack.back(), out);
      stack.pop_back();
    }
  }
  if (!stack.empty()) {
    record.parent_seq = stack.back().record.seq;
  }
  if (stack.size() >= k_max_depth || m_open >= k_max_open || room == Room::none) {
    if (stack.empty()) {
      m_stacks.erase(record.thread.value_or(""));
    }
    out.push_back(std::move(record));  // stays unclosed
    return;
  }
  const std::size_t cost = held_cost(record);
  stack.push_back(Open{std::move(record), cost, false});
  m_held_bytes += cost;
  ++m_open;
  ++m_unwritten;
}

void RegionPairer::leave(RegionRecord leave, std::vector<RegionRecord>& out) {
  const auto found = m_stacks.find(leave.thread.value_or(""));
  if (found == m_stacks.end()) {
    out.push_back(std::move(leave));  // a leave without its enter: a closed region of its own
    return;
  }
  auto& stack = found->second;
  const auto matches = [&](const RegionRecord& open) {
    return open.category == leave.category && open.label == leave.label &&
           (!open.nesting || !leave.nesting || open.nesting == leave.nesting);
  };
  std::size_t match = stack.size();
  for (std::size_t i = stack.size(); i-- > 0;) {
    if (matches(stack[i].record)) {
      match = i;
      break;
    }
  }
  if (match == stack.size()) {
    // A leave without its enter: a closed region of its own, under whatever
    // is open now.
    leave.parent_seq = stack.back().record.seq;
    out.push_back(std::move(leave));
    return;
  }
  // Regions opened inside the matched one stay open, left behind: a
  // producer that closes its own region, whatever was entered since (the
  // client's guards), leaves them later and keeps nesting under them; git,
  // whose leave always ends its innermost region, had closed them (a lost
  // line), and its next enter says so (enter()).
  for (std::size_t i = match + 1; i < stack.size(); ++i) {
    stack[i].behind = true;
  }
  Open& open = stack[match];
  open.record.elapsed = leave.elapsed ? leave.elapsed : elapsed_between(open.record.at, leave.at);
  open.record.leave_seq = leave.leave_seq;
  if (!open.record.msg) {
    open.record.msg = leave.msg;
  }
  if (!open.written) {
    --m_unwritten;
  }
  m_held_bytes -= open.cost;
  --m_open;
  out.push_back(std::move(open.record));
  stack.erase(stack.begin() + static_cast<std::ptrdiff_t>(match));
  if (stack.empty()) {
    m_stacks.erase(found);
  }
}

void RegionPairer::write_unclosed(Open& open, std::vector<RegionRecord>& out) {
  if (!open.written) {
    out.push_back(std::move(open.record));
    --m_unwritten;
  }
  m_held_bytes -= open.cost;
  --m_open;
}

void RegionPairer::flush_open(std::vector<RegionRecord>& out) {
  if (m_unwritten == 0) {
    return;
  }
  for (auto& [thread, stack] : m_stacks) {
    for (Open& open : stack) {
      if (!open.written) {
        out.push_back(open.record);
        open.written = true;
      }
    }
  }
  m_unwritten = 0;
}

}  // namespace trace2d::stitch
