// OTLP/gRPC's parts that need no daemon: how each status is judged, what is
// read from an answer's bytes, and the transport against a real gRPC
// receiver in this process (tests/support/grpc_receiver.hpp).

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>

#include "daemon/app/config_file.hpp"
#include "daemon/app/options.hpp"
#include "daemon/export/collector_reply.hpp"
#include "daemon/export/delivery_policy.hpp"
#include "daemon/export/otlp_grpc_transport.hpp"
#include "tests/support/grpc_receiver.hpp"

namespace trace2d::exporter {
namespace {

// The OTLP specification's table for gRPC, with what trace2d adds: only a
// malformed request is dropped; RESOURCE_EXHAUSTED without RetryInfo (a
// size limit, or an overload) splits several sessions and keeps one; every
// other code keeps the queue: the retryable ones, the misconfigurations
// (as HTTP 401, 403, 404) and those the specification leaves to the client.
TEST(DeliveryPolicy, GrpcStatusesAreJudgedAsTheSpecificationSaysWithTheQueueKept) {
  EXPECT_EQ(judge(grpc_answer(GrpcCode::ok, false), 3).verdict, Verdict::delivered);
  EXPECT_EQ(judge(grpc_answer(GrpcCode::invalid_argument, false), 3).verdict, Verdict::drop);
  EXPECT_EQ(judge(grpc_answer(GrpcCode::invalid_argument, false), 1).reason, db::DropReason::bad_request);
  EXPECT_EQ(judge(grpc_answer(GrpcCode::resource_exhausted, false), 3).verdict, Verdict::split);
  EXPECT_EQ(judge(grpc_answer(GrpcCode::resource_exhausted, false), 1).verdict, Verdict::retry);
  EXPECT_EQ(judge(grpc_answer(GrpcCode::resource_exhausted, true), 3).verdict, Verdict::retry);
  EXPECT_EQ(judge(grpc_answer(GrpcCode::resource_exhausted, true), 1).verdict, Verdict::retry);
  for (const GrpcCode retryable : {GrpcCode::unavailable, GrpcCode::aborted, GrpcCode::cancelled,
                                   GrpcCode::deadline_exceeded, GrpcCode::out_of_range, GrpcCode::data_loss}) {
    EXPECT_EQ(judge(grpc_answer(retryable, false), 3).verdict, Verdict::retry) << grpc_code_name(retryable);
  }
  for (const GrpcCode misconfigured : {GrpcCode::unauthenticated, GrpcCode::permission_denied, GrpcCode::not_found,
                                       GrpcCode::unimplemented}) {
    EXPECT_EQ(judge(grpc_answer(misconfigured, false), 3).verdict, Verdict::retry) << grpc_code_name(misconfigured);
    EXPECT_EQ(judge(grpc_answer(misconfigured, false), 1).verdict, Verdict::retry) << grpc_code_name(misconfigured);
    EXPECT_FALSE(grpc_hint_for(misconfigured).empty()) << grpc_code_name(misconfigured);
  }
  for (const GrpcCode other : {GrpcCode::unknown, GrpcCode::already_exists, GrpcCode::failed_precondition,
                               GrpcCode::internal, static_cast<GrpcCode>(42)}) {
    EXPECT_EQ(judge(grpc_answer(other, false), 3).verdict, Verdict::retry) << grpc_code_name(other);
  }
  EXPECT_EQ(grpc_code_name(GrpcCode::unauthenticated), "UNAUTHENTICATED");
  EXPECT_EQ(grpc_code_name(GrpcCode::ok), "OK");
  EXPECT_EQ(grpc_code_name(static_cast<GrpcCode>(42)), "code 42");
  EXPECT_NE(grpc_hint_for(GrpcCode::unauthenticated).find("otlp.headers"), std::string::npos);
  EXPECT_NE(grpc_hint_for(GrpcCode::unimplemented).find("4317"), std::string::npos);
  EXPECT_EQ(grpc_hint_for(GrpcCode::internal), "");
  // The same seam as HTTP's: 400 and INVALID_ARGUMENT are one answer.
  EXPECT_EQ(http_answer(400), grpc_answer(GrpcCode::invalid_argument, false));
  EXPECT_EQ(http_answer(200), grpc_answer(GrpcCode::ok, false));
}

// Protobuf written out by hand, field by field.
std::string field_bytes(int number, const std::string& bytes) {
  std::string out(1, static_cast<char>((number << 3) | 2));
  out += static_cast<char>(bytes.size());  // under 128 here
  return out + bytes;
}
std::string field_varint(int number, unsigned value) {
  std::string out(1, static_cast<char>(number << 3));
  while (value >= 0x80) {
    out += static_cast<char>((value & 0x7f) | 0x80);
    value >>= 7;
  }
  return out + static_cast<char>(value);
}

TEST(CollectorReply, RejectedSpansOfAPartialSuccess) {
  EXPECT_EQ(rejected_spans_in(""), 0);  // an empty response: all accepted
  // partial_success { rejected_spans 300, error_message "quota" }
  EXPECT_EQ(rejected_spans_in(field_bytes(1, field_varint(1, 300) + field_bytes(2, "quota"))), 300);
  // The message first, an unknown field before: still found.
  EXPECT_EQ(rejected_spans_in(field_varint(7, 1) + field_bytes(1, field_bytes(2, "x") + field_varint(1, 5))), 5);
  EXPECT_EQ(rejected_spans_in(field_bytes(1, field_bytes(2, "all fine"))), 0);
  EXPECT_EQ(rejected_spans_in("\x0a\x7f"), 0) << "truncated";
  EXPECT_EQ(rejected_spans_in("\xff\xff\xff"), 0) << "not protobuf";
}

TEST(CollectorReply, RetryInfoInAGrpcStatusesDetails) {
  EXPECT_EQ(retry_delay_in(""), std::nullopt);
  EXPECT_EQ(retry_delay_in(test::retry_info_status(8, "slow down", std::chrono::milliseconds(2500))),
            std::chrono::milliseconds(2500));
  // Another detail first (a google.rpc.ErrorInfo), then the RetryInfo.
  const std::string error_info = field_bytes(1, "type.googleapis.com/google.rpc.ErrorInfo") +
                                 field_bytes(2, field_bytes(1, "QUOTA"));
  const std::string retry_info = field_bytes(1, "type.googleapis.com/google.rpc.RetryInfo") +
                                 field_bytes(2, field_bytes(1, field_varint(1, 7) + field_varint(2, 500'000'000)));
  EXPECT_EQ(retry_delay_in(field_varint(1, 8) + field_bytes(3, error_info) + field_bytes(3, retry_info)),
            std::chrono::milliseconds(7500));
  // Without the RetryInfo: none. A RetryInfo without a delay: at once.
  EXPECT_EQ(retry_delay_in(field_varint(1, 8) + field_bytes(3, error_info)), std::nullopt);
  EXPECT_EQ(retry_delay_in(field_bytes(3, field_bytes(1, "type.googleapis.com/google.rpc.RetryInfo"))),
            std::chrono::milliseconds(0));
  // An hour at most, as a Retry-After.
  EXPECT_EQ(retry_delay_in(test::retry_info_status(8, "", std::chrono::hours(5))), std::chrono::hours(1));
}

GrpcTransportOptions options_for(const test::GrpcReceiver& receiver) {
  GrpcTransportOptions options;
  options.url = receiver.endpoint();
  options.timeout = std::chrono::seconds(10);
  return options;
}

// The transport against a real gRPC server: the method, the bytes, the
// metadata, and each status as an answer.
TEST(GrpcTransport, SendsTheRequestBytesToTheExportMethodAndReadsEachStatus) {
  test::GrpcReceiver receiver;
  GrpcTransportOptions options = options_for(receiver);
  options.headers = {{"Authorization", "Bearer t0ken"}, {"x-team", "git"}};
  options.user_agent = "trace2d/9.9";
  OtlpGrpcTransport transport(options);
  std::string body("\x0a\x03\x0a\x01\x00", 5);  // the exporter's bytes, whatever they are
  CollectorAnswer answer = transport.send(body);
  EXPECT_EQ(answer.answer, Answer::accepted);
  EXPECT_EQ(answer.status, "gRPC OK");
  EXPECT_EQ(answer.rejected_spans, 0);
  EXPECT_EQ(body.size(), 5u) << "the caller's body is kept";
  const auto calls = receiver.calls();
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].method, "/opentelemetry.proto.collector.trace.v1.TraceService/Export");
  EXPECT_EQ(calls[0].body, body);
  const auto header = [&](const std::string& name) {
    const auto found = calls[0].metadata.find(name);
    return found == calls[0].metadata.end() ? std::string("(none)") : found->second;
  };
  EXPECT_EQ(header("authorization"), "Bearer t0ken") << "names in lower case, as gRPC wants them";
  EXPECT_EQ(header("x-team"), "git");
  EXPECT_EQ(header("user-agent").rfind("trace2d/9.9", 0), 0u) << header("user-agent");

  const std::map<int, Answer> expected{{3, Answer::malformed},   {16, Answer::not_now}, {7, Answer::not_now},
                                       {12, Answer::not_now},    {14, Answer::not_now}, {13, Answer::not_now},
                                       {8, Answer::too_large_or_busy}};
  for (const auto& [code, kind] : expected) {
    receiver.answer(code, "said " + std::to_string(code));
    answer = transport.send(body);
    EXPECT_EQ(answer.answer, kind) << code;
    EXPECT_EQ(answer.said, "said " + std::to_string(code));
    EXPECT_EQ(answer.status, "gRPC " + grpc_code_name(static_cast<GrpcCode>(code)));
    EXPECT_EQ(answer.retry_after, std::nullopt);
  }
  // With a RetryInfo: overloaded, come back then.
  receiver.answer(8, "busy", std::chrono::milliseconds(1500));
  answer = transport.send(body);
  EXPECT_EQ(answer.answer, Answer::not_now);
  EXPECT_EQ(answer.retry_after, std::chrono::milliseconds(1500));
  receiver.answer(14, "", std::chrono::milliseconds(200));
  EXPECT_EQ(transport.send(body).retry_after, std::chrono::milliseconds(200));
}

TEST(GrpcTransport, TheTimeoutIsTheDeadlineAndNobodyListeningIsUnavailable) {
  test::GrpcReceiver slow;
  slow.answer(0, "", std::nullopt, std::chrono::seconds(3));
  GrpcTransportOptions options = options_for(slow);
  options.timeout = std::chrono::milliseconds(300);
  OtlpGrpcTransport transport(options);
  std::string body = "x";
  const auto start = std::chrono::steady_clock::now();
  const CollectorAnswer late = transport.send(body);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  EXPECT_EQ(late.status, "gRPC DEADLINE_EXCEEDED");
  EXPECT_EQ(late.answer, Answer::not_now);

  const int port = [] {
    const test::GrpcReceiver gone;
    return gone.port();
  }();
  options.url = "http://127.0.0.1:" + std::to_string(port);
  OtlpGrpcTransport nobody(options);
  const CollectorAnswer refused = nobody.send(body);
  EXPECT_EQ(refused.status, "gRPC UNAVAILABLE");
  EXPECT_EQ(refused.answer, Answer::not_now);
}

// gzip is gRPC's message compression: a receiver that does not take it
// refuses, one that does gets the bytes as they were.
TEST(GrpcTransport, GzipIsGrpcsMessageCompression) {
  test::GrpcReceiver::Options refusing_options;
  refusing_options.refuse_gzip = true;
  test::GrpcReceiver refusing(refusing_options);
  test::GrpcReceiver taking;
  std::string body(10000, 'a');
  for (test::GrpcReceiver* receiver : {&refusing, &taking}) {
    GrpcTransportOptions options = options_for(*receiver);
    options.gzip = true;
    OtlpGrpcTransport transport(options);
    const CollectorAnswer answer = transport.send(body);
    if (receiver == &refusing) {
      EXPECT_EQ(answer.status, "gRPC UNIMPLEMENTED") << answer.said;
    } else {
      EXPECT_EQ(answer.status, "gRPC OK") << answer.said;
      ASSERT_EQ(receiver->calls().size(), 1u);
      EXPECT_EQ(receiver->calls()[0].body, body);
    }
  }
}

// stop(): abort() ends a call in progress at once, and later sends fail at once.
TEST(GrpcTransport, AbortEndsACallInProgressAtOnce) {
  test::GrpcReceiver slow;
  slow.answer(0, "", std::nullopt, std::chrono::seconds(20));
  OtlpGrpcTransport transport(options_for(slow));
  std::atomic<bool> returned{false};
  std::string status;
  std::thread sender([&] {
    std::string body = "x";
    status = transport.send(body).status;
    returned.store(true);
  });
  ASSERT_TRUE([&] {
    for (int i = 0; i < 500 && slow.arrived() == 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return slow.arrived() == 1;
  }());
  EXPECT_FALSE(returned.load());
  const auto aborted = std::chrono::steady_clock::now();
  transport.abort();
  sender.join();
  EXPECT_LT(std::chrono::steady_clock::now() - aborted, std::chrono::seconds(2));
  EXPECT_EQ(status, "gRPC CANCELLED");
  std::string body = "x";
  EXPECT_THROW((void)transport.send(body), TransportError);
}

TEST(GrpcTransport, WhatCannotBeUsedIsRefusedUpFront) {
  GrpcTransportOptions options;
  options.url = "grpc://collector:4317";
  EXPECT_THROW(OtlpGrpcTransport{options}, std::invalid_argument);
  options.url = "http://collector";  // port 4317
  options.headers = {{"bad header", "x"}};
  EXPECT_THROW(OtlpGrpcTransport{options}, std::invalid_argument);
  options.headers = {{"x-ok", "line\nbreak"}};
  EXPECT_THROW(OtlpGrpcTransport{options}, std::invalid_argument);
  options.headers = {};
  options.url = "https://collector:4317";
  options.tls.ca_file = "/nonexistent/ca.pem";
  try {
    OtlpGrpcTransport transport(options);
    ADD_FAILURE() << "a CA file that cannot be read was taken";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/ca.pem"), std::string::npos) << e.what();
  }
  std::string error;
  const auto endpoint = parse_endpoint("https://collector", error, k_grpc_default_port);
  ASSERT_TRUE(endpoint) << error;
  EXPECT_EQ(endpoint->port, "4317");
}

// The protocol's variables: the signal's own wins (the SDK specification),
// and over gRPC the endpoint is the collector's address, nothing appended.
TEST(GrpcOptions, TheTracesProtocolVariableWinsAndTheEndpointIsUsedAsIs) {
  struct Unset {
    ~Unset() {
      for (const char* name : {"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
                               "OTEL_EXPORTER_OTLP_ENDPOINT"}) {
        ::unsetenv(name);
      }
    }
  } unset;
  ::setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json", 1);
  ::setenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "grpc", 1);
  ::setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4317", 1);
  app::DaemonOptions options;
  const app::OtelSettings set = app::apply_otel_environment(options);
  EXPECT_EQ(options.otlp_protocol, "grpc");
  EXPECT_EQ(set.at("otlp.protocol"), "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL");
  EXPECT_EQ(app::otlp_export_url(options), "http://collector:4317");
  options.otlp_protocol = "http/protobuf";
  EXPECT_EQ(app::otlp_export_url(options), "http://collector:4317/v1/traces");
}

// A header HTTP takes and gRPC cannot carry is a configuration problem
// (--check-config says so), where it stopped the exporter at start-up.
TEST(GrpcOptions, AHeaderGrpcCannotCarryIsAConfigurationProblem) {
  app::DaemonOptions options = app::default_options();
  options.otlp_endpoint = "http://collector:4317";
  options.otlp_headers = {"Authorization=Bearer x", "x-note=caf\xc3\xa9"};
  EXPECT_NO_THROW(app::validate_options(options)) << "over HTTP";
  options.otlp_protocol = "grpc";
  try {
    app::validate_options(options);
    ADD_FAILURE() << "taken";
  } catch (const app::ConfigError& e) {
    ASSERT_EQ(e.problems().size(), 1u);
    EXPECT_NE(e.problems()[0].find("'otlp.headers' (--otlp-header) lists 'x-note=caf\xc3\xa9'"), std::string::npos)
        << e.problems()[0];
  }
  EXPECT_EQ(grpc_metadata_problem("X-Team", "git"), "");
  EXPECT_NE(grpc_metadata_problem("grpc-timeout", "1S"), "");
  EXPECT_NE(grpc_metadata_problem("x-team", "caf\xc3\xa9"), "");
  EXPECT_EQ(grpc_metadata_problem("x-raw-bin", "caf\xc3\xa9"), "");
}

}  // namespace
}  // namespace trace2d::exporter
