// The C++ API (trace2d/client.hpp) over the session. Nothing may escape to
// the host: every entry point catches everything (allocation failures).
#include <trace2d/client.hpp>

#include <vector>

#include "client/src/child.hpp"
#include "client/src/session.hpp"

namespace trace2d::client {
namespace {

using detail::Session;

detail::Where where_of(const Location& loc) {
  return {loc.file_name(), static_cast<int>(loc.line())};
}

Session* active_session() noexcept {
  Session* s = Session::current();
  return s != nullptr && s->active() ? s : nullptr;
}

template <typename Action>
void guarded(Action&& action) noexcept {
  try {
    action();
  } catch (...) {
    // Tracing never changes what the program does.
  }
}

std::vector<std::string_view> views(std::span<const std::string> strings) {
  return {strings.begin(), strings.end()};
}

detail::ChildSpec spec_of(const ChildOptions& o) {
  return {o.child_class, o.hook_name, o.cd, o.use_shell};
}

ChildResult run(std::span<const std::string_view> argv, const ChildOptions& options,
                const Location& loc) {
  const std::vector<std::string_view> env(options.env.begin(), options.env.end());
  detail::SpawnRequest request{
      argv, spec_of(options), env, options.stdin_fd, options.stdout_fd, options.stderr_fd};
  const detail::ChildOutcome outcome = detail::run_child(request, where_of(loc));
  return {outcome.child_id, outcome.pid, outcome.code};
}

}  // namespace

bool start(int argc, const char* const* argv, const Options& options, Location loc) noexcept {
  try {
    std::vector<std::string_view> args;
    for (int i = 0; argv != nullptr && i < argc && argv[i] != nullptr; ++i) {
      args.emplace_back(argv[i]);
    }
    detail::Config config{options.target,
                          options.exe,
                          options.cmd_name,
                          options.queue_bytes,
                          options.exit_flush_timeout,
                          options.export_environment,
                          options.signal_events};
    return Session::start(args, config, where_of(loc));
  } catch (...) {
    return false;
  }
}

bool enabled() noexcept { return active_session() != nullptr; }

std::string_view sid() noexcept {
  Session* s = active_session();
  return s == nullptr ? std::string_view() : std::string_view(s->sid());
}

int exit(int code, Location loc) noexcept {
  guarded([&] {
    if (Session* s = active_session()) {
      s->record_exit(code, where_of(loc));
    }
  });
  return code;
}

void cmd_name(std::string_view name, Location loc) noexcept {
  guarded([&] {
    if (Session* s = active_session()) {
      s->cmd_name(name, where_of(loc));
    }
  });
}

void cmd_mode(std::string_view mode, Location loc) noexcept {
  guarded([&] {
    if (Session* s = active_session()) {
      s->cmd_mode(mode, where_of(loc));
    }
  });
}

void def_param(std::string_view param, std::string_view value, std::string_view scope,
               Location loc) noexcept {
  guarded([&] {
    if (Session* s = active_session()) {
      s->def_param(param, value, scope, where_of(loc));
    }
  });
}

void def_repo(int repo, std::string_view worktree, Location loc) noexcept {
  guarded([&] {
    if (Session* s = active_session()) {
      s->def_repo(repo, worktree, where_of(loc));
    }
  });
}

void region_enter(std::string_view category, std::string_view label, std::string_view msg, int repo,
                  Location loc) noexcept {
  guarded([&] {
    if (Session* s = active_session()) {
      s->region_enter(category, label, msg, repo, where_of(loc));
    }
  });
}

void region_leave(std::string_view category, std::string_view label, std::string_view msg, int repo,
                  Location loc) noexcept {
  guarded([&] {
    if (Session* s = active_session()) {
      s->region_leave(category, label, msg, repo, where_of(loc));
    }
  });
}

void data(std::string_view category, std::string_view key, std::string_view value, int repo,
          Location loc) noexcept {
  guarded([&] {
    if (Session* s = active_session()) {
      s->data(category, key, value, repo, where_of(loc));
    }
  });
}

void data(std::string_view category, std::string_view key, std::int64_t value, int repo,
          Location loc) noexcept {
  guarded([&] {
    if (Session* s = active_session()) {
      s->data(category, key, std::to_string(value), repo, where_of(loc));
    }
  });
}

void data_json(std::string_view category, std::string_view key, std::string_view json, int repo,
               Location loc) noexcept {
  guarded([&] {
    if (Session* s = active_session()) {
      s->data_json(category, key, json, repo, where_of(loc));
    }
  });
}

void error(std::string_view msg, std::string_view fmt, Location loc) noexcept {
  guarded([&] {
    if (Session* s = active_session()) {
      s->error(msg, fmt, where_of(loc));
    }
  });
}

void message(std::string_view msg, Location loc) noexcept {
  guarded([&] {
    if (Session* s = active_session()) {
      s->printf(msg, where_of(loc));
    }
  });
}

Region::Region(std::string_view category, std::string_view label, std::string_view msg, int repo,
               Location loc) noexcept
    : m_loc(loc), m_repo(repo), m_entered(false) {
  guarded([&] {
    if (Session* s = active_session()) {
      s->region_enter(category, label, msg, repo, where_of(loc));
      m_entered = true;
    }
  });
}

Region::~Region() {
  if (m_entered) {
    guarded([&] {
      if (Session* s = Session::current()) {
        s->region_leave_innermost(m_repo, where_of(m_loc));
      }
    });
  }
}

Thread::Thread(std::string_view name, Location loc) noexcept : m_loc(loc), m_kind(0) {
  guarded([&] {
    if (Session* s = active_session()) {
      m_kind = static_cast<int>(s->thread_start(name, where_of(loc)));
    }
  });
}

Thread::~Thread() {
  guarded([&] {
    if (Session* s = Session::current(); s != nullptr && m_kind != 0) {
      s->thread_exit(static_cast<Session::ThreadScope>(m_kind), where_of(m_loc));
    }
  });
}

Timer::Timer(std::string_view category, std::string_view name, bool per_thread) noexcept
    : m_id(-1) {
  guarded([&] {
    m_id = detail::MetricRegistry::instance().define(detail::MetricKind::timer, category, name,
                                                     per_thread);
  });
}

void Timer::start() noexcept {
  guarded([&] {
    if (Session* s = active_session()) {
      s->timer_start(m_id);
    }
  });
}

void Timer::stop() noexcept {
  guarded([&] {
    if (Session* s = active_session()) {
      s->timer_stop(m_id);
    }
  });
}

Counter::Counter(std::string_view category, std::string_view name, bool per_thread) noexcept
    : m_id(-1) {
  guarded([&] {
    m_id = detail::MetricRegistry::instance().define(detail::MetricKind::counter, category, name,
                                                     per_thread);
  });
}

void Counter::add(std::int64_t value) noexcept {
  guarded([&] {
    if (Session* s = active_session()) {
      s->counter_add(m_id, value);
    }
  });
}

ChildResult run_child(std::span<const std::string> argv, const ChildOptions& options,
                      Location loc) noexcept {
  try {
    return run(views(argv), options, loc);
  } catch (...) {
    return {};
  }
}

ChildResult run_child(std::initializer_list<std::string_view> argv, const ChildOptions& options,
                      Location loc) noexcept {
  try {
    return run(std::span<const std::string_view>(argv.begin(), argv.size()), options, loc);
  } catch (...) {
    return {};
  }
}

Child::Child(std::span<const std::string> argv, const ChildOptions& options, Location loc) noexcept
    : m_id(-1), m_loc(loc) {
  guarded([&] {
    if (Session* s = active_session()) {
      m_id = s->child_start(views(argv), spec_of(options), where_of(loc));
    }
  });
}

Child::~Child() {
  if (!m_finished) {
    finish(-1, -1, m_loc);
  }
}

void Child::finish(pid_t pid, int code, Location loc) noexcept {
  m_finished = true;
  guarded([&] {
    if (Session* s = Session::current(); s != nullptr && m_id >= 0) {
      s->child_exit(m_id, pid, code, where_of(loc));
    }
  });
}

int child_code(int wait_status) noexcept { return detail::child_code(wait_status); }

std::vector<std::string> child_environment() {
  Session* s = active_session();
  return s == nullptr ? std::vector<std::string>() : s->child_environment();
}

}  // namespace trace2d::client
