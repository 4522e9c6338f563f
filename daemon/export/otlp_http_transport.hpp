#pragma once
// OTLP/HTTP (docs/otlp.md): each request POSTed to the traces URL as
// application/x-protobuf or application/json, gzip optional, through
// HttpClient; the answer's status, Retry-After and partial_success read
// back for the exporter.

#include <chrono>
#include <string>

#include "daemon/export/http_client.hpp"
#include "daemon/export/transport.hpp"

namespace trace2d::exporter {

struct HttpTransportOptions {
  std::string url;  // the traces URL, as POSTed to ("http://host:4318/v1/traces")
  Encoding encoding = Encoding::protobuf;
  bool gzip = false;
  std::chrono::milliseconds timeout{10000};
  HttpClient::Headers headers;  // extra headers ("Authorization", ...)
  TlsFiles tls;                 // for https
  std::optional<Proxy> proxy;   // the HTTP proxy the environment names for the endpoint (proxy.hpp)
};

class OtlpHttpTransport final : public Transport {
 public:
  // Throws std::invalid_argument for a URL or TLS file it cannot use.
  explicit OtlpHttpTransport(HttpTransportOptions options);

  [[nodiscard]] Encoding encoding() const override { return m_options.encoding; }
  CollectorAnswer send(std::string& body) override;
  void abort() override { m_client.abort(); }

 private:
  HttpTransportOptions m_options;
  HttpClient m_client;
};

}  // namespace trace2d::exporter
