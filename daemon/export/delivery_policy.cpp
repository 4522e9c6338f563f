#include "daemon/export/delivery_policy.hpp"

#include <algorithm>
#include <array>
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
    case Answer::too_large_or_busy:
      // Halves cost nothing when the collector was only busy, and pass a
      // size limit when it was one; one session alone is kept, the pause
      // says which limit to raise.
      return sessions > 1 ? Judgement{Verdict::split} : Judgement{Verdict::retry};
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
    case 407:
      return "the proxy asks for credentials: user:password@ in HTTP_PROXY (or HTTPS_PROXY)";
    case 404:
    case 405:
      return "no OTLP traces receiver at this path: otlp.endpoint (OTEL_EXPORTER_OTLP_ENDPOINT) is a base URL to "
             "which /v1/traces is appended; otlp.traces_endpoint (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is used as is";
    case 415:
      return "the collector does not take this encoding: check otlp.protocol (http/protobuf, http/json or grpc; "
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

Answer grpc_answer(GrpcCode code, bool retry_info) {
  switch (code) {
    case GrpcCode::ok:
      return Answer::accepted;
    case GrpcCode::invalid_argument:
      return Answer::malformed;
    case GrpcCode::resource_exhausted:
      return retry_info ? Answer::not_now : Answer::too_large_or_busy;
    default:
      // The retryable codes of the specification, the misconfigurations
      // (UNAUTHENTICATED, PERMISSION_DENIED, NOT_FOUND, UNIMPLEMENTED) and
      // the codes it leaves to the client: the queue is kept.
      return Answer::not_now;
  }
}

std::string grpc_code_name(GrpcCode code) {
  // In the order of their numbers.
  static constexpr std::array<const char*, 17> k_names = {
      "OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS",
      "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED",
      "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"};
  const auto number = static_cast<int>(code);
  if (number < 0 || number >= static_cast<int>(k_names.size())) {
    return "code " + std::to_string(number);
  }
  return k_names[static_cast<std::size_t>(number)];
}

std::string grpc_hint_for(GrpcCode code) {
  switch (code) {
    case GrpcCode::unauthenticated:
    case GrpcCode::permission_denied:
      return "the collector refuses the credentials: check otlp.headers (OTEL_EXPORTER_OTLP_HEADERS, sent as gRPC "
             "metadata), e.g. the authorization token";
    case GrpcCode::not_found:
    case GrpcCode::unimplemented:
      return "no OTLP trace service at this endpoint: is it the collector's OTLP/gRPC port (4317; 4318 is "
             "OTLP/HTTP)? check otlp.endpoint (OTEL_EXPORTER_OTLP_ENDPOINT) and otlp.compression";
    case GrpcCode::unavailable:
      return "the collector cannot be reached or is overloaded";
    case GrpcCode::resource_exhausted:
      return "the collector is overloaded, or the request is over its message size limit (the Collector's "
             "max_recv_msg_size_mib, 4 MiB by default)";
    case GrpcCode::deadline_exceeded:
      return "no answer within otlp.timeout_ms";
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
