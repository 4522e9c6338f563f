#pragma once
// Long output through a pager, as git does it: only when standard output is
// a terminal; the command is TRACE2CTL_PAGER, else PAGER, else "less" (when
// installed), run by /bin/sh; LESS=FRX when LESS is unset (quit when the
// text fits one screen, pass colours through, leave the text on the
// screen) and LV=-c. An empty command or "cat" means no pager.

#include <sys/types.h>

#include <optional>
#include <string>

namespace trace2d::ctl {

// The pager command the environment asks for, or nullopt for none.
[[nodiscard]] std::optional<std::string> pager_command();

class Pager {
 public:
  // Starts `command` with standard output (fd 1) redirected into it.
  // Throws std::system_error when it cannot.
  explicit Pager(const std::string& command);
  Pager(const Pager&) = delete;
  Pager& operator=(const Pager&) = delete;
  Pager(Pager&&) = delete;
  Pager& operator=(Pager&&) = delete;
  // Flushes std::cout, closes the pipe and waits for the
  // pager to exit: the shell prompt must not come back under its screen.
  ~Pager();

 private:
  pid_t m_pid = -1;
};

}  // namespace trace2d::ctl
