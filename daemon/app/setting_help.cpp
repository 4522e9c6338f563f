#include "daemon/app/setting_help.hpp"

#include <map>

namespace trace2d::app {
namespace {

using Entry = std::pair<std::string_view, std::string_view>;  // value name, text

const std::map<std::string_view, Entry, std::less<>> k_help = {
    {"database.path", {"PATH", "SQLite database path"}},
    {"database.commit_interval_ms", {"MS", "Longest time between commits under load"}},
    {"stream.path", {"PATH", "Stream socket path (absolute; \"\": none)"}},
    {"stream.mode", {"MODE", "Permissions of the stream socket file (octal)"}},
    {"stream.owner", {"USER", "Owner of the stream socket file (name or uid)"}},
    {"stream.group", {"GROUP", "Group of the stream socket file (name or gid)"}},
    {"stream.silent_timeout_ms", {"MS", "Close a stream connection that sends nothing this long (0: never)"}},
    {"dgram.path", {"PATH", "Datagram socket path (absolute; \"\": none)"}},
    {"dgram.mode", {"MODE", "Permissions of the datagram socket file (octal)"}},
    {"dgram.owner", {"USER", "Owner of the datagram socket file (name or uid)"}},
    {"dgram.group", {"GROUP", "Group of the datagram socket file (name or gid)"}},
    {"dgram.receive_buffer_bytes", {"BYTES", "Kernel receive buffer of the datagram socket"}},
    {"dgram.idle_timeout_ms", {"MS", "A datagram session silent this long is incomplete"}},
    {"directories.watch", {"DIR", "Trace directory to watch (repeatable; replaces the file's list)"}},
    {"directories.delete_finished", {"", "Remove trace files once stored"}},
    {"directories.idle_timeout_ms", {"MS", "A trace file that has not grown for this long is finished"}},
    {"limits.queue_max_mib", {"MIB", "Memory for events read but not yet committed"}},
    {"limits.overflow_wait_ms", {"MS", "At the memory bound, pause reading this long before dropping"}},
    {"limits.max_line_bytes", {"BYTES", "Longest event line accepted; longer lines are rejected"}},
    {"limits.io_threads", {"N", "Threads reading sockets"}},
    {"limits.batch_scheduling", {"", "Run the parse, store and export threads under SCHED_BATCH, so git goes first"}},
    {"limits.per_uid_lines_per_second", {"N", "The rate valve: lines one uid may send per second while it holds its memory share (0: none)"}},
    {"limits.per_uid_connections", {"N", "Stream connections one uid may hold open (0: all but a share kept for other uids)"}},
    {"limits.per_uid_sessions", {"N", "Sessions one uid may have open at once"}},
    {"limits.per_uid_live_mib", {"MIB", "Memory one uid's sessions in memory may hold (text, open regions)"}},
    {"retention.max_age", {"AGE", "Delete sessions and rejects older than this (90s, 15m, 12h, 30d, 2w; \"\": keep)"}},
    {"retention.max_db_bytes", {"BYTES", "While the database is larger, delete the biggest sender's oldest data (0: no bound)"}},
    {"retention.headroom_percent", {"PERCENT", "Under the size bound, keep this much of it free while idle, for bursts (at least 1)"}},
    {"storage.drop", {"PATTERN", "Commands not stored at all, e.g. git:status (repeatable; replaces the file's list)"}},
    {"security.redact_url_credentials", {"", "Replace credentials (userinfo) in URLs before storing"}},
    {"shutdown.grace_ms", {"MS", "On SIGTERM, keep reading open connections this long"}},
    {"shutdown.give_up_after_ms", {"MS", "On SIGTERM, stop retrying a failing database after this long"}},
    {"status.interval_ms", {"MS", "How often the status tables are written"}},
    {"log.level", {"LEVEL", "trace, debug, info, warn, error, critical, off"}},
    {"log.target", {"TARGET", "stderr, journal, or an absolute file path"}},
    {"directories.max_silence_ms", {"MS", "A trace file silent this long is finished even if its git seems to run"}},
    {"directories.max_open_files_per_uid", {"N", "Trace files of one owner read at once"}},
    {"directories.max_open_files", {"N", "Trace files read at once in all"}},
    {"directories.max_file_bytes", {"BYTES", "Refuse trace files larger than this (0: no cap)"}},
    {"otlp.endpoint", {"URL", "OTLP collector to export process trees to; over HTTP a base URL: /v1/traces is appended (\"\": no export)"}},
    {"otlp.traces_endpoint", {"URL", "The collector's traces URL, used as is; wins over otlp.endpoint (\"\": none)"}},
    {"otlp.protocol", {"P", "http/protobuf, http/json or grpc (port 4317 when the endpoint names none)"}},
    {"otlp.compression", {"C", "none or gzip"}},
    {"otlp.timeout_ms", {"MS", "How long one export request may take"}},
    {"otlp.headers", {"NAME=VALUE", "Extra request header, gRPC metadata over grpc (repeatable)"}},
    {"otlp.ca_file", {"PATH", "https (HTTP or gRPC): PEM file of the CAs to trust (\"\": the system's)"}},
    {"otlp.client_cert", {"PATH", "https: client certificate (PEM)"}},
    {"otlp.client_key", {"PATH", "https: the client certificate's key (PEM)"}},
    {"otlp.detail", {"LEVEL", "Detail level of commands no rule names: drop, summary, process, verbose"}},
    {"otlp.rules", {"PATTERN=LEVEL", "A command's detail level, e.g. git:status=drop (repeatable)"}},
    {"otlp.nickname_key", {"KEY", "The def_param whose value is the repository's nickname"}},
    {"otlp.important_data", {"CATEGORY/KEY", "data events sent verbatim at every level but drop (repeatable)"}},
    {"otlp.ruleset_key", {"KEY", "The def_param whose value names a repository's ruleset or detail level (\"\": none)"}},
    {"otlp.nicknames", {"NICK=LEVEL", "A repository nickname's detail level or ruleset (repeatable)"}},
    {"otlp.rulesets", {"\"rs:NAME PATTERN=LEVEL ... *=LEVEL\"", "A named ruleset (repeatable)"}},
    {"otlp.summary_messages", {"FIELD=PREFIX", "trace2.process.summary: error and printf messages counted by prefix (repeatable)"}},
    {"otlp.summary_regions", {"CAT/LABEL=COUNT,TIME", "trace2.process.summary: a region's count and seconds (repeatable)"}},
    {"otlp.important_events", {"FIELD=CAT/KEY_PREFIX", "trace2.process.important_events: data values by key prefix (repeatable)"}},
    {"otlp.pii_user_name", {"", "Send the sender's user name (trace2.pii.username)"}},
    {"otlp.pii_host_name", {"", "Send this host's name on each process span (trace2.pii.hostname)"}},
    {"otlp.resource_host_name", {"", "Send this host's name on the resource (host.name)"}},
    {"otlp.outcome_detail", {"LEVEL", "Failed and slow runs at least at this level: summary, process, verbose (\"\": off)"}},
    {"otlp.slow_ms", {"MS", "With outcome_detail: a run this long is slow (0: no fixed bound)"}},
    {"otlp.slow_p99", {"", "With outcome_detail: a run slower than its command's p99 (last 7 days) is slow"}},
    {"otlp.batch_max_sessions", {"N", "Sessions in one export request at most"}},
    {"otlp.batch_max_spans", {"N", "Spans in one export request at most (a bigger session sends its first ones)"}},
    {"otlp.max_backoff_ms", {"MS", "Longest wait between export attempts while the collector fails (Retry-After wins)"}},
    {"otlp.shutdown_wait_ms", {"MS", "On SIGTERM, wait this long for the answer to an export request in flight"}},
    {"metrics.listen", {"ADDR", "Serve /metrics here (a port alone: loopback; \"\": off)"}},
    {"metrics.regions", {"CAT/LABEL", "Regions timed as histograms, category/label or category/* (repeatable)"}},
    {"metrics.repository_label",
     {"KIND", "A repo label on the command histogram: none, nickname, or worktree (its base name)"}},
    {"query.enabled", {"", "Serve trace2ctl to users who may not read the database, each their own sessions"}},
    {"query.socket", {"PATH", "The query service's socket (\"\": trace2ctl.sock beside the stream socket)"}},
    {"query.trace2ctl", {"PATH", "The trace2ctl the query service runs (\"\": the one beside trace2d)"}},
};

}  // namespace

std::optional<SettingHelp> setting_help(std::string_view key) {
  const auto found = k_help.find(key);
  if (found == k_help.end()) {
    return std::nullopt;
  }
  return SettingHelp{found->second.first, found->second.second};
}

}  // namespace trace2d::app
