#include "otlp/receiver_names.hpp"

#include "otlp/export_rules.hpp"

namespace trace2d::otlp {
namespace {

// Go's filepath.Base on Unix: the last element, trailing slashes dropped;
// "." for "", "/" for slashes alone.
std::string_view go_base(std::string_view path) {
  if (path.empty()) {
    return ".";
  }
  while (path.size() > 1 && path.back() == '/') {
    path.remove_suffix(1);
  }
  if (path == "/") {
    return path;
  }
  const auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

void append_normalised(std::string& out, std::string_view text) {
  for (const char c : text) {
    switch (c) {
      case ' ':
      case '-':
      case '.':
      case ',':
      case ':':
      case '(':
      case ')':
        out += '_';
        break;
      default:
        // strings.ToLower: ASCII here; other letters' cases are rare in
        // git's categories and labels and kept as they are.
        out += c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
    }
  }
}

}  // namespace

std::string_view receiver_verb(const model::ProcessInfo& process) {
  if (process.cmd_name == "_run_dashed_" && process.argv.size() > 1) {
    return process.argv[1];
  }
  return process.cmd_name;
}

std::string name_verb(const model::ProcessInfo& process) {
  std::string name = executable_name(process);
  if (const std::string_view verb = receiver_verb(process); !verb.empty()) {
    name += ':';
    name += verb;
  }
  return name;
}

std::string region_span_name(std::string_view category, std::string_view label) {
  std::string name = "region(";
  name.reserve(category.size() + label.size() + 10);
  // The placeholders are trace2receiver's as they are, not normalised.
  if (category.empty()) {
    name += 'C';
  } else {
    append_normalised(name, category);
  }
  name += ',';
  if (label.empty()) {
    name += 'L';
  } else {
    append_normalised(name, label);
  }
  name += ')';
  return name;
}

std::string child_span_name(const model::ChildInfo& child) {
  const std::string& c = child.child_class;
  if (c == "hook") {
    return "child(hook:" + child.hook_name + ")";
  }
  if (c == "git_alias") {
    return "child(alias:git)";
  }
  if (c == "shell_alias") {
    return "child(alias:shell)";
  }
  if (c == "dashed") {
    return "child(dashed:" + (child.argv.empty() ? std::string() : child.argv.front()) + ")";
  }
  if (c == "cred") {
    if (child.argv.size() > 1) {
      return "child(cred:" + child.argv[1] + ")";
    }
    // git sends a credential helper's command as one string.
    const std::string_view command = child.argv.empty() ? std::string_view() : child.argv.front();
    for (const std::string_view operation : {"get", "store", "erase"}) {
      if (command.ends_with(operation)) {
        return "child(cred:" + std::string(operation) + ")";
      }
    }
    return "child(cred:unknown)";
  }
  if (c == "?") {
    return "child(class:unknown)";
  }
  return "child(class:" + c + ")";  // editor, pager, transport/ssh, remote-https, ...
}

std::string exec_span_name(const model::ExecInfo& exec) {
  if (!exec.exe.empty()) {
    return "exec(" + std::string(go_base(exec.exe)) + ")";
  }
  if (!exec.argv.empty()) {
    return "exec(" + std::string(go_base(exec.argv.front())) + ")";
  }
  return "exec(?)";
}

std::string_view machine_arch() {
#if defined(__x86_64__)
  return "amd64";
#elif defined(__aarch64__)
  return "arm64";
#elif defined(__i386__)
  return "386";
#elif defined(__arm__)
  return "arm";
#elif defined(__powerpc64__) && defined(__LITTLE_ENDIAN__)
  return "ppc64le";
#elif defined(__powerpc64__)
  return "ppc64";
#elif defined(__s390x__)
  return "s390x";
#elif defined(__riscv) && __riscv_xlen == 64
  return "riscv64";
#elif defined(__loongarch64)
  return "loong64";
#else
  return "unknown";
#endif
}

std::string_view machine_os() {
#if defined(__linux__)
  return "linux";
#elif defined(__APPLE__)
  return "darwin";
#elif defined(__FreeBSD__)
  return "freebsd";
#elif defined(__OpenBSD__)
  return "openbsd";
#elif defined(__NetBSD__)
  return "netbsd";
#else
  return "unknown";
#endif
}

}  // namespace trace2d::otlp
