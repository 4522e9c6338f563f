// What the fuzzers found, as readable tests: each input that crashed (or
// broke an invariant) written out as the lines it amounts to. The raw inputs
// are in regressions/<fuzzer>/ and are replayed by <fuzzer>_replay.

#include <gtest/gtest.h>

#include "proto/parser.hpp"
#include "tests/daemon/store_fixture.hpp"

namespace trace2d::test {
namespace {

// fuzz_stitcher, regressions/fuzz_stitcher/start-t_abs-1e308-overflows-process-start:
// the process start is the start event's time minus its t_abs; a t_abs too
// big for 64-bit microseconds (1e308, a 30-digit number) made llround()
// return LLONG_MIN and the subtraction overflow (UBSan: signed integer
// overflow in Stitcher::place). Such a t_abs is now ignored: the process
// starts at the first time seen, as when the start event has no t_abs.
TEST(FuzzRegressions, StartWithAHugeTAbsKeepsTheFirstTimeAsProcessStart) {
  const std::string time = "2026-11-21T12:00:00.000001Z";
  for (const std::string t_abs : {"1e308", "-1e308", "123456789012345678901234567890", "9.3e12"}) {
    SCOPED_TRACE(t_abs);
    TempDir dir;
    StorePipeline store(dir);
    const std::string sid = "huge-t_abs";
    const std::vector<std::string> rejects = store.ingest({
        R"({"event":"version","sid":")" + sid + R"(","thread":"main","time":")" + time +
            R"(","file":"common-main.c","line":50,"evt":"3","exe":"2.39.5"})",
        R"({"event":"start","sid":")" + sid + R"(","thread":"main","time":")" + time +
            R"(","file":"common-main.c","line":51,"t_abs":)" + t_abs + R"(,"argv":["git","status"]})",
        R"({"event":"region_enter","sid":")" + sid + R"(","thread":"main","time":")" + time +
            R"(","file":"read-cache.c","line":2443,"repo":1,"nesting":1,"category":"index","label":"do_read_index"})",
    });
    EXPECT_TRUE(rejects.empty());
    EXPECT_EQ(store.db().query_int("SELECT event_count FROM sessions"), 3);
    EXPECT_EQ(store.db().query_int("SELECT process_start_us FROM sessions"), proto::parse_utc_timestamp(time));
    EXPECT_EQ(store.db().query_text("SELECT argv FROM sessions"), R"(["git","status"])");
    EXPECT_EQ(store.db().query_int("SELECT t_start = 0 FROM regions"), 1);
  }
}

// The same rule keeps an ordinary t_abs: the process started that long
// before the start event.
TEST(FuzzRegressions, StartWithAnOrdinaryTAbsSetsTheProcessStart) {
  TempDir dir;
  StorePipeline store(dir);
  store.ingest({R"({"event":"start","sid":"ok","thread":"main","time":"2026-11-21T12:00:01.000000Z","t_abs":0.25,"argv":["git"]})"});
  EXPECT_EQ(store.db().query_int("SELECT process_start_us FROM sessions"),
            *proto::parse_utc_timestamp("2026-11-21T12:00:00.750000Z"));
}

// fuzz_framer_parser, regressions/fuzz_framer_parser/bad-key-after-a-field-throws:
// reading keys in place (a parser speed-up) converted field.key().raw() to
// a pointer without checking it, so a broken object after its first field
// threw simdjson_error out of Parser::parse() and ended the daemon. Each is
// a reject, with the pointer and without it (the copy path).
TEST(FuzzRegressions, ABrokenObjectAfterItsFirstFieldIsARejectNotAnException) {
  const std::string lines[] = {
      std::string("{\"\"\x03\xb0\x88" "b}"),  // the input the fuzzer found
      R"({"event":"version","sid":"s","exe":"x",})",
      R"({"event":"version" "sid":"s"})",
      R"({"event":"version","sid":"s",1:2})",
      R"({"event":"version",,"sid":"s"})",
      R"({"event":"version","sid":"s",:"x"})",
  };
  proto::Parser parser;
  proto::Event event;
  for (const std::string& line : lines) {
    SCOPED_TRACE(line);
    for (const std::size_t readable_after : {std::size_t{0}, proto::Parser::padding_bytes()}) {
      std::string buffer = line + std::string(proto::Parser::padding_bytes(), '\0');
      const proto::ParseOutcome outcome =
          parser.parse(std::string_view(buffer.data(), line.size()), readable_after, event);
      EXPECT_FALSE(outcome.ok);
      EXPECT_EQ(outcome.reject_reason.substr(0, 8), "not JSON") << outcome.reject_reason;
    }
  }
}

}  // namespace
}  // namespace trace2d::test
