#pragma once
// Turns a parsed event into its compact `event_store` row.
//
// The common members git writes first (event, sid, thread, time, file, line)
// go into integer columns; the rest of the line is kept verbatim as `body`.
// The `events` view rebuilds the JSON by re-quoting the common members and
// appending the body, which gives back git's exact text. The encoder checks
// that promise for every event: when the rebuilt prefix would not match the
// line byte for byte (other key order, other spacing, escapes git does not
// use), the whole line is stored as `body` instead.
//
// Names are interned for the sender's uid (see NameTable): when one has no
// id (its sender is over its bound), the event is stored whole and a
// region keeps the text in its own columns.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "daemon/stitch/stitcher.hpp"
#include "daemon/store/name_table.hpp"
#include "daemon/store/write_batch.hpp"
#include "proto/event.hpp"

namespace trace2d::store {

class EventEncoder {
 public:
  explicit EventEncoder(NameTable& names) : m_names(names) {}

  // `original` is the line exactly as received (it differs from event.json
  // when invalid UTF-8 was repaired); `uid` its sender's, from the kernel
  // (nullopt: a trusted sender without one, such as `trace2d import`).
  void encode(const proto::Event& event, std::string_view original, const stitch::EventPlacement& placement,
              WriteBatch& batch, std::optional<std::int64_t> uid = std::nullopt);

  // What the stitcher paired, into rows of the same batch.
  void encode(const stitch::StitchChanges& changes, WriteBatch& batch);

 private:
  // Moves the leading members of `body` it can give back byte for byte
  // into `row`; returns what is left of the body.
  std::string_view take_leading_members(std::string_view body, EventRow& row, WriteBatch& batch,
                                         std::optional<std::int64_t> uid);

  NameTable& m_names;
  std::string m_quote_scratch;  // a string that needs escaping, quoted for comparison
  // The sender of each session encoded since the last changes: whom the
  // names of its regions are charged to.
  std::unordered_map<std::int64_t, std::optional<std::int64_t>> m_session_uids;
  std::int64_t m_last_session = 0;  // the last one entered there (0: none since cleared)
  std::optional<std::int64_t> m_last_uid;
};

}  // namespace trace2d::store
