#pragma once
// How a command prints its rows (--format, --json).
//
// `table` is for reading: aligned columns, durations in milliseconds
// (`*_ms` columns), short SIDs. `json`, `csv` and `tsv` are for programs:
// every value as stored, under the schema's column names, durations in the
// schema's seconds, so they join with what `trace2ctl sql` returns.

#include <optional>
#include <string_view>

namespace trace2d::ctl {

enum class OutputFormat { table, json, csv, tsv };

[[nodiscard]] constexpr bool is_machine_format(OutputFormat format) { return format != OutputFormat::table; }

[[nodiscard]] std::optional<OutputFormat> parse_output_format(std::string_view name);

[[nodiscard]] std::string_view format_name(OutputFormat format);

}  // namespace trace2d::ctl
