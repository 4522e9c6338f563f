#pragma once
// The OTLP backend of the export (sender.hpp): builds the spans of a
// round's sessions from their places in their process trees
// (model::load_export_rows, otlp/span_builder.hpp), under the export's
// rules (detail levels, nicknames, rulesets, outcome), encodes them as one
// ExportTraceServiceRequest (protobuf or JSON) and sends it through a
// transport (transport.hpp: OTLP/HTTP, or OTLP/gRPC; gzip optional).

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "daemon/export/sender.hpp"
#include "daemon/export/transport.hpp"
#include "model/process_tree.hpp"
#include "model/tree_loader.hpp"
#include "otlp/export_rules.hpp"
#include "otlp/resource.hpp"
#include "otlp/span.hpp"

namespace trace2d::exporter {

struct ExporterOptions;

class OtlpSender final : public Sender {
 public:
  // Throws std::invalid_argument for a URL, a header or a TLS file it
  // cannot use.
  explicit OtlpSender(const ExporterOptions& options);
  ~OtlpSender() override;
  OtlpSender(const OtlpSender&) = delete;
  OtlpSender& operator=(const OtlpSender&) = delete;

  void open(db::Database& db) override;
  void close() override;
  [[nodiscard]] std::unique_ptr<LoadedRound> load(db::Database& db, std::vector<db::PendingSession> offered,
                                                  std::size_t units, std::size_t bytes) override;
  void begin_round(db::Database& db) override;
  void build(std::unique_ptr<LoadedRound> loaded, std::size_t units, Round& round) override;
  void encode(std::size_t first, std::size_t last, std::string& body) override;
  CollectorAnswer send(std::string& body) override { return m_transport->send(body); }
  void abort() override { m_transport->abort(); }
  [[nodiscard]] const std::string& target() const override { return m_url; }
  [[nodiscard]] std::string describe() const override { return m_description; }

 private:
  std::string m_url;
  std::string m_description;
  otlp::ExportRules m_rules;
  otlp::Resource m_resource;
  otlp::Scope m_scope;
  std::unique_ptr<Transport> m_transport;
  std::unique_ptr<model::ExportRowLoader> m_loader;  // on the loading thread's open connection
  std::chrono::steady_clock::time_point m_last_percentiles{};
  // The round built: the trees, and each item's spans (views of the trees'
  // strings), kept until the next build (a 413's halves are encoded again
  // from the same spans).
  std::vector<model::ProcessTree> m_trees;
  std::vector<std::vector<otlp::Span>> m_spans;
};

}  // namespace trace2d::exporter
