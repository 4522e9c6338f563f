// The exporter's parts that need no collector: endpoints, the OTel
// variables, gzip.

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdlib>

#include "daemon/app/options.hpp"
#include "daemon/export/gzip.hpp"
#include "daemon/export/http_client.hpp"

namespace trace2d::exporter {
namespace {

TEST(Endpoint, HttpUrlsWithHostPortAndPath) {
  std::string error;
  auto e = parse_endpoint("http://collector.example:4318/v1/traces", error);
  ASSERT_TRUE(e) << error;
  EXPECT_EQ(e->host, "collector.example");
  EXPECT_EQ(e->port, "4318");
  EXPECT_EQ(e->target, "/v1/traces");
  e = parse_endpoint("http://[::1]:9000", error);
  ASSERT_TRUE(e) << error;
  EXPECT_EQ(e->host, "::1");
  EXPECT_EQ(e->port, "9000");
  EXPECT_EQ(e->target, "/");
  e = parse_endpoint("http://localhost", error);
  ASSERT_TRUE(e) << error;
  EXPECT_EQ(e->port, "80");

  e = parse_endpoint("https://collector.example/otlp/v1/traces", error);
  ASSERT_TRUE(e) << error;
  EXPECT_TRUE(e->tls);
  EXPECT_EQ(e->port, "443");
  EXPECT_EQ(e->target, "/otlp/v1/traces");
  EXPECT_FALSE(parse_endpoint("ftp://collector:4318", error));
  EXPECT_NE(error.find("https://"), std::string::npos) << error;
  EXPECT_FALSE(parse_endpoint("collector:4318", error));
  EXPECT_FALSE(parse_endpoint("http://:4318/", error));
  EXPECT_FALSE(parse_endpoint("http://host:99999/", error));
  EXPECT_FALSE(parse_endpoint("http://host:12ab/", error));
}

TEST(Endpoint, TheTracesPathIsAppendedToABase) {
  EXPECT_EQ(app::otlp_traces_url("http://c:4318"), "http://c:4318/v1/traces");
  EXPECT_EQ(app::otlp_traces_url("http://c:4318/"), "http://c:4318/v1/traces");
  EXPECT_EQ(app::otlp_traces_url("http://c:4318/otlp"), "http://c:4318/otlp/v1/traces");
  EXPECT_EQ(app::otlp_traces_url("http://c:4318/v1/traces"), "http://c:4318/v1/traces");
}

class OtelEnvironment : public ::testing::Test {
 protected:
  void TearDown() override {
    for (const char* name : {"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                             "OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_COMPRESSION",
                             "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TIMEOUT"}) {
      ::unsetenv(name);
    }
  }
};

TEST_F(OtelEnvironment, TheSdkVariablesAreDefaults) {
  app::DaemonOptions options;
  app::apply_otel_environment(options);
  EXPECT_EQ(options.otlp_endpoint, "");  // nothing set: no export

  ::setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://base:4318", 1);
  ::setenv("OTEL_EXPORTER_OTLP_HEADERS", "api-key=s%3Dcret,x-team=git,broken", 1);
  ::setenv("OTEL_EXPORTER_OTLP_COMPRESSION", "gzip", 1);
  ::setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json", 1);
  ::setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "2500", 1);
  app::apply_otel_environment(options);
  EXPECT_EQ(options.otlp_endpoint, "http://base:4318");
  EXPECT_EQ(options.otlp_headers, (std::vector<std::string>{"api-key=s=cret", "x-team=git"}));
  EXPECT_EQ(options.otlp_compression, "gzip");
  EXPECT_EQ(options.otlp_protocol, "http/json");
  EXPECT_EQ(options.otlp_timeout, std::chrono::milliseconds(2500));

  ::setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://traces:4318/v1/traces", 1);
  app::apply_otel_environment(options);
  EXPECT_EQ(options.otlp_endpoint, "http://traces:4318/v1/traces");  // the traces variable wins
}

TEST(Gzip, InflatesBackToTheInput) {
  std::string input;
  for (int i = 0; i < 10000; ++i) {
    input += "span " + std::to_string(i) + " ";
  }
  const std::string packed = gzip(input);
  ASSERT_GT(packed.size(), 18u);
  EXPECT_EQ(static_cast<unsigned char>(packed[0]), 0x1f);  // gzip's magic
  EXPECT_EQ(static_cast<unsigned char>(packed[1]), 0x8b);
  EXPECT_LT(packed.size(), input.size() / 4);

  z_stream z{};
  ASSERT_EQ(inflateInit2(&z, 15 + 16), Z_OK);
  std::string output(input.size() + 16, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(packed.data()));
  z.avail_in = static_cast<uInt>(packed.size());
  z.next_out = reinterpret_cast<Bytef*>(output.data());
  z.avail_out = static_cast<uInt>(output.size());
  EXPECT_EQ(inflate(&z, Z_FINISH), Z_STREAM_END);
  output.resize(output.size() - z.avail_out);
  inflateEnd(&z);
  EXPECT_EQ(output, input);
}

}  // namespace
}  // namespace trace2d::exporter
