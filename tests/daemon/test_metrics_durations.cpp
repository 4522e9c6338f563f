// The duration histograms as a consumer of stitched output: what counts,
// once, and how hostile label values are bounded.

#include "daemon/metrics/duration_metrics.hpp"

#include <gtest/gtest.h>

namespace trace2d::metrics {
namespace {

using stitch::SessionRecord;
using stitch::SessionStatus;

SessionRecord session(std::int64_t id, std::optional<std::string> cmd, SessionStatus status,
                      std::optional<double> elapsed, std::optional<std::int64_t> code) {
  SessionRecord s;
  s.id = id;
  s.cmd_name = std::move(cmd);
  s.status = status;
  s.elapsed = elapsed;
  s.exit_code = code;
  return s;
}

stitch::RegionRecord region(std::int64_t session, std::int64_t seq, std::string category, std::string label,
                            std::optional<double> elapsed) {
  stitch::RegionRecord r;
  r.session = session;
  r.seq = seq;
  r.category = std::move(category);
  r.label = std::move(label);
  r.elapsed = elapsed;
  return r;
}

std::string scrape(const DurationMetrics& metrics) {
  Exposition out(Format::text);
  metrics.write_figures(out);
  return std::move(out).finish();
}

bool has(const std::string& text, const std::string& line) { return text.find(line + "\n") != std::string::npos; }

TEST(DurationMetrics, CountsEachFinishedCommandOnceByCommandAndExit) {
  DurationMetrics metrics({});
  stitch::StitchChanges first;
  first.sessions.push_back(session(1, "status", SessionStatus::running, std::nullopt, std::nullopt));
  first.sessions.push_back(session(2, "fetch", SessionStatus::complete, 0.3, 1));
  metrics.on_changes(first, 1);
  // atexit after exit, in a later hand-over: the same session again.
  stitch::StitchChanges second;
  second.sessions.push_back(session(2, "fetch", SessionStatus::complete, 0.31, 1));
  second.sessions.push_back(session(1, "status", SessionStatus::complete, 0.02, 0));
  metrics.on_changes(second, 2);
  const std::string text = scrape(metrics);
  EXPECT_TRUE(has(text, R"(trace2d_git_command_duration_seconds_count{cmd="fetch",exit="1"} 1)")) << text;
  EXPECT_TRUE(has(text, R"(trace2d_git_command_duration_seconds_sum{cmd="fetch",exit="1"} 0.3)")) << text;
  EXPECT_TRUE(has(text, R"(trace2d_git_command_duration_seconds_bucket{cmd="fetch",exit="1",le="0.25"} 0)"));
  EXPECT_TRUE(has(text, R"(trace2d_git_command_duration_seconds_bucket{cmd="fetch",exit="1",le="0.5"} 1)"));
  EXPECT_TRUE(has(text, R"(trace2d_git_command_duration_seconds_count{cmd="status",exit="0"} 1)")) << text;
  EXPECT_TRUE(has(text, "trace2d_git_commands_untimed_total 0")) << text;
}

TEST(DurationMetrics, ARepoLabelFromTheNicknameOrTheWorktreesBaseName) {
  const auto run = [](std::int64_t id, std::optional<std::string> nickname, std::optional<std::string> worktree) {
    SessionRecord s = session(id, "status", SessionStatus::complete, 0.02, 0);
    s.nickname = std::move(nickname);
    s.worktree = std::move(worktree);
    return s;
  };
  stitch::StitchChanges changes;
  changes.sessions.push_back(run(1, "monorepo", "/home/ana/src/big"));
  changes.sessions.push_back(run(2, std::nullopt, "/home/ana/src/linux/"));
  changes.sessions.push_back(run(3, std::nullopt, std::nullopt));
  changes.sessions.push_back(run(4, std::string(100, 'n'), "/srv/" + std::string(100, 'w')));

  DurationMetrics by_nickname({.regions = {}, .repo_label = RepoLabel::nickname});
  by_nickname.on_changes(changes, 1);
  std::string text = scrape(by_nickname);
  EXPECT_TRUE(has(text, R"(trace2d_git_command_duration_seconds_count{cmd="status",exit="0",repo="monorepo"} 1)")) << text;
  EXPECT_TRUE(has(text, R"(trace2d_git_command_duration_seconds_count{cmd="status",exit="0",repo="none"} 2)")) << text;
  EXPECT_TRUE(has(text, R"(trace2d_git_command_duration_seconds_count{cmd="status",exit="0",repo="other"} 1)")) << text;

  DurationMetrics by_worktree({.regions = {}, .repo_label = RepoLabel::worktree});
  by_worktree.on_changes(changes, 1);
  text = scrape(by_worktree);
  EXPECT_TRUE(has(text, R"(trace2d_git_command_duration_seconds_count{cmd="status",exit="0",repo="big"} 1)")) << text;
  EXPECT_TRUE(has(text, R"(trace2d_git_command_duration_seconds_count{cmd="status",exit="0",repo="linux"} 1)")) << text;
  EXPECT_TRUE(has(text, R"(trace2d_git_command_duration_seconds_count{cmd="status",exit="0",repo="none"} 1)")) << text;
  EXPECT_TRUE(has(text, R"(trace2d_git_command_duration_seconds_count{cmd="status",exit="0",repo="other"} 1)")) << text;
  EXPECT_EQ(text.find("/home"), std::string::npos) << "never the path: " << text;

  DurationMetrics without({});
  without.on_changes(changes, 1);
  text = scrape(without);
  EXPECT_TRUE(has(text, R"(trace2d_git_command_duration_seconds_count{cmd="status",exit="0"} 4)")) << text;
  EXPECT_EQ(text.find("repo="), std::string::npos) << text;

  EXPECT_EQ(parse_repo_label("worktree"), RepoLabel::worktree);
  EXPECT_EQ(parse_repo_label("none"), RepoLabel::none);
  EXPECT_FALSE(parse_repo_label("path"));
}

TEST(DurationMetrics, ManyRepositoriesFoldIntoOtherWithinTheBound) {
  DurationMetrics metrics({.regions = {}, .repo_label = RepoLabel::worktree, .max_series = 10});
  stitch::StitchChanges changes;
  for (int i = 0; i < 50; ++i) {
    SessionRecord s = session(i + 1, "status", SessionStatus::complete, 0.02, 0);
    s.worktree = "/src/repo" + std::to_string(i);
    changes.sessions.push_back(std::move(s));
  }
  metrics.on_changes(changes, 1);
  const std::string text = scrape(metrics);
  std::size_t series = 0;
  for (std::size_t at = text.find("trace2d_git_command_duration_seconds_count{"); at != std::string::npos;
       at = text.find("trace2d_git_command_duration_seconds_count{", at + 1)) {
    ++series;
  }
  // One sender: its share of the 10 label sets (all but a quarter: 8),
  // and "other" for the other 42 repositories.
  EXPECT_EQ(series, 9U) << text;
  EXPECT_TRUE(has(text, R"(trace2d_git_command_duration_seconds_count{cmd="other",exit="other",repo="other"} 42)")) << text;
}

TEST(DurationMetrics, SignalsIncompleteAndStrangeExitCodes) {
  DurationMetrics metrics({});
  stitch::StitchChanges changes;
  SessionRecord killed = session(1, "gc", SessionStatus::complete, 2.0, std::nullopt);
  killed.signo = 15;
  changes.sessions.push_back(killed);
  changes.sessions.push_back(session(2, "push", SessionStatus::complete, 1.0, 300));
  changes.sessions.push_back(session(3, "clone", SessionStatus::incomplete, std::nullopt, std::nullopt));
  changes.sessions.push_back(session(6, "log", SessionStatus::complete, -1.0, 0));  // a sender's lie
  changes.sessions.push_back(session(4, std::nullopt, SessionStatus::complete, 0.001, 0));
  changes.sessions.push_back(session(5, "evil\"}\n# EOF", SessionStatus::complete, 0.001, 0));
  metrics.on_changes(changes, 1);
  const std::string text = scrape(metrics);
  EXPECT_TRUE(has(text, R"(trace2d_git_command_duration_seconds_count{cmd="gc",exit="signal"} 1)")) << text;
  EXPECT_TRUE(has(text, R"(trace2d_git_command_duration_seconds_count{cmd="push",exit="other"} 1)")) << text;
  EXPECT_TRUE(has(text, R"(trace2d_git_command_duration_seconds_count{cmd="unknown",exit="0"} 1)")) << text;
  EXPECT_TRUE(has(text, R"(trace2d_git_command_duration_seconds_count{cmd="other",exit="0"} 1)")) << text;
  EXPECT_EQ(text.find("evil"), std::string::npos);
  EXPECT_TRUE(has(text, "trace2d_git_commands_untimed_total 2")) << text;
  EXPECT_EQ(text.find("clone"), std::string::npos);
  EXPECT_EQ(text.find("log"), std::string::npos);
}

TEST(DurationMetrics, LabelSetsAreBoundedAndWhatIsFoldedIsCounted) {
  DurationMetrics::Options options;
  options.max_series = 3;  // two named, one kept for "other"
  DurationMetrics metrics(options);
  stitch::StitchChanges changes;
  std::int64_t id = 0;
  for (const char* cmd : {"a", "b", "c", "d", "a"}) {
    changes.sessions.push_back(session(++id, cmd, SessionStatus::complete, 0.1, 0));
  }
  // Names no scrape should carry: too long, control characters.
  changes.sessions.push_back(session(++id, std::string(65, 'x'), SessionStatus::complete, 0.1, 0));
  changes.sessions.push_back(session(++id, "bad\nname", SessionStatus::complete, 0.1, 0));
  metrics.on_changes(changes, 1);
  const std::string text = scrape(metrics);
  EXPECT_TRUE(has(text, R"(trace2d_git_command_duration_seconds_count{cmd="a",exit="0"} 2)")) << text;
  EXPECT_TRUE(has(text, R"(trace2d_git_command_duration_seconds_count{cmd="b",exit="0"} 1)")) << text;
  // c, d, and the two names read as "other": no room for a third label set.
  EXPECT_TRUE(has(text, R"(trace2d_git_command_duration_seconds_count{cmd="other",exit="other"} 4)")) << text;
  EXPECT_EQ(text.find(R"(cmd="c")"), std::string::npos);
  EXPECT_TRUE(has(text, R"(trace2d_metrics_folded_observations_total{family="trace2d_git_command_duration_seconds"} 4)"))
      << text;
  EXPECT_EQ(text.find("bad"), std::string::npos);
}

// One uid inventing command names fills its own share (all but a quarter of
// the label sets), not everyone's: another uid's commands still get theirs.
TEST(DurationMetrics, OneUidCannotTakeEveryLabelSet) {
  DurationMetrics::Options options;
  options.max_series = 12;  // a share of 9 per uid
  DurationMetrics metrics(options);
  stitch::StitchChanges changes;
  std::int64_t id = 0;
  for (int i = 0; i < 20; ++i) {
    SessionRecord s = session(++id, "junk-" + std::to_string(i), SessionStatus::complete, 0.1, 0);
    s.peer_uid = 1001;
    changes.sessions.push_back(std::move(s));
  }
  for (const char* cmd : {"status", "fetch"}) {
    SessionRecord s = session(++id, cmd, SessionStatus::complete, 0.2, 0);
    s.peer_uid = 1000;
    changes.sessions.push_back(std::move(s));
  }
  metrics.on_changes(changes, 1);
  const std::string text = scrape(metrics);
  for (int i = 0; i < 9; ++i) {
    EXPECT_TRUE(has(text, "trace2d_git_command_duration_seconds_count{cmd=\"junk-" + std::to_string(i) +
                              "\",exit=\"0\"} 1"))
        << text;
  }
  EXPECT_EQ(text.find(R"(cmd="junk-9")"), std::string::npos) << text;
  // The 11 names past uid 1001's share are its loss, counted.
  EXPECT_TRUE(has(text, R"(trace2d_git_command_duration_seconds_count{cmd="other",exit="other"} 11)")) << text;
  EXPECT_TRUE(has(text, R"(trace2d_metrics_folded_observations_total{family="trace2d_git_command_duration_seconds"} 11)"))
      << text;
  EXPECT_TRUE(has(text, R"(trace2d_git_command_duration_seconds_count{cmd="status",exit="0"} 1)")) << text;
  EXPECT_TRUE(has(text, R"(trace2d_git_command_duration_seconds_count{cmd="fetch",exit="0"} 1)")) << text;
}

TEST(DurationMetrics, OnlyConfiguredRegionsOnceLeft) {
  DurationMetrics::Options options;
  std::string error;
  options.regions.push_back(*parse_region_selector("pack-objects/*", error));
  options.regions.push_back(*parse_region_selector("index/do_read_index", error));
  DurationMetrics metrics(options);
  stitch::StitchChanges changes;
  changes.regions.push_back(region(1, 10, "pack-objects", "write-pack-file", std::nullopt));  // still open
  changes.regions.push_back(region(1, 11, "pack-objects", "enumerate-objects", 0.02));
  changes.regions.push_back(region(1, 12, "index", "do_read_index", 0.001));
  changes.regions.push_back(region(1, 13, "index", "refresh", 0.5));  // not named
  metrics.on_changes(changes, 1);
  stitch::StitchChanges later;
  later.regions.push_back(region(1, 10, "pack-objects", "write-pack-file", 1.5));
  later.regions.push_back(region(1, 10, "pack-objects", "write-pack-file", 1.5));  // the same region again
  metrics.on_changes(later, 2);
  const std::string text = scrape(metrics);
  EXPECT_TRUE(has(text, R"(trace2d_git_region_duration_seconds_count{category="pack-objects",label="write-pack-file"} 1)"))
      << text;
  EXPECT_TRUE(has(text, R"(trace2d_git_region_duration_seconds_count{category="pack-objects",label="enumerate-objects"} 1)"));
  EXPECT_TRUE(has(text, R"(trace2d_git_region_duration_seconds_count{category="index",label="do_read_index"} 1)"));
  EXPECT_EQ(text.find("refresh"), std::string::npos);
}

TEST(DurationMetrics, RegionSelectorsAreCategorySlashLabel) {
  std::string error;
  const auto exact = parse_region_selector("pack-objects/write-pack-file", error);
  ASSERT_TRUE(exact);
  EXPECT_EQ(exact->category, "pack-objects");
  EXPECT_EQ(exact->label, "write-pack-file");
  EXPECT_FALSE(parse_region_selector("pack-objects", error));
  EXPECT_NE(error.find("category/label"), std::string::npos);
  EXPECT_FALSE(parse_region_selector("/label", error));
  EXPECT_FALSE(parse_region_selector("cat/", error));
  EXPECT_FALSE(parse_region_selector("cat/la\"bel\n", error));
}

TEST(DurationMetrics, RemembersABoundedNumberOfCountedSessions) {
  DurationMetrics::Options options;
  options.remembered = 2;
  DurationMetrics metrics(options);
  for (std::int64_t id = 1; id <= 3; ++id) {
    stitch::StitchChanges changes;
    changes.sessions.push_back(session(id, "log", SessionStatus::complete, 0.1, 0));
    metrics.on_changes(changes, static_cast<std::uint64_t>(id));
  }
  // Session 3 is still remembered; session 1 was forgotten (the memory is bounded).
  stitch::StitchChanges again;
  again.sessions.push_back(session(3, "log", SessionStatus::complete, 0.1, 0));
  again.sessions.push_back(session(1, "log", SessionStatus::complete, 0.1, 0));
  metrics.on_changes(again, 4);
  EXPECT_TRUE(has(scrape(metrics), R"(trace2d_git_command_duration_seconds_count{cmd="log",exit="0"} 4)"));
}

}  // namespace
}  // namespace trace2d::metrics
