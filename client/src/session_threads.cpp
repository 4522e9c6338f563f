// Session: per-thread contexts, thread scopes, timers and counters.
#include <algorithm>

#include "client/src/clock.hpp"
#include "client/src/session.hpp"

namespace trace2d::client::detail {

ThreadContext* Session::unknown_thread_context() {
  // A thread that never said thread_start: git names it "thNN:unknown".
  return create_context("unknown", false, mono_us());
}

ThreadContext* Session::create_context(std::string_view base_name, bool named, std::int64_t now) {
  auto ctx = std::make_unique<ThreadContext>(*this, m_next_thread_id.fetch_add(1), base_name, now);
  ctx->named = named;
  ThreadContext* raw = ctx.get();
  {
    std::lock_guard lock(m_threads_mutex);
    m_threads.push_back(std::move(ctx));
  }
  current_context() = raw;
  arm_thread_exit_hook();
  return raw;
}

std::uint64_t Session::refused_drops() {
  std::lock_guard lock(m_threads_mutex);
  std::uint64_t total = m_refused_by_ended_threads;
  for (const auto& ctx : m_threads) {
    total += ctx->refused.load(std::memory_order_relaxed);
  }
  return total;
}

void Session::release_context(ThreadContext& ctx) {
  std::lock_guard lock(m_threads_mutex);
  m_refused_by_ended_threads += ctx.refused.load(std::memory_order_relaxed);
  for (std::size_t id = 0; id < k_max_metrics; ++id) {
    m_timer_totals[id].add(ctx.timers[id]);
    m_counter_totals[id] += ctx.counters[id].load(std::memory_order_relaxed);
  }
  std::erase_if(m_threads, [&](const auto& owned) { return owned.get() == &ctx; });
}

Session::ThreadScope Session::thread_start(std::string_view name, Where where) {
  ThreadContext* ctx = current_context();
  const bool mine = ctx != nullptr && ctx->session == this;
  if (mine && (ctx->id == 0 || ctx->named)) {
    // As git: a thread function run on the main thread becomes a region.
    region_enter({}, "thread-proc", "thread-proc on main: " + std::string(name), 0, where);
    return ThreadScope::region;
  }
  const std::int64_t now = mono_us();
  if (mine) {
    current_context() = nullptr;
    release_context(*ctx);  // an implicit "unknown" context: replaced by the named one
  }
  ThreadContext* fresh = create_context(name, true, now);
  if (active()) {
    LineBuilder b(fresh->line);
    b.begin("thread_start", common(*fresh), where);
    b.end();
    push(fresh->line);
  }
  return ThreadScope::thread;
}

void Session::thread_exit(ThreadScope scope, Where where) {
  ThreadContext* ctx = current_context();
  if (ctx == nullptr || ctx->session != this) {
    return;
  }
  if (scope == ThreadScope::region) {
    region_leave_innermost(0, where);
  } else if (scope == ThreadScope::thread && ctx->named && ctx->id != 0) {
    current_context() = nullptr;
    end_thread(*ctx, where);
  }
}

Session::ThreadScope Session::current_thread_scope() {
  ThreadContext* ctx = current_context();
  if (ctx == nullptr || ctx->session != this) {
    return ThreadScope::none;
  }
  if (ctx->named && ctx->id != 0) {
    return ThreadScope::thread;
  }
  if (ctx->depth > 0 && ctx->regions[ctx->depth - 1].label() == "thread-proc") {
    return ThreadScope::region;
  }
  return ThreadScope::none;
}

void Session::end_thread(ThreadContext& ctx, Where where) {
  if (ctx.named && active()) {
    const std::int64_t now = mono_us();
    settle(ctx);  // guards of its regions ended on other threads
    ctx.depth = 0;  // unbalanced regions are unwound silently, as git does
    std::string metrics;
    append_thread_metrics(metrics, ctx);
    if (!metrics.empty()) {
      push(metrics);
    }
    LineBuilder b(ctx.line);
    b.begin("thread_exit", common(ctx), where);
    b.seconds("t_rel", now - ctx.start_us);
    b.end();
    push(ctx.line);
  }
  release_context(ctx);
}

void Session::timer_start(int id) {
  if (id < 0 || id >= k_max_metrics) {
    return;
  }
  if (ThreadContext* ctx = context()) {
    start_interval(ctx->timers[static_cast<std::size_t>(id)], mono_ns());
  }
}

void Session::timer_stop(int id) {
  if (id < 0 || id >= k_max_metrics) {
    return;
  }
  if (ThreadContext* ctx = context()) {
    stop_interval(ctx->timers[static_cast<std::size_t>(id)], mono_ns());
  }
}

void Session::counter_add(int id, std::int64_t value) {
  if (id < 0 || id >= k_max_metrics) {
    return;
  }
  if (ThreadContext* ctx = context()) {
    auto& counter = ctx->counters[static_cast<std::size_t>(id)];
    counter.store(counter.load(std::memory_order_relaxed) + value, std::memory_order_relaxed);
  }
}

namespace {

void append_timer(std::string& out, std::string_view event, const CommonFields& common,
                  const MetricInfo& info, const TimerTotal& t) {
  std::string line;
  LineBuilder b(line);
  b.begin(event, common, {k_internal_file, __LINE__});
  b.string("category", info.category);
  b.string("name", info.name);
  b.integer("intervals", static_cast<std::int64_t>(t.intervals));
  b.seconds_ns("t_total", t.total_ns);
  b.seconds_ns("t_min", t.min_ns);
  b.seconds_ns("t_max", t.max_ns);
  b.end();
  out += line;
}

void append_counter(std::string& out, std::string_view event, const CommonFields& common,
                    const MetricInfo& info, std::int64_t count) {
  std::string line;
  LineBuilder b(line);
  b.begin(event, common, {k_internal_file, __LINE__});
  b.string("category", info.category);
  b.string("name", info.name);
  b.integer("count", count);
  b.end();
  out += line;
}

}  // namespace

void Session::append_thread_metrics(std::string& out, ThreadContext& ctx) {
  const MetricRegistry& registry = MetricRegistry::instance();
  for (int id = 0; id < registry.count(MetricKind::timer); ++id) {
    TimerTotal t;
    t.add(ctx.timers[static_cast<std::size_t>(id)]);
    if (registry.info(MetricKind::timer, id).per_thread && t.intervals > 0) {
      append_timer(out, "th_timer", common(ctx), registry.info(MetricKind::timer, id), t);
    }
  }
  for (int id = 0; id < registry.count(MetricKind::counter); ++id) {
    const std::int64_t value =
        ctx.counters[static_cast<std::size_t>(id)].load(std::memory_order_relaxed);
    if (registry.info(MetricKind::counter, id).per_thread && value != 0) {
      append_counter(out, "th_counter", common(ctx), registry.info(MetricKind::counter, id), value);
    }
  }
}

void Session::append_total_metrics(std::string& out) {
  const MetricRegistry& registry = MetricRegistry::instance();
  std::array<TimerTotal, k_max_metrics> timers;
  std::array<std::int64_t, k_max_metrics> counters{};
  {
    // Threads still running count too: git would lose them.
    std::lock_guard lock(m_threads_mutex);
    timers = m_timer_totals;
    counters = m_counter_totals;
    for (const auto& ctx : m_threads) {
      for (std::size_t id = 0; id < k_max_metrics; ++id) {
        timers[id].add(ctx->timers[id]);
        counters[id] += ctx->counters[id].load(std::memory_order_relaxed);
      }
    }
  }
  const CommonFields fields = common(*m_main);
  for (int id = 0; id < registry.count(MetricKind::timer); ++id) {
    if (timers[static_cast<std::size_t>(id)].intervals > 0) {
      append_timer(out, "timer", fields, registry.info(MetricKind::timer, id),
                   timers[static_cast<std::size_t>(id)]);
    }
  }
  for (int id = 0; id < registry.count(MetricKind::counter); ++id) {
    if (counters[static_cast<std::size_t>(id)] != 0) {
      append_counter(out, "counter", fields, registry.info(MetricKind::counter, id),
                     counters[static_cast<std::size_t>(id)]);
    }
  }
}

}  // namespace trace2d::client::detail
