#include "daemon/export/otlp_grpc_transport.hpp"

#include <grpc/support/log.h>
#include <grpcpp/channel.h>
#include <grpcpp/client_context.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/channel_arguments.h>
#include <grpcpp/support/slice.h>
#include <grpcpp/support/status.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <condition_variable>
#include <fstream>
#include <iterator>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include "daemon/export/collector_reply.hpp"

namespace trace2d::exporter {

// GrpcCode is gRPC's numbering: a status code converts by value.
static_assert(static_cast<int>(GrpcCode::invalid_argument) == grpc::StatusCode::INVALID_ARGUMENT);
static_assert(static_cast<int>(GrpcCode::resource_exhausted) == grpc::StatusCode::RESOURCE_EXHAUSTED);
static_assert(static_cast<int>(GrpcCode::unauthenticated) == grpc::StatusCode::UNAUTHENTICATED);

namespace {

// gRPC's own log lines (a failed handshake, a resolver's complaint) go to
// trace2d's log, not to stderr behind its back: the journal gets them with
// the rest. Its errors as warnings: the exporter's own line says what the
// export does about them.
void log_through_spdlog(gpr_log_func_args* args) {
  if (args->severity == GPR_LOG_SEVERITY_ERROR) {
    spdlog::warn("otlp: grpc: {} ({}:{})", args->message, args->file, args->line);
  } else {
    spdlog::debug("otlp: grpc: {} ({}:{})", args->message, args->file, args->line);
  }
}

std::string read_pem(const std::string& path, std::string_view what, std::string_view must_hold) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in) {
    throw std::invalid_argument("TLS: cannot load " + std::string(what) + " '" + path + "': cannot read it");
  }
  std::string pem = text.str();
  if (pem.find(must_hold) == std::string::npos) {
    throw std::invalid_argument("TLS: cannot load " + std::string(what) + " '" + path + "': no " +
                                std::string(must_hold) + " in it");
  }
  return pem;
}

std::shared_ptr<grpc::ChannelCredentials> credentials_for(const Endpoint& endpoint, const TlsFiles& tls) {
  if (!endpoint.tls) {
    return grpc::InsecureChannelCredentials();
  }
  grpc::SslCredentialsOptions ssl;
  // Empty: gRPC's default roots, which are the system's (on Debian
  // /etc/ssl/certs/ca-certificates.crt, as OpenSSL's for OTLP/HTTP).
  if (!tls.ca_file.empty()) {
    ssl.pem_root_certs = read_pem(tls.ca_file, "the trusted CAs from", "-----BEGIN CERTIFICATE-----");
  }
  if (!tls.client_cert.empty()) {
    ssl.pem_cert_chain = read_pem(tls.client_cert, "the client certificate", "-----BEGIN CERTIFICATE-----");
    const std::string& key = tls.client_key.empty() ? tls.client_cert : tls.client_key;
    ssl.pem_private_key = read_pem(key, "the client certificate's key", "PRIVATE KEY-----");
  }
  return grpc::SslCredentials(ssl);
}

// Each header as gRPC metadata, its name in lower case (HTTP/2 allows no
// upper case).
std::vector<std::pair<std::string, std::string>> metadata_of(
    const std::vector<std::pair<std::string, std::string>>& headers) {
  std::vector<std::pair<std::string, std::string>> metadata;
  for (const auto& [name, value] : headers) {
    if (const std::string problem = grpc_metadata_problem(name, value); !problem.empty()) {
      throw std::invalid_argument("otlp.headers: '" + name + "' " + problem);
    }
    std::string key = name;
    std::transform(key.begin(), key.end(), key.begin(), [](unsigned char c) { return std::tolower(c); });
    metadata.emplace_back(std::move(key), value);
  }
  return metadata;
}

Endpoint grpc_endpoint_of(const std::string& url) {
  std::string error;
  auto endpoint = parse_endpoint(url, error, k_grpc_default_port);
  if (!endpoint) {
    throw std::invalid_argument("OTLP endpoint '" + url + "': " + error);
  }
  return *endpoint;
}

}  // namespace

std::string grpc_metadata_problem(const std::string& name, const std::string& value) {
  std::string key = name;
  std::transform(key.begin(), key.end(), key.begin(), [](unsigned char c) { return std::tolower(c); });
  const bool key_ok = !key.empty() && std::all_of(key.begin(), key.end(), [](unsigned char c) {
    return std::islower(c) || std::isdigit(c) || c == '-' || c == '_' || c == '.';
  });
  if (!key_ok || key.starts_with("grpc-")) {
    return "cannot be sent as gRPC metadata: a name is letters, digits, '-', '_' and '.', not grpc-*";
  }
  const bool binary = key.ends_with("-bin");
  if (!binary && !std::all_of(value.begin(), value.end(), [](unsigned char c) { return c >= 0x20 && c < 0x7f; })) {
    return "cannot be sent as gRPC metadata: its value is not printable ASCII (only a name ending in -bin takes "
           "bytes)";
  }
  return {};
}

// The channel, its stub, and the call in progress (for abort()).
struct OtlpGrpcTransport::Channel {
  std::shared_ptr<grpc::Channel> channel;
  std::unique_ptr<grpc::GenericStub> stub;
  std::vector<std::pair<std::string, std::string>> metadata;

  // abort() cancels the call under this mutex, which send() takes to let go
  // of its context: never a context destroyed while it is cancelled. The
  // completion has a mutex of its own: gRPC may run it inside TryCancel().
  std::mutex call_mutex;
  grpc::ClientContext* call = nullptr;
  bool aborted = false;

  std::mutex done_mutex;
  std::condition_variable done;
};

OtlpGrpcTransport::OtlpGrpcTransport(GrpcTransportOptions options)
    : m_options(std::move(options)), m_channel(std::make_unique<Channel>()) {
  static std::once_flag logging;
  std::call_once(logging, [] { gpr_set_log_function(log_through_spdlog); });
  const Endpoint endpoint = grpc_endpoint_of(m_options.url);
  if (endpoint.target != "/") {
    spdlog::warn("otlp: the path of {} is not used: gRPC calls {} on {}:{}", m_options.url, k_grpc_export_method,
                 endpoint.host, endpoint.port);
  }
  m_channel->metadata = metadata_of(m_options.headers);
  grpc::ChannelArguments arguments;
  arguments.SetUserAgentPrefix(m_options.user_agent);
  // The exporter retries by its own rules, with the queue in the database.
  arguments.SetInt(GRPC_ARG_ENABLE_RETRIES, 0);
  // An answer is a status, not data (as OTLP/HTTP's at most 1 MiB).
  arguments.SetMaxReceiveMessageSize(1 << 20);
  const int backoff_ms = static_cast<int>(std::clamp<std::int64_t>(m_options.max_backoff.count(), 100, 120'000));
  arguments.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, std::min(1000, backoff_ms));
  arguments.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, backoff_ms);
  // dns:/// always: a host named like one of gRPC's schemes ("unix",
  // "ipv4") is still a host.
  const std::string host = endpoint.host.find(':') != std::string::npos ? "[" + endpoint.host + "]" : endpoint.host;
  m_channel->channel = grpc::CreateCustomChannel("dns:///" + host + ":" + endpoint.port,
                                                 credentials_for(endpoint, m_options.tls), arguments);
  m_channel->stub = std::make_unique<grpc::GenericStub>(m_channel->channel);
}

OtlpGrpcTransport::~OtlpGrpcTransport() = default;

void OtlpGrpcTransport::abort() {
  std::lock_guard lock(m_channel->call_mutex);
  m_channel->aborted = true;
  if (m_channel->call != nullptr) {
    m_channel->call->TryCancel();  // the call completes at once, CANCELLED
  }
}

CollectorAnswer OtlpGrpcTransport::send(std::string& body) {
  Channel& c = *m_channel;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + m_options.timeout);
  if (m_options.gzip) {
    context.set_compression_algorithm(GRPC_COMPRESS_GZIP);
  }
  for (const auto& [name, value] : c.metadata) {
    context.AddMetadata(name, value);
  }
  // A copy: gRPC may hold the message past the call's completion, and the
  // body's memory goes back to the exporter for its next request.
  const grpc::Slice slice(body.data(), body.size());
  const grpc::ByteBuffer request(&slice, 1);
  grpc::ByteBuffer response;
  {
    std::lock_guard lock(c.call_mutex);
    if (c.aborted) {
      throw TransportError("stopping");
    }
    c.call = &context;
  }
  std::optional<grpc::Status> status;  // under c.done_mutex
  c.stub->UnaryCall(&context, k_grpc_export_method, grpc::StubOptions(), &request, &response,
                    [&c, &status](grpc::Status result) {
                      std::lock_guard lock(c.done_mutex);
                      status = std::move(result);
                      c.done.notify_all();
                    });
  {
    // The deadline ends the call, and abort() too: it always completes.
    std::unique_lock lock(c.done_mutex);
    c.done.wait(lock, [&status] { return status.has_value(); });
  }
  {
    std::lock_guard lock(c.call_mutex);
    c.call = nullptr;
  }

  const auto code = static_cast<GrpcCode>(status->error_code());
  const std::optional<std::chrono::milliseconds> retry_delay = retry_delay_in(status->error_details());
  CollectorAnswer answer;
  answer.answer = grpc_answer(code, retry_delay.has_value());
  answer.status = "gRPC " + grpc_code_name(code);
  answer.hint = grpc_hint_for(code);
  if (code == GrpcCode::resource_exhausted) {
    answer.hint += " (this request: " + std::to_string(body.size()) + " bytes)";
  }
  answer.said = status->error_message().substr(0, 200);
  answer.retry_after = retry_delay;
  if (answer.answer == Answer::accepted) {
    std::vector<grpc::Slice> slices;
    if (response.Dump(&slices).ok()) {
      std::string bytes;
      for (const grpc::Slice& part : slices) {
        bytes.append(reinterpret_cast<const char*>(part.begin()), part.size());
      }
      answer.rejected_spans = rejected_spans_in(bytes);
    }
  }
  return answer;
}

}  // namespace trace2d::exporter
