#include "ctl/render/describe.hpp"

#include <cstdio>
#include <string_view>

namespace trace2d::ctl::render {
namespace {

bool needs_quotes(std::string_view word) {
  if (word.empty()) {
    return true;
  }
  for (const char c : word) {
    if (std::string_view(" \t\n'\"\\$`;&|<>()*?[]{}~#!").find(c) != std::string_view::npos) {
      return true;
    }
  }
  return false;
}

}  // namespace

std::string format_ms(const std::optional<double>& seconds) {
  if (!seconds) {
    return {};
  }
  char text[48];
  std::snprintf(text, sizeof text, "%.3f", *seconds * 1000.0);
  return text;
}

std::string join_argv(const std::vector<std::string>& argv, bool shell_command) {
  std::string out;
  for (const std::string& word : argv) {
    if (!out.empty()) {
      out.push_back(' ');
    }
    if (shell_command && &word == &argv.front()) {
      out += word;
      continue;
    }
    if (!needs_quotes(word)) {
      out += word;
      continue;
    }
    out.push_back('\'');
    for (const char c : word) {
      out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    }
    out.push_back('\'');
  }
  return out;
}

std::string process_name(const model::ProcessInfo& process) {
  if (!process.cmd_name.empty()) {
    return process.cmd_name;
  }
  if (!process.argv.empty()) {
    const std::string& exe = process.argv.front();
    const auto slash = exe.rfind('/');
    return slash == std::string::npos ? exe : exe.substr(slash + 1);
  }
  return "?";
}

namespace {

std::string plain_outcome(const model::ProcessInfo& process) {
  if (process.signo) {
    return "signal " + std::to_string(*process.signo);
  }
  if (process.status == "complete" && process.exit_code) {
    return "exit " + std::to_string(*process.exit_code);
  }
  return process.status.empty() ? std::string("unknown") : process.status;
}

}  // namespace

// A process that lost lines is never shown as whole (docs/security.md,
// "Loss accounting").
std::string process_outcome(const model::ProcessInfo& process) {
  std::string outcome = plain_outcome(process);
  if (process.lines_lost > 0) {
    outcome += ", " + std::to_string(process.lines_lost) + " lines lost";
  }
  return outcome;
}

std::string region_name(const model::RegionInfo& region) {
  if (region.category.empty()) {
    return region.label;
  }
  return region.category + ":" + region.label;
}

std::string child_name(const model::ChildInfo& child) {
  std::string name = "child " + std::to_string(child.child_id);
  // git's "?" means "no class given": saying nothing says the same.
  if (!child.child_class.empty() && child.child_class != "?") {
    name += " " + child.child_class;
  }
  if (!child.hook_name.empty()) {
    name += " " + child.hook_name;
  }
  return name;
}

std::string child_outcome(const model::ChildInfo& child, bool process_ended) {
  std::string out = child.use_shell ? "shell, " : "";
  // git says pid -1 (with code -1) for a child it could not start. pid 0
  // is a child whose pid its parent did not know (system(), as the client
  // library documents): it ran, and its code is real.
  if (child.pid && (*child.pid < 0 || (*child.pid == 0 && child.code && *child.code < 0))) {
    return out + "not started";
  }
  if (child.pid && *child.pid > 0) {
    out += "pid " + std::to_string(*child.pid) + ", ";
  }
  if (child.code) {
    out += "exit " + std::to_string(*child.code);
  } else if (!child.ready.empty()) {
    out += child.ready;
  } else {
    out += process_ended ? "no exit recorded" : "running";
  }
  return out;
}

std::string exec_name(const model::ExecInfo& exec) {
  std::string name = "exec " + std::to_string(exec.exec_id);
  if (!exec.exe.empty()) {
    name += " " + exec.exe;
  }
  return name;
}

std::string exec_outcome(const model::ExecInfo& exec) {
  return exec.code ? "failed, code " + std::to_string(*exec.code) : std::string("replaced the process");
}

std::string node_label(const model::Node& node, bool with_argv, bool with_sid, bool process_ended) {
  std::string label;
  if (const auto* process = node.process()) {
    label = process_name(*process);
    if (with_argv && !process->argv.empty()) {
      label += "  " + join_argv(process->argv);
    }
    label += "  [";
    if (process->pid) {
      label += "pid " + std::to_string(*process->pid) + ", ";
    }
    label += process_outcome(*process) + "]";
    if (with_sid) {
      label += "  " + process->sid;
    }
  } else if (const auto* region = node.region()) {
    label = region_name(*region);
    if (!region->msg.empty()) {
      label += "  " + region->msg;
    }
    if (!node.elapsed) {
      label += "  [unclosed]";
    }
  } else if (const auto* child = node.child()) {
    label = child_name(*child) + ": " + join_argv(child->argv, child->use_shell) + "  [" +
            child_outcome(*child, process_ended) + "]";
  } else if (const auto* exec = node.exec()) {
    label = exec_name(*exec) + ": " + join_argv(exec->argv) + "  [" + exec_outcome(*exec) + "]";
  } else if (const auto* thread = node.thread()) {
    label = "thread " + thread->name;
  }
  return label;
}

}  // namespace trace2d::ctl::render
