// The configuration file with the real binary: --check-config, errors that
// name the key, flags over the file, a daemon on the file's paths, and
// SIGHUP re-reading it (good and broken).

#include <gtest/gtest.h>

#include <unistd.h>

#include <csignal>
#include <filesystem>

#include "daemon/app/config_file.hpp"
#include "trace2d/version.hpp"
#include "tests/e2e/daemon_fixture.hpp"
#include "tests/support/socket_client.hpp"

namespace trace2d::test {
namespace {

ProcessResult run_trace2d(const std::vector<std::string>& args) {
  ProcessSpec spec;
  spec.argv = {TRACE2D_BIN};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  return run_process(spec, std::chrono::seconds(20));
}

// What --check-config printed, without its first line (which names the file).
std::string rendered(const ProcessResult& result) { return result.out.substr(result.out.find('\n') + 1); }

// A configuration with every path inside `dir`.
std::string config_in(const TempDir& dir, const std::string& extra = "") {
  return "[database]\npath = \"" + dir.file("c.db") + "\"\n[stream]\npath = \"" + dir.file("c.sock") +
         "\"\nmode = \"0600\"\n[dgram]\npath = \"\"\n[limits]\nio_threads = 2\n" + extra;
}

TEST(Config, CheckConfigPrintsTheEffectiveConfigurationAsToml) {
  TempDir dir;
  write_file(dir.file("c.toml"), config_in(dir, "[log]\nlevel = \"debug\"\n"));
  const ProcessResult r = run_trace2d({"--config", dir.file("c.toml"), "--check-config"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(dir.file("c.toml")), std::string::npos) << r.out;
  const app::DaemonOptions printed = app::parse_config(r.out, "stdout", app::default_options());
  EXPECT_EQ(printed.stream.path, dir.file("c.sock"));
  EXPECT_EQ(printed.stream.mode, 0600u);
  EXPECT_EQ(printed.dgram.path, "");
  EXPECT_EQ(printed.io_threads, 2u);
  EXPECT_EQ(printed.log_level, "debug");

  // Saved as a configuration file, the output gives the same configuration.
  write_file(dir.file("saved.toml"), r.out);
  const ProcessResult again = run_trace2d({"--config", dir.file("saved.toml"), "--check-config"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(rendered(again), rendered(r));
}

TEST(Config, CheckConfigRejectsBadFilesNamingTheKey) {
  TempDir dir;
  const auto check = [&](const std::string& text, const std::string& key, const std::string& problem) {
    write_file(dir.file("bad.toml"), text);
    const ProcessResult r = run_trace2d({"--config", dir.file("bad.toml"), "--check-config"});
    EXPECT_EQ(r.exit_code, 1) << text;
    EXPECT_EQ(r.out, "") << text;
    EXPECT_NE(r.err.find(dir.file("bad.toml")), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(key), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(problem), std::string::npos) << r.err;
  };
  check("[stream]\nmdoe = \"0600\"\n", "'stream.mdoe'", "unknown key");
  check("[limits]\nqueue_max_mib = \"64\"\n", "'limits.queue_max_mib'", "must be an integer, not a string");
  check("[stream]\npath = \"trace2d.sock\"\n", "'stream.path'", "not absolute");
  check("[dgram]\npath = \"" + dir.file(std::string(120, 'd')) + "\"\n", "'dgram.path'", "at most 107");
}

TEST(Config, CheckConfigReportsEveryProblemAtOnceWithDidYouMean) {
  TempDir dir;
  write_file(dir.file("bad.toml"),
             "[stream]\nmdoe = \"0600\"\npath = \"rel.sock\"\n[limits]\nio_thread = 2\nqueue_max_mib = \"64\"\n");
  const ProcessResult r = run_trace2d({"--config", dir.file("bad.toml"), "--check-config"});
  EXPECT_EQ(r.exit_code, 1);
  const std::string file = dir.file("bad.toml");
  EXPECT_EQ(r.err, "trace2d: " + file + ":2: unknown key 'stream.mdoe' (did you mean 'stream.mode'?)\n" +
                       "trace2d: " + file + ":3: 'stream.path' is not absolute: 'rel.sock' (git requires an "
                       "absolute socket path)\n" +
                       "trace2d: " + file + ":5: unknown key 'limits.io_thread' (did you mean 'limits.io_threads'?)\n" +
                       "trace2d: " + file + ":6: 'limits.queue_max_mib' must be an integer, not a string\n");

  // A flag's bad value is reported with the file's problems, not a run later.
  const ProcessResult with_flag =
      run_trace2d({"--config", dir.file("bad.toml"), "--check-config", "--commit-interval-ms", "0"});
  EXPECT_EQ(with_flag.exit_code, 1);
  EXPECT_NE(with_flag.err.find(":2: unknown key 'stream.mdoe'"), std::string::npos) << with_flag.err;
  EXPECT_NE(with_flag.err.find("trace2d: 'database.commit_interval_ms' (--commit-interval-ms) must be between 1"),
            std::string::npos)
      << with_flag.err;
}

// The compiled default is the configured prefix's sysconfdir
// (CMakeLists.txt: TRACE2D_CONFIG_FILE; /etc/trace2d/trace2d.toml for the
// prefix /usr), and it is named whether it exists or not.
TEST(Config, TheDefaultFileIsInTheSysconfdirOfThePrefix) {
  const std::string path = k_default_config_path;
  EXPECT_TRUE(path == "/etc/trace2d/trace2d.toml" || path.ends_with("/etc/trace2d/trace2d.toml")) << path;
  const ProcessResult help = run_trace2d({"--help"});
  EXPECT_NE(help.out.find("(default: " + path + " if it exists"), std::string::npos) << help.out;
  const ProcessResult check = run_trace2d({"--check-config"});
  ASSERT_EQ(check.exit_code, 0) << check.err;
  const bool there = std::filesystem::exists(path);
  EXPECT_EQ(check.out.rfind(there ? "# configuration file: " + path + ";"
                                  : "# configuration file: none (" + path + " does not exist);",
                            0),
            0u)
      << check.out;
}

// Runs trace2d with `args` where the default configuration file is
// `config`: in a private mount namespace, over an overlay of the directory
// that holds trace2d's (/etc, or <prefix>/etc) whose changes vanish with it.
// nullopt when this machine cannot (not root, no unshare, no such directory).
std::optional<ProcessSpec> with_default_config(const TempDir& dir, const std::string& config,
                                               const std::vector<std::string>& args) {
  const std::filesystem::path file = k_default_config_path;
  const std::filesystem::path sysconfdir = file.parent_path().parent_path();
  if (::geteuid() != 0 || !std::filesystem::exists("/usr/bin/unshare") || !std::filesystem::is_directory(sysconfdir)) {
    return std::nullopt;
  }
  write_file(dir.file("etc-config.toml"), config);
  std::filesystem::create_directories(dir.file("ns"));
  const std::string script =
      "set -e\n"
      "mount -t tmpfs none \"$1\"/ns\n"
      "mkdir \"$1\"/ns/up \"$1\"/ns/work\n"
      "mount -t overlay overlay -o lowerdir=\"$2\",upperdir=\"$1\"/ns/up,workdir=\"$1\"/ns/work \"$2\"\n"
      "mkdir -p \"$(dirname \"$3\")\"\n"
      "cp \"$1\"/etc-config.toml \"$3\"\n"
      "shift 3\n"
      "exec \"$@\"\n";
  ProcessSpec spec;
  spec.argv = {"/usr/bin/unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh",
               dir.path().string(), sysconfdir.string(), file.string(), TRACE2D_BIN};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  // Can this machine do it at all (a container may forbid mounts)?
  ProcessSpec probe = spec;
  probe.argv.resize(probe.argv.size() - args.size() - 1);
  probe.argv.push_back("/bin/true");
  if (run_process(probe, std::chrono::seconds(20)).exit_code != 0) {
    return std::nullopt;
  }
  return spec;
}

TEST(Config, TheDefaultFileIsReadAndNamedAtStartUp) {
  TempDir dir;
  const std::string path = k_default_config_path;
  const std::string config = config_in(dir, "[shutdown]\ngrace_ms = 100\n");
  const auto check = with_default_config(dir, config, {"--check-config"});
  if (!check) {
    GTEST_SKIP() << "needs root, mount namespaces and an existing " << path << "'s sysconfdir to put a file there";
  }
  const ProcessResult r = run_process(*check, std::chrono::seconds(20));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("# configuration file: " + path + ";", 0), 0u) << r.out;
  EXPECT_EQ(app::parse_config(r.out, "stdout", app::default_options()).io_threads, 2u);  // from the file

  Process daemon(*with_default_config(dir, config, {}));
  ASSERT_TRUE(wait_until([&] { return daemon.out_so_far().find("GIT_TRACE2_EVENT=") != std::string::npos; },
                         std::chrono::seconds(20)))
      << daemon.err_so_far();
  EXPECT_NE(daemon.out_so_far().find("GIT_TRACE2_EVENT=af_unix:stream:" + dir.file("c.sock") + "\n"),
            std::string::npos);
  EXPECT_NE(daemon.err_so_far().find("configuration file: " + path), std::string::npos) << daemon.err_so_far();
  daemon.signal(SIGTERM);
  EXPECT_EQ(daemon.wait(std::chrono::seconds(30)).exit_code, 0);
}

TEST(Config, SocketFlagAloneBindsOnlyThatSocket) {
  TempDir dir;
  ProcessSpec spec;
  spec.argv = {TRACE2D_BIN, "--config", "", "--socket", dir.file("only.sock"), "--db", dir.file("t.db"),
               "--shutdown-grace-ms", "100"};
  Process daemon(spec);
  ASSERT_TRUE(wait_until([&] { return daemon.out_so_far().find("GIT_TRACE2_EVENT=") != std::string::npos; },
                         std::chrono::seconds(20)))
      << daemon.err_so_far();
  EXPECT_EQ(daemon.out_so_far(), "GIT_TRACE2_EVENT=af_unix:stream:" + dir.file("only.sock") + "\n");
  EXPECT_NE(daemon.err_so_far().find("--socket without --dgram-socket: no datagram socket"), std::string::npos)
      << daemon.err_so_far();
  EXPECT_NE(daemon.err_so_far().find("configuration file: none (--config \"\")"), std::string::npos)
      << daemon.err_so_far();
  EXPECT_NE(daemon.err_so_far().find("listening: af_unix:stream:" + dir.file("only.sock") + "; database"),
            std::string::npos)
      << daemon.err_so_far();
  daemon.signal(SIGTERM);
  EXPECT_EQ(daemon.wait(std::chrono::seconds(30)).exit_code, 0);

  // With --dgram-socket too, both.
  const ProcessResult both = run_trace2d({"--config", "", "--socket", dir.file("a.sock"), "--dgram-socket",
                                          dir.file("b.sock"), "--check-config"});
  EXPECT_EQ(app::parse_config(both.out, "stdout", app::default_options()).dgram.path, dir.file("b.sock"));
  // A file that names the datagram socket keeps it under --socket.
  write_file(dir.file("c.toml"), "[dgram]\npath = \"" + dir.file("file-dgram.sock") + "\"\n");
  const ProcessResult from_file =
      run_trace2d({"--config", dir.file("c.toml"), "--socket", dir.file("a.sock"), "--check-config"});
  EXPECT_EQ(app::parse_config(from_file.out, "stdout", app::default_options()).dgram.path,
            dir.file("file-dgram.sock"));
}

TEST(Config, ExplicitConfigMustExistAndEmptyMeansNone) {
  TempDir dir;
  const ProcessResult missing = run_trace2d({"--config", dir.file("absent.toml"), "--check-config"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find(dir.file("absent.toml")), std::string::npos) << missing.err;
  const ProcessResult none = run_trace2d({"--config", "", "--check-config"});
  EXPECT_EQ(none.exit_code, 0) << none.err;
  EXPECT_EQ(none.out.rfind("# configuration file: none (--config \"\")", 0), 0u) << none.out;
}

TEST(Config, FlagsOverrideOnlyWhatTheyName) {
  TempDir dir;
  write_file(dir.file("c.toml"), config_in(dir, "[directories]\nwatch = [\"/from/file\"]\n[log]\nlevel = \"warn\"\n"));
  const ProcessResult r = run_trace2d({"--config", dir.file("c.toml"), "--check-config", "--io-threads", "5",
                                       "--watch", "/from/flag1", "--watch", "/from/flag2", "--no-delete-finished",
                                       "--socket-mode", "0660"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const app::DaemonOptions printed = app::parse_config(r.out, "stdout", app::default_options());
  EXPECT_EQ(printed.io_threads, 5u);                                                      // flag
  EXPECT_EQ(printed.directories.dirs, (std::vector<std::string>{"/from/flag1", "/from/flag2"}));  // replaced
  EXPECT_FALSE(printed.directories.delete_finished);
  EXPECT_EQ(printed.stream.mode, 0660u);
  EXPECT_EQ(printed.log_level, "warn");                  // file
  EXPECT_EQ(printed.stream.path, dir.file("c.sock"));    // file
  EXPECT_EQ(printed.store_writer.commit_interval.count(), 100);  // embedded default

  // A flag's bad value: bad usage when it is not even a number...
  EXPECT_EQ(run_trace2d({"--config", dir.file("c.toml"), "--check-config", "--io-threads", "many"}).exit_code, 2);
  // ...a configuration error naming the setting when it is out of range.
  const ProcessResult zero = run_trace2d({"--config", dir.file("c.toml"), "--check-config", "--io-threads", "0"});
  EXPECT_EQ(zero.exit_code, 1);
  EXPECT_NE(zero.err.find("'limits.io_threads' (--io-threads)"), std::string::npos) << zero.err;
}

TEST(Config, DaemonListensWhereTheFileSays) {
  TempDir dir;
  write_file(dir.file("c.toml"), config_in(dir, "[shutdown]\ngrace_ms = 100\n"));
  ProcessSpec spec;
  spec.argv = {TRACE2D_BIN, "--config", dir.file("c.toml")};
  Process daemon(spec);
  ASSERT_TRUE(wait_until([&] { return daemon.out_so_far().find("GIT_TRACE2_EVENT=") != std::string::npos; },
                         std::chrono::seconds(20)))
      << daemon.err_so_far();
  EXPECT_NE(daemon.out_so_far().find("GIT_TRACE2_EVENT=af_unix:stream:" + dir.file("c.sock") + "\n"),
            std::string::npos)
      << daemon.out_so_far();
  EXPECT_EQ(daemon.out_so_far().find("af_unix:dgram:"), std::string::npos);  // disabled by the file
  EXPECT_EQ(std::filesystem::status(dir.file("c.sock")).permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  {
    SocketClient client(dir.file("c.sock"));
    ASSERT_TRUE(client.send(event_line("config-file-sid", "version")));
  }
  daemon.signal(SIGTERM);
  const ProcessResult result = daemon.wait(std::chrono::seconds(30));
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(count_events_in_db(dir.file("c.db")).at("config-file-sid"), 1);
}

TEST(Config, SighupWatchesANewDirectoryAndKeepsConnectionsOpen) {
  TempDir dir;
  const std::string traces = dir.file("traces");
  std::filesystem::create_directories(traces);
  write_file(dir.file("c.toml"), "[directories]\nwatch = []\n");
  RunningDaemon daemon(dir, {"--config", dir.file("c.toml")});
  SocketClient client(daemon.socket_path());
  ASSERT_TRUE(client.send(event_line("sighup-sid", "version", 0)));

  write_file(dir.file("c.toml"), "[directories]\nwatch = [\"" + traces + "\"]\n");
  daemon.process().signal(SIGHUP);
  const auto logged = [&](const std::string& text) {
    return daemon.process().err_so_far().find(text) != std::string::npos;
  };
  ASSERT_TRUE(wait_until([&] { return logged("now watching " + traces); })) << daemon.process().err_so_far();

  for (int n = 1; n <= 10; ++n) {
    ASSERT_TRUE(client.send(event_line("sighup-sid", "data", n)));
  }
  client.close();
  const ProcessResult result = daemon.stop();
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(count_events_in_db(daemon.db_path()).at("sighup-sid"), 11);
}

TEST(Config, SighupNamesTheChangedKeysThatNeedARestartAndAppliesTheRest) {
  TempDir dir;
  write_file(dir.file("c.toml"), "[database]\ncommit_interval_ms = 100\n[log]\nlevel = \"info\"\n");
  RunningDaemon daemon(dir, {"--config", dir.file("c.toml")});

  write_file(dir.file("c.toml"),
             "[database]\ncommit_interval_ms = 250\n[stream]\nmode = \"0600\"\n[log]\nlevel = \"debug\"\n");
  daemon.process().signal(SIGHUP);
  const auto logged = [&](const std::string& text) {
    return daemon.process().err_so_far().find(text) != std::string::npos;
  };
  ASSERT_TRUE(wait_until([&] { return logged("SIGHUP: applying"); })) << daemon.process().err_so_far();
  const std::string log = daemon.process().err_so_far();
  EXPECT_NE(log.find("SIGHUP: changed, but applied only at a restart: database.commit_interval_ms, stream.mode"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("SIGHUP: applying log.level"), std::string::npos) << log;

  // The same file again: nothing to apply, and the restart keys are named again.
  daemon.process().signal(SIGHUP);
  ASSERT_TRUE(wait_until([&] {
    const std::string now = daemon.process().err_so_far();
    std::size_t count = 0;
    for (auto at = now.find("applied only at a restart"); at != std::string::npos;
         at = now.find("applied only at a restart", at + 1)) {
      ++count;
    }
    return count == 2;
  })) << daemon.process().err_so_far();
  EXPECT_EQ(daemon.stop().exit_code, 0);
}

TEST(Config, SighupWithABrokenFileKeepsRunning) {
  TempDir dir;
  write_file(dir.file("c.toml"), "[log]\nlevel = \"info\"\n");
  RunningDaemon daemon(dir, {"--config", dir.file("c.toml")});

  write_file(dir.file("c.toml"), "[log]\nlevel = \"info\"\nlevle = \"debug\"\n");
  daemon.process().signal(SIGHUP);
  const auto logged = [&](const std::string& text) {
    return daemon.process().err_so_far().find(text) != std::string::npos;
  };
  ASSERT_TRUE(wait_until([&] { return logged("keeping the running one"); })) << daemon.process().err_so_far();
  const std::string log = daemon.process().err_so_far();
  EXPECT_NE(log.find(dir.file("c.toml") + ":3: unknown key 'log.levle' (did you mean 'log.level'?)"),
            std::string::npos)
      << log;
  EXPECT_TRUE(daemon.process().running());

  {
    SocketClient client(daemon.socket_path());
    ASSERT_TRUE(client.send(event_line("after-bad-reload", "version")));
  }
  const ProcessResult result = daemon.stop();
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(count_events_in_db(daemon.db_path()).at("after-bad-reload"), 1);
}

TEST(Config, LogTargetFile) {
  TempDir dir;
  RunningDaemon daemon(dir, {"--log-target", dir.file("logs/trace2d.log")});
  ASSERT_TRUE(wait_until([&] {
    return std::filesystem::exists(dir.file("logs/trace2d.log")) &&
           read_file(dir.file("logs/trace2d.log")).find("listening") != std::string::npos;
  }));
  EXPECT_EQ(daemon.stop().exit_code, 0);
  EXPECT_NE(read_file(dir.file("logs/trace2d.log")).find("stopped"), std::string::npos);
}

}  // namespace
}  // namespace trace2d::test
