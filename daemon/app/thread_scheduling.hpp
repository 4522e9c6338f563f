#pragma once
// The scheduling policy of trace2d's background threads (parse, store,
// OTLP export). On a machine where git runs, their CPU is git's CPU: under
// SCHED_BATCH a thread keeps its fair share of the CPU but does not preempt
// a thread that has just woken up, so git's own threads, which wake on
// short I/O, run first and the parse and store work fills the gaps. The
// threads that read sockets keep the normal policy: they are what keeps
// git from blocking (bench/costs.md, "Cost to git").

namespace trace2d::app {

// Puts the calling thread under SCHED_BATCH when `batch` is set and it is
// not so already; logs a warning and carries on at the normal policy when
// the system refuses (a seccomp filter without sched_setscheduler).
void use_background_scheduling(bool batch, const char* thread_name);

}  // namespace trace2d::app
