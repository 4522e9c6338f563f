#pragma once
// CSV and TSV output (--format csv, --format tsv): a header line with the
// column names, then one line per row, "\n"-terminated.
//
// CSV follows RFC 4180 as Python's csv module and spreadsheets read it: a
// field holding a comma, a double quote, CR or LF is quoted, its quotes
// doubled. TSV cannot quote, so in a field a tab, a newline, a carriage
// return and a backslash are written \t, \n, \r and \\ (the text format of
// PostgreSQL's COPY and MySQL's SELECT INTO OUTFILE). In both, NULL is an
// empty field, REAL prints as in JSON, BLOB as lowercase hex, and invalid
// UTF-8 becomes U+FFFD.

#include <ostream>

#include "ctl/output/result_set.hpp"

namespace trace2d::ctl {

enum class Delimiter { csv, tsv };
// Header::omit: for rows that follow earlier ones (`sessions --follow`).
enum class Header { print, omit };

void print_delimited(std::ostream& out, const ResultSet& result, Delimiter delimiter, Header header = Header::print);

}  // namespace trace2d::ctl
