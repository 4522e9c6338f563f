#include "daemon/export/delivery_policy.hpp"

#include <algorithm>
#include <cstdint>

namespace trace2d::exporter {

Judgement judge(Answer answer, std::size_t sessions) {
  switch (answer) {
    case Answer::accepted:
      return {Verdict::delivered};
    case Answer::malformed:
      return {Verdict::drop, db::DropReason::bad_request};
    case Answer::too_large:
      return sessions > 1 ? Judgement{Verdict::split} : Judgement{Verdict::drop, db::DropReason::too_large};
    case Answer::not_now:
      break;
  }
  return {Verdict::retry};
}

Answer http_answer(int status) {
  if (status >= 200 && status < 300) {
    return Answer::accepted;
  }
  if (status == 400) {
    return Answer::malformed;
  }
  if (status == 413) {
    return Answer::too_large;
  }
  return Answer::not_now;
}

std::string hint_for(int status) {
  switch (status) {
    case 401:
    case 403:
      return "the collector refuses the credentials: check otlp.headers (OTEL_EXPORTER_OTLP_HEADERS), "
             "e.g. the Authorization token";
    case 404:
    case 405:
      return "no OTLP traces receiver at this path: otlp.endpoint (OTEL_EXPORTER_OTLP_ENDPOINT) is a base URL to "
             "which /v1/traces is appended; otlp.traces_endpoint (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is used as is";
    case 415:
      return "the collector does not take this encoding: check otlp.protocol (http/protobuf or http/json; "
             "OTEL_EXPORTER_OTLP_PROTOCOL) and otlp.compression";
    case 429:
    case 503:
      return "the collector is overloaded";
    case 502:
    case 504:
      return "a gateway or proxy could not reach the collector";
    default:
      return {};
  }
}

std::chrono::milliseconds Backoff::next(std::optional<std::chrono::milliseconds> retry_after) {
  m_base = std::min(m_maximum, m_base.count() == 0 ? std::chrono::milliseconds(1000) : m_base * 2);
  if (retry_after) {
    m_current = *retry_after;
    return m_current;
  }
  const double jitter = std::uniform_real_distribution<>(0.8, 1.2)(m_random);
  m_current = std::min(m_maximum, std::chrono::milliseconds(static_cast<std::int64_t>(
                                      static_cast<double>(m_base.count()) * jitter)));
  return m_current;
}

}  // namespace trace2d::exporter
