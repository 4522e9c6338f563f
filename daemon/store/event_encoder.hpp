#pragma once
// Turns a parsed event into its compact `event_store` row.
//
// The stored form is db/event_codec.hpp's: the members git writes first
// go into columns, the rest of the line is kept verbatim as `body`, and the
// views give back git's exact text; a line whose text they would not give
// back byte for byte is stored whole. The encoder adds what the form does
// not know: names interned per sender, the time relative to the session's
// time base, the original bytes of a repaired line, the cost in pages.
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
  NameTable& m_names;
  std::string m_quote_scratch;  // a string that needs escaping, quoted for comparison
  // The sender of each session encoded since the last changes: whom the
  // names of its regions are charged to.
  std::unordered_map<std::int64_t, std::optional<std::int64_t>> m_session_uids;
  std::int64_t m_last_session = 0;  // the last one entered there (0: none since cleared)
  std::optional<std::int64_t> m_last_uid;
};

}  // namespace trace2d::store
