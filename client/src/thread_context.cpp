#include "client/src/thread_context.hpp"

#include <algorithm>

#include "proto/json_quote.hpp"

namespace trace2d::client::detail {

[[gnu::tls_model("initial-exec")]] constinit thread_local ThreadContext* t_context = nullptr;

namespace {

std::atomic<void (*)(ThreadContext&)> g_exit_callback{nullptr};

// A thread_local object with a destructor: the hook into thread exit. It
// only holds a flag; the context itself is owned by its session, because
// the main thread's thread_local objects die before atexit handlers run.
struct ThreadExitHook {
  bool armed = false;
  ~ThreadExitHook() {
    ThreadContext* ctx = t_context;
    const auto callback = g_exit_callback.load();
    // The main thread's context lives on: the atexit handler still needs it.
    if (armed && ctx != nullptr && ctx->id != 0 && callback != nullptr) {
      t_context = nullptr;
      callback(*ctx);
    }
  }
};

thread_local ThreadExitHook t_exit_hook;

}  // namespace

std::string thread_name(int id, std::string_view base) {
  if (id == 0) {
    return "main";
  }
  std::string name = "th";
  if (id < 10) {
    name.push_back('0');
  }
  name += std::to_string(id);
  name.push_back(':');
  name.append(base);
  if (name.size() > k_max_thread_name) {
    name.resize(k_max_thread_name);
  }
  return name;
}

ThreadContext::ThreadContext(Session& owner, int thread_id, std::string_view base_name,
                             std::int64_t start)
    : session(&owner), id(thread_id), name(thread_name(thread_id, base_name)), start_us(start) {
  thread_json = ",\"thread\":";
  proto::append_json_quoted(thread_json, name);
  line.reserve(512);
}

void ThreadContext::remove_inner_region(std::size_t index) {
  std::rotate(regions.begin() + static_cast<std::ptrdiff_t>(index),
              regions.begin() + static_cast<std::ptrdiff_t>(index) + 1,
              regions.begin() + static_cast<std::ptrdiff_t>(depth));
  --depth;
}

void arm_thread_exit_hook() noexcept { t_exit_hook.armed = true; }

void set_thread_exit_callback(void (*callback)(ThreadContext&)) { g_exit_callback = callback; }

}  // namespace trace2d::client::detail
