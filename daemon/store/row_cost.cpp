#include "daemon/store/row_cost.hpp"

#include "proto/sid.hpp"

namespace trace2d::store {
namespace {

std::uint64_t varint_bytes(std::uint64_t value) {
  std::uint64_t bytes = 1;
  while (value >= 0x80 && bytes < 9) {
    value >>= 7;
    ++bytes;
  }
  return bytes;
}

// A rowid as a record column (an index entry of a rowid table ends with
// it) or beside a table's cell: sessions and names number in the millions.
constexpr std::int64_t k_typical_rowid = 1 << 22;
// A time stored as text: git's "YYYY-MM-DDTHH:MM:SS.ffffffZ".
constexpr std::size_t k_time_text = 27;

}  // namespace

RecordSize& RecordSize::fixed(std::uint64_t value_bytes, std::uint64_t serial_type) {
  m_header += varint_bytes(serial_type);
  m_values += value_bytes;
  return *this;
}

RecordSize& RecordSize::text(std::size_t bytes) { return fixed(bytes, 2 * static_cast<std::uint64_t>(bytes) + 13); }

RecordSize& RecordSize::integer(std::optional<std::int64_t> value) {
  if (!value) {
    return null();
  }
  const std::int64_t v = *value;
  if (v == 0 || v == 1) {
    return fixed(0);  // serial types 8 and 9: no bytes
  }
  const auto fits = [v](int bits) {
    const std::int64_t limit = std::int64_t{1} << (bits - 1);
    return v >= -limit && v < limit;
  };
  for (const int bytes : {1, 2, 3, 4, 6}) {
    if (fits(8 * bytes)) {
      return fixed(static_cast<std::uint64_t>(bytes));
    }
  }
  return fixed(8);
}

std::uint64_t RecordSize::bytes() const {
  // The header's own size is a varint in front of it (and counts itself).
  const std::uint64_t header = m_header + varint_bytes(m_header + 1);
  return header + m_values;
}

std::uint64_t cell_bytes(std::uint64_t payload, Tree tree, std::uint64_t page_bytes) {
  // The most a cell keeps on its page (X), the least it keeps once it
  // overflows (M), and what an overflow page holds (U - 4): SQLite's file
  // format, section "B-tree Pages".
  const std::uint64_t usable = page_bytes;
  const std::uint64_t most = tree == Tree::table ? usable - 35 : ((usable - 12) * 64 / 255) - 23;
  const std::uint64_t least = ((usable - 12) * 32 / 255) - 23;
  const std::uint64_t per_overflow_page = usable - 4;
  std::uint64_t local = payload;
  std::uint64_t overflow_pages = 0;
  if (payload > most) {
    const std::uint64_t k = least + ((payload - least) % per_overflow_page);
    local = k <= most ? k : least;
    overflow_pages = (payload - local + per_overflow_page - 1) / per_overflow_page;
  }
  std::uint64_t header = varint_bytes(payload);
  if (tree == Tree::table) {
    header += varint_bytes(static_cast<std::uint64_t>(k_typical_rowid));
  }
  constexpr std::uint64_t k_cell_pointer = 2;
  constexpr std::uint64_t k_overflow_pointer = 4;
  return header + local + k_cell_pointer + (overflow_pages > 0 ? k_overflow_pointer : 0) +
         overflow_pages * page_bytes;
}

std::uint64_t session_row_bytes(const stitch::SessionRecord& r) {
  // The lineage as the row writer stores it: what the SID says.
  std::optional<std::size_t> parent_sid;
  if (const auto parent = proto::sid_parent(r.sid)) {
    parent_sid = parent->size();
  }
  const std::size_t root_sid = proto::sid_root(r.sid).size();
  const std::size_t tree_sid = r.tree_sid.empty() ? root_sid : r.tree_sid.size();
  const auto time = [](const std::optional<std::int64_t>& us) {
    return us ? std::optional<std::size_t>(k_time_text) : std::nullopt;
  };
  RecordSize row;
  row.text(r.sid.size())
      .integer(r.id)
      .text(parent_sid)
      .text(root_sid)
      .integer(static_cast<std::int64_t>(proto::sid_depth(r.sid)))
      .text(r.evt)
      .text(r.exe)
      .text(r.argv)
      .text(r.cmd_name)
      .text(r.hierarchy)
      .text(r.cmd_mode)
      .text(r.worktree)
      .text(r.cmd_path)
      .text(time(r.start_time_us))
      .text(time(r.end_time_us))
      .real(r.elapsed)
      .integer(r.exit_code)
      .integer(r.signo)
      .text(10)  // status
      .text(6)   // source
      .integer(r.peer_pid)
      .integer(r.peer_uid)
      .integer(r.event_count)
      .integer(r.error_count)
      .integer(r.problem_count)
      .text(k_time_text)  // first_received
      .text(k_time_text)  // last_received
      .integer(r.time_base_us)
      .integer(r.sid_pid)
      .text(r.argv_key)
      .integer(r.process_start_us)
      .integer(k_typical_rowid)  // stored_bytes
      .text(r.nickname)
      .text(tree_sid)
      .integer(r.lines_lost)
      .integer(k_typical_rowid);  // row_bytes
  std::uint64_t bytes = cell_bytes(row.bytes(), Tree::table);
  // Its entry in each index of `sessions` (docs/schema.md, "Indexes"):
  // the indexed columns and the rowid.
  const auto entry = [&bytes](RecordSize& key) {
    key.integer(k_typical_rowid);
    bytes += cell_bytes(key.bytes(), Tree::index);
  };
  RecordSize by_sid;
  entry(by_sid.text(r.sid.size()));
  RecordSize by_id;
  entry(by_id.integer(r.id));
  RecordSize by_start;
  entry(by_start.text(time(r.start_time_us)));
  RecordSize by_received;
  entry(by_received.text(k_time_text));
  if (parent_sid) {  // The indexes by parent hold children only (schema 21).
    RecordSize by_parent;
    entry(by_parent.text(parent_sid).integer(r.sid_pid));
    RecordSize by_parent_argv;
    entry(by_parent_argv.text(parent_sid).text(r.argv_key).integer(r.process_start_us));
  }
  RecordSize by_uid;
  entry(by_uid.integer(r.peer_uid).text(k_time_text));
  return bytes;
}

std::uint64_t event_row_bytes(const EventRow& row) {
  RecordSize record;
  record.integer(row.session)
      .integer(row.seq)
      .integer(row.type)
      .integer(row.thread)
      .integer(row.time_us)
      .integer(row.file)
      .integer(row.line)
      .text(row.body.size);
  if (row.raw.present) {
    record.text(row.raw.size);
  } else {
    record.null();
  }
  for (const std::optional<std::int64_t>& column : row.leading) {
    record.integer(column);
  }
  return cell_bytes(record.bytes(), Tree::index) + row.names_bytes;
}

std::uint64_t region_row_bytes(const RegionRow& row) {
  const auto text = [](RecordSize& record, const TextRef& ref) -> RecordSize& {
    return ref.present ? record.text(ref.size) : record.null();
  };
  RecordSize record;
  record.integer(row.session).integer(row.seq).integer(row.thread).integer(row.nesting).integer(row.category).integer(
      row.label);
  text(record, row.msg).integer(row.repo).real(row.t_start).real(row.elapsed).integer(row.parent_seq).integer(
      row.leave_seq);
  text(text(text(record, row.thread_text), row.category_text), row.label_text);
  return cell_bytes(record.bytes(), Tree::index) + row.names_bytes;
}

std::uint64_t child_row_bytes(const stitch::ChildRecord& c) {
  RecordSize record;
  record.integer(c.session)
      .integer(c.child_id)
      .integer(c.start_seq)
      .text(c.child_class)
      .text(c.hook_name)
      .text(c.argv)
      .text(c.argv_key)
      .integer(c.use_shell ? std::optional<std::int64_t>(*c.use_shell ? 1 : 0) : std::nullopt)
      .text(c.cd)
      .integer(c.start_us)
      .real(c.t_start)
      .integer(c.pid)
      .integer(c.code)
      .text(c.ready)
      .real(c.elapsed)
      .integer(c.end_us)
      .integer(c.end_seq);
  std::uint64_t bytes = cell_bytes(record.bytes(), Tree::index);
  // child_store_pid (session, pid) and child_store_start (session, start_us),
  // each with the primary key.
  RecordSize by_pid;
  by_pid.integer(c.session).integer(c.pid).integer(c.session).integer(c.child_id);
  RecordSize by_start;
  by_start.integer(c.session).integer(c.start_us).integer(c.session).integer(c.child_id);
  return bytes + cell_bytes(by_pid.bytes(), Tree::index) + cell_bytes(by_start.bytes(), Tree::index);
}

std::uint64_t name_row_bytes(std::string_view text) {
  RecordSize row;
  row.null().text(text.size());  // the id is the rowid: NULL in the record
  RecordSize by_text;
  by_text.text(text.size()).integer(k_typical_rowid);
  return cell_bytes(row.bytes(), Tree::table) + cell_bytes(by_text.bytes(), Tree::index);
}

}  // namespace trace2d::store
