// The daemon's OTLP/gRPC export against a gRPC receiver built here with
// Debian's grpc++ (tests/support/grpc_receiver.hpp): the real git, a real
// trace2d, a real SQLite file. The requests the receiver took are decoded
// with the official OTLP definitions (tests/otlp/otlp_check.js), as the
// OTLP/HTTP suite's are: every session arrives once, with the ids computed
// independently from its SID; a refusal that says trace2d is misconfigured
// pauses the export and keeps the queue, a malformed request is dropped and
// counted, plaintext and TLS alike.

#include <gtest/gtest.h>
#include <simdjson.h>

#include <chrono>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tests/e2e/daemon_fixture.hpp"
#include "tests/e2e/http_loopback.hpp"
#include "tests/support/grpc_receiver.hpp"
#include "tests/support/scoped_env.hpp"

namespace trace2d::test {
namespace {

// Names of their own (grpc_*, k_grpc_*): a unity build compiles this file
// with test_otlp_live.cpp, whose helpers are alike.

constexpr int k_grpc_ok = 0;
constexpr int k_grpc_invalid_argument = 3;
constexpr int k_grpc_unauthenticated = 16;

// What otlp_check.js's tree check says of everything `receiver` accepted
// (one request: protobuf messages concatenated are their merge).
struct CheckedSpan {
  std::string name;
  std::string type;
  std::string sid;
};
struct CheckedTree {
  std::vector<CheckedSpan> spans;
  std::vector<std::string> problems;
};
CheckedTree check_accepted(const TempDir& dir, const GrpcReceiver& receiver) {
  const std::string file = dir.file("accepted.pb");
  write_file(file, receiver.accepted());
  ProcessSpec spec;
  spec.argv = {"node", TRACE2D_OTLP_CHECK_JS, TRACE2D_OTLP_DECODER_DIR, "tree", file};
  const ProcessResult checked = run_process(spec);
  EXPECT_EQ(checked.exit_code, 0) << checked.err;
  CheckedTree tree;
  simdjson::dom::parser parser;
  const simdjson::dom::element result = parser.parse(checked.out);
  for (simdjson::dom::element problem : result["problems"].get_array()) {
    tree.problems.emplace_back(problem.get_string().value());
  }
  for (simdjson::dom::element span : result["spans"].get_array()) {
    std::string_view sid;
    if (span["sid"].get(sid) != simdjson::SUCCESS) {
      sid = {};  // a span without trace2.cmd.sid
    }
    tree.spans.push_back({std::string(span["name"].get_string().value()),
                          std::string(span["type"].get_string().value()), std::string(sid)});
  }
  return tree;
}

// Every stored session (at least `min_sessions`) exported; none running.
bool grpc_all_exported(const std::string& db, std::int64_t min_sessions) {
  db::Database check = open_db(db);
  const std::int64_t sessions = check.query_int("SELECT count(*) FROM sessions").value_or(0);
  return sessions >= min_sessions && check.query_int("SELECT count(*) FROM otlp_pending").value_or(1) == 0 &&
         check.query_int("SELECT count(*) FROM sessions WHERE status = 'running'").value_or(1) == 0 &&
         check.query_int("SELECT exported_sessions FROM otlp_export").value_or(0) == sessions;
}

// Four git processes (one failing), each its own session and tree.
constexpr std::int64_t k_grpc_runs = 4;
void run_gits(const TempDir& dir, const RunningDaemon& daemon) {
  const std::string repo = make_repo(dir, "repo", 2);
  const std::map<std::string, std::string> traced{{"GIT_TRACE2_EVENT", daemon.git_target()}};
  ASSERT_EQ(run_git(repo, {"status"}, traced).exit_code, 0);
  ASSERT_EQ(run_git(repo, {"log", "-1"}, traced).exit_code, 0);
  ASSERT_EQ(run_git(repo, {"rev-parse", "HEAD"}, traced).exit_code, 0);
  ASSERT_NE(run_git(repo, {"rev-parse", "--verify", "no-such-ref"}, traced).exit_code, 0);
}

// What arrived is what ran: one process span per session stored, under the
// SIDs stored, the span names git's commands, ids and parents as the tree
// check computes them, no span twice.
void expect_every_session_once(const TempDir& dir, const GrpcReceiver& receiver, const std::string& db_path) {
  const CheckedTree tree = check_accepted(dir, receiver);
  EXPECT_EQ(tree.problems, std::vector<std::string>{});
  std::set<std::string> sids;
  std::set<std::string> names;
  for (const CheckedSpan& span : tree.spans) {
    if (span.type == "process") {
      EXPECT_TRUE(sids.insert(span.sid).second) << span.sid << " arrived twice";
      names.insert(span.name);
    }
  }
  std::set<std::string> stored;
  db::Database db = open_db(db_path);
  db::Statement select = db.prepare("SELECT sid FROM sessions");
  while (select.step()) {
    stored.emplace(select.column_text(0));
  }
  EXPECT_EQ(sids, stored);
  EXPECT_EQ(static_cast<std::int64_t>(sids.size()), k_grpc_runs);
  EXPECT_EQ(names, (std::set<std::string>{"git:status", "git:log", "git:rev-parse"}));
  EXPECT_EQ(static_cast<std::int64_t>(tree.spans.size()),
            db.query_int("SELECT exported_spans FROM otlp_export").value_or(-1));
}

// A sample of a /metrics scrape (-1 when absent).
double grpc_metric(const std::string& body, const std::string& sample) {
  for (std::size_t at = body.find(sample + " "); at != std::string::npos; at = body.find(sample + " ", at + 1)) {
    if (at == 0 || body[at - 1] == '\n') {
      return std::stod(body.substr(at + sample.size() + 1));
    }
  }
  return -1;
}

TEST(OtlpGrpc, EverySessionArrivesOnceAtTheExportMethodWithItsMetadataAndGzip) {
  TempDir dir;
  GrpcReceiver receiver;
  RunningDaemon daemon(dir, {"--otlp-endpoint", receiver.endpoint(), "--otlp-protocol", "grpc", "--otlp-header",
                             "X-Team=git", "--otlp-compression", "gzip"});
  run_gits(dir, daemon);
  ASSERT_TRUE(wait_until([&] { return grpc_all_exported(daemon.db_path(), k_grpc_runs); }, std::chrono::seconds(20)))
      << daemon.process().err_so_far();
  expect_every_session_once(dir, receiver, daemon.db_path());
  const auto calls = receiver.calls();
  ASSERT_FALSE(calls.empty());
  for (const GrpcReceiver::Call& call : calls) {
    EXPECT_EQ(call.method, "/opentelemetry.proto.collector.trace.v1.TraceService/Export");
    EXPECT_EQ(call.code, k_grpc_ok);
    const auto team = call.metadata.find("x-team");
    EXPECT_TRUE(team != call.metadata.end() && team->second == "git") << "the header as metadata";
    const auto agent = call.metadata.find("user-agent");
    EXPECT_TRUE(agent != call.metadata.end() && agent->second.starts_with("trace2d/"));
  }
  // trace2ctl status says where spans go: the address as configured.
  ASSERT_TRUE(wait_until([&] {
    return ctl(daemon.db_path(), {"status"}).out.find("otlp export to " + receiver.endpoint() + ": 0 sessions waiting") !=
           std::string::npos;
  })) << ctl(daemon.db_path(), {"status"}).out;
  const ProcessResult stopped = daemon.stop();
  EXPECT_EQ(stopped.exit_code, 0);
  EXPECT_NE(stopped.err.find("(grpc, gzip)"), std::string::npos) << stopped.err;
}

// A CA and, signed by it, a certificate for "localhost" (the receiver's)
// and one for a client (trace2d's), made by the openssl CLI.
void make_grpc_certificates(const TempDir& dir) {
  write_file(dir.file("san.ext"), "subjectAltName=DNS:localhost\n");
  std::vector<std::vector<std::string>> steps{
      {"req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", dir.file("ca.key"), "-out", dir.file("ca.pem"),
       "-days", "2", "-subj", "/CN=trace2d test CA"}};
  for (const char* role : {"server", "client"}) {
    const std::string name = role;
    steps.push_back({"req", "-newkey", "rsa:2048", "-nodes", "-keyout", dir.file(name + ".key"), "-out",
                     dir.file(name + ".csr"), "-subj", name == "server" ? "/CN=localhost" : "/CN=trace2d"});
    steps.push_back({"x509", "-req", "-in", dir.file(name + ".csr"), "-CA", dir.file("ca.pem"), "-CAkey",
                     dir.file("ca.key"), "-CAcreateserial", "-out", dir.file(name + ".pem"), "-days", "2",
                     "-extfile", dir.file("san.ext")});
  }
  for (const std::vector<std::string>& args : steps) {
    ProcessSpec spec;
    spec.argv = {"openssl"};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    const ProcessResult made = run_process(spec);
    ASSERT_EQ(made.exit_code, 0) << made.err;
  }
}

// https:// is TLS: the receiver's certificate checked against the CA file
// (the system's CAs do not know the test CA: paused, nothing lost), and
// trace2d's client certificate presented where the receiver requires one.
TEST(OtlpGrpc, TlsWithTheCollectorsCaAndAClientCertificate) {
  TempDir dir;
  make_grpc_certificates(dir);
  GrpcReceiver::Options tls;
  tls.tls_cert = read_file(dir.file("server.pem"));
  tls.tls_key = read_file(dir.file("server.key"));
  tls.client_ca = read_file(dir.file("ca.pem"));
  GrpcReceiver receiver(tls);
  ASSERT_EQ(receiver.endpoint().rfind("https://localhost:", 0), 0u);
  {
    TempDir untrusting;
    RunningDaemon daemon(untrusting, {"--otlp-endpoint", receiver.endpoint(), "--otlp-protocol", "grpc"});
    run_gits(untrusting, daemon);
    ASSERT_TRUE(wait_until([&] {
      return open_db(daemon.db_path()).query_text("SELECT last_failure_reason FROM otlp_export").value_or("").find(
                 "gRPC UNAVAILABLE") != std::string::npos;
    }, std::chrono::seconds(20))) << daemon.process().err_so_far();
    EXPECT_GT(open_db(daemon.db_path()).query_int("SELECT count(*) FROM otlp_pending").value_or(0), 0);
    EXPECT_TRUE(receiver.calls().empty());
    const ProcessResult stopped = daemon.stop();
    EXPECT_EQ(stopped.exit_code, 0) << stopped.err;
  }
  RunningDaemon daemon(dir, {"--otlp-endpoint", receiver.endpoint(), "--otlp-protocol", "grpc", "--otlp-ca-file",
                             dir.file("ca.pem"), "--otlp-client-cert", dir.file("client.pem"), "--otlp-client-key",
                             dir.file("client.key")});
  run_gits(dir, daemon);
  ASSERT_TRUE(wait_until([&] { return grpc_all_exported(daemon.db_path(), k_grpc_runs); }, std::chrono::seconds(20)))
      << daemon.process().err_so_far();
  expect_every_session_once(dir, receiver, daemon.db_path());
  const ProcessResult stopped = daemon.stop();
  EXPECT_EQ(stopped.exit_code, 0) << stopped.err;
}

// UNAUTHENTICATED says trace2d is misconfigured (as HTTP 401): the export
// pauses and keeps every session, the log, `trace2ctl status` and /metrics
// say so; once the collector takes the export, every session arrives once.
TEST(OtlpGrpc, UnauthenticatedPausesTheExportAndKeepsTheQueueUntilTheCollectorTakesIt) {
  TempDir dir;
  GrpcReceiver receiver;
  receiver.answer(k_grpc_unauthenticated, "no such token");
  RunningDaemon daemon(dir, {"--otlp-endpoint", receiver.endpoint(), "--otlp-protocol", "grpc",
                             "--otlp-max-backoff-ms", "300", "--metrics-listen", "127.0.0.1:0"});
  run_gits(dir, daemon);
  ASSERT_TRUE(wait_until(
      [&] {
        db::Database check = open_db(daemon.db_path());
        return check.query_int("SELECT count(*) FROM sessions WHERE status != 'running'").value_or(0) == k_grpc_runs &&
               check.query_int("SELECT failures FROM otlp_export").value_or(0) >= 3 &&
               check.query_int("SELECT count(*) FROM otlp_pending").value_or(0) == k_grpc_runs;
      },
      std::chrono::seconds(30)))
      << daemon.process().err_so_far();
  {
    db::Database db = open_db(daemon.db_path());
    EXPECT_EQ(db.query_int("SELECT dropped_sessions FROM otlp_export"), 0);
    EXPECT_EQ(db.query_int("SELECT paused_since IS NOT NULL FROM otlp_export"), 1);
  }
  const std::string why = "gRPC UNAUTHENTICATED from " + receiver.endpoint();
  ProcessResult status;
  EXPECT_TRUE(wait_until([&] {
    status = ctl(daemon.db_path(), {"status"});
    return status.exit_code == 4 && status.out.find("PAUSED since") != std::string::npos;
  })) << status.out;
  for (const std::string& text : {why, std::string("check otlp.headers"), std::string("no such token")}) {
    EXPECT_NE(daemon.process().err_so_far().find(text), std::string::npos) << text;
    EXPECT_NE(status.out.find(text), std::string::npos) << text << " in\n" << status.out;
  }
  const int port = metrics_port(daemon);
  std::string body;
  EXPECT_TRUE(wait_until([&] {
    body = http_get(port, "/metrics").body;
    return grpc_metric(body, "trace2d_otlp_backlog_sessions") == k_grpc_runs && grpc_metric(body, "trace2d_otlp_export_paused") == 1;
  })) << body;

  receiver.answer(k_grpc_ok);
  ASSERT_TRUE(wait_until([&] { return grpc_all_exported(daemon.db_path(), k_grpc_runs); }, std::chrono::seconds(30)))
      << daemon.process().err_so_far();
  expect_every_session_once(dir, receiver, daemon.db_path());
  EXPECT_EQ(open_db(daemon.db_path()).query_int("SELECT paused_since IS NULL FROM otlp_export"), 1);
  EXPECT_TRUE(wait_until([&] { return ctl(daemon.db_path(), {"status"}).exit_code == 0; }))
      << ctl(daemon.db_path(), {"status"}).out;
  EXPECT_EQ(daemon.stop().exit_code, 0);
}

// INVALID_ARGUMENT says the data is bad (as HTTP 400; the specification:
// do not retry): dropped, counted by reason in the database and /metrics,
// and the export goes on, not paused.
TEST(OtlpGrpc, InvalidArgumentDropsTheSessionsCountedByReason) {
  TempDir dir;
  GrpcReceiver receiver;
  receiver.answer(k_grpc_invalid_argument, "span without a name");
  RunningDaemon daemon(dir, {"--otlp-endpoint", receiver.endpoint(), "--otlp-protocol", "grpc", "--metrics-listen",
                             "127.0.0.1:0"});
  run_gits(dir, daemon);
  ASSERT_TRUE(wait_until(
      [&] {
        db::Database check = open_db(daemon.db_path());
        return check.query_int("SELECT dropped_sessions FROM otlp_export").value_or(0) == k_grpc_runs &&
               check.query_int("SELECT count(*) FROM otlp_pending").value_or(1) == 0;
      },
      std::chrono::seconds(20)))
      << daemon.process().err_so_far();
  db::Database db = open_db(daemon.db_path());
  EXPECT_EQ(db.query_int("SELECT sessions FROM otlp_dropped WHERE reason = 'bad_request'"), k_grpc_runs);
  EXPECT_EQ(db.query_int("SELECT paused_since IS NULL FROM otlp_export"), 1);
  EXPECT_EQ(db.query_int("SELECT exported_sessions FROM otlp_export"), 0);
  EXPECT_NE(db.query_text("SELECT last_failure_reason FROM otlp_export").value_or("").find("gRPC INVALID_ARGUMENT"),
            std::string::npos);
  const int port = metrics_port(daemon);
  std::string body;
  EXPECT_TRUE(wait_until([&] {
    body = http_get(port, "/metrics").body;
    return grpc_metric(body, R"(trace2d_otlp_dropped_sessions_total{reason="bad_request"})") == k_grpc_runs;
  })) << body;
  EXPECT_EQ(grpc_metric(body, "trace2d_otlp_export_paused"), 0);
  EXPECT_NE(daemon.process().err_so_far().find("with gRPC INVALID_ARGUMENT"), std::string::npos);
  EXPECT_NE(daemon.process().err_so_far().find("span without a name"), std::string::npos);
  EXPECT_EQ(daemon.stop().exit_code, 0);
}

// SIGTERM while the collector takes its time: trace2d waits for the answer
// (otlp.shutdown_wait_ms) and commits it, so a restart sends nothing again.
TEST(OtlpGrpc, SigtermWaitsForTheAnswerInFlightSoNothingIsSentTwice) {
  TempDir dir;
  GrpcReceiver receiver;
  receiver.answer(k_grpc_ok, "", std::nullopt, std::chrono::milliseconds(1500));
  const std::string repo = make_repo(dir, "repo", 2);
  {
    RunningDaemon daemon(dir, {"--otlp-endpoint", receiver.endpoint(), "--otlp-protocol", "grpc"});
    ASSERT_EQ(run_git(repo, {"status"}, {{"GIT_TRACE2_EVENT", daemon.git_target()}}).exit_code, 0);
    ASSERT_TRUE(wait_until([&] { return receiver.arrived() == 1; }, std::chrono::seconds(20)))
        << daemon.process().err_so_far();
    const auto asked = std::chrono::steady_clock::now();
    const ProcessResult stopped = daemon.stop();
    EXPECT_GE(std::chrono::steady_clock::now() - asked, std::chrono::milliseconds(500)) << "it did not wait";
    EXPECT_EQ(stopped.exit_code, 0) << stopped.err;
    EXPECT_EQ(stopped.err.find("the request is abandoned"), std::string::npos) << stopped.err;
  }
  EXPECT_EQ(open_db(dir.file("t.db")).query_int("SELECT count(*) FROM otlp_pending"), 0);
  EXPECT_EQ(open_db(dir.file("t.db")).query_int("SELECT exported_sessions FROM otlp_export"), 1);
  receiver.answer(k_grpc_ok);
  RunningDaemon again(dir, {"--otlp-endpoint", receiver.endpoint(), "--otlp-protocol", "grpc"});
  ASSERT_EQ(run_git(repo, {"log", "-1"}, {{"GIT_TRACE2_EVENT", again.git_target()}}).exit_code, 0);
  ASSERT_TRUE(wait_until([&] { return grpc_all_exported(again.db_path(), 2); }, std::chrono::seconds(20)))
      << again.process().err_so_far();
  EXPECT_EQ(receiver.arrived(), 2u) << "the acknowledged request was not sent again";
  EXPECT_EQ(again.stop().exit_code, 0);
}

// The SDK's variables: OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=grpc wins over
// OTEL_EXPORTER_OTLP_PROTOCOL, and the base endpoint is the collector's
// address, nothing appended.
TEST(OtlpGrpc, TheTracesProtocolVariableChoosesGrpc) {
  TempDir dir;
  GrpcReceiver receiver;
  const ScopedEnv base_protocol("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json");
  const ScopedEnv traces_protocol("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "grpc");
  const ScopedEnv endpoint("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint());
  RunningDaemon daemon(dir);
  const std::string repo = make_repo(dir, "repo", 2);
  ASSERT_EQ(run_git(repo, {"status"}, {{"GIT_TRACE2_EVENT", daemon.git_target()}}).exit_code, 0);
  ASSERT_TRUE(wait_until([&] { return grpc_all_exported(daemon.db_path(), 1); }, std::chrono::seconds(20)))
      << daemon.process().err_so_far();
  EXPECT_EQ(receiver.calls().size(), 1u);
  EXPECT_EQ(daemon.stop().exit_code, 0);
}

}  // namespace
}  // namespace trace2d::test
