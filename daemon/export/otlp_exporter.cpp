#include "daemon/export/otlp_exporter.hpp"

#include <memory>

#include "daemon/export/otlp_sender.hpp"

namespace trace2d::exporter {
namespace {

ForwarderOptions forwarder_options(const ExporterOptions& options) {
  ForwarderOptions o;
  o.max_sessions_per_request = options.max_sessions_per_request;
  o.max_units_per_request = options.max_spans_per_request;
  o.max_bytes_per_request = options.max_bytes_per_request;
  o.poll = options.poll;
  o.max_backoff = options.max_backoff;
  o.shutdown_wait = options.shutdown_wait;
  o.name = "otlp";
  o.on_thread_start = options.on_thread_start;
  return o;
}

}  // namespace

const char* to_string(Protocol protocol) {
  switch (protocol) {
    case Protocol::http_protobuf:
      return "http/protobuf";
    case Protocol::http_json:
      return "http/json";
    case Protocol::grpc:
      return "grpc";
  }
  return "?";
}

OtlpExporter::OtlpExporter(std::string db_path, const ExporterOptions& options)
    : Forwarder(std::move(db_path), forwarder_options(options), std::make_unique<OtlpSender>(options)) {}

}  // namespace trace2d::exporter
