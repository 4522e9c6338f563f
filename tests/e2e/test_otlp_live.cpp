// The daemon's OTLP exporter against a loopback receiver that decodes every
// request with the official definitions (tests/otlp/otlp_receiver.js): the
// real git, a real trace2d, a real SQLite file. What the collector
// acknowledged is never sent again, nothing committed is skipped, through
// outages, refusals, restarts and SIGKILL.

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>
#include <simdjson.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "tests/e2e/daemon_fixture.hpp"
#include "tests/e2e/http_loopback.hpp"
#include "tests/e2e/otlp_receiver.hpp"
#include "tests/support/sanitizers.hpp"
#include "tests/support/scoped_env.hpp"

namespace trace2d::test {
namespace {

// Spans the daemon has exported, as the database says.
std::int64_t exported_spans(const std::string& db) {
  return open_db(db).query_int("SELECT exported_spans FROM otlp_export").value_or(-1);
}

std::int64_t queued(const std::string& db) {
  return open_db(db).query_int("SELECT count(*) FROM otlp_pending").value_or(-1);
}

// What the tree check of otlp_check.js says of everything accepted (JSON:
// its spans and problems).
std::string checked_tree(const Receiver& receiver) {
  ProcessSpec spec;
  spec.argv = {"node", TRACE2D_OTLP_CHECK_JS, TRACE2D_OTLP_DECODER_DIR, "tree", receiver.accepted_file()};
  const ProcessResult checked = run_process(spec);
  EXPECT_EQ(checked.exit_code, 0) << checked.err;
  return checked.out;
}

// The tree check over everything accepted: no problems.
std::vector<std::string> tree_problems(const Receiver& receiver) {
  simdjson::dom::parser parser;
  std::vector<std::string> problems;
  for (simdjson::dom::element problem : parser.parse(checked_tree(receiver))["problems"].get_array()) {
    problems.emplace_back(problem.get_string().value());
  }
  return problems;
}

void run_fetch(const TempDir& dir, const RunningDaemon& daemon) {
  const std::string clone = clone_behind(dir);
  const ProcessResult fetch = run_git(clone, {"fetch", "--no-auto-gc", "origin"}, {{"GIT_TRACE2_EVENT", daemon.git_target()}});
  ASSERT_EQ(fetch.exit_code, 0) << fetch.err;
}

TEST(OtlpLive, AFetchTreeReachesTheCollectorOnceWithIdsParentsAndNesting) {
  TempDir dir;
  Receiver receiver(dir, "200");
  RunningDaemon daemon(dir, {"--otlp-endpoint", receiver.endpoint()});
  run_fetch(dir, daemon);
  ASSERT_TRUE(wait_until([&] { return all_exported(daemon.db_path(), 3); }, std::chrono::seconds(20)))
      << daemon.process().err_so_far();
  const auto ids = receiver.acknowledged();
  ASSERT_FALSE(ids.empty());
  for (const auto& [id, count] : ids) {
    EXPECT_EQ(count, 1) << "span " << id << " sent " << count << " times";
  }
  EXPECT_EQ(static_cast<std::int64_t>(ids.size()), exported_spans(daemon.db_path()));
  EXPECT_EQ(tree_problems(receiver), std::vector<std::string>{});
  // trace2ctl status says where spans go and what waits (once the daemon has reported its status).
  ASSERT_TRUE(wait_until([&] {
    return ctl(daemon.db_path(), {"status"}).out.find("otlp export to " + receiver.endpoint() + "/v1/traces: 0 sessions waiting") !=
           std::string::npos;
  }));
  const auto requests = receiver.requests();
  ASSERT_FALSE(requests.empty());
  EXPECT_EQ(requests[0].url, "/v1/traces");
  EXPECT_EQ(requests[0].type, "application/x-protobuf");
  EXPECT_FALSE(requests[0].gzip);
  const ProcessResult stopped = daemon.stop();
  EXPECT_EQ(stopped.exit_code, 0);
  // The exporter's own writes (its queue) never make the store writer give
  // a batch back as if another program held the database.
  EXPECT_EQ(stopped.err.find("is locked"), std::string::npos) << stopped.err;
}

TEST(OtlpLive, RetriesThroughOutagesAndRefusalsWithoutSendingAnythingTwice) {
  TempDir dir;
  // Two 503s with Retry-After, a dropped connection, a 429, then fine; gzip and JSON on.
  Receiver receiver(dir, "503x2,close,429,200");
  RunningDaemon daemon(dir, {"--otlp-endpoint", receiver.endpoint(), "--otlp-compression", "gzip",
                             "--otlp-protocol", "http/json"});
  run_fetch(dir, daemon);
  ASSERT_TRUE(wait_until([&] { return all_exported(daemon.db_path(), 3); }, std::chrono::seconds(30)))
      << daemon.process().err_so_far();
  const auto requests = receiver.requests();
  ASSERT_GE(requests.size(), 5u);
  EXPECT_EQ(requests[0].status, "503");
  EXPECT_EQ(requests[2].status, "closed");
  EXPECT_EQ(requests[3].status, "429");
  EXPECT_TRUE(requests[0].gzip);
  EXPECT_EQ(requests[0].type, "application/json");
  for (const auto& [id, count] : receiver.acknowledged()) {
    EXPECT_EQ(count, 1) << "span " << id;
  }
  EXPECT_EQ(tree_problems(receiver), std::vector<std::string>{});
  EXPECT_GE(open_db(daemon.db_path()).query_int("SELECT failures FROM otlp_export").value_or(0), 4);
  EXPECT_EQ(daemon.stop().exit_code, 0);
}

// A sample of a /metrics scrape: `name` with its labels as written
// (`trace2d_otlp_dropped_sessions_total{reason="bad_request"}`); -1 when absent.
double metric(const std::string& body, const std::string& sample) {
  for (std::size_t at = body.find(sample + " "); at != std::string::npos; at = body.find(sample + " ", at + 1)) {
    if (at == 0 || body[at - 1] == '\n') {
      return std::stod(body.substr(at + sample.size() + 1));
    }
  }
  return -1;
}

// 400: the collector says the request is malformed, which sending it again
// cannot change (the OTLP specification: do not retry): dropped, counted by
// reason, in the database and in /metrics; the export goes on, not paused.
TEST(OtlpLive, BadDataIsDroppedAndCountedAndA413SplitsTheRequest) {
  TempDir dir;
  {
    Receiver refusing(dir, "400", "refusing");
    RunningDaemon daemon(dir, {"--otlp-endpoint", refusing.endpoint(), "--metrics-listen", "127.0.0.1:0"});
    const int port = metrics_port(daemon);
    ASSERT_NE(port, 0);
    run_fetch(dir, daemon);
    std::int64_t sessions = 0;
    ASSERT_TRUE(wait_until([&] {
      db::Database check = open_db(daemon.db_path());
      sessions = check.query_int("SELECT count(*) FROM sessions").value_or(0);
      return check.query_int("SELECT dropped_sessions FROM otlp_export").value_or(0) == sessions && sessions >= 3 &&
             queued(daemon.db_path()) == 0;
    }, std::chrono::seconds(20))) << daemon.process().err_so_far();
    db::Database db = open_db(daemon.db_path());
    EXPECT_NE(db.query_text("SELECT last_failure_reason FROM otlp_export").value_or("").find("HTTP 400"),
              std::string::npos);
    EXPECT_EQ(db.query_int("SELECT sessions FROM otlp_dropped WHERE reason = 'bad_request'"), sessions);
    EXPECT_EQ(db.query_int("SELECT paused_since IS NULL FROM otlp_export"), 1);
    std::string body;
    EXPECT_TRUE(wait_until([&] {
      body = http_get(port, "/metrics").body;
      return metric(body, R"(trace2d_otlp_dropped_sessions_total{reason="bad_request"})") ==
             static_cast<double>(sessions);
    })) << body;
    EXPECT_EQ(metric(body, R"(trace2d_otlp_dropped_sessions_total{reason="too_large"})"), 0);
    EXPECT_EQ(metric(body, "trace2d_otlp_export_paused"), 0);
    EXPECT_EQ(metric(body, "trace2d_otlp_backlog_sessions"), 0);
    EXPECT_NE(daemon.process().err_so_far().find("with HTTP 400"), std::string::npos);
    EXPECT_EQ(daemon.stop().exit_code, 0);
  }
  TempDir second;
  Receiver picky(second, "413>3000", "picky");  // only small requests pass
  RunningDaemon daemon(second, {"--otlp-endpoint", picky.endpoint()});
  run_fetch(second, daemon);
  ASSERT_TRUE(wait_until([&] { return queued(daemon.db_path()) == 0 && exported_spans(daemon.db_path()) > 0; },
                         std::chrono::seconds(20)))
      << daemon.process().err_so_far();
  bool saw_413 = false;
  for (const auto& r : picky.requests()) {
    saw_413 = saw_413 || r.status == "413";
  }
  EXPECT_TRUE(saw_413);
  for (const auto& [id, count] : picky.acknowledged()) {
    EXPECT_EQ(count, 1) << "span " << id;
  }
  EXPECT_EQ(daemon.stop().exit_code, 0);
}

TEST(OtlpLive, ABacklogSurvivesACollectorOutageAndASigkilledDaemon) {
  TempDir dir;
  // Nothing listens at first: the backlog waits in the database.
  const int port = [] {
    TempDir probe;
    Receiver r(probe, "200", "probe");
    return r.port();
  }();
  const std::string endpoint = "http://127.0.0.1:" + std::to_string(port);
  std::int64_t backlog = 0;
  {
    RunningDaemon daemon(dir, {"--otlp-endpoint", endpoint});
    run_fetch(dir, daemon);
    // Every session of the fetch finished and queued (a fetch may run more
    // git processes than the three it always runs).
    ASSERT_TRUE(wait_until([&] {
      db::Database check = open_db(daemon.db_path());
      backlog = check.query_int("SELECT count(*) FROM otlp_pending").value_or(0);
      return backlog >= 3 && check.query_int("SELECT count(*) FROM sessions WHERE status = 'running'").value_or(1) == 0;
    })) << daemon.process().err_so_far();
    // The export fails, and `status` says so, in its exit status too
    // (issue 26: 4, documented in docs/trace2ctl.md): paused, the queue kept.
    ASSERT_TRUE(wait_until([&] { return ctl(daemon.db_path(), {"status"}).exit_code == 4; },
                           std::chrono::seconds(20)))
        << ctl(daemon.db_path(), {"status"}).out;
    const std::string status = ctl(daemon.db_path(), {"status"}).out;
    EXPECT_NE(status.find("PAUSED since"), std::string::npos) << status;
    EXPECT_NE(status.find("cannot connect to 127.0.0.1"), std::string::npos) << status;
    daemon.process().signal(SIGKILL);
    (void)daemon.process().wait();
  }
  // Every session is still queued: those counted above, and any of the
  // fetch's git processes stored since (its last one may be written after
  // the count; seen on CI: 5 against 4).
  const std::int64_t kept = queued(dir.file("t.db"));
  EXPECT_GE(kept, backlog);
  EXPECT_EQ(kept, open_db(dir.file("t.db")).query_int("SELECT count(*) FROM sessions"));
  // The collector is back, and so is trace2d.
  Receiver receiver(dir, "200", "receiver", port);
  RunningDaemon daemon(dir, {"--otlp-endpoint", endpoint});
  ASSERT_TRUE(wait_until([&] { return queued(daemon.db_path()) == 0; }, std::chrono::seconds(20)))
      << daemon.process().err_so_far();
  for (const auto& [id, count] : receiver.acknowledged()) {
    EXPECT_EQ(count, 1) << "span " << id;
  }
  EXPECT_EQ(tree_problems(receiver), std::vector<std::string>{});
  // Exported again: healthy, exit status 0.
  EXPECT_TRUE(wait_until([&] { return ctl(daemon.db_path(), {"status"}).exit_code == 0; }, std::chrono::seconds(20)))
      << ctl(daemon.db_path(), {"status"}).out;
  EXPECT_EQ(daemon.stop().exit_code, 0);
}

// The OpenTelemetry SDK's conventions: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is
// the URL itself (nothing appended), and the OTEL_* variables count only
// when the export is on: a protocol trace2d does not know, set for another
// program, does not stop trace2d when it exports nothing, and is named when
// it would.
TEST(OtlpLive, TheOtelVariablesFollowTheSdkSpecificationAndCountOnlyWhenExporting) {
  {
    const ScopedEnv unknown("OTEL_EXPORTER_OTLP_PROTOCOL", "http/thrift");
    TempDir off;
    RunningDaemon daemon(off);  // throws when it does not start
    const std::string repo = make_repo(off, "repo");
    ASSERT_EQ(run_git(repo, {"status"}, {{"GIT_TRACE2_EVENT", daemon.git_target()}}).exit_code, 0);
    EXPECT_TRUE(wait_until([&] {
      return open_db(daemon.db_path()).query_int("SELECT count(*) FROM sessions WHERE status = 'complete'").value_or(0) == 1;
    }));
    EXPECT_EQ(daemon.stop().exit_code, 0);

    ProcessSpec exporting;
    exporting.argv = {TRACE2D_BIN, "--config", "", "--otlp-endpoint", "http://127.0.0.1:4318", "--check-config"};
    const ProcessResult refused = run_process(exporting);
    EXPECT_EQ(refused.exit_code, 1);
    EXPECT_NE(refused.err.find("'otlp.protocol' (--otlp-protocol) must be http/protobuf, http/json or grpc"),
              std::string::npos)
        << refused.err;
    EXPECT_NE(refused.err.find("(set by OTEL_EXPORTER_OTLP_PROTOCOL)"), std::string::npos) << refused.err;
  }
  TempDir dir;
  Receiver receiver(dir, "200");
  const ScopedEnv traces("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", receiver.endpoint() + "/custom/path");
  const ScopedEnv base("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9");  // the traces variable wins
  RunningDaemon daemon(dir);
  const std::string repo = make_repo(dir, "repo");
  ASSERT_EQ(run_git(repo, {"status"}, {{"GIT_TRACE2_EVENT", daemon.git_target()}}).exit_code, 0);
  ASSERT_TRUE(wait_until([&] { return all_exported(daemon.db_path(), 1); }, std::chrono::seconds(20)))
      << daemon.process().err_so_far();
  const auto requests = receiver.requests();
  ASSERT_FALSE(requests.empty());
  for (const auto& request : requests) {
    EXPECT_EQ(request.url, "/custom/path");
    EXPECT_EQ(request.status, "200");
  }
  EXPECT_EQ(daemon.stop().exit_code, 0);
}

// A CA and a certificate for "localhost" (or `san`) it signed, made by the openssl CLI.
void make_certificates(const TempDir& dir, const std::string& san = "DNS:localhost") {
  write_file(dir.file("san.ext"), "subjectAltName=" + san + "\n");
  for (const std::vector<std::string>& args : {
           std::vector<std::string>{"req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", dir.file("ca.key"),
                                    "-out", dir.file("ca.pem"), "-days", "2", "-subj", "/CN=trace2d test CA"},
           std::vector<std::string>{"req", "-newkey", "rsa:2048", "-nodes", "-keyout", dir.file("server.key"), "-out",
                                    dir.file("server.csr"), "-subj", "/CN=localhost"},
           std::vector<std::string>{"x509", "-req", "-in", dir.file("server.csr"), "-CA", dir.file("ca.pem"), "-CAkey",
                                    dir.file("ca.key"), "-CAcreateserial", "-out", dir.file("server.pem"), "-days", "2",
                                    "-extfile", dir.file("san.ext")}}) {
    ProcessSpec spec;
    spec.argv = {"openssl"};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    const ProcessResult made = run_process(spec);
    ASSERT_EQ(made.exit_code, 0) << made.err;
  }
}

TEST(OtlpLive, HttpsWithTheCollectorsCaAndNotWithoutIt) {
  TempDir dir;
  make_certificates(dir);
  Receiver receiver(dir, "200", "receiver", 0,
                    {{"OTLP_RECEIVER_TLS_CERT", dir.file("server.pem")}, {"OTLP_RECEIVER_TLS_KEY", dir.file("server.key")}});
  const std::string endpoint = "https://localhost:" + std::to_string(receiver.port());
  {
    // The system's CAs do not know the test CA: the handshake fails, and nothing is lost.
    TempDir untrusting;
    RunningDaemon daemon(untrusting, {"--otlp-endpoint", endpoint});
    run_fetch(untrusting, daemon);
    ASSERT_TRUE(wait_until([&] {
      return open_db(daemon.db_path()).query_text("SELECT last_failure_reason FROM otlp_export").value_or("").find(
                 "TLS handshake") != std::string::npos;
    }, std::chrono::seconds(20))) << daemon.process().err_so_far();
    EXPECT_GT(queued(daemon.db_path()), 0);
    EXPECT_TRUE(receiver.acknowledged().empty());
    EXPECT_EQ(daemon.stop().exit_code, 0);
  }
  RunningDaemon daemon(dir, {"--otlp-endpoint", endpoint, "--otlp-ca-file", dir.file("ca.pem")});
  run_fetch(dir, daemon);
  ASSERT_TRUE(wait_until([&] { return all_exported(daemon.db_path(), 3); }, std::chrono::seconds(20)))
      << daemon.process().err_so_far();
  EXPECT_FALSE(receiver.acknowledged().empty());
  EXPECT_EQ(tree_problems(receiver), std::vector<std::string>{});
  EXPECT_EQ(daemon.stop().exit_code, 0);
}

// A collector that cannot take the export (a wrong token, path or
// certificate, a host name that does not resolve): the export pauses and
// keeps every session, the log and `trace2ctl status` say why, nothing is
// dropped; once it is fixed, every session is delivered, each exactly once.
// `broken`: trace2d's arguments while it is broken; `why`: what the log and
// the status say; `fix`: mends it, and returns the collector that works and
// trace2d's arguments to restart with (none: it keeps running).
struct Fixed {
  std::unique_ptr<Receiver> receiver;
  std::vector<std::string> restart_args;
};
void expect_paused_then_delivered_once(const TempDir& dir, std::vector<std::string> broken,
                                       const std::vector<std::string>& why, const std::function<Fixed()>& fix) {
  // Short backoffs (a setting), so that the test is quick.
  const std::vector<std::string> backoff{"--otlp-max-backoff-ms", "300", "--metrics-listen", "127.0.0.1:0"};
  broken.insert(broken.end(), backoff.begin(), backoff.end());
  auto daemon = std::make_unique<RunningDaemon>(dir, broken);
  const std::string db_path = daemon->db_path();
  const std::string repo = make_repo(dir, "repo", 2);
  constexpr std::int64_t k_runs = 4;
  const std::map<std::string, std::string> traced{{"GIT_TRACE2_EVENT", daemon->git_target()}};
  ASSERT_EQ(run_git(repo, {"status"}, traced).exit_code, 0);
  ASSERT_EQ(run_git(repo, {"log", "-1"}, traced).exit_code, 0);
  ASSERT_EQ(run_git(repo, {"rev-parse", "HEAD"}, traced).exit_code, 0);
  ASSERT_NE(run_git(repo, {"rev-parse", "--verify", "no-such-ref"}, traced).exit_code, 0);
  // Tried again and again: every session still queued, nothing dropped.
  ASSERT_TRUE(wait_until(
      [&] {
        db::Database check = open_db(db_path);
        return check.query_int("SELECT count(*) FROM sessions WHERE status != 'running'").value_or(0) == k_runs &&
               check.query_int("SELECT failures FROM otlp_export").value_or(0) >= 3;
      },
      std::chrono::seconds(30)))
      << daemon->process().err_so_far();
  {
    db::Database db = open_db(db_path);
    EXPECT_EQ(db.query_int("SELECT count(*) FROM otlp_pending"), k_runs);
    EXPECT_EQ(db.query_int("SELECT dropped_sessions FROM otlp_export"), 0);
    EXPECT_EQ(db.query_int("SELECT sum(sessions) FROM otlp_dropped"), 0);
    EXPECT_EQ(db.query_int("SELECT paused_since IS NOT NULL FROM otlp_export"), 1);
  }
  // Said in the log, in `trace2ctl status` (exit 4, PAUSED) and /metrics.
  const std::string log = daemon->process().err_so_far();
  ProcessResult status;
  EXPECT_TRUE(wait_until([&] {
    status = ctl(db_path, {"status"});
    return status.exit_code == 4 && status.out.find("PAUSED since") != std::string::npos;
  })) << status.out;
  for (const std::string& text : why) {
    EXPECT_NE(log.find(text), std::string::npos) << text << " in\n" << log;
    EXPECT_NE(status.out.find(text), std::string::npos) << text << " in\n" << status.out;
  }
  const int port = metrics_port(*daemon);
  std::string body;
  EXPECT_TRUE(wait_until([&] {
    body = http_get(port, "/metrics").body;
    return metric(body, "trace2d_otlp_backlog_sessions") == k_runs && metric(body, "trace2d_otlp_export_paused") == 1;
  })) << body;
  EXPECT_GE(metric(body, "trace2d_otlp_oldest_queued_age_seconds"), 0);
  EXPECT_EQ(metric(body, "trace2d_otlp_last_success_timestamp_seconds"), -1) << "absent: nothing ever succeeded";

  Fixed fixed = fix();
  if (!fixed.restart_args.empty()) {
    EXPECT_EQ(daemon->stop().exit_code, 0);
    daemon = std::make_unique<RunningDaemon>(dir, fixed.restart_args);
  }
  ASSERT_TRUE(wait_until([&] { return all_exported(db_path, k_runs); }, std::chrono::seconds(30)))
      << daemon->process().err_so_far();
  // Exactly the sessions run, each once.
  EXPECT_EQ(open_db(db_path).query_int("SELECT count(*) FROM sessions"), k_runs);
  EXPECT_EQ(open_db(db_path).query_int("SELECT exported_sessions FROM otlp_export"), k_runs);
  const auto acknowledged = fixed.receiver->acknowledged();
  EXPECT_EQ(static_cast<std::int64_t>(acknowledged.size()), exported_spans(db_path));
  for (const auto& [id, count] : acknowledged) {
    EXPECT_EQ(count, 1) << "span " << id;
  }
  simdjson::dom::parser parser;
  std::int64_t processes = 0;
  for (simdjson::dom::element span : parser.parse(checked_tree(*fixed.receiver))["spans"].get_array()) {
    processes += span["type"].get_string().value() == "process" ? 1 : 0;
  }
  EXPECT_EQ(processes, k_runs);
  EXPECT_TRUE(wait_until([&] { return ctl(db_path, {"status"}).exit_code == 0; })) << ctl(db_path, {"status"}).out;
  EXPECT_EQ(open_db(db_path).query_int("SELECT paused_since IS NULL FROM otlp_export"), 1);
  EXPECT_EQ(daemon->stop().exit_code, 0);
}

// A collector that refuses with `refusal` until it is fixed, on the same port.
void expect_refusal_keeps_the_queue(const std::string& refusal, const std::string& hint) {
  TempDir dir;
  auto refusing = std::make_unique<Receiver>(dir, refusal, "refusing");
  const int port = refusing->port();
  expect_paused_then_delivered_once(dir, {"--otlp-endpoint", refusing->endpoint()},
                                    {"HTTP " + refusal + " from " + refusing->endpoint() + "/v1/traces", hint},
                                    [&] {
                                      refusing.reset();
                                      return Fixed{std::make_unique<Receiver>(dir, "200", "fixed", port), {}};
                                    });
}

TEST(OtlpLive, A401PausesTheExportUntilTheCredentialsAreFixedAndLosesNothing) {
  expect_refusal_keeps_the_queue("401", "check otlp.headers");
}

TEST(OtlpLive, A403PausesTheExportUntilTheCredentialsAreFixedAndLosesNothing) {
  expect_refusal_keeps_the_queue("403", "check otlp.headers");
}

TEST(OtlpLive, A404PausesTheExportUntilThePathIsFixedAndLosesNothing) {
  expect_refusal_keeps_the_queue("404", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is used as is");
}

// https against a collector that speaks plain HTTP: the handshake fails
// until the collector is given its certificate.
TEST(OtlpLive, ATlsFailurePausesTheExportAndLosesNothing) {
  TempDir dir;
  make_certificates(dir);
  auto plain = std::make_unique<Receiver>(dir, "200", "plain");
  const int port = plain->port();
  expect_paused_then_delivered_once(
      dir, {"--otlp-endpoint", "https://localhost:" + std::to_string(port), "--otlp-ca-file", dir.file("ca.pem")},
      {"TLS handshake with localhost:" + std::to_string(port) + " failed"}, [&] {
        plain.reset();
        return Fixed{std::make_unique<Receiver>(dir, "200", "tls", port,
                                                std::map<std::string, std::string>{
                                                    {"OTLP_RECEIVER_TLS_CERT", dir.file("server.pem")},
                                                    {"OTLP_RECEIVER_TLS_KEY", dir.file("server.key")}}),
                     {}};
      });
}

// A host name that does not resolve (.invalid never does, RFC 6761):
// paused until trace2d is restarted with the right one.
TEST(OtlpLive, ADnsFailurePausesTheExportAndLosesNothing) {
  TempDir dir;
  expect_paused_then_delivered_once(dir, {"--otlp-endpoint", "http://trace2d-collector.invalid:4318"},
                                    {"cannot resolve trace2d-collector.invalid"}, [&] {
                                      auto receiver = std::make_unique<Receiver>(dir, "200");
                                      std::vector<std::string> args{"--otlp-endpoint", receiver->endpoint()};
                                      return Fixed{std::move(receiver), std::move(args)};
                                    });
}

// Debian's tinyproxy on loopback, allowing CONNECT to any port and logging
// every request it forwards.
class Tinyproxy {
 public:
  explicit Tinyproxy(const TempDir& dir) : m_log(dir.file("tinyproxy.log")), m_port(free_port()) {
    const std::string config = dir.file("tinyproxy.conf");
    write_file(config, "Port " + std::to_string(m_port) + "\nListen 127.0.0.1\nAllow 127.0.0.1\nTimeout 30\n" +
                           "LogFile \"" + m_log + "\"\nLogLevel Info\nPidFile \"" + dir.file("tinyproxy.pid") +
                           "\"\nMaxClients 16\n");
    ProcessSpec spec;
    spec.argv = {"tinyproxy", "-d", "-c", config};
    m_process = std::make_unique<Process>(spec);
    EXPECT_TRUE(wait_until([&] { return http_get(m_port, "/").status != 0; })) << m_process->err_so_far();
  }
  ~Tinyproxy() { m_process->signal(SIGTERM); }
  [[nodiscard]] std::string url() const { return "http://127.0.0.1:" + std::to_string(m_port); }
  [[nodiscard]] int port() const { return m_port; }
  [[nodiscard]] std::string log() const { return read_file(m_log); }

 private:
  std::string m_log;
  int m_port;
  std::unique_ptr<Process> m_process;
};

// A proxy carries the export to a collector it alone is meant to reach
// (one on an address that is not loopback: loopback is never proxied), as
// an absolute-form POST for http://, through a CONNECT tunnel for https://
// with TLS end to end; every session arrives once.
TEST(OtlpLive, AnHttpProxyCarriesThePlainExportToTheCollector) {
  const std::string address = non_loopback_address();
  if (address.empty()) {
    GTEST_SKIP() << "this host has no address but loopback, and loopback is never proxied";
  }
  TempDir dir;
  Tinyproxy proxy(dir);
  Receiver receiver(dir, "200", "receiver", 0, {{"OTLP_RECEIVER_HOST", address}});
  const std::string endpoint = "http://" + address + ":" + std::to_string(receiver.port());
  const ScopedEnv via("http_proxy", proxy.url());
  RunningDaemon daemon(dir, {"--otlp-endpoint", endpoint});
  run_fetch(dir, daemon);
  ASSERT_TRUE(wait_until([&] { return all_exported(daemon.db_path(), 3); }, std::chrono::seconds(20)))
      << daemon.process().err_so_far() << proxy.log();
  EXPECT_NE(proxy.log().find("): POST " + endpoint + "/v1/traces"), std::string::npos) << proxy.log();
  EXPECT_NE(daemon.process().err_so_far().find("otlp: through the proxy 127.0.0.1:" + std::to_string(proxy.port())),
            std::string::npos)
      << daemon.process().err_so_far();
  EXPECT_EQ(tree_problems(receiver), std::vector<std::string>{});
  for (const auto& [id, count] : receiver.acknowledged()) {
    EXPECT_EQ(count, 1) << "span " << id;
  }
  EXPECT_EQ(static_cast<std::int64_t>(receiver.acknowledged().size()), exported_spans(daemon.db_path()));
  EXPECT_EQ(daemon.stop().exit_code, 0);
}

TEST(OtlpLive, HttpsGoesThroughTheProxysTunnelWithTlsToTheCollector) {
  const std::string address = non_loopback_address();
  if (address.empty()) {
    GTEST_SKIP() << "this host has no address but loopback, and loopback is never proxied";
  }
  TempDir dir;
  make_certificates(dir, "IP:" + address);
  Tinyproxy proxy(dir);
  Receiver receiver(dir, "200", "receiver", 0,
                    {{"OTLP_RECEIVER_HOST", address},
                     {"OTLP_RECEIVER_TLS_CERT", dir.file("server.pem")},
                     {"OTLP_RECEIVER_TLS_KEY", dir.file("server.key")}});
  const std::string authority = address + ":" + std::to_string(receiver.port());
  const ScopedEnv via("HTTPS_PROXY", proxy.url());
  RunningDaemon daemon(dir, {"--otlp-endpoint", "https://" + authority, "--otlp-ca-file", dir.file("ca.pem")});
  run_fetch(dir, daemon);
  ASSERT_TRUE(wait_until([&] { return all_exported(daemon.db_path(), 3); }, std::chrono::seconds(20)))
      << daemon.process().err_so_far() << proxy.log();
  EXPECT_NE(proxy.log().find("): CONNECT " + authority), std::string::npos) << proxy.log();
  EXPECT_EQ(proxy.log().find("): POST"), std::string::npos) << "the proxy saw into the tunnel: " << proxy.log();
  EXPECT_EQ(tree_problems(receiver), std::vector<std::string>{});
  EXPECT_EQ(static_cast<std::int64_t>(receiver.acknowledged().size()), exported_spans(daemon.db_path()));
  EXPECT_EQ(daemon.stop().exit_code, 0);
}

// NO_PROXY naming the collector, or a collector on loopback: straight to
// it, the proxy never asked.
TEST(OtlpLive, NoProxyAndLoopbackGoStraightToTheCollector) {
  const std::string address = non_loopback_address();
  TempDir dir;
  Tinyproxy proxy(dir);
  const ScopedEnv via("http_proxy", proxy.url());
  {
    Receiver local(dir, "200", "local");
    RunningDaemon daemon(dir, {"--otlp-endpoint", local.endpoint()});
    run_fetch(dir, daemon);
    ASSERT_TRUE(wait_until([&] { return all_exported(daemon.db_path(), 3); }, std::chrono::seconds(20)))
        << daemon.process().err_so_far();
    EXPECT_FALSE(local.acknowledged().empty());
    EXPECT_EQ(daemon.process().err_so_far().find("through the proxy"), std::string::npos);
    EXPECT_EQ(daemon.stop().exit_code, 0);
  }
  if (!address.empty()) {
    TempDir other;
    Receiver remote(other, "200", "remote", 0, {{"OTLP_RECEIVER_HOST", address}});
    const ScopedEnv except("NO_PROXY", "example.com, " + address);
    RunningDaemon daemon(other, {"--otlp-endpoint", "http://" + address + ":" + std::to_string(remote.port())});
    run_fetch(other, daemon);
    ASSERT_TRUE(wait_until([&] { return all_exported(daemon.db_path(), 3); }, std::chrono::seconds(20)))
        << daemon.process().err_so_far();
    EXPECT_FALSE(remote.acknowledged().empty());
  }
  // Its log names each request it forwards: "Request (file descriptor N): POST ...".
  EXPECT_EQ(proxy.log().find("): POST"), std::string::npos) << proxy.log();
  EXPECT_EQ(proxy.log().find("): CONNECT"), std::string::npos) << proxy.log();
}

// trace2d, exporting to `collector` (with `args`), runs a git status in
// `repo` and gets SIGTERM once the request is with the collector: what it
// logged, and how long it took to stop.
struct Stopped {
  ProcessResult result;
  std::chrono::steady_clock::duration took{};
};
Stopped stop_mid_request(const TempDir& dir, const Receiver& collector, const std::string& repo,
                         std::vector<std::string> args = {}) {
  args.insert(args.end(), {"--otlp-endpoint", collector.endpoint()});
  RunningDaemon daemon(dir, args);
  Stopped stopped;
  EXPECT_EQ(run_git(repo, {"status"}, {{"GIT_TRACE2_EVENT", daemon.git_target()}}).exit_code, 0);
  EXPECT_TRUE(wait_until([&] { return collector.arrived() == 1; }, std::chrono::seconds(20)))
      << daemon.process().err_so_far();
  const auto asked = std::chrono::steady_clock::now();
  stopped.result = daemon.stop();
  stopped.took = std::chrono::steady_clock::now() - asked;
  EXPECT_EQ(stopped.result.exit_code, 0) << stopped.result.err;
  return stopped;
}

// `git gc --auto` goes on in the background (gc.autoDetach): git forks, the
// parent's atexit comes first, and the detached gc sends the rest of the
// same session on the same connection, running its children. The session
// is sent once quiet (otlp.settle_ms; up to 10 min while it has not ended
// again), so its spans hold all of it and its children's gits find their
// child spans.
TEST(OtlpLive, ADetachedGcIsSentWholeWithItsChildrenUnderIt) {
  TempDir dir;
  const std::string repo = make_repo(dir, "repo", 2);
  std::string paths;                // loose objects enough for gc.auto = 1
  for (int i = 0; i < 2000; ++i) {  // objects/17 holds more than one (gc.auto = 1's bound) all but never
    const std::string blob = dir.file("blob" + std::to_string(i));
    write_file(blob, "blob " + std::to_string(i) + "\n");
    paths += blob + "\n";
  }
  ProcessSpec hash = git_spec(repo, {"hash-object", "-w", "--stdin-paths"});
  hash.stdin_data = paths;
  ASSERT_EQ(run_process(hash).exit_code, 0);
  // The detached gc's repack takes a second (a `git` in git's exec path
  // that waits, then runs git): the gc's session is sent neither before
  // nor while.
  std::string real_git;
  std::string path = std::getenv("PATH") != nullptr ? std::getenv("PATH") : "/usr/bin:/bin";
  for (std::size_t at = 0; real_git.empty() && at <= path.size();) {
    const std::size_t end = std::min(path.find(':', at), path.size());
    const std::string candidate = path.substr(at, end - at) + "/git";
    if (::access(candidate.c_str(), X_OK) == 0) {
      real_git = candidate;
    }
    at = end + 1;
  }
  ASSERT_FALSE(real_git.empty());
  const std::string slow_bin = dir.file("slow-bin");
  std::filesystem::create_directories(slow_bin);
  write_file(slow_bin + "/git", "#!/bin/sh\n[ \"$1\" = repack ] && sleep 1\nexec " + real_git + " \"$@\"\n");
  std::filesystem::permissions(slow_bin + "/git", std::filesystem::perms::owner_all);
  Receiver receiver(dir, "200");
  RunningDaemon daemon(dir, {"--otlp-endpoint", receiver.endpoint()});
  const ProcessResult gc = run_git(repo, {"gc", "--auto"},
                                   {{"GIT_TRACE2_EVENT", daemon.git_target()},
                                    {"GIT_CONFIG_PARAMETERS", "'gc.auto'='1' 'gc.autodetach'='true'"},
                                    {"GIT_EXEC_PATH", slow_bin},  // git puts it first in PATH for its children
                                    {"PATH", slow_bin + ":" + path}});
  ASSERT_EQ(gc.exit_code, 0) << gc.err;
  // Done when the detached gc has sent its own atexit and all is sent.
  ASSERT_TRUE(wait_until(
      [&] {
        db::Database db = open_db(daemon.db_path());
        return db.query_int(
                     "SELECT count(*) FROM events WHERE event = 'atexit' AND sid = (SELECT sid FROM sessions "
                     "WHERE cmd_name = 'gc')")
                       .value_or(0) == 2 &&
               db.query_int("SELECT count(*) FROM sessions WHERE status = 'running'").value_or(1) == 0 &&
               queued(daemon.db_path()) == 0;
      },
      std::chrono::seconds(60)))
      << daemon.process().err_so_far();
  const std::int64_t children = open_db(daemon.db_path())
                                    .query_int(
                                        "SELECT count(*) FROM children WHERE sid = (SELECT sid FROM sessions "
                                        "WHERE cmd_name = 'gc')")
                                    .value_or(0);
  EXPECT_GE(children, 3);  // pack-refs, reflog, repack, prune, ...: all after the parent's atexit
  simdjson::dom::parser parser;
  const std::string tree = checked_tree(receiver);
  std::int64_t child_spans = 0;
  for (simdjson::dom::element span : parser.parse(tree)["spans"].get_array()) {
    std::string_view type;
    std::string_view parent;
    if (span["type"].get(type) == simdjson::SUCCESS && span["parent"].get(parent) == simdjson::SUCCESS &&
        type == "child" && parent == "git:gc") {
      ++child_spans;
    }
  }
  EXPECT_EQ(child_spans, children) << tree;
  EXPECT_EQ(tree_problems(receiver), std::vector<std::string>{});
  EXPECT_EQ(daemon.stop().exit_code, 0);
}

// SIGTERM while the collector takes its time to answer: trace2d waits for
// the answer (up to otlp.shutdown_wait_ms), commits the acknowledgement,
// and a restart sends nothing again. Past the wait, the request is
// abandoned and its sessions stay queued: sent again at the next start
// (at least once).
TEST(OtlpLive, SigtermWaitsForTheAnswerInFlightSoNothingIsSentTwice) {
  TempDir dir;
  Receiver receiver(dir, "slow1500,200");
  const std::string repo = make_repo(dir, "repo", 2);
  const Stopped patient = stop_mid_request(dir, receiver, repo);
  EXPECT_GE(patient.took, std::chrono::milliseconds(500)) << "it did not wait";
  EXPECT_EQ(patient.result.err.find("the request is abandoned"), std::string::npos) << patient.result.err;
  EXPECT_EQ(queued(dir.file("t.db")), 0);
  EXPECT_EQ(open_db(dir.file("t.db")).query_int("SELECT exported_sessions FROM otlp_export"), 1);
  {
    RunningDaemon daemon(dir, {"--otlp-endpoint", receiver.endpoint()});
    ASSERT_EQ(run_git(repo, {"log", "-1"}, {{"GIT_TRACE2_EVENT", daemon.git_target()}}).exit_code, 0);
    ASSERT_TRUE(wait_until([&] { return all_exported(daemon.db_path(), 2); }, std::chrono::seconds(20)))
        << daemon.process().err_so_far();
    EXPECT_EQ(daemon.stop().exit_code, 0);
  }
  EXPECT_EQ(receiver.arrived(), 2u) << "the acknowledged request was not sent again";
  for (const auto& [id, count] : receiver.acknowledged()) {
    EXPECT_EQ(count, 1) << "span " << id;
  }

  // A bounded wait: an answer slower than it is abandoned, and its session sent again.
  TempDir impatient;
  Receiver slow(impatient, "slow10000,200", "slow");
  const Stopped abandoned = stop_mid_request(impatient, slow, repo, {"--otlp-shutdown-wait-ms", "300"});
  EXPECT_LT(abandoned.took, std::chrono::seconds(5));
  EXPECT_NE(abandoned.result.err.find("the request is abandoned"), std::string::npos) << abandoned.result.err;
  EXPECT_EQ(queued(impatient.file("t.db")), 1);
  RunningDaemon again(impatient, {"--otlp-endpoint", slow.endpoint()});
  ASSERT_TRUE(wait_until([&] { return all_exported(again.db_path(), 1); }, std::chrono::seconds(20)))
      << again.process().err_so_far();
  EXPECT_EQ(slow.arrived(), 2u);
  EXPECT_EQ(again.stop().exit_code, 0);
}

// A rule drops git status: the collector never sees it, the queue lets it
// go, counted; fetch goes out, with the nickname git reports because
// GIT_TRACE2_CONFIG_PARAMS names it.
TEST(OtlpLive, ADroppedCommandIsCountedNotSentAndTheNicknameGoesOut) {
  TempDir dir;
  Receiver receiver(dir, "200");
  RunningDaemon daemon(dir, {"--otlp-endpoint", receiver.endpoint(), "--otlp-rule", "git:status=drop"});
  const std::string clone = clone_behind(dir);
  const std::map<std::string, std::string> env{{"GIT_TRACE2_EVENT", daemon.git_target()},
                                               {"GIT_TRACE2_CONFIG_PARAMS", "otel.trace2.nickname"}};
  ASSERT_EQ(run_git(clone, {"status", "--short"}, env).exit_code, 0);
  const ProcessResult fetch =
      run_git(clone, {"-c", "otel.trace2.nickname=monorepo", "fetch", "--no-auto-gc", "origin"}, env);
  ASSERT_EQ(fetch.exit_code, 0) << fetch.err;
  ASSERT_TRUE(wait_until(
      [&] {
        return all_exported(daemon.db_path(), 3) &&
               open_db(daemon.db_path()).query_int("SELECT withheld_sessions FROM otlp_export").value_or(0) >= 1;
      },
      std::chrono::seconds(20)))
      << daemon.process().err_so_far();
  EXPECT_EQ(tree_problems(receiver), std::vector<std::string>{});

  const std::string checked = checked_tree(receiver);
  simdjson::dom::parser parser;
  std::set<std::string> names;
  std::string fetch_nickname;
  for (simdjson::dom::element span : parser.parse(checked)["spans"].get_array()) {
    const std::string name(span["name"].get_string().value());
    names.insert(name);
    std::string_view nickname;
    if (name == "git:fetch" && span["nickname"].get(nickname) == simdjson::SUCCESS) {
      fetch_nickname = std::string(nickname);
    }
  }
  EXPECT_EQ(names.count("git:status"), 0u);
  EXPECT_EQ(names.count("git:fetch"), 1u);
  EXPECT_EQ(fetch_nickname, "monorepo");
  db::Database db = open_db(daemon.db_path());
  EXPECT_EQ(db.query_int("SELECT withheld_sessions FROM otlp_export"), 1);
  EXPECT_TRUE(wait_until([&] {
    return ctl(daemon.db_path(), {"status"}).out.find("1 withheld by detail rules") != std::string::npos;
  })) << ctl(daemon.db_path(), {"status"}).out;
  EXPECT_EQ(db.query_text("SELECT nickname FROM sessions WHERE depth = 0 AND cmd_name = 'fetch'"), "monorepo");
  EXPECT_EQ(daemon.stop().exit_code, 0);
}

// git-shell's exec of the git a remote asked for, live: the exec span
// reaches the collector with the git that replaced the process under it,
// and the shell's session (which never exits) is exported too.
TEST(OtlpLive, AnExecSpanCarriesTheGitThatReplacedTheProcess) {
  TempDir dir;
  Receiver receiver(dir, "200");
  RunningDaemon daemon(dir, {"--otlp-endpoint", receiver.endpoint()});
  const std::string repo = make_repo(dir, "repo");
  ProcessSpec shell = git_spec(dir.path(), {}, {{"GIT_TRACE2_EVENT", daemon.git_target()}});
  shell.argv = {"git-shell", "-c", "git-upload-pack '" + repo + "'"};
  shell.stdin_data = "0000";  // a client that wants nothing
  const ProcessResult ran = run_process(shell);
  ASSERT_EQ(ran.exit_code, 0) << ran.err;
  ASSERT_TRUE(wait_until([&] { return all_exported(daemon.db_path(), 2); }, std::chrono::seconds(20)))
      << daemon.process().err_so_far();
  EXPECT_EQ(tree_problems(receiver), std::vector<std::string>{});

  const std::string checked = checked_tree(receiver);
  simdjson::dom::parser parser;
  std::map<std::string, std::string> parent_of;  // span name -> its parent's name
  std::map<std::string, std::string> type_of;
  for (simdjson::dom::element span : parser.parse(checked)["spans"].get_array()) {
    const std::string name(span["name"].get_string().value());
    std::string_view parent;
    parent_of[name] = span["parent"].get(parent) == simdjson::SUCCESS ? std::string(parent) : std::string();
    type_of[name] = std::string(span["type"].get_string().value());
  }
  EXPECT_EQ(parent_of, (std::map<std::string, std::string>{
                           {"git-shell", ""}, {"exec(git)", "git-shell"}, {"git:upload-pack", "exec(git)"}}));
  EXPECT_EQ(type_of["exec(git)"], "exec");
  EXPECT_EQ(static_cast<std::int64_t>(receiver.acknowledged().size()), exported_spans(daemon.db_path()));
  EXPECT_EQ(daemon.stop().exit_code, 0);
}

// The daemon's peak resident memory (VmHWM), in bytes.
std::int64_t peak_rss(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) {
      return std::stoll(line.substr(6)) * 1024;
    }
  }
  return -1;
}

// Finding 4 of issue 24, the audit's recipe: one session of 150,000 `data`
// events of 1 KiB (or 300,000 child_starts) from one uid with the export on,
// while root's git runs. Loaded whole, it took 778 MB (892 MB) and one
// 152 MB request, and inside the unit's MemoryMax=512M trace2d was
// OOM-killed again and again. Now it is sent as a slice of its first
// events, saying how many it left out, and trace2d stays far under 512 MiB.
void expect_huge_session_sent_in_bounded_memory(const std::string& event_kind, int events) {
  TempDir dir;
  ::chmod(dir.path().c_str(), 0755);  // `nobody` reaches the socket
  Receiver receiver(dir, "200");
  // Without the rate limit (issue 24's finding 2 is another change's), and
  // with readers waiting at the memory bound rather than dropping (a loaded
  // machine's store is slow): all of the session is stored, then exported,
  // at once (settling is not what is tested here).
  RunningDaemon daemon(dir, {"--otlp-endpoint", receiver.endpoint(), "--per-uid-rate", "0", "--overflow-wait-ms",
                             "600000", "--otlp-settle-ms", "0"});
  std::string lines =
      R"({"event":"version","sid":"huge-session","thread":"main","time":"2026-11-27T10:00:00.000000Z","evt":"3","exe":"2.39.5"})" "\n"
      R"({"event":"start","sid":"huge-session","thread":"main","time":"2026-11-27T10:00:00.000000Z","t_abs":0.0,"argv":["git","huge"]})" "\n";
  lines.reserve(static_cast<std::size_t>(events) * 1100);
  const std::string value(1000, 'v');
  for (int i = 0; i < events; ++i) {
    if (event_kind == "data") {
      lines += R"({"event":"data","sid":"huge-session","thread":"main","t_abs":0.5,"t_rel":0.5,"nesting":1,"category":"c","key":"k)" +
               std::to_string(i) + R"(","value":")" + value + "\"}\n";
    } else {
      lines += R"({"event":"child_start","sid":"huge-session","thread":"main","time":"2026-11-27T10:00:00.500000Z","t_abs":0.5,"child_id":)" +
               std::to_string(i) +
               R"(,"child_class":"?","use_shell":false,"argv":["true"]})" "\n";
    }
  }
  lines += R"({"event":"atexit","sid":"huge-session","thread":"main","t_abs":1.0,"code":0})" "\n";
  ProcessSpec sender;
  sender.argv = {LINE_SENDER_BIN, daemon.socket_path(), "0"};
  sender.stdin_data = std::move(lines);
  if (::geteuid() == 0) {
    sender.run_as = nobody();
  }
  Process huge(sender);
  // Root's git meanwhile: every run stored.
  const std::string repo = make_repo(dir, "repo");
  for (int i = 0; i < 10; ++i) {
    ASSERT_EQ(run_git(repo, {"status"}, {{"GIT_TRACE2_EVENT", daemon.git_target()}}).exit_code, 0);
  }
  const ProcessResult sent = huge.wait(std::chrono::seconds(300));
  ASSERT_EQ(sent.exit_code, 0) << sent.err;
  ASSERT_TRUE(wait_until(
      [&] {
        return open_db(daemon.db_path())
                   .query_int("SELECT count(*) FROM sessions WHERE sid = 'huge-session' AND status = 'complete'")
                   .value_or(0) == 1;
      },
      std::chrono::seconds(300)))
      << daemon.process().err_so_far();
  ASSERT_TRUE(wait_until([&] { return all_exported(daemon.db_path(), 11); }, std::chrono::seconds(120)))
      << daemon.process().err_so_far();
  const std::int64_t peak = peak_rss(daemon.pid());
  db::Database db = open_db(daemon.db_path());
  EXPECT_EQ(db.query_int("SELECT count(*) FROM sessions WHERE peer_uid = " + std::to_string(::geteuid()) +
                         " AND status = 'complete' AND cmd_name = 'status'"),
            10);
  const std::int64_t stored = db.query_int("SELECT event_count FROM sessions WHERE sid = 'huge-session'").value_or(0);
  EXPECT_EQ(stored, events + 3) << "every line stored (version, start, the events, atexit)";
  // Decoded with the official definitions: the huge session's process span
  // says how many of its events were left out.
  std::ifstream accepted(receiver.accepted_file());
  const std::string text((std::istreambuf_iterator<char>(accepted)), std::istreambuf_iterator<char>());
  simdjson::dom::parser parser;
  std::int64_t left_out = -1;
  for (simdjson::dom::element span : parser.parse(text)["resourceSpans"].at(0)["scopeSpans"].at(0)["spans"].get_array()) {
    bool huge_process = false;
    std::int64_t count = -1;
    for (simdjson::dom::element attribute : span["attributes"].get_array()) {
      const std::string_view key = attribute["key"].get_string().value();
      std::string_view string;
      if (key == "trace2.cmd.sid" && attribute["value"]["stringValue"].get(string) == simdjson::SUCCESS) {
        huge_process = string == "huge-session";
      }
      if (key == "trace2d.events_left_out" && attribute["value"]["intValue"].get(string) == simdjson::SUCCESS) {
        count = std::stoll(std::string(string));
      }
    }
    if (huge_process) {
      left_out = count;
    }
  }
  EXPECT_GT(left_out, stored / 2) << "the huge session's process span says what it left out";
  EXPECT_LT(left_out, stored);
  std::size_t largest = 0;
  std::ifstream requests(dir.file("receiver") + "/requests.jsonl");
  for (std::string line; std::getline(requests, line);) {
    std::int64_t bytes = 0;
    if (parser.parse(line)["bytes"].get(bytes) == simdjson::SUCCESS) {
      largest = std::max(largest, static_cast<std::size_t>(bytes));
    }
  }
  EXPECT_LT(largest, std::size_t{16} << 20) << "one request of " << largest << " bytes";
  EXPECT_EQ(tree_problems(receiver), std::vector<std::string>{});
  std::printf("%d %s events: peak RSS %.1f MiB, largest request %.1f MiB\n", events, event_kind.c_str(),
              static_cast<double>(peak) / (1 << 20), static_cast<double>(largest) / (1 << 20));
  // The unit's MemoryMax is 512M; loaded whole it took 778 MB. (ASan's
  // quarantine and redzones are not trace2d's.)
  if (!k_sanitized) {
    EXPECT_LT(peak, std::int64_t{256} << 20) << "peak RSS";
  }
  EXPECT_EQ(daemon.stop().exit_code, 0);
}

TEST(OtlpLive, AHugeSessionOfDataEventsIsSentAsASliceInBoundedMemory) {
  expect_huge_session_sent_in_bounded_memory("data", 150000);
}

TEST(OtlpLive, AHugeSessionOfChildStartsIsSentAsASliceInBoundedMemory) {
  expect_huge_session_sent_in_bounded_memory("child_start", 300000);
}

// Detail by outcome, live: with summary for ordinary runs and verbose for
// failed and slow ones, the real git's failed checkout reaches the
// collector with its regions, its successful status as a process span
// alone; a run over slow_ms is raised too, saying why.
TEST(OtlpLive, DetailByOutcomeSendsTheFailedAndSlowRunsWholeAndTheOthersAsSummaries) {
  TempDir dir;
  const std::string repo = make_repo(dir, "repo");
  Receiver receiver(dir, "200");
  RunningDaemon daemon(dir, {"--otlp-endpoint", receiver.endpoint(), "--otlp-detail", "summary",
                             "--otlp-outcome-detail", "verbose", "--otlp-slow-ms", "1500"});
  const std::map<std::string, std::string> traced{{"GIT_TRACE2_EVENT", daemon.git_target()}};
  EXPECT_NE(run_git(repo, {"checkout", "no-such-branch"}, traced).exit_code, 0);
  ASSERT_EQ(run_git(repo, {"status", "--short"}, traced).exit_code, 0);
  // Slow: an editor that takes two seconds (a child process git waits for).
  ASSERT_EQ(run_git(repo, {"-c", "core.editor=sleep 2; echo slow >", "commit", "--allow-empty"}, traced).exit_code, 0);
  ASSERT_TRUE(wait_until([&] { return all_exported(daemon.db_path(), 3); }, std::chrono::seconds(20)))
      << daemon.process().err_so_far();

  const std::vector<AcceptedSpan> spans = accepted_spans(receiver.accepted_file());
  const auto process = [&](const std::string& name) -> const AcceptedSpan* {
    for (const AcceptedSpan& span : spans) {
      if (span.type == "process" && (span.name == name || span.name.rfind(name + "#", 0) == 0)) {  // or name#mode
        return &span;
      }
    }
    return nullptr;
  };
  const auto inner_spans = [&](const AcceptedSpan& top) {
    int n = 0;
    for (const AcceptedSpan& span : spans) {
      n += span.trace_id == top.trace_id && span.type != "process" ? 1 : 0;
    }
    return n;
  };
  const AcceptedSpan* checkout = process("git:checkout");
  ASSERT_NE(checkout, nullptr);
  EXPECT_EQ(checkout->attributes.at("trace2d.detail"), "verbose");
  EXPECT_EQ(checkout->attributes.at("trace2d.detail_raised_by"), "failed");
  EXPECT_GT(inner_spans(*checkout), 0) << "the failed run's regions";

  const AcceptedSpan* status = process("git:status");
  ASSERT_NE(status, nullptr);
  EXPECT_EQ(status->attributes.at("trace2d.detail"), "summary");
  EXPECT_FALSE(status->attributes.contains("trace2d.detail_raised_by"));
  EXPECT_EQ(inner_spans(*status), 0) << "an ordinary run sends its process span alone";

  const AcceptedSpan* commit = process("git:commit");
  ASSERT_NE(commit, nullptr);
  EXPECT_EQ(commit->attributes.at("trace2d.detail"), "verbose");
  EXPECT_EQ(commit->attributes.at("trace2d.detail_raised_by"), "slow");
  EXPECT_GT(inner_spans(*commit), 0) << "the slow run's child (the editor) and regions";
}

}  // namespace
}  // namespace trace2d::test
