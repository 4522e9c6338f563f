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

}  // namespace

bool failed(const model::Node& node) {
  if (const auto* process = node.process()) {
    return (process->exit_code && *process->exit_code != 0) || process->signo ||
           (process->status == "incomplete" && !ended_by_exec(node));
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
  return model::failure_reason(
      process->exit_code, process->signo, process->status,
      process->errors.empty() ? std::nullopt : std::optional<std::string_view>(process->errors.front().msg));
}

}  // namespace trace2d::ctl::render
