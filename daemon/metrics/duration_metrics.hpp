#pragma once
// Duration histograms of git commands (by command and exit status) and of
// the regions the configuration names, as a consumer of stitched output.
//
// The labels come from what any local user sends (any uid can claim any
// cmd_name), so everything here is bounded: at most `max_series` label sets
// per family, the first ones seen; later ones, and names no exporter should
// carry (long, or not printable ASCII), fold into the value "other" and are
// counted. One uid may create at most all but a quarter of a family's label
// sets (as with descriptors): a user who invents command names fills its
// own share, and the rest stay for everyone else's commands. Per record the
// work is a hash lookup and a bucket search, under a mutex the scrape holds
// only to copy the figures.

#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string_view>
#include <utility>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "daemon/metrics/exposition.hpp"
#include "daemon/stitch/stitched_consumer.hpp"

namespace trace2d::metrics {

// A region named in the configuration: "category/label", or "category/*"
// for every label of the category.
struct RegionSelector {
  std::string category;
  std::string label;  // "*": any
};
// "pack-objects/write-pack-file" → {pack-objects, write-pack-file}; the
// problem in `error` when it is not category/label.
[[nodiscard]] std::optional<RegionSelector> parse_region_selector(std::string_view text, std::string& error);

// What the command histogram's optional `repo` label holds: nothing (no
// such label), the repository's nickname (the def_param sessions.nickname
// comes from), or the base name of its worktree ("linux" for
// /home/ana/src/linux; not the path, which names people and is long).
enum class RepoLabel : std::uint8_t { none, nickname, worktree };
// "none", "nickname", "worktree"; nothing for anything else.
[[nodiscard]] std::optional<RepoLabel> parse_repo_label(std::string_view text);

class DurationMetrics final : public stitch::StitchedConsumer, public FigureSource {
 public:
  struct Options {
    std::vector<RegionSelector> regions;
    RepoLabel repo_label = RepoLabel::none;
    std::size_t max_series = 200;  // label sets per family, "other" included
    // Sessions and regions remembered as counted (a session ends again when
    // `atexit` follows `exit` in a later hand-over; it is counted once).
    std::size_t remembered = 16384;
  };
  explicit DurationMetrics(Options options);

  // StitchedConsumer: only on_changes() does anything.
  void on_event(const stitch::StitchedEvent&) override {}
  void on_reject(const stitch::RejectedInput&) override {}
  void on_changes(const stitch::StitchChanges& changes, std::uint64_t number) override;
  bool hand_on(std::uint64_t) override { return false; }
  [[nodiscard]] bool wants_hand_on() const override { return false; }
  void close() override {}

  // Appends the families to a scrape (any thread).
  void write_figures(Exposition& out) const override;

 private:
  struct Series {
    std::vector<std::string> labels;
    Histogram histogram;
  };
  // One histogram family with bounded label sets.
  struct Family {
    std::vector<std::string_view> names;  // the labels' names, in order
    std::unordered_map<std::string, std::size_t> index;  // joined labels → series
    std::vector<Series> series;
    // Label sets each uid created; only uids that created one have an entry.
    std::unordered_map<std::int64_t, std::size_t> created_by_uid;
    std::uint64_t folded = 0;  // observations put under "other" for want of room
    void observe(std::vector<std::string> labels, std::int64_t uid, std::size_t max_series, double value);
  };
  // Remembers the last `capacity` keys; old ones are forgotten in order.
  using Key = std::pair<std::int64_t, std::int64_t>;  // session id, region seq
  struct KeyHash {
    std::size_t operator()(const Key& key) const noexcept {
      return std::hash<std::uint64_t>{}(static_cast<std::uint64_t>(key.first) * 1000003U + static_cast<std::uint64_t>(key.second));
    }
  };
  struct Recent {
    std::unordered_set<Key, KeyHash> keys;
    std::deque<Key> order;
    std::size_t capacity = 0;
    bool insert(const Key& key);  // false when already there
  };

  void on_session(const stitch::SessionRecord& session);
  void on_region(const stitch::RegionRecord& region, std::int64_t uid);
  [[nodiscard]] const RegionSelector* selected(const stitch::RegionRecord& region) const;

  Options m_options;
  mutable std::mutex m_mutex;
  Family m_commands;
  Family m_regions;
  std::uint64_t m_untimed = 0;  // ended without a duration (cut off)
  Recent m_counted_sessions;
  Recent m_counted_regions;
};

// A label value from hostile input: itself when short printable ASCII, else "other".
[[nodiscard]] std::string bounded_label(const std::optional<std::string>& value, std::string_view if_none);

}  // namespace trace2d::metrics
