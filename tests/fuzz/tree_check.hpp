#pragma once
// The second half of fuzz_stitcher: whatever the stitcher stored, trace2ctl's
// process-tree model must load it and every renderer draw it (issue 10: one
// crafted session broke `tree`, `export` and `report` for everyone).

#include "db/sqlite.hpp"

namespace trace2d::fuzz {

// For every session's SID and every SID prefix above one: loads the tree as
// `tree`, `export` and `report` do (with and without a depth limit, region
// depth and minimum-length filters) and renders it as text, JSON, a Chrome
// trace, a flame layout and an HTML report. Aborts with "invariant broken"
// when a promise does not hold:
//   - every session, region and child_start loaded is in the tree, once,
//     and no tree is deeper than model::k_max_tree_depth;
//   - the text is one line per node, valid UTF-8, without control characters
//     (C0, DEL, C1);
//   - the JSON and the Chrome trace are valid JSON (RFC 8259);
//   - every flame bar is finite, starts before it ends and sits on a row of
//     the layout.
void check_process_trees(db::Database& db);

}  // namespace trace2d::fuzz
