#include "daemon/stitch/region_pairer.hpp"

namespace trace2d::stitch {

void RegionPairer::enter(RegionRecord record) {
  auto& stack = m_stacks[record.thread.value_or("")];
  if (!stack.empty()) {
    record.parent_seq = stack.back().record.seq;
  }
  stack.push_back(Open{std::move(record), false});
  ++m_unwritten;
}

void RegionPairer::leave(RegionRecord leave, std::vector<RegionRecord>& out) {
  auto& stack = m_stacks[leave.thread.value_or("")];
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
    if (!stack.empty()) {
      leave.parent_seq = stack.back().record.seq;
    }
    out.push_back(std::move(leave));
    return;
  }
  // Regions opened inside the matched one and never closed stay unclosed.
  for (std::size_t i = stack.size(); i-- > match + 1;) {
    if (!stack[i].written) {
      out.push_back(stack[i].record);
      --m_unwritten;
    }
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
  out.push_back(std::move(open.record));
  stack.resize(match);
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
