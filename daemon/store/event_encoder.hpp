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

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "daemon/stitch/stitcher.hpp"
#include "daemon/store/name_table.hpp"
#include "daemon/store/write_batch.hpp"
#include "proto/event.hpp"

namespace trace2d::store {

class EventEncoder {
 public:
  explicit EventEncoder(NameTable& names) : m_names(names) {}

  // `original` is the line exactly as received (it differs from event.json
  // when invalid UTF-8 was repaired).
  void encode(const proto::Event& event, std::string_view original, const stitch::Placement& placement,
              WriteBatch& batch);

  // What the stitcher paired, into rows of the same batch.
  void encode(stitch::StitchChanges&& changes, WriteBatch& batch);

 private:
  NameTable& m_names;
  std::string m_quote_scratch;  // a string that needs escaping, quoted for comparison
};

}  // namespace trace2d::store
