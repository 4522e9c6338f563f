// Which proxy the exporter goes through: the variables' conventions
// (curl's and Go's), NO_PROXY's forms, and the proxy URL's.

#include <gtest/gtest.h>

#include <stdexcept>

#include "daemon/export/proxy.hpp"

namespace trace2d::exporter {
namespace {

Endpoint endpoint(const std::string& url) {
  std::string error;
  const auto e = parse_endpoint(url, error);
  EXPECT_TRUE(e.has_value()) << error;
  return e.value_or(Endpoint{});
}

TEST(NoProxy, NamesAHostAndEveryNameUnderIt) {
  EXPECT_TRUE(bypasses_proxy("collector.example.com", "4318", "example.com"));
  EXPECT_TRUE(bypasses_proxy("example.com", "4318", "example.com"));
  EXPECT_TRUE(bypasses_proxy("collector.example.com", "4318", ".example.com"));
  EXPECT_TRUE(bypasses_proxy("collector.example.com", "4318", "*.example.com"));
  EXPECT_TRUE(bypasses_proxy("Collector.EXAMPLE.com", "4318", "example.COM"));
  EXPECT_FALSE(bypasses_proxy("notexample.com", "4318", "example.com")) << "a suffix is not a domain";
  EXPECT_FALSE(bypasses_proxy("example.com.evil", "4318", "example.com"));
  EXPECT_FALSE(bypasses_proxy("collector.example.com", "4318", ""));
}

TEST(NoProxy, ListsTrimsAndStarsAll) {
  EXPECT_TRUE(bypasses_proxy("b.internal", "80", "a.internal, b.internal ,c"));
  EXPECT_FALSE(bypasses_proxy("d.internal", "80", "a.internal, b.internal ,c"));
  EXPECT_TRUE(bypasses_proxy("anything", "80", "*"));
  EXPECT_FALSE(bypasses_proxy("anything", "80", ",,"));
}

TEST(NoProxy, AddressesAndBlocks) {
  EXPECT_TRUE(bypasses_proxy("127.0.0.1", "4318", "127.0.0.1"));
  EXPECT_TRUE(bypasses_proxy("10.1.2.3", "4318", "10.0.0.0/8"));
  EXPECT_FALSE(bypasses_proxy("11.1.2.3", "4318", "10.0.0.0/8"));
  EXPECT_TRUE(bypasses_proxy("192.168.7.9", "4318", "192.168.4.0/22"));
  EXPECT_FALSE(bypasses_proxy("192.168.8.1", "4318", "192.168.4.0/22"));
  EXPECT_TRUE(bypasses_proxy("::1", "4318", "::1"));
  EXPECT_TRUE(bypasses_proxy("fd00::5", "4318", "fd00::/8"));
  EXPECT_FALSE(bypasses_proxy("fe80::5", "4318", "fd00::/8"));
  EXPECT_FALSE(bypasses_proxy("10.1.2.3", "4318", "10.0.0.0/33")) << "no such block";
  EXPECT_FALSE(bypasses_proxy("10.1.2.3", "4318", "example.com")) << "an address is not under a name";
}

TEST(NoProxy, APortNarrowsTheEntry) {
  EXPECT_TRUE(bypasses_proxy("collector", "4318", "collector:4318"));
  EXPECT_FALSE(bypasses_proxy("collector", "443", "collector:4318"));
  EXPECT_TRUE(bypasses_proxy("::1", "4318", "[::1]:4318"));
  EXPECT_FALSE(bypasses_proxy("::1", "4319", "[::1]:4318"));
}

TEST(ProxyUrl, HostPortAndCredentials) {
  std::string error;
  auto p = parse_proxy("http://proxy.example.com:3128", error);
  ASSERT_TRUE(p) << error;
  EXPECT_EQ(p->address(), "proxy.example.com:3128");
  EXPECT_EQ(p->authorization, "");
  p = parse_proxy("proxy:8080/", error);
  ASSERT_TRUE(p) << error;
  EXPECT_EQ(p->address(), "proxy:8080");
  p = parse_proxy("http://proxy", error);
  ASSERT_TRUE(p) << error;
  EXPECT_EQ(p->port, "80");
  // RFC 7617's example: "Aladdin:open sesame", the space percent-encoded.
  p = parse_proxy("http://Aladdin:open%20sesame@proxy:3128", error);
  ASSERT_TRUE(p) << error;
  EXPECT_EQ(p->address(), "proxy:3128");
  EXPECT_EQ(p->authorization, "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==");
  p = parse_proxy("http://a@b:c@proxy:1", error);  // the last @ ends the credentials
  ASSERT_TRUE(p) << error;
  EXPECT_EQ(p->authorization, "Basic YUBiOmM=");
}

TEST(ProxyUrl, WhatItCannotUseIsRefusedWithAReason) {
  std::string error;
  EXPECT_FALSE(parse_proxy("https://proxy:3128", error));
  EXPECT_NE(error.find("only http://"), std::string::npos) << error;
  EXPECT_FALSE(parse_proxy("socks5://proxy:1080", error));
  EXPECT_FALSE(parse_proxy("http://proxy:3128/path", error));
  EXPECT_NE(error.find("no path"), std::string::npos) << error;
  EXPECT_FALSE(parse_proxy("http://proxy:99999", error));
  EXPECT_FALSE(parse_proxy("http://:3128", error));
}

TEST(ProxyFor, TheSchemesVariableUnlessNoProxyNamesTheHost) {
  ProxyEnvironment env;
  env.http_proxy = "http://plain-proxy:3128";
  env.https_proxy = "http://tls-proxy:3129";
  env.no_proxy = "internal.example.com";
  auto p = proxy_for(endpoint("http://collector.example.com:4318/v1/traces"), env);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->address(), "plain-proxy:3128");
  p = proxy_for(endpoint("https://collector.example.com:4318/v1/traces"), env);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->address(), "tls-proxy:3129");
  EXPECT_FALSE(proxy_for(endpoint("https://otel.internal.example.com/v1/traces"), env));
  env.https_proxy.clear();
  EXPECT_FALSE(proxy_for(endpoint("https://collector.example.com:4318/v1/traces"), env)) << "http_proxy is for http://";
}

TEST(ProxyFor, LoopbackIsNeverProxied) {
  ProxyEnvironment env;
  env.http_proxy = "http://proxy:3128";
  for (const char* url : {"http://127.0.0.1:4318", "http://127.9.9.9:4318", "http://[::1]:4318", "http://localhost:4318",
                          "http://LocalHost:4318"}) {
    EXPECT_FALSE(proxy_for(endpoint(url), env)) << url;
  }
  EXPECT_TRUE(proxy_for(endpoint("http://128.0.0.1:4318"), env));
  EXPECT_TRUE(proxy_for(endpoint("http://localhost.example.com:4318"), env));
}

TEST(ProxyFor, ABadProxyNamesItsVariableAndNotItsPassword) {
  ProxyEnvironment env;
  env.https_proxy = "https://user:secret@proxy:3128";
  env.https_source = "https_proxy";
  try {
    (void)proxy_for(endpoint("https://collector:4318/v1/traces"), env);
    FAIL() << "accepted";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("https_proxy: only http://"), std::string::npos) << what;
    EXPECT_EQ(what.find("secret"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace trace2d::exporter
