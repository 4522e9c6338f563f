// The forwarder (daemon/export/forwarder.hpp) with a scripted backend: what
// it does with the collector's answers is the same whatever builds and
// sends the requests, so the seam is tested through a Sender of its own.
// The queue is a real database's.

#include "daemon/export/forwarder.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <mutex>
#include <numeric>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "db/database_setup.hpp"
#include "db/otlp_queue.hpp"
#include "tests/support/temp_dir.hpp"

namespace trace2d::exporter {
namespace {

// Each offered session is one item of `units_per_session` units, but those
// listed as withheld; a request's body is its sessions' ids. Answers are
// taken from the script, then `accepted`.
class ScriptedSender final : public Sender {
 public:
  ScriptedSender(std::deque<Answer> script, std::size_t units_per_session, std::vector<std::int64_t> withheld = {})
      : m_script(std::move(script)), m_units(units_per_session), m_withheld(std::move(withheld)) {}

  void open(db::Database&) override {}
  void close() override {}
  std::unique_ptr<LoadedRound> load(db::Database&, std::vector<db::PendingSession> offered, std::size_t,
                                    std::size_t) override {
    if (m_send_time.count() > 0) {
      // Long after the delivering thread took the round before (when the
      // loader was woken): is that round still being built or sent?
      std::this_thread::sleep_for(m_send_time / 10);
      if (m_delivering.load()) {
        m_loads_while_delivering.fetch_add(1);
      }
    }
    auto loaded = std::make_unique<Offered>();
    loaded->sessions = std::move(offered);
    return loaded;
  }
  void begin_round(db::Database&) override {}
  void build(std::unique_ptr<LoadedRound> loaded, std::size_t, Round& round) override {
    m_delivering.store(true);
    const std::vector<db::PendingSession>& offered = dynamic_cast<Offered&>(*loaded).sessions;
    round.first_waiting = offered.size();
    for (const db::PendingSession& session : offered) {
      if (std::find(m_withheld.begin(), m_withheld.end(), session.session_id) != m_withheld.end()) {
        round.withheld.push_back(session.session_id);
      } else {
        round.items.push_back({session.session_id, m_units});
      }
    }
    m_items = round.items;
  }
  void encode(std::size_t first, std::size_t last, std::string& body) override {
    body.clear();
    for (std::size_t i = first; i < last; ++i) {
      body += std::to_string(m_items[i].session_id) + " ";
    }
  }
  CollectorAnswer send(std::string& body) override {
    std::this_thread::sleep_for(m_send_time);  // a slow collector
    m_delivering.store(false);
    std::lock_guard lock(m_mutex);
    m_requests.push_back(body);
    CollectorAnswer answer;
    answer.answer = m_script.empty() ? Answer::accepted : m_script.front();
    if (answer.answer == Answer::accepted) {
      m_accepted.push_back(body);
    }
    answer.status = "scripted";
    answer.retry_after = std::chrono::milliseconds(10);
    if (!m_script.empty()) {
      m_script.pop_front();
    }
    return answer;
  }
  void abort() override {}
  [[nodiscard]] const std::string& target() const override { return m_target; }
  [[nodiscard]] std::string describe() const override { return "scripted"; }

  std::vector<std::string> requests() {
    std::lock_guard lock(m_mutex);
    return m_requests;
  }
  std::vector<std::string> accepted() {
    std::lock_guard lock(m_mutex);
    return m_accepted;
  }
  // Each send() takes this long (and each load() a tenth of it).
  void set_send_time(std::chrono::milliseconds time) { m_send_time = time; }
  // The loads that found a round between its build() and the end of its send().
  [[nodiscard]] int loads_while_delivering() const { return m_loads_while_delivering.load(); }

 private:
  struct Offered final : LoadedRound {
    std::vector<db::PendingSession> sessions;
  };

  std::atomic<bool> m_delivering{false};
  std::atomic<int> m_loads_while_delivering{0};
  std::chrono::milliseconds m_send_time{0};
  std::vector<std::string> m_accepted;
  std::mutex m_mutex;
  std::deque<Answer> m_script;
  std::size_t m_units;
  std::vector<std::int64_t> m_withheld;
  std::vector<RoundItem> m_items;
  std::vector<std::string> m_requests;
  std::string m_target = "scripted://collector";
};

class ForwarderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    {
      db::Database db = db::open_for_writing(m_path);
      db::set_export_enabled(db, true, "scripted://collector");
    }
    add_sessions(1, 4, 1000);
  }

  // Queues `count` more finished sessions of `uid`, ids from `first`.
  void add_sessions(std::int64_t first, std::int64_t count, std::int64_t uid) {
    db::Database db = db::open_for_writing(m_path);
    db::Statement insert = db.prepare(
        "INSERT INTO sessions (sid, id, root_sid, depth, status, source, peer_uid, first_received, last_received)"
        " VALUES ('s' || ?1, ?1, 's' || ?1, 0, 'complete', 'stream', ?2, 'x', 'x')");
    for (std::int64_t id = first; id < first + count; ++id) {
      insert.bind_int(1, id);
      insert.bind_int(2, uid);
      insert.run();
      insert.reset();
    }
  }

  // Runs a forwarder over the queue until it is empty (or 20 s).
  void forward(ScriptedSender* sender_view, std::unique_ptr<Sender> sender, std::size_t sessions_per_request = 256) {
    ForwarderOptions options;
    options.poll = std::chrono::milliseconds(10);
    options.settle = std::chrono::milliseconds(0);  // the sessions here are written finished: no more comes
    options.max_backoff = std::chrono::milliseconds(50);
    options.max_sessions_per_request = sessions_per_request;
    options.name = "test";
    m_forwarder = std::make_unique<Forwarder>(m_path, options, std::move(sender));
    m_forwarder->start();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (queued() > 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    m_forwarder->stop();
    m_requests = sender_view->requests();
  }

  // Read while the forwarder writes: a busy database is waited for.
  [[nodiscard]] std::int64_t query(const std::string& sql) const {
    db::Database check(m_path, db::OpenMode::read_only);
    check.set_busy_timeout(10000);
    return check.query_int(sql).value_or(-1);
  }
  [[nodiscard]] std::int64_t queued() const { return query("SELECT count(*) FROM otlp_pending"); }
  [[nodiscard]] std::int64_t status(const std::string& column) const {
    return query("SELECT " + column + " FROM otlp_export");
  }

  test::TempDir m_dir;
  std::string m_path = m_dir.file("t.db");
  std::unique_ptr<Forwarder> m_forwarder;
  std::vector<std::string> m_requests;
};

TEST_F(ForwarderTest, TooLargeSendsEachHalfOnItsOwnAndEverySessionLeavesOnce) {
  auto sender = std::make_unique<ScriptedSender>(std::deque<Answer>{Answer::too_large}, 3);
  ScriptedSender* view = sender.get();
  forward(view, std::move(sender));
  EXPECT_EQ(m_requests, (std::vector<std::string>{"1 2 3 4 ", "1 2 ", "3 4 "}));
  EXPECT_EQ(queued(), 0);
  EXPECT_EQ(m_forwarder->delivered_units(), 12u);
  EXPECT_EQ(status("exported_spans"), 12);
}

// A refusal that sending again may change (401: a wrong token) pauses the
// export and keeps the queue; the next acknowledgement takes it all.
TEST_F(ForwarderTest, ANotNowAnswerPausesAndKeepsTheQueueUntilTheCollectorTakesIt) {
  auto sender = std::make_unique<ScriptedSender>(std::deque<Answer>{Answer::not_now, Answer::not_now}, 1);
  ScriptedSender* view = sender.get();
  forward(view, std::move(sender));
  EXPECT_EQ(m_requests, (std::vector<std::string>(3, "1 2 3 4 ")));
  EXPECT_EQ(queued(), 0);
  EXPECT_EQ(m_forwarder->failures(), 2u);
  EXPECT_FALSE(m_forwarder->paused());
  EXPECT_EQ(status("paused_since IS NULL"), 1);
}

// What the backend's rules make nothing of leaves the queue unsent,
// counted; a malformed request is dropped, counted by reason, not retried.
TEST_F(ForwarderTest, WithheldSessionsLeaveUnsentAndAMalformedRequestIsDroppedOnce) {
  auto sender =
      std::make_unique<ScriptedSender>(std::deque<Answer>{Answer::malformed}, 1, std::vector<std::int64_t>{2, 4});
  ScriptedSender* view = sender.get();
  forward(view, std::move(sender));
  EXPECT_EQ(m_requests, (std::vector<std::string>{"1 3 "}));
  EXPECT_EQ(queued(), 0);
  EXPECT_EQ(status("withheld_sessions"), 2);
  EXPECT_EQ(m_forwarder->delivered_units(), 0u);
  EXPECT_EQ(query("SELECT sum(sessions) FROM otlp_dropped WHERE reason = 'bad_request'"), 2);
}

// The next round is loaded while the one before is sent, and no session
// is in two rounds at once: across three uids' sessions in rounds of 8,
// with the collector refusing twice on the way, every session is accepted
// exactly once.
TEST_F(ForwarderTest, TheNextRoundIsLoadedWhileOneIsSentAndEachSessionIsAcceptedOnce) {
  add_sessions(5, 60, 1001);
  add_sessions(65, 36, 1002);
  auto sender = std::make_unique<ScriptedSender>(
      std::deque<Answer>{Answer::accepted, Answer::accepted, Answer::not_now, Answer::accepted, Answer::not_now}, 1);
  sender->set_send_time(std::chrono::milliseconds(100));
  ScriptedSender* view = sender.get();
  forward(view, std::move(sender), 8);
  EXPECT_EQ(queued(), 0);
  std::vector<std::int64_t> accepted;
  for (const std::string& body : view->accepted()) {
    std::istringstream ids(body);
    for (std::int64_t id = 0; ids >> id;) {
      accepted.push_back(id);
    }
  }
  std::sort(accepted.begin(), accepted.end());
  std::vector<std::int64_t> all(100);
  std::iota(all.begin(), all.end(), 1);
  EXPECT_EQ(accepted, all);
  EXPECT_EQ(m_forwarder->delivered_units(), 100u);
  EXPECT_EQ(m_forwarder->failures(), 2u);
  // Rounds of 8 sessions, 13 accepted: the loader read ahead during most.
  EXPECT_GE(view->loads_while_delivering(), 8);
}

}  // namespace
}  // namespace trace2d::exporter
