#pragma once
// The OTLP/HTTP receiver of the exporter's end-to-end tests
// (tests/otlp/otlp_receiver.js under node): it decodes every request with
// the official definitions and answers by a plan, so the tests can play a
// collector that is slow, down, refusing or picky. Shared by the suites
// that export (test_otlp_live.cpp, test_otlp_trace2receiver_compat.cpp).

#include <gtest/gtest.h>
#include <signal.h>
#include <simdjson.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tests/e2e/daemon_fixture.hpp"

namespace trace2d::test {

class Receiver {
 public:
  Receiver(const TempDir& dir, const std::string& plan = "200", std::string name = "receiver", int port = 0,
           std::map<std::string, std::string> env = {})
      : m_out(dir.file(name)) {
    ProcessSpec spec;
    spec.argv = {"node", TRACE2D_OTLP_RECEIVER_JS, TRACE2D_OTLP_DECODER_DIR, m_out, plan};
    spec.env = std::move(env);
    if (port != 0) {
      spec.env["OTLP_RECEIVER_PORT"] = std::to_string(port);
    }
    m_process = std::make_unique<Process>(spec);
    EXPECT_TRUE(wait_until([&] { return m_process->out_so_far().find('\n') != std::string::npos; }))
        << m_process->err_so_far();
    m_port = std::stoi(m_process->out_so_far());
  }
  ~Receiver() { m_process->signal(SIGTERM); }

  [[nodiscard]] int port() const { return m_port; }
  [[nodiscard]] std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(m_port); }

  // One entry per request: its status ("closed" for a dropped connection)
  // and the span ids it held.
  struct Request {
    std::string status;
    std::vector<std::string> span_ids;
    bool gzip = false;
    std::string type;
    std::string url;
  };
  [[nodiscard]] std::vector<Request> requests() const {
    std::vector<Request> out;
    std::ifstream in(m_out + "/requests.jsonl");
    std::string line;
    simdjson::dom::parser parser;
    while (std::getline(in, line)) {
      simdjson::dom::element e;
      if (parser.parse(line).get(e) != simdjson::SUCCESS) {
        continue;  // written while read
      }
      Request r;
      std::int64_t status = 0;
      std::string_view text;
      if (e["status"].get(status) == simdjson::SUCCESS) {
        r.status = std::to_string(status);
      } else if (e["status"].get(text) == simdjson::SUCCESS) {
        r.status = std::string(text);
      }
      simdjson::dom::array ids;
      if (e["spanIds"].get(ids) == simdjson::SUCCESS) {
        for (simdjson::dom::element id : ids) {
          r.span_ids.emplace_back(id.get_string().value());
        }
      }
      bool gzip = false;
      if (e["gzip"].get(gzip) == simdjson::SUCCESS) {
        r.gzip = gzip;
      }
      if (e["type"].get(text) == simdjson::SUCCESS) {
        r.type = std::string(text);
      }
      if (e["url"].get(text) == simdjson::SUCCESS) {
        r.url = std::string(text);
      }
      out.push_back(std::move(r));
    }
    return out;
  }
  // Span ids acknowledged (in 2xx requests), with how often each came.
  [[nodiscard]] std::map<std::string, int> acknowledged() const {
    std::map<std::string, int> ids;
    for (const Request& r : requests()) {
      if (r.status == "200") {
        for (const std::string& id : r.span_ids) {
          ++ids[id];
        }
      }
    }
    return ids;
  }
  [[nodiscard]] std::string accepted_file() const { return m_out + "/accepted.json"; }
  // Requests that arrived, answered or not yet.
  [[nodiscard]] std::size_t arrived() const {
    std::ifstream in(m_out + "/arrived.jsonl");
    return static_cast<std::size_t>(std::count(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>(), '\n'));
  }

 private:
  std::string m_out;
  std::unique_ptr<Process> m_process;
  int m_port = 0;
};

// A span the receiver accepted (accepted.json, OTLP/JSON as the official
// definitions decode it), with its resource.
struct AcceptedSpan {
  std::string type;  // trace2.span.type
  std::string name;
  int kind = 0;
  std::string trace_id;
  std::string sid;                                // its resource's service.instance.id
  std::map<std::string, std::string> attributes;  // every attribute, strings as they are
  std::map<std::string, std::string> shapes;      // key → "string", "int", "other"
  std::map<std::string, std::string> resource;
};

inline std::vector<AcceptedSpan> accepted_spans(const std::string& file) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  EXPECT_EQ(parser.load(file).get(root), simdjson::SUCCESS) << file;
  std::vector<AcceptedSpan> out;
  const auto read = [](simdjson::dom::element list, std::map<std::string, std::string>& values,
                       std::map<std::string, std::string>* shapes) {
    for (simdjson::dom::element kv : list.get_array()) {
      const std::string key(kv["key"].get_string().value());
      simdjson::dom::element value = kv["value"].value();
      std::string_view text;
      if (value["stringValue"].get(text) == simdjson::SUCCESS) {
        values[key] = std::string(text);
        if (shapes != nullptr) (*shapes)[key] = "string";
      } else if (value["intValue"].get(text) == simdjson::SUCCESS) {
        values[key] = std::string(text);
        if (shapes != nullptr) (*shapes)[key] = "int";
      } else {
        values[key] = std::string(simdjson::minify(value));
        if (shapes != nullptr) (*shapes)[key] = "other";
      }
    }
  };
  for (simdjson::dom::element rs : root["resourceSpans"].get_array()) {
    for (simdjson::dom::element ss : rs["scopeSpans"].get_array()) {
      for (simdjson::dom::element s : ss["spans"].get_array()) {
        AcceptedSpan a;
        std::string_view text;
        if (s["name"].get(text) == simdjson::SUCCESS) {
          a.name = std::string(text);
        }
        if (s["traceId"].get(text) == simdjson::SUCCESS) {
          a.trace_id = std::string(text);
        }
        std::int64_t kind = 0;
        if (s["kind"].get(kind) == simdjson::SUCCESS) {
          a.kind = static_cast<int>(kind);
        }
        read(s["attributes"].value(), a.attributes, &a.shapes);
        simdjson::dom::element resource;
        if (s["resource"].get(resource) == simdjson::SUCCESS) {
          read(resource, a.resource, nullptr);
        }
        a.type = a.attributes["trace2.span.type"];
        a.sid = a.resource["service.instance.id"];
        out.push_back(std::move(a));
      }
    }
  }
  return out;
}

// Every stored session (at least `min_sessions`) exported, or withheld by
// a detail rule; none running.
inline bool all_exported(const std::string& db, std::int64_t min_sessions) {
  db::Database check = open_db(db);
  const std::int64_t sessions = check.query_int("SELECT count(*) FROM sessions").value_or(0);
  return sessions >= min_sessions && check.query_int("SELECT count(*) FROM otlp_pending").value_or(1) == 0 &&
         check.query_int("SELECT count(*) FROM sessions WHERE status = 'running'").value_or(1) == 0 &&
         check.query_int("SELECT exported_sessions + withheld_sessions FROM otlp_export").value_or(0) == sessions;
}

}  // namespace trace2d::test
