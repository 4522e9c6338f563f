#pragma once
// How one export request reaches the collector: OTLP/HTTP
// (otlp_http_transport.hpp) or OTLP/gRPC (otlp_grpc_transport.hpp). The
// exporter builds and encodes the request, sends it through a transport on
// its own thread, and judges the answer (delivery_policy.hpp) the same way
// whatever the protocol: a transport only says what came back.

#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "daemon/export/delivery_policy.hpp"

namespace trace2d::exporter {

// No answer came: a connection failure, a failed TLS handshake, a timeout,
// or the transport was aborted. Worth retrying.
class TransportError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct CollectorAnswer {
  Answer answer = Answer::not_now;
  std::string status;  // as the log says it: "HTTP 503", "gRPC UNAVAILABLE"
  std::string hint;    // what to check ("": nothing more than the status)
  std::string said;    // what the collector said with it, at most 200 bytes
  std::optional<std::chrono::milliseconds> retry_after;  // Retry-After, gRPC RetryInfo
  std::int64_t rejected_spans = 0;                       // partial_success of an accepted request
};

// The request's encoding: what the exporter writes for a transport.
enum class Encoding { protobuf, json };

class Transport {
 public:
  virtual ~Transport() = default;

  [[nodiscard]] virtual Encoding encoding() const = 0;
  // Sends one encoded ExportTraceServiceRequest and waits for the answer
  // (bounded by the request timeout). `body` may be moved from and back,
  // so that its memory serves the caller's next request. Throws
  // TransportError when no answer came.
  virtual CollectorAnswer send(std::string& body) = 0;
  // From another thread: ends a send() in progress at once; later sends
  // fail at once.
  virtual void abort() = 0;
};

}  // namespace trace2d::exporter
