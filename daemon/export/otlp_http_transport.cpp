#include "daemon/export/otlp_http_transport.hpp"

#include <stdexcept>
#include <string_view>
#include <utility>

#include "daemon/export/collector_reply.hpp"
#include "daemon/export/gzip.hpp"

namespace trace2d::exporter {
namespace {

Endpoint http_endpoint_of(const std::string& url) {
  std::string error;
  auto endpoint = parse_endpoint(url, error);
  if (!endpoint) {
    throw std::invalid_argument("OTLP endpoint '" + url + "': " + error);
  }
  return *endpoint;
}

}  // namespace

OtlpHttpTransport::OtlpHttpTransport(HttpTransportOptions options)
    : m_options(std::move(options)), m_client(http_endpoint_of(m_options.url), m_options.timeout, m_options.tls, m_options.proxy) {}

CollectorAnswer OtlpHttpTransport::send(std::string& body) {
  const bool json = m_options.encoding == Encoding::json;
  HttpClient::Headers headers = m_options.headers;
  headers.emplace_back("Content-Type", json ? "application/json" : "application/x-protobuf");
  HttpResponse response;
  if (m_options.gzip) {
    std::string compressed = gzip(body);
    headers.emplace_back("Content-Encoding", "gzip");
    response = m_client.post(headers, compressed);
  } else {
    response = m_client.post(headers, body);
  }
  CollectorAnswer answer;
  answer.answer = http_answer(response.status);
  answer.status = "HTTP " + std::to_string(response.status);
  answer.hint = hint_for(response.status);
  answer.said = std::string(std::string_view(response.body).substr(0, 200));
  if (response.retry_after) {
    answer.retry_after = std::chrono::duration_cast<std::chrono::milliseconds>(*response.retry_after);
  }
  if (answer.answer == Answer::accepted && !json) {
    answer.rejected_spans = rejected_spans_in(response.body);
  }
  return answer;
}

}  // namespace trace2d::exporter
