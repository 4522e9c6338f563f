#include "daemon/metrics/process_metrics.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace trace2d::metrics {
namespace {

// The fields of /proc/self/stat after the command name: the name, in
// parentheses, may hold spaces and parentheses itself, so the fields are
// counted from the last ')'. Field 3 of proc(5), the state, is [0].
std::vector<std::string_view> stat_fields_after_name(std::string_view stat) {
  std::vector<std::string_view> fields;
  const std::size_t close = stat.rfind(')');
  if (close == std::string_view::npos) {
    return fields;
  }
  std::size_t at = close + 1;
  while (at < stat.size()) {
    while (at < stat.size() && (stat[at] == ' ' || stat[at] == '\n')) {
      ++at;
    }
    const std::size_t end = stat.find_first_of(" \n", at);
    const std::size_t stop = end == std::string_view::npos ? stat.size() : end;
    if (stop > at) {
      fields.push_back(stat.substr(at, stop - at));
    }
    at = stop;
  }
  return fields;
}

std::optional<double> number(std::string_view text) {
  unsigned long long value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) {
    return std::nullopt;
  }
  return static_cast<double>(value);
}

}  // namespace

ProcessFigures read_process_figures() {
  ProcessFigures figures;
  std::ifstream in("/proc/self/stat");
  std::ostringstream text;
  text << in.rdbuf();
  const std::string stat = text.str();
  const std::vector<std::string_view> fields = stat_fields_after_name(stat);
  // proc(5): utime 14, stime 15 (clock ticks), vsize 23 (bytes), rss 24
  // (pages); [0] is field 3.
  constexpr std::size_t k_utime = 14 - 3, k_stime = 15 - 3, k_vsize = 23 - 3, k_rss = 24 - 3;
  if (fields.size() > k_rss) {
    const long ticks = ::sysconf(_SC_CLK_TCK);
    const auto utime = number(fields[k_utime]);
    const auto stime = number(fields[k_stime]);
    if (ticks > 0 && utime && stime) {
      figures.cpu_seconds = (*utime + *stime) / static_cast<double>(ticks);
    }
    figures.virtual_bytes = number(fields[k_vsize]);
    const long page = ::sysconf(_SC_PAGESIZE);
    if (const auto pages = number(fields[k_rss]); pages && page > 0) {
      figures.resident_bytes = *pages * static_cast<double>(page);
    }
  }
  std::error_code ec;
  std::filesystem::directory_iterator fds("/proc/self/fd", ec);
  if (!ec) {
    // The iterator's own descriptor is one of them: as client_golang counts.
    figures.open_fds = static_cast<double>(std::distance(fds, std::filesystem::directory_iterator()));
  }
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    figures.max_fds = static_cast<double>(limit.rlim_cur);
  }
  return figures;
}

void write_process_metrics(Exposition& out, const ProcessFigures& figures, double start_time) {
  const auto write_if_known = [&](std::string_view name, Type type, std::string_view help,
                                    const std::optional<double>& value) {
    if (value) {
      out.family(name, type, help);
      out.value(*value);
    }
  };
  write_if_known("process_cpu_seconds", Type::counter, "Total user and system CPU time spent in seconds.",
                   figures.cpu_seconds);
  write_if_known("process_open_fds", Type::gauge, "Number of open file descriptors.", figures.open_fds);
  write_if_known("process_max_fds", Type::gauge, "Maximum number of open file descriptors.", figures.max_fds);
  write_if_known("process_virtual_memory_bytes", Type::gauge, "Virtual memory size in bytes.",
                   figures.virtual_bytes);
  write_if_known("process_resident_memory_bytes", Type::gauge, "Resident memory size in bytes.",
                   figures.resident_bytes);
  out.family("process_start_time_seconds", Type::gauge, "Start time of the process since unix epoch in seconds.");
  out.value(start_time);
}

}  // namespace trace2d::metrics
