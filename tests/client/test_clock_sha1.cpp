// The client's own encoders: SHA-1 and the host part of SIDs (checked
// against the real git on this host), times and numbers (checked against
// proto/ and printf).

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <random>
#include <regex>

#include "client/src/clock.hpp"
#include "client/src/session_id.hpp"
#include "proto/timestamp.hpp"
#include "tests/client/client_support.hpp"

namespace trace2d::client::detail {
namespace {

TEST(ClientSha1, KnownVectors) {
  EXPECT_EQ(sha1_hex(""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
  EXPECT_EQ(sha1_hex("abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
  EXPECT_EQ(sha1_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
  EXPECT_EQ(sha1_hex(std::string(1000000, 'a')), "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
  // Lengths around the padding boundaries (python3 hashlib).
  EXPECT_EQ(sha1_hex(std::string(55, 'x')), "cef734ba81a024479e09eb5a75b6ddae62e6abf1");
  EXPECT_EQ(sha1_hex(std::string(56, 'x')), "901305367c259952f4e7af8323f480d59f81335b");
  EXPECT_EQ(sha1_hex(std::string(63, 'x')), "0ddc4e0cccd9a12850deb5abb0853a4425559fec");
  EXPECT_EQ(sha1_hex(std::string(64, 'x')), "bb2fa3ee7afb9f54c6dfb5d021f14b1ffe40c163");
  EXPECT_EQ(sha1_hex(std::string(65, 'x')), "78c741ddc482e4cdf8c474a0876347a0905b6233");
}

TEST(ClientSid, HostComponentEqualsGitsOnThisHost) {
  test::TempDir dir;
  const std::string trace = dir.file("git.jsonl");
  test::ProcessSpec spec;
  spec.argv = {"git", "version"};
  spec.env = {{"GIT_TRACE2_EVENT", trace},
              {"GIT_CONFIG_NOSYSTEM", "1"},
              {"GIT_CONFIG_GLOBAL", "/dev/null"}};
  spec.unset_env = {"GIT_TRACE2_PARENT_SID", "GIT_TRACE2_EVENT_BRIEF"};
  ASSERT_EQ(test::run_process(spec).exit_code, 0);
  const auto lines = test::read_lines(trace);
  ASSERT_FALSE(lines.empty());
  const std::string git_sid = test::string_field(lines[0], "sid");
  const auto h = git_sid.find("-H");
  ASSERT_NE(h, std::string::npos) << git_sid;
  EXPECT_EQ(host_component(), git_sid.substr(h + 1, 9));
}

TEST(ClientSid, ComponentHasGitsFormat) {
  // 2026-11-21T23:51:01.565577Z, pid 0x9e9
  const std::string own = sid_component(1795305061565577, 0x9e9, "H0a7c9cdf");
  EXPECT_EQ(own, "20261121T235101.565577Z-H0a7c9cdf-P000009e9");
  EXPECT_EQ(make_sid("", own), own);
  EXPECT_EQ(make_sid("ci-job 42/step 7", own), "ci-job 42/step 7/" + own);
  EXPECT_EQ(host_component("vm"), "H0a7c9cdf");
}

TEST(ClientClock, TimesMatchProtoFormatting) {
  std::mt19937_64 random(42);
  std::uniform_int_distribution<std::int64_t> any(0, 253402300799999999);
  for (int i = 0; i < 10000; ++i) {
    const std::int64_t us = i == 0 ? 0 : any(random);
    char text[k_time_extended_len];
    format_time_extended(text, us);
    ASSERT_EQ(std::string(text, sizeof text), proto::format_utc_timestamp(us)) << us;
  }
  char compact[k_time_compact_len];
  format_time_compact(compact, 1795305061565577);
  EXPECT_EQ(std::string(compact, sizeof compact), "20261121T235101.565577Z");
}

TEST(ClientClock, SecondsMatchPrintfSixDecimals) {
  std::mt19937_64 random(7);
  std::uniform_int_distribution<std::int64_t> any(0, std::int64_t{1} << 45);
  for (int i = 0; i < 10000; ++i) {
    const std::int64_t us = i < 3 ? i : any(random);
    char ours[32];
    char theirs[64];
    std::snprintf(theirs, sizeof theirs, "%.6f", static_cast<double>(us) / 1000000.0);
    ASSERT_EQ(std::string(ours, format_seconds(ours, us)), theirs) << us;
  }
  char digits[24];
  EXPECT_EQ(std::string(digits, format_int(digits, INT64_MIN)), "-9223372036854775808");
  EXPECT_EQ(std::string(digits, format_int(digits, -42)), "-42");
  EXPECT_EQ(std::string(digits, format_int(digits, 0)), "0");
}

TEST(ClientClock, ClocksMove) {
  const std::int64_t a = mono_us();
  ::usleep(2000);
  EXPECT_GE(mono_us() - a, 2000);
  EXPECT_NEAR(static_cast<double>(real_us()), static_cast<double>(proto::unix_now_us()), 1e6);
}

}  // namespace
}  // namespace trace2d::client::detail
