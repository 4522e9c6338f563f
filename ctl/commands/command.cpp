#include "ctl/commands/command.hpp"

namespace trace2d::ctl {

void require_table_or_json(const Context& ctx, const std::string& command) {
  if (ctx.global.format == OutputFormat::csv || ctx.global.format == OutputFormat::tsv) {
    throw CommandError("`" + command + "` prints no single table, so it has no --format " +
                       std::string(format_name(ctx.global.format)) +
                       " (use --format json; csv and tsv suit sessions, top, stats and sql)");
  }
}

}  // namespace trace2d::ctl
