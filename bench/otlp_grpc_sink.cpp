// A loopback OTLP/gRPC receiver that discards, otlp_sink's counterpart for
// `export_bench --protocol grpc`: Debian's grpc++ with a generic service (no
// generated code) takes every call, answers OK with an empty
// ExportTraceServiceResponse, and counts calls and request bytes (as gRPC
// hands them over: decompressed). What the benchmark measures is then
// trace2d's side alone: no decoding, no storage.
//
//   otlp_grpc_sink [--port N]   prints "port=N" once listening;
//                               on SIGTERM/SIGINT "SINK requests=N bytes=N"

#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/slice.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

namespace {

std::atomic<bool> g_stop{false};

void on_signal(int) { g_stop.store(true); }

// The tags of the one operation in progress: the exporter sends one request
// at a time, so one call at a time is served.
int g_request_tag;
int g_read_tag;
int g_finish_tag;

bool next(grpc::ServerCompletionQueue& queue, void* expected) {
  void* tag = nullptr;
  bool ok = false;
  return queue.Next(&tag, &ok) && tag == expected && ok;
}

void serve(grpc::AsyncGenericService& service, grpc::ServerCompletionQueue& queue, long long& requests,
           long long& bytes) {
  grpc::Slice empty;
  const grpc::ByteBuffer response(&empty, 1);
  while (true) {
    grpc::GenericServerContext context;
    grpc::GenericServerAsyncReaderWriter stream(&context);
    service.RequestCall(&context, &stream, &queue, &queue, &g_request_tag);
    if (!next(queue, &g_request_tag)) {
      return;  // shutting down
    }
    grpc::ByteBuffer request;
    stream.Read(&request, &g_read_tag);
    if (next(queue, &g_read_tag)) {
      ++requests;
      bytes += static_cast<long long>(request.Length());
    }
    stream.WriteAndFinish(response, grpc::WriteOptions(), grpc::Status::OK, &g_finish_tag);
    (void)next(queue, &g_finish_tag);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int port = 0;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::string_view(argv[i]) == "--port") {
      port = std::atoi(argv[i + 1]);
    }
  }
  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);
  grpc::AsyncGenericService service;
  grpc::ServerBuilder builder;
  int bound = 0;
  builder.AddListeningPort("127.0.0.1:" + std::to_string(port), grpc::InsecureServerCredentials(), &bound);
  builder.RegisterAsyncGenericService(&service);
  builder.SetMaxReceiveMessageSize(64 << 20);  // the exporter's requests, whatever the bounds
  std::unique_ptr<grpc::ServerCompletionQueue> queue = builder.AddCompletionQueue();
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || bound == 0) {
    std::fprintf(stderr, "otlp_grpc_sink: cannot listen on 127.0.0.1:%d\n", port);
    return 1;
  }
  std::printf("port=%d\n", bound);
  std::fflush(stdout);
  long long requests = 0;
  long long bytes = 0;
  std::thread server_thread([&] { serve(service, *queue, requests, bytes); });
  while (!g_stop.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  server_thread.join();
  queue->Shutdown();
  void* tag = nullptr;
  bool ok = false;
  while (queue->Next(&tag, &ok)) {
  }
  std::printf("SINK requests=%lld bytes=%lld\n", requests, bytes);
  std::fflush(stdout);
  return 0;
}
