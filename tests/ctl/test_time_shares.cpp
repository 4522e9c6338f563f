// A report's optional parts within their share of --timeout: one that runs
// out of its share is left out, named, and the command goes on with the
// time left; the command's own limit still ends it.

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "ctl/query/database.hpp"
#include "ctl/query/time_shares.hpp"
#include "db/sqlite.hpp"

namespace trace2d::ctl {
namespace {

// Counts for ever: only the progress handler's deadline stops it.
constexpr const char* k_endless =
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c";

db::Database limited_database(std::chrono::milliseconds timeout) {
  db::Database db(":memory:", db::OpenMode::read_write_create);
  limit_query_time(db, timeout);  // as open_database() does
  return db;
}

TEST(TimeShares, APartPastItsShareIsLeftOutAndTheRestGoesOn) {
  const auto timeout = std::chrono::milliseconds(600);
  db::Database db = limited_database(timeout);
  TimeShares shares(db, timeout);
  const auto started = std::chrono::steady_clock::now();
  const std::string left_out = shares.run("advice", [&] { db.exec(k_endless); });
  const auto took = std::chrono::steady_clock::now() - started;
  EXPECT_NE(left_out.find("Left out"), std::string::npos) << left_out;
  EXPECT_NE(left_out.find("`trace2ctl advice` alone"), std::string::npos) << left_out;
  EXPECT_NE(left_out.find("--timeout"), std::string::npos) << left_out;
  // Half of the time, not all of it: the page still has time for the rest.
  EXPECT_LT(took, std::chrono::milliseconds(500));
  EXPECT_NO_THROW(db.exec("SELECT 1"));
  // A part that fits is not left out.
  EXPECT_EQ(shares.run("compare", [&] { db.exec("SELECT 1"); }), "");
}

TEST(TimeShares, TheCommandsOwnLimitStillEndsIt) {
  const auto timeout = std::chrono::milliseconds(200);
  db::Database db = limited_database(timeout);
  TimeShares shares(db, timeout);
  // The parts take their halves of what is left; what remains of the
  // command then ends the next long query, as the command's limit (a part
  // that overran into it, on a busy machine, is stopped by it too).
  try {
    (void)shares.run("compare", [&] { db.exec(k_endless); });
    (void)shares.run("advice", [&] { db.exec(k_endless); });
    db.exec(k_endless);
    FAIL() << "the endless query ran to its end";
  } catch (const db::SqliteError& e) {
    EXPECT_TRUE(is_query_timeout(e)) << e.what();
  }
}

TEST(TimeShares, NoLimitMeansNothingIsLeftOut) {
  db::Database db = limited_database(std::chrono::milliseconds::zero());
  TimeShares shares(db, std::chrono::milliseconds::zero());
  int runs = 0;
  EXPECT_EQ(shares.run("advice", [&] { ++runs; db.exec("SELECT 1"); }), "");
  EXPECT_EQ(runs, 1);
}

}  // namespace
}  // namespace trace2d::ctl
