#pragma once
// What the exporter does with a collector's answer (docs/otlp.md,
// "Delivery"), apart from the exporter itself so that the rules are one
// short file: what an answer of either protocol means (http_answer,
// grpc_answer), what that does to the queue (judge), with what trace2d adds
// so that a misconfiguration loses nothing, and the backoff between attempts.
//
// The OTLP/HTTP specification: 2xx accepted (a partial_success counts the
// spans it rejected: not retried); 400 bad data and 413 too large: not to
// be retried as they are; 429, 502, 503, 504 and connection failures:
// retried after Retry-After, else an exponential backoff with jitter. Any
// other status the specification leaves to the client; trace2d treats it
// as a collector that cannot take the data now (a wrong token, path,
// protocol or proxy, a collector failing), keeps the queue and retries, so
// that fixing the configuration delivers everything. Only what sending again
// cannot change is dropped: a 400, and one session alone still too large.
//
// OTLP/gRPC says the same in status codes: OK accepted; INVALID_ARGUMENT
// bad data; UNAVAILABLE, ABORTED, CANCELLED, DEADLINE_EXCEEDED,
// OUT_OF_RANGE, DATA_LOSS retried; RESOURCE_EXHAUSTED retried when the
// collector sends a RetryInfo (it is overloaded). Without one it is also
// what gRPC answers a message over the receiver's size limit, so a request
// of several sessions is split, as for a 413, and one session alone is
// retried, not dropped (a limit raised delivers it). The codes that say
// trace2d is misconfigured (UNAUTHENTICATED, PERMISSION_DENIED, NOT_FOUND,
// UNIMPLEMENTED) and the others keep the queue, as 401, 403 and 404 do.

#include <chrono>
#include <cstddef>
#include <optional>
#include <random>
#include <string>
#include <string_view>

#include "db/otlp_queue.hpp"

namespace trace2d::exporter {

// What an answer says about the request, whatever the protocol.
enum class Answer {
  accepted,           // HTTP 2xx, gRPC OK
  malformed,          // HTTP 400, gRPC INVALID_ARGUMENT: the data is bad
  too_large,          // HTTP 413
  too_large_or_busy,  // gRPC RESOURCE_EXHAUSTED without RetryInfo: a size limit, or an overload
  not_now,            // anything else: a collector that cannot take it now, or a misconfiguration
};

enum class Verdict {
  delivered,  // accepted: the sessions leave the queue
  split,      // too large for several sessions: each half on its own
  drop,       // malformed, or too large for one session: dropped, counted by reason
  retry,      // anything else: the export pauses, the queue stays
};

struct Judgement {
  Verdict verdict = Verdict::retry;
  db::DropReason reason = db::DropReason::bad_request;  // for Verdict::drop
};

// What an answer means for a request of `sessions` sessions.
[[nodiscard]] Judgement judge(Answer answer, std::size_t sessions);

// An HTTP status, as an answer.
[[nodiscard]] Answer http_answer(int status);
[[nodiscard]] inline Judgement judge(int http_status, std::size_t sessions) {
  return judge(http_answer(http_status), sessions);
}

// What to check, for the log line and `trace2ctl status`: "" when the
// status says nothing more than itself. 401 and 403 name the credentials,
// 404 and 405 the path (the base endpoint gets /v1/traces appended, the
// traces endpoint is used as is), 415 the protocol.
[[nodiscard]] std::string hint_for(int status);

// gRPC's status codes (doc/statuscodes.md of grpc; grpc::StatusCode has the
// same values).
enum class GrpcCode : int {
  ok = 0,
  cancelled = 1,
  unknown = 2,
  invalid_argument = 3,
  deadline_exceeded = 4,
  not_found = 5,
  already_exists = 6,
  permission_denied = 7,
  resource_exhausted = 8,
  failed_precondition = 9,
  aborted = 10,
  out_of_range = 11,
  unimplemented = 12,
  internal = 13,
  unavailable = 14,
  data_loss = 15,
  unauthenticated = 16,
};

// A gRPC status, as an answer; `retry_info`: the status carried a
// google.rpc.RetryInfo (the collector says when to come back).
[[nodiscard]] Answer grpc_answer(GrpcCode code, bool retry_info);
// "UNAVAILABLE"; "code 42" for a code gRPC does not define.
[[nodiscard]] std::string grpc_code_name(GrpcCode code);
// As hint_for, for a gRPC status.
[[nodiscard]] std::string grpc_hint_for(GrpcCode code);

// The wait before the next attempt: exponential from a second (or the
// maximum, when lower), doubling up to `maximum`, with ±20% jitter (never
// past the maximum) so that a fleet does not come back at once; a
// Retry-After (or gRPC RetryInfo) the collector sent wins, whatever the
// maximum (it says when it can take the data).
class Backoff {
 public:
  explicit Backoff(std::chrono::milliseconds maximum) : m_maximum(maximum) {}

  // After a failed attempt: the wait before the next.
  std::chrono::milliseconds next(std::optional<std::chrono::milliseconds> retry_after);
  // After a delivery (or a drop: the collector answered).
  void reset() {
    m_current = std::chrono::milliseconds(0);
    m_base = std::chrono::milliseconds(0);
  }
  [[nodiscard]] std::chrono::milliseconds current() const { return m_current; }

 private:
  std::chrono::milliseconds m_maximum;
  std::chrono::milliseconds m_current{0};
  std::chrono::milliseconds m_base{0};  // without jitter: what doubles
  std::mt19937 m_random{std::random_device{}()};
};

}  // namespace trace2d::exporter
