#include "ctl/render/node_failure.hpp"

#include <optional>
#include <string_view>

#include "model/command_identity.hpp"

namespace trace2d::ctl::render {
namespace {

// A successful exec (no exec_result) that a traced program replaced the
// process with: found among the process's own nodes, not its children's.
bool ended_by_exec(const model::Node& node) {
  for (const model::Node& child : node.children) {
    if (const auto* exec = child.exec(); exec != nullptr && !exec->code) {
      for (const model::Node& below : child.children) {
        if (below.process() != nullptr) {
          return true;
        }
      }
    }
    if (child.process() == nullptr && ended_by_exec(child)) {
      return true;
    }
  }
  return false;
}

const model::ErrorInfo* first_error(const model::ProcessInfo& process) {
  for (const model::ErrorInfo& error : process.errors) {
    if (!error.msg.empty()) {
      return &error;
    }
  }
  return nullptr;
}

// The first error of the first process below `node` (in SID order, the
// order git started them) that reported one, as model::first_error_sql()
// finds it for `sessions --failed` and `show`.
void first_descendant_error(const model::Node& node, const model::ProcessInfo*& owner, const model::ErrorInfo*& error) {
  for (const model::Node& child : node.children) {
    if (const auto* process = child.process()) {
      const model::ErrorInfo* own = first_error(*process);
      if (own != nullptr && (owner == nullptr || process->sid < owner->sid)) {
        owner = process;
        error = own;
      }
    }
    first_descendant_error(child, owner, error);
  }
}

}  // namespace

bool failed(const model::Node& node) {
  if (const auto* process = node.process()) {
    // -1: the code is unknown, the client library's execvp() having
    // replaced the process (git's exec sends none: incomplete).
    return (process->exit_code && *process->exit_code != 0 && !(*process->exit_code == -1 && ended_by_exec(node))) ||
           process->signo || (process->status == "incomplete" && !ended_by_exec(node));
  }
  if (const auto* child = node.child()) {
    return child->code && *child->code != 0;
  }
  if (const auto* exec = node.exec()) {
    return exec->code && *exec->code != 0;
  }
  return false;
}

std::string failure_reason(const model::Node& node) {
  const auto* process = node.process();
  if (process == nullptr || !failed(node)) {
    return {};
  }
  const model::ErrorInfo* error = first_error(*process);
  if (error == nullptr) {
    // A failed alias, `git pull` or dashed command reports nothing itself:
    // the git it ran said why.
    const model::ProcessInfo* owner = nullptr;
    first_descendant_error(node, owner, error);
  }
  return model::failure_reason(process->exit_code, process->signo, process->status,
                               error == nullptr ? std::nullopt : std::optional<std::string_view>(error->msg));
}

}  // namespace trace2d::ctl::render
