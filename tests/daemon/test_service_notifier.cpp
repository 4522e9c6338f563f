// The watchdog pings only while the daemon says it is healthy.

#include "daemon/app/service_notifier.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <thread>

#include "tests/support/notify_socket.hpp"
#include "tests/support/scoped_env.hpp"
#include "tests/support/temp_dir.hpp"

namespace trace2d::app {
namespace {

using test::milliseconds;
using test::ScopedEnv;

TEST(ServiceWatchdog, WithholdsPingsWhileUnhealthyAndResumes) {
  test::TempDir dir;
  test::NotifySocket notify(dir.file("notify.sock"));
  const ScopedEnv socket("NOTIFY_SOCKET", notify.path());
  const ScopedEnv usec("WATCHDOG_USEC", "100000");  // ping every 50 ms
  ServiceNotifier notifier;
  ASSERT_TRUE(notifier.enabled());
  ASSERT_TRUE(notifier.watchdog_interval());

  asio::io_context io;
  std::atomic<bool> healthy{true};
  ServiceWatchdog watchdog(io, notifier, [&] { return healthy.load(); });
  watchdog.start();
  std::thread runner([&] { io.run(); });

  EXPECT_GE(notify.count_during("WATCHDOG=1", milliseconds(400)), 3);
  healthy.store(false);
  std::this_thread::sleep_for(milliseconds(120));  // a ping already on its way
  notify.drain();
  EXPECT_EQ(notify.count_during("WATCHDOG=1", milliseconds(400)), 0) << notify.all_received();
  EXPECT_NE(notify.all_received().find("STATUS=stalled"), std::string::npos) << notify.all_received();
  healthy.store(true);
  EXPECT_TRUE(notify.wait_for("WATCHDOG=1", milliseconds(1000)));

  watchdog.stop();
  runner.join();  // a stopped watchdog leaves nothing for io.run() to wait on
}

TEST(ServiceWatchdog, DoesNothingWithoutAWatchdog) {
  ::unsetenv("NOTIFY_SOCKET");
  ::unsetenv("WATCHDOG_USEC");
  ServiceNotifier notifier;
  EXPECT_FALSE(notifier.enabled());
  asio::io_context io;
  ServiceWatchdog watchdog(io, notifier, [] { return true; });
  watchdog.start();
  EXPECT_FALSE(watchdog.interval());
  EXPECT_EQ(io.run_for(std::chrono::milliseconds(50)), 0u);  // no timer scheduled
}

}  // namespace
}  // namespace trace2d::app
