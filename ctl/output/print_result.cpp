#include "ctl/output/print_result.hpp"

#include <stdexcept>
#include <string>

#include "ctl/output/delimited.hpp"
#include "ctl/output/json.hpp"

namespace trace2d::ctl {

std::optional<OutputFormat> parse_output_format(std::string_view name) {
  for (const OutputFormat format : {OutputFormat::table, OutputFormat::json, OutputFormat::csv, OutputFormat::tsv}) {
    if (format_name(format) == name) {
      return format;
    }
  }
  return std::nullopt;
}

std::string_view format_name(OutputFormat format) {
  switch (format) {
    case OutputFormat::table: return "table";
    case OutputFormat::json: return "json";
    case OutputFormat::csv: return "csv";
    case OutputFormat::tsv: return "tsv";
  }
  throw std::logic_error("unknown output format");
}

void print_result(std::ostream& out, const ResultSet& result, OutputFormat format, const TableStyle& style) {
  switch (format) {
    case OutputFormat::table: print_table(out, result, style); return;
    case OutputFormat::json: print_json_array(out, result); return;
    case OutputFormat::csv: print_delimited(out, result, Delimiter::csv); return;
    case OutputFormat::tsv: print_delimited(out, result, Delimiter::tsv); return;
  }
}

}  // namespace trace2d::ctl
