// The writer thread: commits what it is given, in order, and rides out a
// locked database without losing anything.

#include "daemon/store/store_writer.hpp"

#include <gtest/gtest.h>

#include <thread>

#include "daemon/store/database_setup.hpp"
#include "tests/support/process.hpp"
#include "tests/support/temp_dir.hpp"

namespace trace2d::store {
namespace {

WriteBatch make_batch(std::uint64_t number, std::int64_t session, int events) {
  WriteBatch batch;
  batch.number = number;
  stitch::SessionRecord record;
  record.id = session;
  record.sid = "session-" + std::to_string(session);
  record.event_count = events;
  batch.sessions.push_back(record);
  for (int i = 0; i < events; ++i) {
    EventRow row;
    row.session = session;
    row.seq = i;
    row.type = 1;
    row.body = batch.add_text(R"(,"evt":"3","exe":"test")");
    batch.events.push_back(row);
  }
  return batch;
}

class StoreWriterTest : public ::testing::Test {
 protected:
  void start() {
    m_writer = std::make_unique<StoreWriter>(open_for_writing(m_path), m_queue, m_budget,
                                             StoreWriter::Options{});
    m_thread = std::thread([this] { m_writer->run(); });
  }
  void finish() {
    m_queue.close();
    m_thread.join();
  }
  void push(WriteBatch batch) {
    m_budget.charge(batch.memory_bytes());
    m_queue.push(std::move(batch));
  }
  std::int64_t count(const std::string& sql) {
    Database db(m_path, OpenMode::read_only);
    return db.query_int(sql).value_or(-1);
  }

  test::TempDir m_dir;
  std::string m_path = m_dir.file("w.db");
  pipeline::WorkQueue<WriteBatch> m_queue;
  pipeline::MemoryBudget m_budget{1 << 30};
  std::unique_ptr<StoreWriter> m_writer;
  std::thread m_thread;
};

TEST_F(StoreWriterTest, CommitsEverythingAndReleasesMemory) {
  start();
  for (int b = 1; b <= 50; ++b) {
    push(make_batch(static_cast<std::uint64_t>(b), b, 100));
  }
  finish();
  EXPECT_EQ(count("SELECT count(*) FROM event_store"), 5000);
  EXPECT_EQ(count("SELECT count(*) FROM sessions"), 50);
  EXPECT_EQ(m_writer->committed_batch(), 50u);
  EXPECT_EQ(m_writer->committed_events(), 5000u);
  EXPECT_EQ(m_budget.used(), 0u);
}

TEST_F(StoreWriterTest, CommitsPromptlyWhenIdle) {
  start();
  push(make_batch(1, 1, 3));
  // Visible to readers without closing the queue: the writer does not sit
  // on an open transaction when nothing else arrives.
  EXPECT_TRUE(test::wait_until([&] { return count("SELECT count(*) FROM event_store") == 3; },
                               std::chrono::seconds(2)));
  finish();
}

TEST_F(StoreWriterTest, RidesOutALockedDatabase) {
  start();
  push(make_batch(1, 1, 10));
  ASSERT_TRUE(test::wait_until([&] { return m_writer->committed_batch() == 1; }));
  Database locker(m_path, OpenMode::read_write_create);
  locker.set_busy_timeout(5000);
  locker.exec("BEGIN EXCLUSIVE");
  for (int b = 2; b <= 20; ++b) {
    push(make_batch(static_cast<std::uint64_t>(b), b, 10));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_EQ(m_writer->committed_batch(), 1u);  // nothing gets through the lock
  EXPECT_GT(m_writer->failed_commits(), 0u);
  EXPECT_GT(m_budget.used(), 0u);               // held in memory meanwhile
  locker.exec("COMMIT");
  ASSERT_TRUE(test::wait_until([&] { return m_writer->committed_batch() == 20; }));
  finish();
  EXPECT_EQ(count("SELECT count(*) FROM event_store"), 200);
  EXPECT_EQ(m_budget.used(), 0u);
}

TEST_F(StoreWriterTest, GivesUpOnlyWhenToldAfterClose) {
  start();
  Database locker(m_path, OpenMode::read_write_create);
  locker.set_busy_timeout(5000);
  locker.exec("BEGIN EXCLUSIVE");
  push(make_batch(1, 1, 7));
  m_queue.close();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  m_writer->stop_retrying();
  m_thread.join();
  EXPECT_EQ(m_writer->abandoned_events(), 7u);  // counted, not silently lost
  locker.exec("COMMIT");
}

}  // namespace
}  // namespace trace2d::store
