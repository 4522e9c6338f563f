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
  if (!room_for(*ctx, "cmd_mode", mode.size())) {
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
  if (!room_for(*ctx, "def_param", param.size() + scope.size() + value.value_or("").size())) {
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
  if (!room_for(*ctx, "def_repo", worktree.size())) {
    return;
  }
  LineBuilder b(ctx->line);
  b.begin("def_repo", common(*ctx), where, repo);
  b.string("worktree", worktree);
  b.end();
  push(ctx->line);
}

void Session::region_enter(std::string_view category, std::string_view label, std::string_view msg,
                           int repo, Where where) {
  ThreadContext* ctx = context();
  if (ctx == nullptr || !active()) {
    return;
  }
  const std::int64_t now = mono_us();
  // git counts the thread itself as the first level: top-level regions are 1.
  const std::size_t nesting = ctx->depth + 1;
  if (nesting <= m_max_nesting &&
      room_for(*ctx, "region_enter", category.size() + label.size() + msg.size())) {
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
  ctx->push_region(now, category, label);
}

void Session::region_leave(std::string_view category, std::string_view label, std::string_view msg,
                           int repo, Where where) {
  ThreadContext* ctx = context();
  if (ctx == nullptr || ctx->depth == 0 || !active()) {
    return;  // git calls an unbalanced leave a BUG; here it is ignored
  }
  const std::size_t nesting = ctx->depth;  // once the region is popped below
  const std::int64_t start_us = ctx->regions[--ctx->depth].start_us;
  if (nesting > m_max_nesting ||
      !room_for(*ctx, "region_leave", category.size() + label.size() + msg.size())) {
    return;
  }
  const std::int64_t now = mono_us();
  const std::int64_t t_rel = now - start_us;
  LineBuilder b(ctx->line);
  b.begin_at(now, "region_leave", common(*ctx), where, repo);
  b.seconds("t_rel", t_rel);
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

void Session::region_leave_innermost(int repo, Where where) {
  ThreadContext* ctx = context();
  if (ctx == nullptr || ctx->depth == 0) {
    return;
  }
  // Popping only moves `depth`: the entry and its strings stay in place,
  // so the views remain valid through region_leave().
  const OpenRegion& top = ctx->regions[ctx->depth - 1];
  const std::string_view category = top.category;
  const std::string_view label = top.label;
  region_leave(category, label, {}, repo, where);
}

void Session::data(std::string_view category, std::string_view key, std::string_view value,
                   int repo, Where where) {
  ThreadContext* ctx = context();
  if (ctx == nullptr || !active()) {
    return;
  }
  const std::size_t nesting = ctx->depth + 1;
  if (nesting > m_max_nesting ||
      !room_for(*ctx, "data", category.size() + key.size() + value.size())) {
    return;
  }
  const std::int64_t now = mono_us();
  LineBuilder b(ctx->line);
  b.begin_at(now, "data", common(*ctx), where, repo);
  b.seconds("t_abs", now - m_start_us);
  b.seconds("t_rel", now - ctx->innermost_start());
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
  const std::size_t nesting = ctx->depth + 1;
  if (nesting > m_max_nesting || !room_for(*ctx, "data_json", category.size() + key.size())) {
    return true;
  }
  const std::int64_t now = mono_us();
  std::string compact;
  append_compact_json(compact, json);
  LineBuilder b(ctx->line);
  b.begin("data_json", common(*ctx), where, repo);
  b.seconds("t_abs", now - m_start_us);
  b.seconds("t_rel", now - ctx->innermost_start());
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
  if (!room_for(*ctx, "error", msg.size() + fmt.size())) {
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
  if (!room_for(*ctx, "printf", msg.size())) {
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
    m_open_children[id] = now;
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
  push(ctx->line);
  return id;
}

void Session::child_exit(int child_id, pid_t pid, int code, Where where) {
  ThreadContext* ctx = context();
  if (ctx == nullptr || child_id < 0) {
    return;
  }
  const std::int64_t now = mono_us();
  std::int64_t started = now;
  {
    std::lock_guard lock(m_mutex);
    const auto found = m_open_children.find(child_id);
    if (found == m_open_children.end()) {
      return;  // unknown or already reported
    }
    started = found->second;
    m_open_children.erase(found);
  }
  if (!active()) {
    return;
  }
  LineBuilder b(ctx->line);
  b.begin("child_exit", common(*ctx), where);
  b.integer("child_id", child_id);
  b.integer("pid", pid);
  b.integer("code", code);
  b.seconds("t_rel", now - started);
  b.end();
  push(ctx->line);
}

}  // namespace trace2d::client::detail
