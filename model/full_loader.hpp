#pragma once
// What a session needs in full: its regions, children and threads, and
// what `options` ask for; of one session, or of many in one execution of
// each query (Sessions::many).
// Regions and children come from their stores, the other events from one
// scan, parsed with simdjson, giving what the documented views give.
// Internal to model/.

#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "db/sqlite.hpp"
#include "model/loader_sql.hpp"
#include "model/process_tree.hpp"
#include "model/tree_loader.hpp"

namespace trace2d::model::loading {

class FullLoader {
 public:
  FullLoader(db::Database& db, const LoadOptions& options, Sessions sessions = Sessions::one);
  ~FullLoader();
  FullLoader(const FullLoader&) = delete;
  FullLoader& operator=(const FullLoader&) = delete;

  void load(ProcessRows& rows);
  // Sessions::many: all of `rows` at once; Sessions::one: one after the other.
  // Of each, only its regions, children and events that began before event
  // `before_seq` (the exporter's slice of a huge session).
  void load(const std::vector<ProcessRows*>& rows, std::int64_t before_seq = std::numeric_limits<std::int64_t>::max());

 private:
  class Impl;
  std::unique_ptr<Impl> m_impl;
};

}  // namespace trace2d::model::loading
