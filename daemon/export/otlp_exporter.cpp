#include "daemon/export/otlp_exporter.hpp"

#include <memory>

#include "daemon/export/otlp_sender.hpp"

namespace trace2d::exporter {
namespace {

ForwarderOptions forwarder_options(const ExporterOptions& options) {
  ForwarderOptions o = options.forwarding;
  o.name = "otlp";  // its figures are trace2d_otlp_*, its thread trace2d-otlp
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
