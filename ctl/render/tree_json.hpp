#pragma once
// `trace2ctl tree --json`: the tree as one JSON document (see
// docs/reports.md for the shape). Times in seconds, as in the database.

#include <string>

#include "model/process_tree.hpp"

namespace trace2d::ctl::render {

void append_tree_json(std::string& out, const model::ProcessTree& tree);

}  // namespace trace2d::ctl::render
