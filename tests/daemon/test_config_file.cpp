#include "daemon/app/config_file.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "tests/support/temp_dir.hpp"

namespace trace2d::app {
namespace {

const std::string k_file = "/etc/trace2d/test.toml";

DaemonOptions parse(const std::string& text, DaemonOptions base = default_options()) {
  return parse_config(text, k_file, std::move(base));
}

// The message of the ConfigError that loading `text` throws ("" if none).
std::string load_error(const std::string& text) {
  try {
    (void)parse(text);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return {};
}

std::string validate_error(const DaemonOptions& options) {
  try {
    validate_options(options);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return {};
}

void expect_same(const DaemonOptions& a, const DaemonOptions& b) {
  // Every declared setting, as the file writes it; then the members one by one.
  EXPECT_EQ(render_config(a), render_config(b));
  EXPECT_EQ(a.db_path, b.db_path);
  for (const auto& [x, y] : {std::pair{&a.stream, &b.stream}, std::pair{&a.dgram, &b.dgram}}) {
    EXPECT_EQ(x->path, y->path);
    EXPECT_EQ(x->mode, y->mode);
    EXPECT_EQ(x->owner, y->owner);
    EXPECT_EQ(x->group, y->group);
  }
  EXPECT_EQ(a.dgram_receiver.receive_buffer, b.dgram_receiver.receive_buffer);
  EXPECT_EQ(a.ingest_worker.idle_timeout.count(), b.ingest_worker.idle_timeout.count());
  EXPECT_EQ(a.directories.dirs, b.directories.dirs);
  EXPECT_EQ(a.directories.delete_finished, b.directories.delete_finished);
  EXPECT_EQ(a.directories.idle_timeout.count(), b.directories.idle_timeout.count());
  EXPECT_EQ(a.directories.max_silence.count(), b.directories.max_silence.count());
  EXPECT_EQ(a.directories.max_open_files_per_uid, b.directories.max_open_files_per_uid);
  EXPECT_EQ(a.directories.max_open_files, b.directories.max_open_files);
  EXPECT_EQ(a.directories.max_file_bytes, b.directories.max_file_bytes);
  EXPECT_EQ(a.io_threads, b.io_threads);
  EXPECT_EQ(a.max_queue_bytes, b.max_queue_bytes);
  EXPECT_EQ(a.overflow_wait.count(), b.overflow_wait.count());
  EXPECT_EQ(a.max_line_bytes, b.max_line_bytes);
  EXPECT_EQ(a.shutdown_grace.count(), b.shutdown_grace.count());
  EXPECT_EQ(a.store_writer.commit_interval.count(), b.store_writer.commit_interval.count());
  EXPECT_EQ(a.store_give_up_after.count(), b.store_give_up_after.count());
  EXPECT_EQ(a.store_writer.status_interval.count(), b.store_writer.status_interval.count());
  EXPECT_EQ(a.log_level, b.log_level);
  EXPECT_EQ(a.log_target, b.log_target);
  EXPECT_EQ(a.ingest_worker.per_uid_lines_per_second, b.ingest_worker.per_uid_lines_per_second);
  EXPECT_EQ(a.retention.max_age, b.retention.max_age);
  EXPECT_EQ(a.retention.max_db_bytes, b.retention.max_db_bytes);
  EXPECT_EQ(a.retention.headroom_percent, b.retention.headroom_percent);
  EXPECT_EQ(a.ingest_worker.redact_url_credentials, b.ingest_worker.redact_url_credentials);
  EXPECT_EQ(a.otlp_endpoint, b.otlp_endpoint);
  EXPECT_EQ(a.otlp_traces_endpoint, b.otlp_traces_endpoint);
  EXPECT_EQ(a.exporter.forwarding.max_sessions_per_request, b.exporter.forwarding.max_sessions_per_request);
  EXPECT_EQ(a.exporter.forwarding.max_units_per_request, b.exporter.forwarding.max_units_per_request);
  EXPECT_EQ(a.exporter.forwarding.max_bytes_per_request, b.exporter.forwarding.max_bytes_per_request);
  EXPECT_EQ(a.exporter.forwarding.max_backoff.count(), b.exporter.forwarding.max_backoff.count());
  EXPECT_EQ(a.exporter.forwarding.shutdown_wait.count(), b.exporter.forwarding.shutdown_wait.count());
  EXPECT_EQ(a.exporter.forwarding.settle.count(), b.exporter.forwarding.settle.count());
  EXPECT_EQ(a.export_rules.ruleset_key, b.export_rules.ruleset_key);
  EXPECT_EQ(a.export_rules.nicknames, b.export_rules.nicknames);
  EXPECT_EQ(a.export_rules.rulesets, b.export_rules.rulesets);
  EXPECT_EQ(a.export_rules.summary_messages, b.export_rules.summary_messages);
  EXPECT_EQ(a.export_rules.summary_regions, b.export_rules.summary_regions);
  EXPECT_EQ(a.export_rules.important_events, b.export_rules.important_events);
  EXPECT_EQ(a.exporter.rules.pii_user_name, b.exporter.rules.pii_user_name);
  EXPECT_EQ(a.exporter.rules.pii_host_name, b.exporter.rules.pii_host_name);
  EXPECT_EQ(a.exporter.resource.include_host_name, b.exporter.resource.include_host_name);
}

const std::string k_every_key = R"(
[database]
path = "/data/t.db"
commit_interval_ms = 25
[stream]
path = "/srv/t.sock"
mode = "0660"
owner = "nobody"
group = "65534"
[dgram]
path = "/srv/d.sock"
mode = "600"
owner = "1001"
group = "1002"
receive_buffer_bytes = 65536
idle_timeout_ms = 1234
[directories]
watch = ["/var/log/git-trace2", "/tmp/traces"]
delete_finished = false
idle_timeout_ms = 4321
max_silence_ms = 8765
max_open_files_per_uid = 7
max_open_files = 77
max_file_bytes = 123456
[limits]
queue_max_mib = 16
overflow_wait_ms = 0
max_line_bytes = 2048
io_threads = 4
per_uid_lines_per_second = 5000
[retention]
max_age = "30d"
max_db_bytes = 1073741824
headroom_percent = 12
[security]
redact_url_credentials = false
[shutdown]
grace_ms = 500
give_up_after_ms = 7000
[status]
interval_ms = 250
[otlp]
endpoint = "http://collector:4318"
traces_endpoint = "https://gateway.example/custom/traces"
batch_max_sessions = 64
batch_max_spans = 2048
batch_max_stored_mib = 9
max_backoff_ms = 15000
shutdown_wait_ms = 2500
settle_ms = 750
ruleset_key = "otel.trace2.ruleset"
nicknames = ["monorepo=verbose", "big=rs:fetch"]
rulesets = ["rs:fetch git:fetch=verbose *=drop"]
summary_messages = ["pathspec_errors=pathspec"]
summary_regions = ["index/do_read_index=read_index_count,read_index_seconds"]
important_events = ["negotiation=negotiation_v2/total"]
pii_user_name = true
pii_host_name = true
resource_host_name = false
[log]
level = "debug"
target = "/var/log/trace2d.log"
)";

TEST(ConfigFile, ParsesEveryKey) {
  const DaemonOptions o = parse(k_every_key);
  EXPECT_EQ(o.db_path, "/data/t.db");
  EXPECT_EQ(o.store_writer.commit_interval.count(), 25);
  EXPECT_EQ(o.stream.path, "/srv/t.sock");
  EXPECT_EQ(o.stream.mode, 0660u);
  EXPECT_EQ(o.stream.owner, "nobody");
  EXPECT_EQ(o.stream.group, "65534");
  EXPECT_EQ(o.dgram.path, "/srv/d.sock");
  EXPECT_EQ(o.dgram.mode, 0600u);
  EXPECT_EQ(o.dgram.owner, "1001");
  EXPECT_EQ(o.dgram.group, "1002");
  EXPECT_EQ(o.dgram_receiver.receive_buffer, 65536u);
  EXPECT_EQ(o.ingest_worker.idle_timeout.count(), 1234);
  EXPECT_EQ(o.directories.dirs, (std::vector<std::string>{"/var/log/git-trace2", "/tmp/traces"}));
  EXPECT_FALSE(o.directories.delete_finished);
  EXPECT_EQ(o.directories.idle_timeout.count(), 4321);
  EXPECT_EQ(o.directories.max_silence.count(), 8765);
  EXPECT_EQ(o.directories.max_open_files_per_uid, 7u);
  EXPECT_EQ(o.directories.max_open_files, 77u);
  EXPECT_EQ(o.directories.max_file_bytes, 123456u);
  EXPECT_EQ(o.max_queue_bytes, 16u * 1024 * 1024);
  EXPECT_EQ(o.overflow_wait.count(), 0);
  EXPECT_EQ(o.max_line_bytes, 2048u);
  EXPECT_EQ(o.io_threads, 4u);
  EXPECT_EQ(o.ingest_worker.per_uid_lines_per_second, 5000u);
  EXPECT_EQ(o.retention.max_age, "30d");
  EXPECT_EQ(o.retention.max_db_bytes, 1073741824u);
  EXPECT_EQ(o.retention.headroom_percent, 12u);
  EXPECT_FALSE(o.ingest_worker.redact_url_credentials);
  EXPECT_EQ(o.shutdown_grace.count(), 500);
  EXPECT_EQ(o.store_give_up_after.count(), 7000);
  EXPECT_EQ(o.store_writer.status_interval.count(), 250);
  EXPECT_EQ(o.log_level, "debug");
  EXPECT_EQ(o.log_target, "/var/log/trace2d.log");
  EXPECT_EQ(o.otlp_endpoint, "http://collector:4318");
  EXPECT_EQ(o.otlp_traces_endpoint, "https://gateway.example/custom/traces");
  EXPECT_EQ(otlp_export_url(o), "https://gateway.example/custom/traces");  // as is, over the base
  EXPECT_EQ(o.exporter.forwarding.max_sessions_per_request, 64u);
  EXPECT_EQ(o.exporter.forwarding.max_units_per_request, 2048u);
  EXPECT_EQ(o.exporter.forwarding.max_bytes_per_request, 9u << 20);
  EXPECT_EQ(o.exporter.forwarding.max_backoff.count(), 15000);
  EXPECT_EQ(o.exporter.forwarding.shutdown_wait.count(), 2500);
  EXPECT_EQ(o.exporter.forwarding.settle.count(), 750);
  EXPECT_EQ(o.export_rules.ruleset_key, "otel.trace2.ruleset");
  EXPECT_EQ(o.export_rules.nicknames, (std::vector<std::string>{"monorepo=verbose", "big=rs:fetch"}));
  EXPECT_EQ(o.export_rules.rulesets, std::vector<std::string>{"rs:fetch git:fetch=verbose *=drop"});
  EXPECT_EQ(o.export_rules.summary_messages, std::vector<std::string>{"pathspec_errors=pathspec"});
  EXPECT_EQ(o.export_rules.summary_regions,
            std::vector<std::string>{"index/do_read_index=read_index_count,read_index_seconds"});
  EXPECT_EQ(o.export_rules.important_events, std::vector<std::string>{"negotiation=negotiation_v2/total"});
  EXPECT_TRUE(o.exporter.rules.pii_user_name);
  EXPECT_TRUE(o.exporter.rules.pii_host_name);
  EXPECT_FALSE(o.exporter.resource.include_host_name);
  EXPECT_NO_THROW(validate_options(o));
}

TEST(ConfigFile, AbsentKeysKeepTheBase) {
  const DaemonOptions base = default_options();
  expect_same(parse("", base), base);
  expect_same(parse("# only a comment\n[limits]\n[log]\n", base), base);

  DaemonOptions expected = base;
  expected.io_threads = 3;
  expected.stream.mode = 0600;
  expect_same(parse("[limits]\nio_threads = 3\n[stream]\nmode = \"0600\"\n", base), expected);
}

TEST(ConfigFile, ErrorsNameTheFileTheLineAndTheKey) {
  EXPECT_EQ(load_error("[stream]\nmdoe = \"0600\"\n"),
            k_file + ":2: unknown key 'stream.mdoe' (did you mean 'stream.mode'?)");
  EXPECT_EQ(load_error("[strem]\npath = \"/x\"\n"), k_file + ":1: unknown section '[strem]' (did you mean '[stream]'?)");
  EXPECT_EQ(load_error("\n\n[limits]\nqueue_max_mib = \"64\"\n"),
            k_file + ":4: 'limits.queue_max_mib' must be an integer, not a string");
  EXPECT_NE(load_error("path = \"/x\"\n").find("unknown key 'path'"), std::string::npos);
  EXPECT_NE(load_error("[stream.extra]\n").find("unknown key 'stream.extra'"), std::string::npos);
  EXPECT_NE(load_error("stream = 3\n").find("'stream' must be a table"), std::string::npos);
}

TEST(ConfigFile, EveryProblemIsReportedInTheOrderOfItsLines) {
  const std::string text =
      "[limits]\n"
      "io_thread = 2\n"            // 2: unknown key
      "queue_max_mib = \"64\"\n"  // 3: wrong type
      "[dgarm]\n"                  // 4: unknown section
      "path = \"\"\n"
      "[stream]\n"
      "path = \"rel.sock\"\n"     // 7: bad value
      "mode = \"0600\"\n";        // fine
  try {
    (void)parse(text);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    ASSERT_EQ(e.problems().size(), 4u) << e.what();
    EXPECT_EQ(e.problems()[0], k_file + ":2: unknown key 'limits.io_thread' (did you mean 'limits.io_threads'?)");
    EXPECT_EQ(e.problems()[1], k_file + ":3: 'limits.queue_max_mib' must be an integer, not a string");
    EXPECT_EQ(e.problems()[2], k_file + ":4: unknown section '[dgarm]' (did you mean '[dgram]'?)");
    EXPECT_NE(e.problems()[3].find(k_file + ":7: 'stream.path' is not absolute"), std::string::npos) << e.what();
    // what() holds them all, one a line.
    const std::string all = e.what();
    EXPECT_EQ(std::count(all.begin(), all.end(), '\n'), 3) << all;
  }
}

TEST(ConfigFile, DidYouMeanFindsTyposAndKeysOfAnotherSection) {
  EXPECT_NE(load_error("[dgram]\nrecieve_buffer_bytes = 5\n").find("did you mean 'dgram.receive_buffer_bytes'?"),
            std::string::npos);
  // A key put in the wrong section.
  EXPECT_NE(load_error("[stream]\nreceive_buffer_bytes = 5\n").find("did you mean 'dgram.receive_buffer_bytes'?"),
            std::string::npos);
  // A key above every section: each section that has it.
  EXPECT_NE(load_error("mode = \"0600\"\n")
                .find("(settings belong in a section; did you mean 'stream.mode' or 'dgram.mode'?)"),
            std::string::npos)
      << load_error("mode = \"0600\"\n");
  // Nothing close: no guess.
  EXPECT_EQ(load_error("[stream]\ncolour = \"blue\"\n").find("did you mean"), std::string::npos);
}

TEST(ConfigFile, ReadConfigFileSaysWhichKeysItSets) {
  test::TempDir dir;
  test::write_file(dir.file("t.toml"), "[dgram]\npath = \"\"\n[limits]\nio_threads = 2\n");
  const LoadedConfig loaded = read_config_file(dir.file("t.toml"), default_options());
  EXPECT_EQ(loaded.keys, (std::set<std::string>{"dgram.path", "limits.io_threads"}));
  EXPECT_EQ(loaded.options.io_threads, 2u);
}

TEST(ConfigFile, SocketFlagAloneMeansOnlyThatSocket) {
  const std::string dgram = default_options().dgram.path;
  DaemonOptions o = default_options();
  EXPECT_TRUE(resolve_socket_flags(o, {}, {"stream.path"}));
  EXPECT_EQ(o.dgram.path, "");
  // Named too, by a flag or by the file: kept.
  o = default_options();
  EXPECT_FALSE(resolve_socket_flags(o, {}, {"stream.path", "dgram.path"}));
  EXPECT_EQ(o.dgram.path, dgram);
  EXPECT_FALSE(resolve_socket_flags(o, {"dgram.path"}, {"stream.path"}));
  EXPECT_EQ(o.dgram.path, dgram);
  // No --socket: the defaults (or the file) hold.
  EXPECT_FALSE(resolve_socket_flags(o, {"stream.path"}, {"database.path"}));
  EXPECT_EQ(o.dgram.path, dgram);
}

TEST(ConfigFile, RejectsBadTypes) {
  EXPECT_NE(load_error("[limits]\nio_threads = 1.5\n").find("'limits.io_threads' must be an integer"),
            std::string::npos);
  EXPECT_NE(load_error("[directories]\nwatch = \"/a\"\n").find("'directories.watch' must be an array of strings"),
            std::string::npos);
  EXPECT_NE(load_error("[directories]\nwatch = [\"/a\", 2]\n").find("item 2 is an integer"), std::string::npos);
  EXPECT_NE(load_error("[directories]\ndelete_finished = \"no\"\n")
                .find("'directories.delete_finished' must be true or false, not a string"),
            std::string::npos);
  EXPECT_NE(load_error("[stream]\nmode = 438\n").find("'stream.mode' must be a string"), std::string::npos);
  EXPECT_NE(load_error("[log]\nlevel = 3\n").find("'log.level' must be a string"), std::string::npos);
}

TEST(ConfigFile, RejectsBadValues) {
  const auto expect_error = [](const std::string& text, const std::string& key, const std::string& problem) {
    const std::string message = load_error(text);
    EXPECT_NE(message.find(k_file + ":"), std::string::npos) << message;
    EXPECT_NE(message.find("'" + key + "'"), std::string::npos) << message;
    EXPECT_NE(message.find(problem), std::string::npos) << message;
  };
  expect_error("[stream]\nmode = \"rw-rw----\"\n", "stream.mode", "octal mode");
  expect_error("[dgram]\nmode = \"0968\"\n", "dgram.mode", "octal mode");
  expect_error("[stream]\nmode = \"4755\"\n", "stream.mode", "at most");
  expect_error("[limits]\nqueue_max_mib = -1\n", "limits.queue_max_mib", "not -1");
  expect_error("[limits]\nio_threads = 0\n", "limits.io_threads", "between 1 and 64");
  expect_error("[shutdown]\ngrace_ms = -5\n", "shutdown.grace_ms", "not -5");
  expect_error("[database]\ncommit_interval_ms = 0\n", "database.commit_interval_ms", "not 0");
  expect_error("[database]\npath = \"\"\n", "database.path", "must not be empty");
  expect_error("[stream]\npath = \"relative.sock\"\n", "stream.path", "not absolute");
  expect_error("[dgram]\npath = \"/" + std::string(107, 'd') + "\"\n", "dgram.path", "108 bytes");
  expect_error("[directories]\nwatch = [\"/ok\", \"traces\"]\n", "directories.watch", "'traces'");
  expect_error("[log]\nlevel = \"verbose\"\n", "log.level", "not 'verbose'");
  expect_error("[log]\ntarget = \"syslog\"\n", "log.target", "not 'syslog'");
  expect_error("[log]\ntarget = \"/var/log/\"\n", "log.target", "absolute file path");
  expect_error("[otlp]\ndetail = \"loud\"\n", "otlp.detail", "not 'loud'");
  expect_error("[otlp]\nrules = [\"git:fetch=verbose\", \"git:status\"]\n", "otlp.rules", "'git:status'");
  expect_error("[otlp]\nrules = [\"git:status=quiet\"]\n", "otlp.rules", "unknown level 'quiet'");
  expect_error("[otlp]\nimportant_data = [\"remote\"]\n", "otlp.important_data", "category/key");
  expect_error("[otlp]\nnicknames = [\"monorepo=loud\"]\n", "otlp.nicknames", "names neither a level");
  expect_error("[otlp]\nrulesets = [\"fetch git:fetch=verbose\"]\n", "otlp.rulesets", "rs:<name>");
  expect_error("[otlp]\nrulesets = [\"rs:x git:fetch=loud\"]\n", "otlp.rulesets", "unknown level 'loud'");
  expect_error("[otlp]\nsummary_messages = [\"=prefix\"]\n", "otlp.summary_messages", "field=prefix");
  expect_error("[otlp]\nsummary_regions = [\"index=n,t\"]\n", "otlp.summary_regions", "category/label");
  expect_error("[otlp]\nimportant_events = [\"f=category\"]\n", "otlp.important_events", "category/key_prefix");
}

TEST(ConfigFile, SocketPathLimitIs107Bytes) {
  const std::string longest = "/" + std::string(106, 's');
  EXPECT_EQ(parse("[stream]\npath = \"" + longest + "\"\n").stream.path, longest);
  EXPECT_EQ(parse("[stream]\npath = \"\"\n").stream.path, "");  // disabled
  EXPECT_NE(load_error("[stream]\npath = \"" + longest + "s\"\n").find("AF_UNIX allows at most 107"),
            std::string::npos);
}

TEST(ConfigFile, SyntaxErrorsNameTheFileAndLine) {
  const std::string message = load_error("[stream]\npath = /no/quotes\n");
  EXPECT_EQ(message.rfind(k_file + ":2:", 0), 0u) << message;
  EXPECT_NE(message.find("not valid TOML"), std::string::npos) << message;
}

TEST(ConfigFile, MissingFileIsAnErrorNamingIt) {
  test::TempDir dir;
  try {
    (void)load_config_file(dir.file("absent.toml"), default_options());
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(dir.file("absent.toml")), std::string::npos) << e.what();
  }
  test::write_file(dir.file("t.toml"), "[limits]\nio_threads = 2\n");
  EXPECT_EQ(load_config_file(dir.file("t.toml"), default_options()).io_threads, 2u);
}

TEST(ConfigFile, ValidateNamesTheSetting) {
  DaemonOptions o = default_options();
  EXPECT_EQ(validate_error(o), "");
  o.stream.path = "t.sock";
  EXPECT_NE(validate_error(o).find("'stream.path' (--socket) is not absolute"), std::string::npos);
  o = default_options();
  o.dgram.path = "/" + std::string(107, 'd');
  EXPECT_NE(validate_error(o).find("'dgram.path' (--dgram-socket) is too long"), std::string::npos);
  o = default_options();
  o.directories.dirs = {"relative/dir"};
  EXPECT_NE(validate_error(o).find("'directories.watch'"), std::string::npos);
  o = default_options();
  o.db_path.clear();
  EXPECT_NE(validate_error(o).find("'database.path'"), std::string::npos);
  o = default_options();
  o.io_threads = 0;
  EXPECT_NE(validate_error(o).find("'limits.io_threads'"), std::string::npos);
  o = default_options();
  o.log_level = "chatty";
  EXPECT_NE(validate_error(o).find("'log.level'"), std::string::npos);
  o = default_options();
  o.dgram.path = o.stream.path;
  EXPECT_NE(validate_error(o).find("same as 'stream.path'"), std::string::npos);
  // A nickname naming a ruleset with a typo: its processes would get
  // summary without a word. (Each entry alone is well formed.)
  o = default_options();
  o.export_rules.nicknames = {"big=rs:fetch"};
  o.export_rules.rulesets = {"rs:fech git:fetch=verbose"};
  EXPECT_NE(validate_error(o).find("'otlp.nicknames' (--otlp-nickname): 'big=rs:fetch' names the ruleset "
                                   "'rs:fetch', which no ruleset entry defines"),
            std::string::npos)
      << validate_error(o);
  o.export_rules.rulesets = {"rs:fetch git:fetch=verbose"};
  EXPECT_EQ(validate_error(o), "");
}

TEST(ConfigFile, ValidateReportsEveryBadSetting) {
  DaemonOptions o = default_options();
  o.io_threads = 0;
  o.store_writer.commit_interval = std::chrono::milliseconds(0);
  o.log_level = "chatty";
  try {
    validate_options(o);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.problems().size(), 3u) << e.what();
  }
}

TEST(ConfigFile, SomethingMustBeListenedTo) {
  DaemonOptions o = default_options();
  o.stream.path.clear();
  EXPECT_EQ(validate_error(o), "");  // the dgram socket is enough
  o.dgram.path.clear();
  EXPECT_NE(validate_error(o).find("nothing to listen on"), std::string::npos);
  o.directories.dirs = {"/var/log/git-trace2"};
  EXPECT_EQ(validate_error(o), "");
}

TEST(ConfigFile, FlagsConvertLikeTheFile) {
  DaemonOptions o = default_options();
  apply_flag(o, "limits.queue_max_mib", {"8"});
  apply_flag(o, "stream.mode", {"0600"});
  apply_flag(o, "directories.delete_finished", {"false"});
  apply_flag(o, "directories.watch", {"/a", "/b"});
  apply_flag(o, "stream.path", {""});
  EXPECT_EQ(o.max_queue_bytes, 8u * 1024 * 1024);
  EXPECT_EQ(o.stream.mode, 0600u);
  EXPECT_FALSE(o.directories.delete_finished);
  EXPECT_EQ(o.directories.dirs, (std::vector<std::string>{"/a", "/b"}));
  EXPECT_EQ(o.stream.path, "");
  apply_flag(o, "directories.watch", {"/c"});  // replaces, does not add
  EXPECT_EQ(o.directories.dirs, std::vector<std::string>{"/c"});

  EXPECT_THROW(apply_flag(o, "limits.io_threads", {"two"}), ConfigError);
  EXPECT_THROW(apply_flag(o, "limits.io_threads", {"-1"}), ConfigError);  // unsigned
  EXPECT_THROW(apply_flag(o, "limits.queue_max_mib", {"99999999999999999"}), ConfigError);
  EXPECT_THROW(apply_flag(o, "stream.mode", {"rw"}), ConfigError);
  EXPECT_THROW(apply_flag(o, "no.such", {"1"}), ConfigError);
  // Values are checked later, with everything else.
  apply_flag(o, "stream.path", {"relative"});
  EXPECT_NE(validate_error(o).find("(--socket)"), std::string::npos);
}

TEST(ConfigFile, RenderLoadsBackIdentically) {
  expect_same(parse(render_config(default_options())), default_options());

  DaemonOptions o = parse(k_every_key);
  o.export_rules.nickname_key = "we\"ird\\name";  // any text, quoted and escaped
  o.export_rules.ruleset_key = "tab\there, é";
  o.directories.dirs.push_back("/with space/and \"quotes\"");
  const std::string rendered = render_config(o);
  expect_same(parse(rendered, default_options()), o);
  // Rendering what was loaded gives the same text again.
  EXPECT_EQ(render_config(parse(rendered)), rendered);
}

TEST(ConfigFile, EverySettingHasAKeyAndAFlag) {
  const std::string rendered = render_config(default_options());
  std::set<std::string> flags;
  for (const auto& setting : describe_settings()) {
    EXPECT_TRUE(flags.insert(setting.flag).second) << setting.flag;
    EXPECT_EQ(setting.flag.rfind("--", 0), 0u) << setting.flag;
    const std::string name = setting.key.substr(setting.key.find('.') + 1);
    EXPECT_NE(rendered.find("\n" + name + " = "), std::string::npos) << setting.key;
    EXPECT_EQ(render_setting(default_options(), setting.key).empty(), false);
  }
  EXPECT_EQ(describe_settings().size(), 76u);
  EXPECT_EQ(render_setting(default_options(), "stream.mode"), "\"0666\"");
}

// `trace2d --help` and docs/configuration.md say the same about every flag:
// each setting has help, and the page names its flag with the same
// placeholder ("`--otlp-endpoint URL`"; a boolean flag alone).
TEST(ConfigFile, EverySettingHasHelpAndItsFlagIsDocumentedAlike) {
  std::ifstream page(std::string(TRACE2D_TEST_DATA) + "/../../docs/configuration.md");
  ASSERT_TRUE(page) << "docs/configuration.md";
  const std::string doc((std::istreambuf_iterator<char>(page)), std::istreambuf_iterator<char>());
  for (const auto& setting : describe_settings()) {
    EXPECT_FALSE(setting.help.empty()) << setting.key << " has no help in config_file_settings.hpp";
    EXPECT_EQ(setting.value_name.empty(), setting.kind == SettingInfo::Kind::boolean) << setting.key;
    const std::string usage = "`" + setting.flag + (setting.value_name.empty() ? "" : " " + setting.value_name) + "`";
    EXPECT_NE(doc.find(usage), std::string::npos) << usage << " is not in docs/configuration.md";
  }
}

// docs/configuration.md's tables as written: each setting ("section.name")
// and the first `...` of its default column ("see above" for the paths,
// whose defaults the page explains before the tables).
std::map<std::string, std::string> documented_defaults(const std::string& doc) {
  std::map<std::string, std::string> defaults;
  std::string section;
  std::istringstream lines(doc);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("### `[")) {
      section = line.substr(6, line.find(']') - 6);
      continue;
    }
    if (section.empty() || !line.starts_with("| `")) {
      continue;
    }
    std::vector<std::string> cells;
    for (std::size_t at = 1; at < line.size();) {
      const std::size_t bar = line.find(" |", at);
      if (bar == std::string::npos) {
        break;
      }
      cells.push_back(line.substr(at + 1, bar - at - 1));
      at = bar + 2;
    }
    if (cells.size() < 3) {
      continue;
    }
    std::string value = cells[2];
    if (const auto tick = value.find('`'); tick != std::string::npos) {
      value = value.substr(tick + 1, value.find('`', tick + 1) - tick - 1);
    }
    // "`client_cert`, `client_key`": one row for both.
    for (std::size_t tick = cells[0].find('`'); tick != std::string::npos;
         tick = cells[0].find('`', cells[0].find('`', tick + 1) + 1)) {
      const std::size_t end = cells[0].find('`', tick + 1);
      defaults[section + "." + cells[0].substr(tick + 1, end - tick - 1)] = value;
    }
  }
  return defaults;
}

// The page's default for each setting is the one the code declares (a
// string with or without its quotes).
TEST(ConfigFile, EverySettingsDocumentedDefaultIsTheDeclaredOne) {
  std::ifstream page(std::string(TRACE2D_TEST_DATA) + "/../../docs/configuration.md");
  ASSERT_TRUE(page) << "docs/configuration.md";
  const std::map<std::string, std::string> documented =
      documented_defaults(std::string((std::istreambuf_iterator<char>(page)), std::istreambuf_iterator<char>()));
  const DaemonOptions defaults = default_options();
  for (const auto& setting : describe_settings()) {
    const auto found = documented.find(setting.key);
    ASSERT_NE(found, documented.end()) << setting.key << " has no row in docs/configuration.md";
    const std::string declared = render_setting(defaults, setting.key);
    if (found->second == "see above") {
      EXPECT_TRUE(setting.key.ends_with(".path")) << setting.key;
      continue;
    }
    const bool quoted = declared.size() >= 2 && declared.front() == '"' && declared.back() == '"';
    EXPECT_TRUE(found->second == declared || (quoted && found->second == declared.substr(1, declared.size() - 2)))
        << setting.key << ": docs/configuration.md says " << found->second << ", the code " << declared;
  }
  EXPECT_GE(documented.size(), describe_settings().size());
}

TEST(ConfigFile, ShippedFileIsTheRootDefaults) {
  const std::string shipped = std::string(TRACE2D_TEST_DATA) + "/../../config/trace2d.toml";
  DaemonOptions root = default_options();
  root.stream.path = "/run/trace2d/trace2d.sock";
  root.dgram.path = "/run/trace2d/trace2d-dgram.sock";
  root.db_path = "/var/lib/trace2d/trace2d.db";

  // Loaded over anything at all, it sets every setting to the root default.
  DaemonOptions other = parse(k_every_key);
  expect_same(load_config_file(shipped, other), root);
  expect_same(load_config_file(shipped, default_options()), root);
}

// An OTLP header a collector's HTTP parser would refuse (answering 400,
// which drops what the request carried) is refused at start instead.
TEST(ConfigFile, AnOtlpHeaderIsAnHttpTokenEqualsAValueWithoutControlCharacters) {
  EXPECT_EQ(DaemonOptions::header_problem("X-Scope-OrgID=tenant1"), "");
  EXPECT_EQ(DaemonOptions::header_problem("authorization=Bearer a.b+c/d=="), "");
  EXPECT_EQ(DaemonOptions::header_problem("x-note=tab\tand caf\xc3\xa9"), "");
  EXPECT_NE(DaemonOptions::header_problem("X Scope-OrgID=tenant1").find("not an HTTP token"), std::string::npos);
  EXPECT_NE(DaemonOptions::header_problem("x(y)=1").find("not an HTTP token"), std::string::npos);
  EXPECT_NE(DaemonOptions::header_problem("x-a=b\x01c").find("control character"), std::string::npos);
  EXPECT_NE(DaemonOptions::header_problem("x-a=b\rc").find("not name=value on one line"), std::string::npos);
  EXPECT_NE(DaemonOptions::header_problem("=v").find("not name=value"), std::string::npos);
}

// A socket's owner or group that is not on this host stopped trace2d at
// start-up with "unknown user 'x'" naming no key, after --check-config had
// accepted it.
TEST(ConfigFile, ASocketOwnerOrGroupNotOnThisHostIsRefusedNamingTheKey) {
  EXPECT_EQ(load_error("[stream]\nowner = \"root\"\ngroup = \"0\"\n[dgram]\nowner = \"65534\"\n"), "");
  const std::string owner = load_error("[stream]\nowner = \"no-such-user-t2d\"\n");
  EXPECT_NE(owner.find(":2: 'stream.owner' is not a user of this host"), std::string::npos) << owner;
  const std::string group = load_error("[dgram]\ngroup = \"no-such-group-t2d\"\n");
  EXPECT_NE(group.find(":2: 'dgram.group' is not a group of this host"), std::string::npos) << group;
}

TEST(ConfigFile, ReloadAppliesLiveSettingsAndNamesTheRest) {
  const DaemonOptions running = default_options();
  DaemonOptions fresh = running;
  fresh.directories.dirs = {"/var/tmp/traces"};
  fresh.log_level = "debug";
  fresh.store_writer.commit_interval = std::chrono::milliseconds(250);
  fresh.stream.mode = 0600;

  const ReloadPlan plan = plan_reload(running, fresh);
  EXPECT_EQ(plan.applied, (std::vector<std::string>{"directories.watch", "log.level"}));
  EXPECT_EQ(plan.need_restart, (std::vector<std::string>{"database.commit_interval_ms", "stream.mode"}));
  EXPECT_TRUE(plan_reload(running, running).applied.empty());
  EXPECT_TRUE(plan_reload(running, running).need_restart.empty());

  DaemonOptions applied = running;
  apply_live_settings(applied, fresh);
  EXPECT_EQ(applied.directories.dirs, fresh.directories.dirs);
  EXPECT_EQ(applied.log_level, "debug");
  EXPECT_EQ(applied.store_writer.commit_interval, running.store_writer.commit_interval);  // needs a restart: unchanged
  EXPECT_EQ(applied.stream.mode, running.stream.mode);
}

TEST(ConfigFile, ReloadabilityIsListedPerSetting) {
  std::vector<std::string> live;
  for (const auto& setting : describe_settings()) {
    if (setting.live) {
      live.push_back(setting.key);
    }
  }
  EXPECT_EQ(live, (std::vector<std::string>{"dgram.idle_timeout_ms", "directories.watch",
                                            "directories.delete_finished", "directories.idle_timeout_ms",
                                            "directories.max_silence_ms", "directories.max_open_files_per_uid",
                                            "directories.max_open_files", "directories.max_file_bytes",
                                            "storage.drop", "log.level"}));
}

}  // namespace
}  // namespace trace2d::app
