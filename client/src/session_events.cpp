// Session: the events a program sends, field by field in git's order
// (trace2/tr2_tgt_event.c).
#include <cstdlib>

#include "client/src/clock.hpp"
#include "client/src/json_check.hpp"
#include "client/src/session.hpp"

namespace trace2d::client::detail {

void Session::cmd_name(std::string_view name, Where where) {
  ThreadContext* ctx = context();
  if (ctx == nullptr || !active()) {
    return;
  }
  std::string hierarchy;
  {
    // As git's tr2_cmd_name_append_hierarchy(): each cmd_name extends the
    // parent's name, and becomes the name its children see.
    std::lock_guard lock(m_mutex);
    const std::string& parent = m_hierarchy.empty() ? m_parent_name : m_hierarchy;
    hierarchy = parent.empty() ? std::string(name) : parent + "/" + std::string(name);
    m_hierarchy = hierarchy;
  }
  if (m_config.export_environment) {
    ::setenv("GIT_TRACE2_PARENT_NAME", hierarchy.c_str(), 1);
  }
  LineBuilder b(ctx->line);
  b.begin("cmd_name", common(*ctx), where);
  b.string("name", name);
  b.string("hierarchy", hierarchy);
  b.end();
  push(ctx->line);
}

void Session::cmd_mode(std::string_view mode, Where where) {
  ThreadContext* ctx = context();
  if (ctx == nullptr || !active()) {
    return;
  }
  if (!room_for(*ctx, "cmd_mode", mode.size(), where)) {
    return;
  }
  LineBuilder b(ctx->line);
  b.begin("cmd_mode", common(*ctx), where);
  b.string("name", mode);
  b.end();
  push(ctx->line);
}

void Session::def_param(std::string_view param, std::optional<std::string_view> value,
                        std::string_view scope, Where where) {
  ThreadContext* ctx = context();
  if (ctx == nullptr || !active()) {
    return;
  }
  if (!room_for(*ctx, "def_param", param.size() + scope.size() + value.value_or("").size(), where)) {
    return;
  }
  LineBuilder b(ctx->line);
  b.begin("def_param", common(*ctx), where);
  if (!scope.empty()) {
    b.string("scope", scope);
  }
  b.string("param", param);
  if (value) {
    b.string("value", *value);
  }
  b.end();
  push(ctx->line);
}

void Session::def_repo(int repo, std::string_view worktree, Where where) {
  ThreadContext* ctx = context();
  if (ctx == nullptr || !active()) {
    return;
  }
  if (!room_for(*ctx, "def_repo", worktree.size(), where)) {
    return;
  }
  LineBuilder b(ctx->line);
  b.begin("def_repo", common(*ctx), where, repo);
  b.string("worktree", worktree);
  b.end();
  push(ctx->line);
}

namespace {

// A region token: the session's generation, the thread's id and the
// region's serial in that thread. 0 is never a token.
constexpr std::uint64_t token_of(std::uint8_t generation, int thread_id, std::uint32_t serial) {
  return (std::uint64_t{generation} << 56) |
         ((static_cast<std::uint64_t>(thread_id) & 0xffffffU) << 32) | serial;
}

}  // namespace

std::uint64_t Session::region_enter(std::string_view category, std::string_view label,
                                    std::string_view msg, int repo, Where where) {
  ThreadContext* ctx = context();
  if (ctx == nullptr || !active()) {
    return 0;
  }
  settle(*ctx);
  // git counts the thread itself as the first level: top-level regions are 1.
  const std::size_t nesting = ctx->depth + 1;
  // A region past the nesting limit is never timed: its leave and all that
  // happens inside it are past the limit too. It costs no clock read (27 ns
  // in a VM, half of what a dropped event costs otherwise).
  std::int64_t now = 0;
  if (nesting > m_max_nesting) {
    count_nesting_drop();
  } else if (now = mono_us();
             room_for(*ctx, "region_enter", category.size() + label.size() + msg.size(), where)) {
    LineBuilder b(ctx->line);
    b.begin_at(now, "region_enter", common(*ctx), where, repo);
    b.integer("nesting", static_cast<std::int64_t>(nesting));
    if (!category.empty()) {
      b.string("category", category);
    }
    if (!label.empty()) {
      b.string("label", label);
    }
    if (!msg.empty()) {
      b.string("msg", msg);
    }
    b.end();
    push(ctx->line);
  }
  return token_of(m_generation, ctx->id, ctx->push_region(now, category, label));
}

bool Session::format_region_leave(ThreadContext& ctx, const OpenRegion& r, std::string_view msg,
                                  std::string_view category, std::string_view label, int repo,
                                  Where where, std::int64_t now) {
  if (r.nesting > m_max_nesting) {
    count_nesting_drop();
    return false;
  }
  if (!room_for(ctx, "region_leave", category.size() + label.size() + msg.size(), where)) {
    return false;
  }
  if (now == 0) {
    now = mono_us();  // only now: a dropped event reads no clock
  }
  LineBuilder b(ctx.line);
  b.begin_at(now, "region_leave", common(ctx), where, repo);
  b.seconds("t_rel", now - r.start_us);
  b.integer("nesting", static_cast<std::int64_t>(r.nesting));
  if (!category.empty()) {
    b.string("category", category);
  }
  if (!label.empty()) {
    b.string("label", label);
  }
  if (!msg.empty()) {
    b.string("msg", msg);
  }
  b.end();
  return true;
}

void Session::region_leave(std::string_view category, std::string_view label, std::string_view msg,
                           int repo, Where where) {
  ThreadContext* ctx = context();
  if (ctx == nullptr || !active()) {
    return;
  }
  settle(*ctx);
  if (ctx->depth == 0) {
    return;  // git calls an unbalanced leave a BUG; here it is ignored
  }
  // Popping only moves `depth`: the entry stays in place while it formats.
  const OpenRegion& top = ctx->regions[--ctx->depth];
  if (format_region_leave(*ctx, top, msg, category, label, repo, where, 0)) {
    push(ctx->line);
  }
}

void Session::region_leave_innermost(int repo, Where where) {
  ThreadContext* ctx = context();
  if (ctx == nullptr || !active()) {
    return;
  }
  settle(*ctx);
  if (ctx->depth == 0) {
    return;
  }
  const OpenRegion& top = ctx->regions[--ctx->depth];
  if (format_region_leave(*ctx, top, {}, top.category(), top.label(), repo, where, 0)) {
    push(ctx->line);
  }
}

void Session::region_leave_token(std::uint64_t token, int repo, Where where) {
  if (static_cast<std::uint8_t>(token >> 56) != m_generation || !active()) {
    return;
  }
  const int thread_id = static_cast<int>((token >> 32) & 0xffffffU);
  const auto serial = static_cast<std::uint32_t>(token);
  ThreadContext* self = current_context();
  if (self != nullptr && self->session == this && self->id == thread_id) {
    settle(*self);
    const std::size_t index = self->find_region(serial);
    if (index == self->depth) {
      return;  // left already
    }
    const OpenRegion& r = self->regions[index];
    const bool send =
        format_region_leave(*self, r, {}, r.category(), r.label(), repo, where, 0);
    self->remove_region(index);
    if (send) {
      push(self->line);
    }
    return;
  }
  // Another thread's region: only that thread touches its stack, so the
  // leave is handed over. Its context lives while m_threads holds it.
  ForeignLeave leave{serial, mono_us(), std::string(where.file()), where.line, repo};
  std::lock_guard threads(m_threads_mutex);
  for (const auto& owned : m_threads) {
    if (owned->id == thread_id) {
      std::lock_guard foreign(owned->foreign_mutex);
      owned->foreign_leaves.push_back(std::move(leave));
      owned->has_foreign_leaves.store(true, std::memory_order_release);
      return;
    }
  }
}

void Session::apply_foreign_leaves(ThreadContext& ctx) {
  std::vector<ForeignLeave> leaves;
  {
    std::lock_guard foreign(ctx.foreign_mutex);
    leaves.swap(ctx.foreign_leaves);
    ctx.has_foreign_leaves.store(false, std::memory_order_relaxed);
  }
  for (const ForeignLeave& leave : leaves) {
    const std::size_t index = ctx.find_region(leave.serial);
    if (index == ctx.depth) {
      continue;
    }
    const OpenRegion& r = ctx.regions[index];
    const bool send = format_region_leave(ctx, r, {}, r.category(), r.label(), leave.repo,
                                          {leave.file, leave.line}, leave.when_us);
    ctx.remove_region(index);
    if (send) {
      push(ctx.line);
    }
  }
}

void Session::data(std::string_view category, std::string_view key, std::string_view value,
                   int repo, Where where) {
  ThreadContext* ctx = context();
  if (ctx == nullptr || !active()) {
    return;
  }
  settle(*ctx);
  const std::size_t nesting = ctx->depth + 1;
  const std::int64_t innermost_start = ctx->innermost_start();
  if (nesting > m_max_nesting) {
    count_nesting_drop();
    return;
  }
  if (!room_for(*ctx, "data", category.size() + key.size() + value.size(), where)) {
    return;
  }
  const std::int64_t now = mono_us();
  LineBuilder b(ctx->line);
  b.begin_at(now, "data", common(*ctx), where, repo);
  b.seconds("t_abs", now - m_start_us);
  b.seconds("t_rel", now - innermost_start);
  b.integer("nesting", static_cast<std::int64_t>(nesting));
  b.string("category", category);
  b.string("key", key);
  b.string("value", value);
  b.end();
  push(ctx->line);
}

bool Session::data_json(std::string_view category, std::string_view key, std::string_view json,
                        int repo, Where where) {
  if (!is_json_value(json)) {
    return false;
  }
  ThreadContext* ctx = context();
  if (ctx == nullptr || !active()) {
    return true;
  }
  settle(*ctx);
  const std::size_t nesting = ctx->depth + 1;
  const std::int64_t innermost_start = ctx->innermost_start();
  if (nesting > m_max_nesting) {
    count_nesting_drop();
    return true;
  }
  if (!room_for(*ctx, "data_json", category.size() + key.size() + json.size(), where)) {
    return true;
  }
  const std::int64_t now = mono_us();
  std::string compact;
  append_compact_json(compact, json);
  LineBuilder b(ctx->line);
  b.begin("data_json", common(*ctx), where, repo);
  b.seconds("t_abs", now - m_start_us);
  b.seconds("t_rel", now - innermost_start);
  b.integer("nesting", static_cast<std::int64_t>(nesting));
  b.string("category", category);
  b.string("key", key);
  b.raw("value", compact);
  b.end();
  push(ctx->line);
  return true;
}

void Session::error(std::string_view msg, std::string_view fmt, Where where) {
  ThreadContext* ctx = context();
  if (ctx == nullptr || !active()) {
    return;
  }
  if (!room_for(*ctx, "error", msg.size() + fmt.size(), where)) {
    return;
  }
  LineBuilder b(ctx->line);
  b.begin("error", common(*ctx), where);
  if (!msg.empty()) {
    b.string("msg", msg);
  }
  if (!fmt.empty()) {
    b.string("fmt", fmt);
  }
  b.end();
  push(ctx->line);
}

void Session::printf(std::string_view msg, Where where) {
  ThreadContext* ctx = context();
  if (ctx == nullptr || !active()) {
    return;
  }
  if (!room_for(*ctx, "printf", msg.size(), where)) {
    return;
  }
  LineBuilder b(ctx->line);
  b.begin("printf", common(*ctx), where);
  b.seconds("t_abs", mono_us() - m_start_us);
  if (!msg.empty()) {
    b.string("msg", msg);
  }
  b.end();
  push(ctx->line);
}

int Session::child_start(std::span<const std::string_view> argv, const ChildSpec& spec,
                         Where where) {
  ThreadContext* ctx = context();
  if (ctx == nullptr || !active()) {
    return -1;
  }
  const int id = m_next_child_id.fetch_add(1);
  const std::int64_t now = mono_us();
  {
    std::lock_guard lock(m_mutex);
    m_open_children[id] = OpenChild{now, true};
  }
  LineBuilder b(ctx->line);
  b.begin("child_start", common(*ctx), where);
  b.integer("child_id", id);
  if (!spec.hook_name.empty()) {
    b.string("child_class", "hook");
    b.string("hook_name", spec.hook_name);
  } else {
    b.string("child_class", spec.child_class.empty() ? std::string_view("?") : spec.child_class);
  }
  if (!spec.cd.empty()) {
    b.string("cd", spec.cd);
  }
  b.boolean("use_shell", spec.use_shell);
  b.strings("argv", argv);
  b.end();
  if (!push(ctx->line, Writer::Line::stitching)) {
    std::lock_guard lock(m_mutex);
    if (const auto found = m_open_children.find(id); found != m_open_children.end()) {
      found->second.start_sent = false;
    }
  }
  return id;
}

void Session::child_exit(int child_id, pid_t pid, int code, Where where) {
  ThreadContext* ctx = context();
  if (ctx == nullptr || child_id < 0) {
    return;
  }
  const std::int64_t now = mono_us();
  std::int64_t started = now;
  bool start_sent = true;
  {
    std::lock_guard lock(m_mutex);
    const auto found = m_open_children.find(child_id);
    if (found == m_open_children.end()) {
      return;  // unknown or already reported
    }
    started = found->second.start_us;
    start_sent = found->second.start_sent;
    m_open_children.erase(found);
  }
  if (!active()) {
    return;
  }
  if (!start_sent) {
    // Its child_start was dropped (a full queue): the exit alone would be
    // a child without command line or start. Dropped too, and counted.
    m_writer->count_drop();
    return;
  }
  LineBuilder b(ctx->line);
  b.begin("child_exit", common(*ctx), where);
  b.integer("child_id", child_id);
  b.integer("pid", pid);
  b.integer("code", code);
  b.seconds("t_rel", now - started);
  b.end();
  push(ctx->line, Writer::Line::stitching);
}

}  // namespace trace2d::client::detail
