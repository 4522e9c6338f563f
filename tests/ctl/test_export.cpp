// trace2ctl export --format chrome: the output must be a valid Trace Event
// Format document that trace viewers load without dropping anything.

#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "db/sqlite.hpp"
#include "tests/ctl/imported_traces.hpp"
#include "tests/ctl/sample_database.hpp"

namespace trace2d::test {
namespace {

struct Slice {
  std::string name;
  std::int64_t ts;
  std::int64_t dur;
};

// What the checks found, for assertions on the content.
struct TraceSummary {
  std::map<std::int64_t, std::string> process_names;
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<Slice>> slices;  // by (pid, tid)
  std::size_t instants = 0;
  std::size_t flows = 0;
};

// The rules of the format (and of what Perfetto imports cleanly): known
// phases only; names, pids and tids present; X with a non-negative dur;
// ts non-negative and non-decreasing after the metadata; every pid and
// tid named by metadata; X slices nested properly per thread; every flow
// start with one end.
TraceSummary check_trace(const std::string& text) {
  TraceSummary summary;
  simdjson::dom::parser parser;
  simdjson::dom::object doc;
  EXPECT_EQ(parser.parse(text).get(doc), simdjson::SUCCESS) << text.substr(0, 500);
  simdjson::dom::array events;
  EXPECT_EQ(doc["traceEvents"].get(events), simdjson::SUCCESS);
  EXPECT_EQ(std::string_view(doc["displayTimeUnit"].get_string().value()), "ms");
  std::set<std::pair<std::int64_t, std::int64_t>> named_threads;
  std::set<std::pair<std::int64_t, std::int64_t>> used_threads;
  std::map<std::int64_t, int> flow_ends;
  std::set<std::int64_t> flow_starts;
  std::int64_t last_ts = 0;
  bool metadata_done = false;
  for (simdjson::dom::element event : events) {
    const std::string ph(event["ph"].get_string().value());
    const std::string name(event["name"].get_string().value());
    EXPECT_FALSE(name.empty());
    const std::int64_t pid = event["pid"].get_int64().value();
    if (ph == "M") {
      EXPECT_FALSE(metadata_done) << "metadata after timed events";
      const std::int64_t tid = event["tid"].get_int64().value();
      if (name == "process_name") {
        summary.process_names[pid] = std::string(event["args"]["name"].get_string().value());
      } else if (name == "thread_name") {
        named_threads.insert({pid, tid});
      }
      continue;
    }
    metadata_done = true;
    const std::int64_t ts = event["ts"].get_int64().value();
    EXPECT_GE(ts, 0);
    EXPECT_GE(ts, last_ts) << "out of order: " << name;
    last_ts = ts;
    EXPECT_TRUE(summary.process_names.contains(pid)) << "pid " << pid << " has no process_name";
    if (ph == "C") {
      continue;
    }
    const std::int64_t tid = event["tid"].get_int64().value();
    used_threads.insert({pid, tid});
    if (ph == "X") {
      const std::int64_t dur = event["dur"].get_int64().value();
      EXPECT_GE(dur, 0) << name;
      summary.slices[{pid, tid}].push_back({name, ts, dur});
    } else if (ph == "i") {
      EXPECT_EQ(std::string_view(event["s"].get_string().value()), "t");
      ++summary.instants;
    } else if (ph == "s") {
      EXPECT_TRUE(flow_starts.insert(event["id"].get_int64().value()).second);
      ++summary.flows;
    } else if (ph == "f") {
      EXPECT_EQ(std::string_view(event["bp"].get_string().value()), "e");
      ++flow_ends[event["id"].get_int64().value()];
    } else {
      ADD_FAILURE() << "unexpected phase " << ph;
    }
  }
  for (const auto& thread : used_threads) {
    EXPECT_TRUE(named_threads.contains(thread)) << "thread " << thread.second << " of " << thread.first << " unnamed";
  }
  for (const std::int64_t id : flow_starts) {
    EXPECT_EQ(flow_ends[id], 1) << "flow " << id;
  }
  EXPECT_EQ(flow_ends.size(), flow_starts.size());
  for (auto& [thread, slices] : summary.slices) {
    std::vector<std::int64_t> open_ends;
    for (const Slice& s : slices) {  // already in ts order, longer first on ties
      while (!open_ends.empty() && open_ends.back() <= s.ts) {
        open_ends.pop_back();
      }
      EXPECT_TRUE(open_ends.empty() || s.ts + s.dur <= open_ends.back())
          << s.name << " overlaps its enclosing slice on tid " << thread.second;
      open_ends.push_back(s.ts + s.dur);
    }
  }
  return summary;
}

const Slice* find_slice(const TraceSummary& summary, std::int64_t pid, const std::string& name_part) {
  for (const auto& [thread, slices] : summary.slices) {
    if (thread.first != pid) {
      continue;
    }
    for (const Slice& s : slices) {
      if (s.name.find(name_part) != std::string::npos) {
        return &s;
      }
    }
  }
  return nullptr;
}

TEST(Trace2ctlExport, FetchIsAValidChromeTrace) {
  TempDir dir;
  const std::string file = dir.file("fetch.json");
  const ProcessResult result = run_ctl({"--db", imported_traces_db(), "export", "--format", "chrome", k_fetch_sid, "-o", file});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("for 5 processes to " + file), std::string::npos) << result.out;
  const TraceSummary trace = check_trace(read_file(file));

  // One track per process, under the pid from its SID.
  EXPECT_EQ(trace.process_names,
            (std::map<std::int64_t, std::string>{{5386, "fetch (pid 5386)"},
                                                 {5388, "upload-pack (pid 5388)"},
                                                 {5390, "pack-objects (pid 5390)"},
                                                 {5392, "unpack-objects (pid 5392)"},
                                                 {5393, "rev-list (pid 5393)"}}));
  // Times in microseconds since fetch started.
  const Slice* fetch = find_slice(trace, 5386, "fetch");
  ASSERT_NE(fetch, nullptr);
  EXPECT_EQ(fetch->ts, 0);
  EXPECT_EQ(fetch->dur, 28000);
  const Slice* remote_refs = find_slice(trace, 5386, "remote_refs");
  ASSERT_NE(remote_refs, nullptr);
  EXPECT_EQ(remote_refs->ts, 1255);
  EXPECT_EQ(remote_refs->dur, 3048);
  const Slice* child = find_slice(trace, 5386, "git-upload-pack");
  ASSERT_NE(child, nullptr);
  EXPECT_EQ(child->ts, 1290);
  EXPECT_EQ(child->dur, 21277);
  const Slice* upload_pack = find_slice(trace, 5388, "upload-pack");
  ASSERT_NE(upload_pack, nullptr);
  EXPECT_EQ(upload_pack->ts, 3259);
  EXPECT_EQ(upload_pack->dur, 11849);
  EXPECT_NE(find_slice(trace, 5390, "write-pack-file"), nullptr);
  EXPECT_EQ(trace.flows, 4u);  // fetch -> 3 children, upload-pack -> pack-objects
  EXPECT_GT(trace.instants, 5u);
}

TEST(Trace2ctlExport, EveryCapturedTreeIsAValidChromeTrace) {
  db::Database db(imported_traces_db(), db::OpenMode::read_only);
  db::Statement roots = db.prepare("SELECT sid FROM sessions WHERE parent_sid IS NULL");
  std::vector<std::string> sids{k_parent_sid_prefix};
  while (roots.step()) {
    sids.emplace_back(roots.column_text(0));
  }
  ASSERT_GT(sids.size(), 10u);
  for (const std::string& sid : sids) {
    SCOPED_TRACE(sid);
    const ProcessResult result = run_ctl({"--db", imported_traces_db(), "export", sid});
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const TraceSummary trace = check_trace(result.out);
    EXPECT_FALSE(trace.process_names.empty());
  }
}

TEST(Trace2ctlExport, JsonSummaryAndErrors) {
  TempDir dir;
  const std::string file = dir.file("t.json");
  const ProcessResult result = run_ctl({"--db", imported_traces_db(), "--json", "export", k_commit_sid, "-o", file});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  simdjson::dom::parser parser;
  simdjson::dom::object summary;
  ASSERT_EQ(parser.parse(result.out).get(summary), simdjson::SUCCESS) << result.out;
  EXPECT_EQ(std::string_view(summary["file"].get_string().value()), file);
  EXPECT_EQ(summary["processes"].get_int64().value(), 3);  // commit, rev-parse (from the hook), maintenance
  EXPECT_GT(summary["events"].get_int64().value(), 50);

  const ProcessResult unknown = run_ctl({"--db", imported_traces_db(), "export", "nope"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.err.find("no session with sid 'nope'"), std::string::npos) << unknown.err;
  const ProcessResult format = run_ctl({"--db", imported_traces_db(), "export", "--format", "pprof", k_fetch_sid});
  EXPECT_EQ(format.exit_code, 2);
  const ProcessResult unwritable =
      run_ctl({"--db", imported_traces_db(), "export", k_fetch_sid, "-o", dir.file("missing/dir/t.json")});
  EXPECT_EQ(unwritable.exit_code, 1);
  EXPECT_NE(unwritable.err.find("cannot create"), std::string::npos) << unwritable.err;
}

}  // namespace
}  // namespace trace2d::test
