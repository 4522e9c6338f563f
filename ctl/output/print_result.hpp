#pragma once
// One result set in the format the user chose (--format).

#include <ostream>

#include "ctl/output/format.hpp"
#include "ctl/output/result_set.hpp"
#include "ctl/output/table.hpp"

namespace trace2d::ctl {

// `style` applies to tables only.
void print_result(std::ostream& out, const ResultSet& result, OutputFormat format, const TableStyle& style = {});

}  // namespace trace2d::ctl
