#include "tests/support/grpc_receiver.hpp"

#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/slice.h>

#include <stdexcept>
#include <utility>

namespace trace2d::test {
namespace {

// Protobuf's wire format, the few pieces a status with a RetryInfo needs.
void put_varint(std::string& out, std::uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

void put_bytes(std::string& out, int field, const std::string& bytes) {
  put_varint(out, (static_cast<std::uint64_t>(field) << 3) | 2);
  put_varint(out, bytes.size());
  out += bytes;
}

void put_int(std::string& out, int field, std::uint64_t value) {
  put_varint(out, static_cast<std::uint64_t>(field) << 3);
  put_varint(out, value);
}

std::string bytes_of(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  std::string bytes;
  if (buffer.Dump(&slices).ok()) {
    for (const grpc::Slice& slice : slices) {
      bytes.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
    }
  }
  return bytes;
}

// Tags of the one operation in progress.
int g_request_tag;
int g_read_tag;
int g_finish_tag;

}  // namespace

std::string retry_info_status(int code, const std::string& message, std::chrono::milliseconds delay) {
  std::string duration;  // google.protobuf.Duration
  put_int(duration, 1, static_cast<std::uint64_t>(delay.count() / 1000));
  put_int(duration, 2, static_cast<std::uint64_t>(delay.count() % 1000 * 1'000'000));
  std::string retry_info;  // google.rpc.RetryInfo
  put_bytes(retry_info, 1, duration);
  std::string any;  // google.protobuf.Any
  put_bytes(any, 1, "type.googleapis.com/google.rpc.RetryInfo");
  put_bytes(any, 2, retry_info);
  std::string status;  // google.rpc.Status
  put_int(status, 1, static_cast<std::uint64_t>(code));
  put_bytes(status, 2, message);
  put_bytes(status, 3, any);
  return status;
}

GrpcReceiver::GrpcReceiver() : GrpcReceiver(Options{}) {}

GrpcReceiver::GrpcReceiver(Options options)
    : m_service(std::make_unique<grpc::AsyncGenericService>()), m_tls(options.tls_cert.has_value()) {
  std::shared_ptr<grpc::ServerCredentials> credentials = grpc::InsecureServerCredentials();
  if (options.tls_cert) {
    grpc::SslServerCredentialsOptions ssl(options.client_ca.empty()
                                              ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
                                              : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
    ssl.pem_key_cert_pairs.push_back({options.tls_key, *options.tls_cert});
    ssl.pem_root_certs = options.client_ca;
    credentials = grpc::SslServerCredentials(ssl);
  }
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:" + std::to_string(options.port), credentials, &m_port);
  builder.RegisterAsyncGenericService(m_service.get());
  if (options.max_receive_bytes > 0) {
    builder.SetMaxReceiveMessageSize(options.max_receive_bytes);
  }
  if (options.refuse_gzip) {
    builder.SetCompressionAlgorithmSupportStatus(GRPC_COMPRESS_GZIP, false);
  }
  m_queue = builder.AddCompletionQueue();
  m_server = builder.BuildAndStart();
  if (!m_server || m_port == 0) {
    throw std::runtime_error("GrpcReceiver: cannot listen on 127.0.0.1:" + std::to_string(options.port));
  }
  m_thread = std::thread([this] { serve(); });
}

GrpcReceiver::~GrpcReceiver() {
  {
    std::lock_guard lock(m_mutex);
    m_stopping = true;
  }
  m_wake.notify_all();
  // A call in progress is cancelled past the deadline; the serving thread
  // finishes it and ends at its next request for a call, which fails now.
  m_server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  m_thread.join();
  m_queue->Shutdown();  // after the server's (gRPC's rule), then drained
  void* tag = nullptr;
  bool ok = false;
  while (m_queue->Next(&tag, &ok)) {
  }
}

std::string GrpcReceiver::endpoint() const {
  return (m_tls ? "https://localhost:" : "http://127.0.0.1:") + std::to_string(m_port);
}

void GrpcReceiver::answer(int code, std::string message, std::optional<std::chrono::milliseconds> retry_delay,
                          std::chrono::milliseconds delay) {
  std::lock_guard lock(m_mutex);
  m_plan = Plan{code, std::move(message), retry_delay, delay};
}

std::vector<GrpcReceiver::Call> GrpcReceiver::calls() const {
  std::lock_guard lock(m_mutex);
  return m_calls;
}

std::size_t GrpcReceiver::arrived() const {
  std::lock_guard lock(m_mutex);
  return m_arrived;
}

std::string GrpcReceiver::accepted() const {
  std::lock_guard lock(m_mutex);
  std::string all;
  for (const Call& call : m_calls) {
    if (call.code == 0) {
      all += call.body;
    }
  }
  return all;
}

bool GrpcReceiver::next(void* expected) {
  void* tag = nullptr;
  bool ok = false;
  if (!m_queue->Next(&tag, &ok)) {
    return false;
  }
  if (tag != expected) {
    throw std::logic_error("GrpcReceiver: an unexpected completion");
  }
  return ok;
}

void GrpcReceiver::serve() {
  // One call at a time, as the exporter sends them: each step waits for
  // its own completion.
  while (true) {
    grpc::GenericServerContext context;
    grpc::GenericServerAsyncReaderWriter stream(&context);
    m_service->RequestCall(&context, &stream, m_queue.get(), m_queue.get(), &g_request_tag);
    if (!next(&g_request_tag)) {
      return;  // shutting down
    }
    grpc::ByteBuffer request;
    stream.Read(&request, &g_read_tag);
    const bool read = next(&g_read_tag);
    Call call;
    call.method = context.method();
    for (const auto& [key, value] : context.client_metadata()) {
      call.metadata.emplace(std::string(key.data(), key.size()), std::string(value.data(), value.size()));
    }
    call.body = bytes_of(request);
    Plan plan;
    std::size_t recorded = 0;
    {
      std::unique_lock lock(m_mutex);
      m_arrived += read ? 1 : 0;
      plan = m_plan;
      m_wake.wait_for(lock, plan.delay, [this] { return m_stopping; });
      // Recorded before the answer leaves: a client that has its answer
      // finds its call here.
      call.code = plan.code;
      recorded = m_calls.size();
      if (read) {
        m_calls.push_back(std::move(call));
      }
    }
    if (plan.code == 0) {
      grpc::Slice empty;  // an ExportTraceServiceResponse without partial_success
      const grpc::ByteBuffer response(&empty, 1);
      stream.WriteAndFinish(response, grpc::WriteOptions(), grpc::Status::OK, &g_finish_tag);
    } else {
      const auto code = static_cast<grpc::StatusCode>(plan.code);
      stream.Finish(plan.retry_delay
                        ? grpc::Status(code, plan.message, retry_info_status(plan.code, plan.message, *plan.retry_delay))
                        : grpc::Status(code, plan.message),
                    &g_finish_tag);
    }
    if (!next(&g_finish_tag) && read) {
      std::lock_guard lock(m_mutex);
      m_calls[recorded].code = k_not_answered;  // the client was gone: nothing was accepted
    }
  }
}

}  // namespace trace2d::test
