#pragma once
// The real git traces of tests/data/traces, loaded into a database by the
// real `trace2d import` (the daemon's own pipeline: sessions, regions,
// children), once per test program; plus golden-file comparison.

#include <string>

namespace trace2d::test {

// SIDs in tests/data/traces.
inline constexpr const char* k_fetch_sid = "20261122T000429.651221Z-H0a7c9cdf-P0000150a";
inline constexpr const char* k_upload_pack_sid =
    "20261122T000429.651221Z-H0a7c9cdf-P0000150a/20261122T000429.654516Z-H0a7c9cdf-P0000150c";
inline constexpr const char* k_commit_sid = "20261122T000429.772514Z-H0a7c9cdf-P0000154a";
inline constexpr const char* k_shell_alias_sid = "20261122T000429.698511Z-H0a7c9cdf-P00001521";
inline constexpr const char* k_clone_sid = "20261122T000429.918836Z-H0a7c9cdf-P000015a3";
inline constexpr const char* k_parent_sid_prefix = "ci-job 42";

// Path of the database; imported on first use, removed at exit.
[[nodiscard]] const std::string& imported_traces_db();

// Compares `actual` with tests/ctl/golden/<name>; with TRACE2D_UPDATE_GOLDEN=1
// in the environment, rewrites the file instead (then review the diff).
void expect_golden(const std::string& actual, const std::string& name);

}  // namespace trace2d::test
