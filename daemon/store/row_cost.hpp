#pragma once
// What a row really takes in the database file, estimated from the lengths
// of its values as it is written: retention charges each sender (uid) for
// the pages its rows and their index entries take (docs/schema.md,
// `sessions.stored_bytes`), without reading `dbstat` at run time.
//
// The estimate follows SQLite's file format (sqlite.org/fileformat2.html):
// a row is a record (a header of one serial type per column, then the
// values); each B-tree it is in (the table, each index) holds a cell of it
// on a page, with the part of a long record that does not fit on the page
// (over about 4 KiB in a table, over about 1 KiB in an index or a WITHOUT
// ROWID table) in overflow pages of its own, whole pages each. So a 4,000
// byte SID costs about 12.7 KiB: the row's two copies of it (sid, root_sid)
// over one overflow page, and its primary key entry over another. What the
// estimate leaves out is the slack of partly filled pages and the interior
// pages (about a third more, measured against `dbstat` in
// tests/daemon/test_retention.cpp).

#include <cstdint>
#include <optional>
#include <string_view>

#include "daemon/stitch/session_record.hpp"
#include "daemon/store/write_batch.hpp"

namespace trace2d::store {

// The database's page size: trace2d's databases use SQLite's default.
inline constexpr std::uint64_t k_page_bytes = 4096;

// The size of one record, column by column.
class RecordSize {
 public:
  RecordSize& text(std::size_t bytes);  // also a BLOB's
  RecordSize& text(const std::optional<std::string>& value) {
    return value ? text(value->size()) : null();
  }
  RecordSize& text(const std::optional<std::size_t>& bytes) { return bytes ? text(*bytes) : null(); }
  RecordSize& integer(std::optional<std::int64_t> value);
  RecordSize& real(std::optional<double> value) { return value ? fixed(8) : null(); }
  RecordSize& null() { return fixed(0); }
  // The payload: the header (its own size, one serial type a column) and the values.
  [[nodiscard]] std::uint64_t bytes() const;

 private:
  RecordSize& fixed(std::uint64_t value_bytes, std::uint64_t serial_type = 0);
  std::uint64_t m_header = 0;
  std::uint64_t m_values = 0;
};

enum class Tree : std::uint8_t {
  table,  // a rowid table's leaf: the rowid beside the record
  index,  // an index, or a WITHOUT ROWID table
};

// The bytes one cell of `payload` bytes takes in a B-tree: on its page (the
// part kept there, its cell header, its pointer) and in its overflow pages.
[[nodiscard]] std::uint64_t cell_bytes(std::uint64_t payload, Tree tree, std::uint64_t page_bytes = k_page_bytes);

// A session's row in `sessions` and its entries in the table's indexes, as
// the row writer writes `record`.
[[nodiscard]] std::uint64_t session_row_bytes(const stitch::SessionRecord& record);
// An event_store row, and the names it added to `names` (EventRow::names_bytes).
[[nodiscard]] std::uint64_t event_row_bytes(const EventRow& row);
// A region_store row, and the names it added.
[[nodiscard]] std::uint64_t region_row_bytes(const RegionRow& row);
// A child_store row, with its entries in the table's two indexes, as one
// of a child's records writes it (a child_start's, _ready's, _exit's: each
// charged, though they merge into one row).
[[nodiscard]] std::uint64_t child_row_bytes(const stitch::ChildRecord& record);
// A `names` row and its entry in the index of the text.
[[nodiscard]] std::uint64_t name_row_bytes(std::string_view text);

}  // namespace trace2d::store
