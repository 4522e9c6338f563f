// The writer thread: commits what it is given, in order, rides out a
// locked database without losing anything, and recreates a database whose
// file was removed under it.

#include "daemon/store/store_writer.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <thread>

#include "db/database_setup.hpp"
#include "daemon/store/name_table.hpp"
#include "daemon/store/session_catalog_db.hpp"
#include "proto/timestamp.hpp"
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

// Like make_batch, with each event's type and thread interned in `names`
// (the first batch to use a name carries its `names` row).
WriteBatch make_named_batch(std::uint64_t number, std::int64_t session, int events, NameTable& names) {
  WriteBatch batch = make_batch(number, session, events);
  for (EventRow& row : batch.events) {
    row.type = names.intern("kind-" + std::to_string(row.seq % 3), batch).value();
    row.thread = names.intern("thread-main", batch);
  }
  return batch;
}

class StoreWriterTest : public ::testing::Test {
 protected:
  void start(StoreWriter::Options options = {}) {
    db::Database db = db::open_for_writing(m_path);
    m_names.load(db);
    m_writer = std::make_unique<StoreWriter>(std::move(db), m_queue, m_budget, std::move(options));
    m_thread = std::thread([this] { m_writer->run(); });
  }
  void start_with_names() {
    StoreWriter::Options options;
    options.names = &m_names;
    start(std::move(options));
  }
  void finish() {
    m_queue.close();
    m_thread.join();
  }
  // After a failed assertion: end the thread rather than terminate.
  void TearDown() override {
    if (m_thread.joinable()) {
      m_queue.close();
      m_writer->stop_retrying();
      m_thread.join();
    }
  }
  void push(WriteBatch batch) {
    m_budget.charge(batch.memory_bytes());
    m_queue.push(std::move(batch));
  }
  // -1 when there is no database (yet) to ask.
  std::int64_t count(const std::string& sql) {
    try {
      db::Database db(m_path, db::OpenMode::read_only);
      return db.query_int(sql).value_or(-1);
    } catch (const db::SqliteError&) {
      return -1;
    }
  }
  void remove_database(std::initializer_list<const char*> suffixes = {"", "-wal", "-shm"}) {
    for (const char* suffix : suffixes) {
      std::filesystem::remove(m_path + suffix);
    }
  }

  test::TempDir m_dir;
  std::string m_path = m_dir.file("w.db");
  ingest::WorkQueue<WriteBatch> m_queue;
  ingest::MemoryBudget m_budget{1 << 30};
  NameTable m_names;
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

// Every committed batch that says when its lines were read is one sample
// of the read-to-commit histogram, in the bucket of its time.
TEST_F(StoreWriterTest, EachCommittedBatchIsASampleOfTheLatencyHistogram) {
  start();
  const std::int64_t now = proto::unix_now_us();
  for (int b = 1; b <= 3; ++b) {
    WriteBatch batch = make_batch(static_cast<std::uint64_t>(b), b, 2);
    batch.oldest_received_us = now - 3'000'000;  // read 3 s ago: the bucket up to 5 s
    push(std::move(batch));
  }
  push(make_batch(4, 4, 2));  // no time of reading (an imported batch): not a sample
  finish();
  const CommitLatencyHistogram histogram = m_writer->commit_latency_histogram();
  EXPECT_EQ(histogram.count, 3u);
  const auto five_seconds = static_cast<std::size_t>(
      std::find(histogram.k_bounds_s.begin(), histogram.k_bounds_s.end(), 5.0) - histogram.k_bounds_s.begin());
  ASSERT_LT(five_seconds, histogram.k_bounds_s.size());
  EXPECT_EQ(histogram.buckets[five_seconds], 3u);
  EXPECT_GE(histogram.sum_s, 9.0);
  EXPECT_LT(histogram.sum_s, 9.0 + 3 * 2.0);
  EXPECT_EQ(m_writer->commit_latency().samples, 3u);  // the ring of recent commits, as status shows it
}

TEST_F(StoreWriterTest, RidesOutALockedDatabase) {
  start();
  push(make_batch(1, 1, 10));
  ASSERT_TRUE(test::wait_until([&] { return m_writer->committed_batch() == 1; }));
  db::Database locker(m_path, db::OpenMode::read_write_create);
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
  db::Database locker(m_path, db::OpenMode::read_write_create);
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

TEST_F(StoreWriterTest, RecreatesARemovedDatabaseWithTheNamesHandedOutBefore) {
  start_with_names();
  DatabaseSessionCatalog catalog(m_path, [this] { return m_writer->database_recreated(); });
  push(make_named_batch(1, 1, 10, m_names));
  ASSERT_TRUE(test::wait_until([&] { return m_writer->committed_batch() == 1; }));
  ASSERT_TRUE(catalog.find("session-1").has_value());
  remove_database();
  // Its names all interned by batch 1: this batch carries no `names` rows.
  WriteBatch after = make_named_batch(2, 2, 10, m_names);
  ASSERT_TRUE(after.names.empty());
  push(std::move(after));
  ASSERT_TRUE(test::wait_until([&] { return m_writer->committed_batch() == 2; }));
  EXPECT_EQ(m_writer->database_recreated(), 1u);
  EXPECT_EQ(count("SELECT count(*) FROM event_store"), 10);
  EXPECT_EQ(count("SELECT count(*) FROM events WHERE sid = 'session-2' AND event = 'kind-' || (seq % 3)"
                  " AND thread = 'thread-main'"),
            10);
  EXPECT_EQ(count("SELECT count(*) FROM sessions"), 1);  // session 1 went with the removed file
  // The catalog reads the new file now.
  EXPECT_FALSE(catalog.find("session-1").has_value());
  EXPECT_TRUE(catalog.find("session-2").has_value());
  // A session whose row was in the removed file: the stitcher sends it as
  // an update of a stored row, which finds none and writes it whole.
  WriteBatch update = make_named_batch(3, 1, 0, m_names);
  update.sessions.front().change = stitch::SessionRecord::Change::summary;
  push(std::move(update));
  ASSERT_TRUE(test::wait_until([&] { return m_writer->committed_batch() == 3; }));
  EXPECT_EQ(count("SELECT count(*) FROM sessions WHERE sid = 'session-1'"), 1);
  finish();
  db::Database db(m_path, db::OpenMode::read_only);
  EXPECT_EQ(db.query_text("PRAGMA integrity_check"), "ok");
  EXPECT_EQ(m_budget.used(), 0u);
}

TEST_F(StoreWriterTest, RecreatesTheDatabaseWhenIdle) {
  start_with_names();
  push(make_named_batch(1, 1, 5, m_names));
  ASSERT_TRUE(test::wait_until([&] { return m_writer->committed_batch() == 1; }));
  remove_database();
  // Nothing to commit: the idle check (once a second) notices.
  EXPECT_TRUE(test::wait_until([&] { return m_writer->database_recreated() == 1; }, std::chrono::seconds(3)));
  EXPECT_EQ(count("SELECT count(*) FROM names WHERE text IN ('kind-0', 'kind-1', 'kind-2', 'thread-main')"), 4);
  EXPECT_EQ(count("SELECT count(*) FROM sessions"), 0);
  finish();
}

TEST_F(StoreWriterTest, AReplacementWithoutSessionsIsAdoptedWithoutTheOldWal) {
  start_with_names();
  push(make_named_batch(1, 1, 500, m_names));
  ASSERT_TRUE(test::wait_until([&] { return m_writer->committed_batch() == 1; }));
  ASSERT_TRUE(std::filesystem::exists(m_path + "-wal"));
  // A fresh trace2d database moved over ours; our -wal and -shm, holding
  // batch 1, stay at the path. SQLite would read that WAL as the new file's.
  const std::string other = m_dir.file("other.db");
  { db::Database db = db::open_for_writing(other); }
  std::filesystem::rename(other, m_path);
  push(make_named_batch(2, 2, 7, m_names));
  ASSERT_TRUE(test::wait_until([&] { return m_writer->committed_batch() == 2; }));
  EXPECT_EQ(m_writer->database_recreated(), 1u);
  finish();
  db::Database db(m_path, db::OpenMode::read_only);
  EXPECT_EQ(db.query_text("PRAGMA integrity_check"), "ok");
  EXPECT_EQ(db.query_int("SELECT count(*) FROM event_store"), 7);
  EXPECT_EQ(db.query_text("SELECT group_concat(sid) FROM sessions"), "session-2");
  EXPECT_EQ(db.query_int("SELECT count(*) FROM events WHERE sid = 'session-2' AND thread = 'thread-main'"), 7);
}

TEST_F(StoreWriterTest, AReplacementHoldingOtherSessionsIsNotWrittenInto) {
  start_with_names();
  push(make_named_batch(1, 1, 5, m_names));
  ASSERT_TRUE(test::wait_until([&] { return m_writer->committed_batch() == 1; }));
  // Another trace2d database, with a session of its own, moved over ours.
  const std::string other = m_dir.file("other.db");
  {
    db::Database db = db::open_for_writing(other);
    db.exec("INSERT INTO sessions (sid, id, root_sid, depth, status, source, first_received, last_received)"
            " VALUES ('theirs', 1, 'theirs', 0, 'complete', 'stream', '2026-01-01T00:00:00Z',"
            " '2026-01-01T00:00:00Z')");
  }
  std::filesystem::rename(other, m_path);
  push(make_named_batch(2, 2, 5, m_names));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_EQ(m_writer->committed_batch(), 1u);  // held, not mixed into their file
  EXPECT_EQ(m_writer->database_recreated(), 0u);
  EXPECT_EQ(count("SELECT count(*) FROM event_store"), 0);
  // Once that file is gone, a new database takes what was held.
  remove_database();
  ASSERT_TRUE(test::wait_until([&] { return m_writer->committed_batch() == 2; }, std::chrono::seconds(5)));
  EXPECT_EQ(m_writer->database_recreated(), 1u);
  finish();
  EXPECT_EQ(count("SELECT count(*) FROM events WHERE sid = 'session-2' AND thread = 'thread-main'"), 5);
  EXPECT_EQ(count("SELECT count(*) FROM sessions WHERE sid = 'theirs'"), 0);
}

TEST_F(StoreWriterTest, AnEmptyReplacementBecomesTheDatabase) {
  start_with_names();
  push(make_named_batch(1, 1, 5, m_names));
  ASSERT_TRUE(test::wait_until([&] { return m_writer->committed_batch() == 1; }));
  remove_database();
  test::write_file(m_path, "");
  push(make_named_batch(2, 2, 5, m_names));
  ASSERT_TRUE(test::wait_until([&] { return m_writer->committed_batch() == 2; }));
  EXPECT_EQ(m_writer->database_recreated(), 1u);
  finish();
  EXPECT_EQ(count("SELECT count(*) FROM events WHERE sid = 'session-2' AND thread = 'thread-main'"), 5);
}

}  // namespace
}  // namespace trace2d::store
