#pragma once
// The SQL both loaders build on (tree_loader.cpp's load_process_rows,
// export_row_loader.cpp's ExportRowLoader, and full_loader.cpp under both):
// the sessions' rows, and how a query names the sessions it reads.
// Internal to model/.

#include <cstdint>
#include <string>
#include <string_view>

namespace trace2d::model::loading {

// An ancestor's last event is not needed (it sends no span now), and
// finding it reads every event of the session; a session loaded in full
// finds it with k_last_event_sql, reading only the events' times.
enum class LastEvent : std::uint8_t { wanted, not_wanted };

// The columns read_process() reads (row_readers.hpp), then `where` ("FROM
// sessions WHERE ...").
[[nodiscard]] std::string sessions_sql(std::string_view where, LastEvent last_event);

// The queries above read one session ({sid}: = ?1, its SID; {id}: = ?1,
// its id; {session}: ?2, its id), or, for the exporter, every session of a
// JSON array of SIDs or ids at once (?1): one execution for a round's
// sessions instead of one each. FullLoader's (by id) give the row's session
// id in their last column, and read only what began before event ?2 (the
// exporter's slice of a huge session, ExportSession::before_seq; else all).
enum class Sessions : std::uint8_t { one, many };

// `text` with its placeholders ({sid}, {id}, {session}, {exec_types},
// {scanned_types}, {leading_columns}) filled for `sessions`.
[[nodiscard]] std::string query(std::string_view text, Sessions sessions);

}  // namespace trace2d::model::loading
