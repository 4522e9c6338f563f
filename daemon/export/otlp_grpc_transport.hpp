#pragma once
// OTLP/gRPC (docs/otlp.md): each request sent as the unary call
// /opentelemetry.proto.collector.trace.v1.TraceService/Export through
// grpc++'s GenericStub, whose message is the very bytes of
// otlp/otlp_protobuf.cpp: no generated code. Plaintext for http://, TLS for
// https://; the headers go as metadata, gzip as gRPC's message compression,
// the timeout as the call's deadline. The answer's status (and a RetryInfo
// in its details) and the response's partial_success are read back for the
// exporter. gRPC's headers stay in the .cpp.

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "daemon/export/http_client.hpp"
#include "daemon/export/transport.hpp"

namespace trace2d::exporter {

// The method every OTLP trace request calls (opentelemetry-proto's
// collector/trace/v1/trace_service.proto).
inline constexpr const char* k_grpc_export_method = "/opentelemetry.proto.collector.trace.v1.TraceService/Export";
// The port of an endpoint that names none (the OTLP specification's default
// for gRPC).
inline constexpr const char* k_grpc_default_port = "4317";

// Why a header cannot go as gRPC metadata ("" when it can): a name of
// letters, digits, '-', '_' and '.' (sent in lower case), not grpc-*; a
// value of printable ASCII unless the name ends in -bin (binary).
[[nodiscard]] std::string grpc_metadata_problem(const std::string& name, const std::string& value);

struct GrpcTransportOptions {
  std::string url;  // "http://host:4317" (plaintext) or "https://host:4317" (TLS); a path is not used
  bool gzip = false;
  std::chrono::milliseconds timeout{10000};
  std::vector<std::pair<std::string, std::string>> headers;  // sent as metadata, names in lower case
  TlsFiles tls;                                              // for https
  // gRPC reconnects on its own after a failed connection, with a backoff:
  // at most this (the exporter's own), so that a collector that is back
  // is seen by the exporter's next attempt.
  std::chrono::milliseconds max_backoff{60000};
  std::string user_agent = "trace2d";
};

class OtlpGrpcTransport final : public Transport {
 public:
  // Throws std::invalid_argument for a URL, a header or a TLS file it
  // cannot use.
  explicit OtlpGrpcTransport(GrpcTransportOptions options);
  ~OtlpGrpcTransport() override;
  OtlpGrpcTransport(const OtlpGrpcTransport&) = delete;
  OtlpGrpcTransport& operator=(const OtlpGrpcTransport&) = delete;

  [[nodiscard]] Encoding encoding() const override { return Encoding::protobuf; }
  // Throws TransportError once aborted; any other failure is a gRPC status
  // (a connection refused is UNAVAILABLE, a timeout DEADLINE_EXCEEDED).
  CollectorAnswer send(std::string& body) override;
  void abort() override;

 private:
  struct Channel;
  GrpcTransportOptions m_options;
  std::unique_ptr<Channel> m_channel;
};

}  // namespace trace2d::exporter
