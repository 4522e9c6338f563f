// GIT_TRACE2_EVENT / trace2.eventTarget values read as git reads them
// (trace2/tr2_dst.c), for trace2ctl doctor.

#include <gtest/gtest.h>

#include "ctl/doctor/trace_target.hpp"

namespace trace2d::ctl::doctor {
namespace {

using Kind = TraceTarget::Kind;
using SocketType = TraceTarget::SocketType;

TEST(TraceTarget, OffStandardErrorAndDescriptors) {
  for (const char* off : {"", "0", "false", "FALSE"}) {
    EXPECT_EQ(parse_trace_target(off).kind, Kind::off) << off;
  }
  for (const char* err : {"1", "true", "True"}) {
    EXPECT_EQ(parse_trace_target(err).kind, Kind::standard_error) << err;
  }
  EXPECT_EQ(parse_trace_target("2").kind, Kind::descriptor);
  EXPECT_EQ(parse_trace_target("9").kind, Kind::descriptor);
  EXPECT_EQ(parse_trace_target("10").kind, Kind::invalid);
}

TEST(TraceTarget, SocketsWithAndWithoutTheirKind) {
  const TraceTarget any = parse_trace_target("af_unix:/run/trace2d/trace2d.sock");
  EXPECT_EQ(any.kind, Kind::socket);
  EXPECT_EQ(any.socket_type, SocketType::any);
  EXPECT_EQ(any.path, "/run/trace2d/trace2d.sock");
  const TraceTarget stream = parse_trace_target("af_unix:stream:/s");
  EXPECT_EQ(stream.socket_type, SocketType::stream);
  EXPECT_EQ(stream.path, "/s");
  EXPECT_EQ(parse_trace_target("af_unix:dgram:/d").socket_type, SocketType::dgram);
  const TraceTarget relative = parse_trace_target("af_unix:stream:run/t.sock");
  EXPECT_EQ(relative.kind, Kind::invalid);
  EXPECT_NE(relative.why.find("absolute path"), std::string::npos) << relative.why;
}

TEST(TraceTarget, PathsAndWhatGitCannotUse) {
  const TraceTarget dir = parse_trace_target("/var/log/git-trace2");
  EXPECT_EQ(dir.kind, Kind::path);
  EXPECT_EQ(dir.path, "/var/log/git-trace2");
  const TraceTarget relative = parse_trace_target("trace.json");
  EXPECT_EQ(relative.kind, Kind::invalid);
  EXPECT_NE(relative.why.find("traces nothing"), std::string::npos) << relative.why;
}

}  // namespace
}  // namespace trace2d::ctl::doctor
