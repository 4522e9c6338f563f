#pragma once
// A loopback OTLP/gRPC receiver for the tests, built on Debian's grpc++: a
// generic service (no generated code) that takes every call, records its
// method, metadata and request bytes, and answers as the test says: OK with
// an empty ExportTraceServiceResponse, or a chosen status (with a
// google.rpc.RetryInfo when asked), at once or late. Plaintext, or TLS
// with a certificate the test made (and then client certificates, when a
// CA for them is given).

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace grpc {
class AsyncGenericService;
class Server;
class ServerCompletionQueue;
}  // namespace grpc

namespace trace2d::test {

class GrpcReceiver {
 public:
  struct Options {
    int port = 0;  // 0: any free port
    // TLS when set (PEM text): the server's certificate and key, and the CA
    // its clients' certificates must be signed by ("": none asked for).
    std::optional<std::string> tls_cert;
    std::string tls_key;
    std::string client_ca;
    // The largest request taken (gRPC answers RESOURCE_EXHAUSTED past it);
    // 0: gRPC's default, 4 MiB.
    int max_receive_bytes = 0;
    // A receiver that does not take gzip (gRPC answers UNIMPLEMENTED to a
    // compressed message): proves a client compresses.
    bool refuse_gzip = false;
  };
  struct Call {
    std::string method;
    std::multimap<std::string, std::string> metadata;
    std::string body;  // the request's bytes, as decompressed by gRPC
    int code = 0;      // the status answered; k_not_answered when the client was gone
  };
  static constexpr int k_not_answered = -1;

  GrpcReceiver();
  explicit GrpcReceiver(Options options);
  ~GrpcReceiver();
  GrpcReceiver(const GrpcReceiver&) = delete;
  GrpcReceiver& operator=(const GrpcReceiver&) = delete;

  [[nodiscard]] int port() const { return m_port; }
  // "http://127.0.0.1:PORT"; TLS: "https://localhost:PORT" (the name the
  // tests' certificates are for).
  [[nodiscard]] std::string endpoint() const;

  // The answer to the calls from now on: a gRPC status code (0: OK), its
  // message, a RetryInfo's delay in its details, and a wait before it.
  void answer(int code, std::string message = {}, std::optional<std::chrono::milliseconds> retry_delay = {},
              std::chrono::milliseconds delay = std::chrono::milliseconds(0));

  [[nodiscard]] std::vector<Call> calls() const;  // in order, each recorded as its answer leaves
  [[nodiscard]] std::size_t arrived() const;      // calls whose request arrived, answered or not
  // Every accepted request's bytes, one after the other: in protobuf, the
  // concatenation of messages is their merge, so this is one
  // ExportTraceServiceRequest holding every accepted span.
  [[nodiscard]] std::string accepted() const;

 private:
  struct Plan {
    int code = 0;
    std::string message;
    std::optional<std::chrono::milliseconds> retry_delay;
    std::chrono::milliseconds delay{0};
  };
  void serve();
  bool next(void* expected);  // the completion of `expected` (the one operation in progress); false when failed

  std::unique_ptr<grpc::AsyncGenericService> m_service;
  std::unique_ptr<grpc::ServerCompletionQueue> m_queue;
  std::unique_ptr<grpc::Server> m_server;
  bool m_tls = false;
  int m_port = 0;
  std::thread m_thread;

  mutable std::mutex m_mutex;
  std::condition_variable m_wake;  // a late answer's wait ends at shutdown
  bool m_stopping = false;
  Plan m_plan;
  std::vector<Call> m_calls;
  std::size_t m_arrived = 0;
};

// A google.rpc.Status holding a google.rpc.RetryInfo of `delay`, serialized:
// what a collector sends as a gRPC status's details (grpc-status-details-bin).
[[nodiscard]] std::string retry_info_status(int code, const std::string& message, std::chrono::milliseconds delay);

}  // namespace trace2d::test
