// The Trace2 EVENT line parser (proto/parser.hpp): every event type of the
// format, brief mode, unknown events and fields, wrong types, each reject
// class, invalid UTF-8, buffers with and without padding, reuse, big lines.
//
// Most tests run twice: with the line parsed in place (padding readable after
// it, filled with the bytes a real read buffer would hold there) and with
// readable_after = 0 from an exactly sized allocation, so that a parser that
// read past the line without copying it would trip AddressSanitizer.

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "proto/event.hpp"
#include "proto/parser.hpp"
#include "proto/utf8.hpp"

namespace proto = trace2d::proto;
using proto::Event;
using proto::EventKind;
using proto::ParseOutcome;

namespace {

constexpr std::string_view k_sid = "20261121T235101.565577Z-H0a7c9cdf-P000009e9";
// The common keys git writes in normal (non-brief) mode, up to the event's own
// fields, e.g. head("exit", "git.c", 721) + R"(,"t_abs":0.1,"code":0})".
std::string head(std::string_view event, std::string_view file, int line,
                 std::string_view thread = "main") {
  std::string out = R"({"event":")";
  out.append(event).append(R"(","sid":")").append(k_sid).append(R"(","thread":")");
  out.append(thread).append(R"(","time":"2026-11-21T23:51:01.565683Z","file":")").append(file);
  out.append(R"(","line":)").append(std::to_string(line));
  return out;
}

std::size_t count_fffd(std::string_view text) {
  std::size_t n = 0;
  for (auto at = text.find(proto::k_replacement_character); at != std::string_view::npos; at = text.find(proto::k_replacement_character, at + 1)) {
    ++n;
  }
  return n;
}

std::string nested(std::size_t depth) {
  return std::string(depth, '[') + "1" + std::string(depth, ']');
}

enum class Mode { in_place, copied };

// One line in memory, laid out as the Mode says.
class LineBuffer {
 public:
  LineBuffer(std::string_view line, Mode mode) : m_size(line.size()) {
    if (mode == Mode::in_place) {
      m_readable_after = proto::Parser::padding_bytes();
      m_bytes = std::make_unique<char[]>(m_size + m_readable_after);
      // What a read buffer holds after a line: its newline and the next line.
      std::string after = "\n";
      while (after.size() < m_readable_after) {
        after += R"({"event":"exit","sid":"9","code":123456789}])" "\n";
      }
      std::memcpy(m_bytes.get() + m_size, after.data(), m_readable_after);
    } else {
      // Exactly sized: reading one byte past the line is a heap overflow.
      m_bytes = std::make_unique<char[]>(m_size == 0 ? 1 : m_size);
    }
    std::memcpy(m_bytes.get(), line.data(), m_size);
  }

  [[nodiscard]] std::string_view line() const { return {m_bytes.get(), m_size}; }
  [[nodiscard]] std::size_t readable_after() const { return m_readable_after; }

 private:
  std::unique_ptr<char[]> m_bytes;
  std::size_t m_size = 0;
  std::size_t m_readable_after = 0;
};

template <typename T>
const T& payload_of(const Event& event) {
  const T* payload = event.as<T>();
  if (payload == nullptr) {
    throw std::runtime_error("payload of '" + std::string(event.event) + "' has another type (index " +
                             std::to_string(event.payload.index()) + ")");
  }
  return *payload;
}

std::vector<std::string> strings(proto::StringList list) {
  return {list.begin(), list.end()};
}

using Strings = std::vector<std::string>;

class ParserTest : public ::testing::TestWithParam<Mode> {
 protected:
  ParseOutcome parse(std::string_view line) {
    m_buffer = std::make_unique<LineBuffer>(line, GetParam());
    return m_parser.parse(m_buffer->line(), m_buffer->readable_after(), m_event);
  }

  // Parses a line that must be accepted with no problems.
  const Event& accept(std::string_view line) {
    const ParseOutcome outcome = parse(line);
    EXPECT_TRUE(outcome.ok) << outcome.reject_reason << "\n  line: " << line;
    EXPECT_EQ(m_event.problems, "") << line;
    EXPECT_FALSE(m_event.utf8_repaired);
    EXPECT_EQ(m_event.json, line);
    return m_event;
  }

  // Parses a line that must be accepted, possibly with problems.
  const Event& keep(std::string_view line) {
    const ParseOutcome outcome = parse(line);
    EXPECT_TRUE(outcome.ok) << outcome.reject_reason << "\n  line: " << line;
    return m_event;
  }

  // Parses a line that must be rejected; returns the reason.
  std::string reject(std::string_view line) {
    const ParseOutcome outcome = parse(line);
    EXPECT_FALSE(outcome.ok) << "accepted: " << line.substr(0, 300);
    EXPECT_FALSE(static_cast<bool>(outcome));
    EXPECT_FALSE(outcome.reject_reason.empty()) << line.substr(0, 300);
    return std::string(outcome.reject_reason);
  }

  proto::Parser m_parser;
  Event m_event;
  std::unique_ptr<LineBuffer> m_buffer;
};

INSTANTIATE_TEST_SUITE_P(Buffers, ParserTest, ::testing::Values(Mode::in_place, Mode::copied),
                         [](const ::testing::TestParamInfo<Mode>& param_info) {
                           return param_info.param == Mode::in_place ? "InPlace" : "Copied";
                         });

// ---------------------------------------------------------------------------
// Every event type of the format, as git writes it.

TEST_P(ParserTest, Version) {
  const Event& e = accept(
      R"({"event":"version","sid":"20261121T235101.565577Z-H0a7c9cdf-P000009e9","thread":"main","time":"2026-11-21T23:51:01.565683Z","file":"common-main.c","line":50,"evt":"3","exe":"2.39.5"})");
  EXPECT_EQ(e.event, "version");
  EXPECT_EQ(e.kind, EventKind::version);
  EXPECT_EQ(e.sid, k_sid);
  EXPECT_EQ(e.thread, "main");
  EXPECT_EQ(e.time_text, "2026-11-21T23:51:01.565683Z");
  EXPECT_EQ(e.time_us, 1795305061565683);
  EXPECT_EQ(e.file, "common-main.c");
  EXPECT_EQ(e.line, 50);
  EXPECT_FALSE(e.repo.has_value());
  const auto& v = payload_of<proto::Version>(e);
  EXPECT_EQ(v.evt, "3");
  EXPECT_EQ(v.exe, "2.39.5");
}

TEST_P(ParserTest, TooManyFiles) {
  const Event& e = accept(head("too_many_files", "trace2/tr2_dst.c", 73) + "}");
  EXPECT_EQ(e.kind, EventKind::too_many_files);
  EXPECT_NE(e.as<proto::TooManyFiles>(), nullptr);
  EXPECT_EQ(e.file, "trace2/tr2_dst.c");
  EXPECT_EQ(e.line, 73);
}

TEST_P(ParserTest, Start) {
  const Event& e = accept(head("start", "common-main.c", 51) +
                          R"(,"t_abs":0.000842,"argv":["git","commit","-m","fix: a \"quoted\" word"]})");
  EXPECT_EQ(e.kind, EventKind::start);
  const auto& s = payload_of<proto::Start>(e);
  EXPECT_DOUBLE_EQ(s.t_abs.value_or(-1), 0.000842);
  EXPECT_EQ(strings(s.argv), (Strings{"git", "commit", "-m", "fix: a \"quoted\" word"}));
}

TEST_P(ParserTest, StartWithEmptyArgv) {
  const Event& e = accept(head("start", "common-main.c", 51) + R"(,"t_abs":0.000842,"argv":[]})");
  EXPECT_TRUE(payload_of<proto::Start>(e).argv.empty());
}

TEST_P(ParserTest, ExitAndAtexit) {
  {
    const Event& e = accept(head("exit", "git.c", 721) + R"(,"t_abs":0.023456,"code":128})");
    EXPECT_EQ(e.kind, EventKind::exit);
    EXPECT_TRUE(proto::is_terminal(e.kind));
    const auto& x = payload_of<proto::Exit>(e);
    EXPECT_DOUBLE_EQ(x.t_abs.value_or(-1), 0.023456);
    EXPECT_EQ(x.code, 128);
  }
  {
    const Event& e = accept(head("atexit", "trace2/tr2_tgt_event.c", 207) +
                            R"(,"t_abs":0.024109,"code":-1})");
    EXPECT_EQ(e.kind, EventKind::atexit);
    EXPECT_TRUE(proto::is_terminal(e.kind));
    const auto& x = payload_of<proto::Exit>(e);
    EXPECT_DOUBLE_EQ(x.t_abs.value_or(-1), 0.024109);
    EXPECT_EQ(x.code, -1);
  }
}

TEST_P(ParserTest, Signal) {
  const Event& e = accept(head("signal", "trace2/tr2_tgt_event.c", 220) +
                          R"(,"t_abs":1.500001,"signo":13})");
  EXPECT_EQ(e.kind, EventKind::signal);
  EXPECT_TRUE(proto::is_terminal(e.kind));
  const auto& s = payload_of<proto::Signal>(e);
  EXPECT_DOUBLE_EQ(s.t_abs.value_or(-1), 1.500001);
  EXPECT_EQ(s.signo, 13);
}

TEST_P(ParserTest, Error) {
  const Event& e = accept(head("error", "usage.c", 80) +
                          R"(,"msg":"invalid option: --frobnicate","fmt":"invalid option: %s"})");
  EXPECT_EQ(e.kind, EventKind::error);
  EXPECT_FALSE(proto::is_terminal(e.kind));
  const auto& x = payload_of<proto::Error>(e);
  EXPECT_EQ(x.msg, "invalid option: --frobnicate");
  EXPECT_EQ(x.fmt, "invalid option: %s");
}

TEST_P(ParserTest, ErrorWithoutOptionalFields) {
  const Event& e = accept(head("error", "usage.c", 80) + "}");
  const auto& x = payload_of<proto::Error>(e);
  EXPECT_FALSE(x.msg.has_value());
  EXPECT_FALSE(x.fmt.has_value());
}

TEST_P(ParserTest, CmdPath) {
  const Event& e = accept(head("cmd_path", "git.c", 454) + R"(,"path":"/usr/lib/git-core/git"})");
  EXPECT_EQ(e.kind, EventKind::cmd_path);
  EXPECT_EQ(payload_of<proto::CmdPath>(e).path, "/usr/lib/git-core/git");
}

TEST_P(ParserTest, CmdAncestry) {
  const Event& e = accept(head("cmd_ancestry", "compat/linux/procinfo.c", 170) +
                          R"(,"ancestry":["bash","sshd","systemd"]})");
  EXPECT_EQ(e.kind, EventKind::cmd_ancestry);
  EXPECT_EQ(strings(payload_of<proto::CmdAncestry>(e).ancestry), (Strings{"bash", "sshd", "systemd"}));
}

TEST_P(ParserTest, CmdName) {
  const Event& e = accept(head("cmd_name", "git.c", 455) +
                          R"(,"name":"pack-objects","hierarchy":"push/pack-objects"})");
  EXPECT_EQ(e.kind, EventKind::cmd_name);
  const auto& c = payload_of<proto::CmdName>(e);
  EXPECT_EQ(c.name, "pack-objects");
  EXPECT_EQ(c.hierarchy, "push/pack-objects");
}

TEST_P(ParserTest, CmdNameWithoutHierarchy) {
  const Event& e = accept(head("cmd_name", "git.c", 455) + R"(,"name":"status"})");
  const auto& c = payload_of<proto::CmdName>(e);
  EXPECT_EQ(c.name, "status");
  EXPECT_FALSE(c.hierarchy.has_value());
}

TEST_P(ParserTest, CmdMode) {
  const Event& e = accept(head("cmd_mode", "builtin/checkout.c", 1839) + R"(,"name":"branch"})");
  EXPECT_EQ(e.kind, EventKind::cmd_mode);
  EXPECT_EQ(payload_of<proto::CmdMode>(e).name, "branch");
}

TEST_P(ParserTest, Alias) {
  const Event& e = accept(head("alias", "git.c", 368) + R"(,"alias":"st","argv":["status","-sb"]})");
  EXPECT_EQ(e.kind, EventKind::alias);
  const auto& a = payload_of<proto::Alias>(e);
  EXPECT_EQ(a.alias, "st");
  EXPECT_EQ(strings(a.argv), (Strings{"status", "-sb"}));
}

TEST_P(ParserTest, ChildStart) {
  const Event& e = accept(
      head("child_start", "run-command.c", 735) +
      R"(,"child_id":2,"child_class":"hook","hook_name":"pre-commit","cd":"/home/me/src","use_shell":true,"argv":[".git/hooks/pre-commit"]})");
  EXPECT_EQ(e.kind, EventKind::child_start);
  const auto& c = payload_of<proto::ChildStart>(e);
  EXPECT_EQ(c.child_id, 2);
  EXPECT_EQ(c.child_class, "hook");
  EXPECT_EQ(c.hook_name, "pre-commit");
  EXPECT_EQ(c.cd, "/home/me/src");
  EXPECT_EQ(c.use_shell, true);
  EXPECT_EQ(strings(c.argv), (Strings{".git/hooks/pre-commit"}));
}

TEST_P(ParserTest, ChildStartWithoutOptionalFields) {
  const Event& e = accept(head("child_start", "run-command.c", 735) +
                          R"(,"child_id":0,"child_class":"?","use_shell":false,"argv":["git","gc","--auto"]})");
  const auto& c = payload_of<proto::ChildStart>(e);
  EXPECT_EQ(c.child_id, 0);
  EXPECT_EQ(c.child_class, "?");
  EXPECT_FALSE(c.hook_name.has_value());
  EXPECT_FALSE(c.cd.has_value());
  EXPECT_EQ(c.use_shell, false);
  EXPECT_EQ(strings(c.argv), (Strings{"git", "gc", "--auto"}));
}

TEST_P(ParserTest, ChildExit) {
  const Event& e = accept(head("child_exit", "run-command.c", 979) +
                          R"(,"child_id":2,"pid":14708,"code":1,"t_rel":0.110605})");
  EXPECT_EQ(e.kind, EventKind::child_exit);
  const auto& c = payload_of<proto::ChildExit>(e);
  EXPECT_EQ(c.child_id, 2);
  EXPECT_EQ(c.pid, 14708);
  EXPECT_EQ(c.code, 1);
  EXPECT_DOUBLE_EQ(c.t_rel.value_or(-1), 0.110605);
}

TEST_P(ParserTest, ChildReady) {
  const Event& e = accept(head("child_ready", "run-command.c", 1253) +
                          R"(,"child_id":3,"pid":14800,"ready":"timeout","t_rel":5.000123})");
  EXPECT_EQ(e.kind, EventKind::child_ready);
  const auto& c = payload_of<proto::ChildReady>(e);
  EXPECT_EQ(c.child_id, 3);
  EXPECT_EQ(c.pid, 14800);
  EXPECT_EQ(c.ready, "timeout");
  EXPECT_DOUBLE_EQ(c.t_rel.value_or(-1), 5.000123);
}

TEST_P(ParserTest, ThreadStartAndExit) {
  {
    const Event& e = accept(head("thread_start", "preload-index.c", 108, "th01:preload_thread") + "}");
    EXPECT_EQ(e.kind, EventKind::thread_start);
    EXPECT_EQ(e.thread, "th01:preload_thread");
    EXPECT_NE(e.as<proto::ThreadStart>(), nullptr);
  }
  {
    const Event& e = accept(head("thread_exit", "preload-index.c", 137, "th01:preload_thread") +
                            R"(,"t_rel":0.007328})");
    EXPECT_EQ(e.kind, EventKind::thread_exit);
    EXPECT_EQ(e.thread, "th01:preload_thread");
    EXPECT_DOUBLE_EQ(payload_of<proto::ThreadExit>(e).t_rel.value_or(-1), 0.007328);
  }
}

TEST_P(ParserTest, ExecAndExecResult) {
  {
    const Event& e = accept(head("exec", "exec-cmd.c", 339) +
                            R"(,"exec_id":0,"exe":"git","argv":["git-remote-https","origin"]})");
    EXPECT_EQ(e.kind, EventKind::exec);
    const auto& x = payload_of<proto::Exec>(e);
    EXPECT_EQ(x.exec_id, 0);
    EXPECT_EQ(x.exe, "git");
    EXPECT_EQ(strings(x.argv), (Strings{"git-remote-https", "origin"}));
  }
  {
    const Event& e = accept(head("exec", "exec-cmd.c", 339) + R"(,"exec_id":1,"argv":["ls"]})");
    EXPECT_FALSE(payload_of<proto::Exec>(e).exe.has_value());
  }
  {
    const Event& e = accept(head("exec_result", "exec-cmd.c", 345) + R"(,"exec_id":1,"code":-1})");
    EXPECT_EQ(e.kind, EventKind::exec_result);
    const auto& x = payload_of<proto::ExecResult>(e);
    EXPECT_EQ(x.exec_id, 1);
    EXPECT_EQ(x.code, -1);
  }
}

TEST_P(ParserTest, DefParam) {
  const Event& e = accept(head("def_param", "trace2.c", 652) +
                          R"(,"scope":"global","param":"core.abbrev","value":"12"})");
  EXPECT_EQ(e.kind, EventKind::def_param);
  const auto& d = payload_of<proto::DefParam>(e);
  EXPECT_EQ(d.scope, "global");
  EXPECT_EQ(d.param, "core.abbrev");
  EXPECT_EQ(d.value, "12");
}

TEST_P(ParserTest, DefParamWithoutScopeOrValue) {
  // Older git sends no scope; an environment parameter can have no value.
  const Event& e = accept(head("def_param", "trace2.c", 652) + R"(,"param":"GIT_TRACE2_EVENT"})");
  const auto& d = payload_of<proto::DefParam>(e);
  EXPECT_FALSE(d.scope.has_value());
  EXPECT_EQ(d.param, "GIT_TRACE2_EVENT");
  EXPECT_FALSE(d.value.has_value());
}

TEST_P(ParserTest, DefRepo) {
  const Event& e = accept(head("def_repo", "repository.c", 136) +
                          R"(,"repo":1,"worktree":"/home/me/src/git"})");
  EXPECT_EQ(e.kind, EventKind::def_repo);
  EXPECT_EQ(e.repo, 1);
  EXPECT_EQ(payload_of<proto::DefRepo>(e).worktree, "/home/me/src/git");
}

TEST_P(ParserTest, RegionEnterAndLeave) {
  {
    const Event& e = accept(head("region_enter", "read-cache.c", 2447) +
                            R"(,"repo":1,"nesting":1,"category":"index","label":"do_read_index","msg":".git/index"})");
    EXPECT_EQ(e.kind, EventKind::region_enter);
    EXPECT_EQ(e.repo, 1);
    const auto& r = payload_of<proto::Region>(e);
    EXPECT_EQ(r.nesting, 1);
    EXPECT_EQ(r.category, "index");
    EXPECT_EQ(r.label, "do_read_index");
    EXPECT_EQ(r.msg, ".git/index");
    EXPECT_FALSE(r.t_rel.has_value());
  }
  {
    const Event& e = accept(head("region_leave", "read-cache.c", 2452) +
                            R"(,"repo":1,"t_rel":0.001234,"nesting":1,"category":"index","label":"do_read_index","msg":".git/index"})");
    EXPECT_EQ(e.kind, EventKind::region_leave);
    const auto& r = payload_of<proto::Region>(e);
    EXPECT_DOUBLE_EQ(r.t_rel.value_or(-1), 0.001234);
    EXPECT_EQ(r.nesting, 1);
    EXPECT_EQ(r.category, "index");
    EXPECT_EQ(r.label, "do_read_index");
    EXPECT_EQ(r.msg, ".git/index");
  }
}

TEST_P(ParserTest, RegionWithoutRepoCategoryLabelOrMsg) {
  const Event& e = accept(head("region_enter", "progress.c", 268) + R"(,"nesting":2})");
  EXPECT_FALSE(e.repo.has_value());
  const auto& r = payload_of<proto::Region>(e);
  EXPECT_EQ(r.nesting, 2);
  EXPECT_FALSE(r.category.has_value());
  EXPECT_FALSE(r.label.has_value());
  EXPECT_FALSE(r.msg.has_value());
}

TEST_P(ParserTest, DataWithStringValue) {
  const Event& e = accept(head("data", "read-cache.c", 2457) +
                          R"(,"repo":1,"t_abs":0.024107,"t_rel":0.001031,"nesting":2,"category":"index","key":"read/cache_nr","value":"3552"})");
  EXPECT_EQ(e.kind, EventKind::data);
  const auto& d = payload_of<proto::Data>(e);
  EXPECT_DOUBLE_EQ(d.t_abs.value_or(-1), 0.024107);
  EXPECT_DOUBLE_EQ(d.t_rel.value_or(-1), 0.001031);
  EXPECT_EQ(d.nesting, 2);
  EXPECT_EQ(d.category, "index");
  EXPECT_EQ(d.key, "read/cache_nr");
  EXPECT_EQ(d.value, "3552");
  EXPECT_FALSE(d.value_is_json);
}

TEST_P(ParserTest, DataWithEscapedStringValueIsDecoded) {
  const Event& e = accept(head("data", "x.c", 1) +
                          R"(,"t_abs":0.1,"t_rel":0.1,"nesting":1,"category":"c","key":"k","value":"a\"b\\c\nd\u00e9\ud83d\ude00"})");
  const auto& d = payload_of<proto::Data>(e);
  EXPECT_EQ(d.value, "a\"b\\c\nd\xC3\xA9\xF0\x9F\x98\x80");
  EXPECT_FALSE(d.value_is_json);
}

TEST_P(ParserTest, DataWithIntegerValueFromOldProducers) {
  const Event& e = accept(head("data", "read-cache.c", 2457) +
                          R"(,"repo":1,"t_abs":0.024107,"t_rel":0.001031,"nesting":2,"category":"index","key":"read/cache_nr","value":3552})");
  const auto& d = payload_of<proto::Data>(e);
  EXPECT_EQ(d.value, "3552");
  EXPECT_TRUE(d.value_is_json);
}

TEST_P(ParserTest, DataWithNegativeIntegerValueAndSpaces) {
  const Event& e = accept(head("data", "x.c", 1) +
                          R"(,"category":"c","key":"k","value" :  -17 , "nesting":1})");
  const auto& d = payload_of<proto::Data>(e);
  EXPECT_EQ(d.value, "-17");
  EXPECT_TRUE(d.value_is_json);
  EXPECT_EQ(d.nesting, 1);
}

TEST_P(ParserTest, DataJsonWithArrayValue) {
  const Event& e = accept(head("data_json", "compat/win32/trace2_win32_process_info.c", 132) +
                          R"(,"repo":1,"t_abs":0.015905,"t_rel":0.015905,"nesting":1,"category":"process","key":"windows/ancestry","value":["bash.exe","bash.exe"]})");
  EXPECT_EQ(e.kind, EventKind::data_json);
  const auto& d = payload_of<proto::Data>(e);
  EXPECT_EQ(d.category, "process");
  EXPECT_EQ(d.key, "windows/ancestry");
  EXPECT_EQ(d.value, R"(["bash.exe","bash.exe"])");
  EXPECT_TRUE(d.value_is_json);
}

TEST_P(ParserTest, DataJsonWithNestedObjectValueCapturedExactly) {
  const std::string value =
      R"({"count":3,"items":[{"name":"a\"b","size":1.5e3,"ok":true,"none":null},[],{}],"s":"\u00e9 \/ \t"})";
  const Event& e = accept(head("data_json", "x.c", 1) +
                          R"(,"t_abs":0.5,"t_rel":0.25,"nesting":3,"category":"fsync","key":"stats","value":)" +
                          value + "}");
  const auto& d = payload_of<proto::Data>(e);
  EXPECT_EQ(d.value, value);
  EXPECT_TRUE(d.value_is_json);
  EXPECT_EQ(d.nesting, 3);
  EXPECT_DOUBLE_EQ(d.t_rel.value_or(-1), 0.25);
}

TEST_P(ParserTest, DataJsonValueKeepsInnerWhitespaceButNotTrailing) {
  const std::string value = "[ 1 , {\"a\" : [ ] } ]";
  const Event& e = accept(head("data_json", "x.c", 1) +
                          R"(,"category":"c","key":"k","value":)" + value + "  ,\t\"nesting\":1 }");
  EXPECT_EQ(payload_of<proto::Data>(e).value, value);
}

TEST_P(ParserTest, DataJsonWithScalarValues) {
  const std::string prefix = head("data_json", "x.c", 1) + R"(,"category":"c","key":"k","value":)";
  for (const std::string_view json : {"true", "false", "null", "0", "-1.25e-7", "123456789012"}) {
    const Event& e = accept(prefix + std::string(json) + "}");
    const auto& d = payload_of<proto::Data>(e);
    EXPECT_EQ(d.value, json);
    EXPECT_TRUE(d.value_is_json);
  }
  const Event& e = accept(prefix + R"("text"})");
  EXPECT_EQ(payload_of<proto::Data>(e).value, "text");
  EXPECT_FALSE(payload_of<proto::Data>(e).value_is_json);
}

TEST_P(ParserTest, TimerAndThTimer) {
  {
    const Event& e = accept(head("timer", "trace2/tr2_tgt_event.c", 740) +
                            R"(,"category":"test","name":"test1","intervals":5,"t_total":0.002441,"t_min":0.000243,"t_max":0.000828})");
    EXPECT_EQ(e.kind, EventKind::timer);
    const auto& t = payload_of<proto::Timer>(e);
    EXPECT_EQ(t.category, "test");
    EXPECT_EQ(t.name, "test1");
    EXPECT_EQ(t.intervals, 5);
    EXPECT_DOUBLE_EQ(t.t_total.value_or(-1), 0.002441);
    EXPECT_DOUBLE_EQ(t.t_min.value_or(-1), 0.000243);
    EXPECT_DOUBLE_EQ(t.t_max.value_or(-1), 0.000828);
  }
  {
    const Event& e = accept(head("th_timer", "trace2/tr2_tgt_event.c", 740, "th02:worker") +
                            R"(,"category":"test","name":"test2","intervals":1,"t_total":1,"t_min":1,"t_max":1})");
    EXPECT_EQ(e.kind, EventKind::th_timer);
    EXPECT_EQ(e.thread, "th02:worker");
    const auto& t = payload_of<proto::Timer>(e);
    EXPECT_EQ(t.name, "test2");
    EXPECT_DOUBLE_EQ(t.t_total.value_or(-1), 1.0);  // an integer is a fine number
  }
}

TEST_P(ParserTest, CounterAndThCounter) {
  {
    const Event& e = accept(head("counter", "trace2/tr2_tgt_event.c", 770) +
                            R"(,"category":"test","name":"test1","count":42})");
    EXPECT_EQ(e.kind, EventKind::counter);
    const auto& c = payload_of<proto::Counter>(e);
    EXPECT_EQ(c.category, "test");
    EXPECT_EQ(c.name, "test1");
    EXPECT_EQ(c.count, 42);
  }
  {
    const Event& e = accept(head("th_counter", "trace2/tr2_tgt_event.c", 770, "th07:packing") +
                            R"(,"category":"pack","name":"objects","count":9223372036854775807})");
    EXPECT_EQ(e.kind, EventKind::th_counter);
    EXPECT_EQ(payload_of<proto::Counter>(e).count, 9223372036854775807);
  }
}

TEST_P(ParserTest, Printf) {
  const Event& e = accept(head("printf", "t/helper/test-trace2.c", 412) +
                          R"(,"t_abs":0.001234,"msg":"hello world"})");
  EXPECT_EQ(e.kind, EventKind::printf);
  const auto& p = payload_of<proto::Printf>(e);
  EXPECT_DOUBLE_EQ(p.t_abs.value_or(-1), 0.001234);
  EXPECT_EQ(p.msg, "hello world");
}

TEST_P(ParserTest, RepoOnAnyEvent) {
  const Event& e = accept(head("cmd_mode", "x.c", 1) + R"(,"repo":2,"name":"path"})");
  EXPECT_EQ(e.repo, 2);
}

// ---------------------------------------------------------------------------
// Brief mode, optional and missing fields, odd but valid shapes.

TEST_P(ParserTest, BriefMode) {
  {
    // Brief: no file/line; time only on version and atexit.
    const Event& e = accept(
        R"({"event":"version","sid":"20261121T235101.565577Z-H0a7c9cdf-P000009e9","thread":"main","time":"2026-11-21T23:51:01.565683Z","evt":"3","exe":"2.39.5"})");
    EXPECT_EQ(e.kind, EventKind::version);
    EXPECT_FALSE(e.file.has_value());
    EXPECT_FALSE(e.line.has_value());
    EXPECT_EQ(e.time_us, 1795305061565683);
  }
  {
    const Event& e = accept(
        R"({"event":"start","sid":"20261121T235101.565577Z-H0a7c9cdf-P000009e9","thread":"main","t_abs":0.000842,"argv":["git","fetch"]})");
    EXPECT_EQ(e.kind, EventKind::start);
    EXPECT_FALSE(e.file.has_value());
    EXPECT_FALSE(e.line.has_value());
    EXPECT_FALSE(e.time_text.has_value());
    EXPECT_FALSE(e.time_us.has_value());
    EXPECT_EQ(e.thread, "main");
    EXPECT_EQ(strings(payload_of<proto::Start>(e).argv), (Strings{"git", "fetch"}));
  }
  {
    const Event& e = accept(
        R"({"event":"atexit","sid":"20261121T235101.565577Z-H0a7c9cdf-P000009e9","thread":"main","time":"2026-11-21T23:51:01.600000Z","t_abs":0.034317,"code":0})");
    EXPECT_EQ(e.time_us, 1795305061600000);
    EXPECT_EQ(payload_of<proto::Exit>(e).code, 0);
  }
}

TEST_P(ParserTest, MinimalEventHasOnlyEventAndSid) {
  const Event& e = accept(R"({"event":"thread_start","sid":"x"})");
  EXPECT_EQ(e.kind, EventKind::thread_start);
  EXPECT_EQ(e.sid, "x");
  EXPECT_FALSE(e.thread.has_value());
  EXPECT_FALSE(e.time_text.has_value());
  EXPECT_FALSE(e.file.has_value());
  EXPECT_FALSE(e.line.has_value());
  EXPECT_FALSE(e.repo.has_value());
}

TEST_P(ParserTest, MissingRequiredFieldsAreProblemsNotRejects) {
  const Event& e = keep(head("exit", "git.c", 721) + R"(,"t_abs":0.1})");
  EXPECT_EQ(e.kind, EventKind::exit);
  EXPECT_FALSE(payload_of<proto::Exit>(e).code.has_value());
  EXPECT_NE(e.problems.find("code"), std::string::npos) << e.problems;

  const Event& d = keep(head("data", "x.c", 1) + R"(,"t_abs":0.1,"category":"c"})");
  EXPECT_NE(d.problems.find("key"), std::string::npos) << d.problems;
  EXPECT_NE(d.problems.find("value"), std::string::npos) << d.problems;
  EXPECT_FALSE(payload_of<proto::Data>(d).value.has_value());
}

TEST_P(ParserTest, KeyOrderOtherThanGits) {
  const Event& e = accept(
      R"({"code":3,"line":721,"t_abs":0.5,"file":"git.c","time":"2026-11-21T23:51:01.565683Z","thread":"main","sid":"20261121T235101.565577Z-H0a7c9cdf-P000009e9","event":"exit"})");
  EXPECT_EQ(e.kind, EventKind::exit);
  EXPECT_EQ(e.sid, k_sid);
  EXPECT_EQ(e.line, 721);
  EXPECT_EQ(payload_of<proto::Exit>(e).code, 3);
  EXPECT_DOUBLE_EQ(payload_of<proto::Exit>(e).t_abs.value_or(-1), 0.5);
}

TEST_P(ParserTest, WhitespaceBetweenTokens) {
  const Event& e = accept(" \t{ \"event\" : \"cmd_name\" ,\r\"sid\":\"s\" , \"name\" :\"log\" } \t\r");
  EXPECT_EQ(e.kind, EventKind::cmd_name);
  EXPECT_EQ(payload_of<proto::CmdName>(e).name, "log");
}

TEST_P(ParserTest, EscapedKeysAreMatchedDecoded) {
  const Event& e = accept(R"({"\u0065vent":"cmd_name","s\u0069d":"s","name":"log"})");
  EXPECT_EQ(e.kind, EventKind::cmd_name);
  EXPECT_EQ(e.sid, "s");
}

TEST_P(ParserTest, EscapesInCommonStringsAreDecoded) {
  const Event& e = accept(
      R"({"event":"cmd_path","sid":"a\/b \"c\"","thread":"th01:x\u0041","path":"C:\\Program Files\\Git\\git.exe"})");
  EXPECT_EQ(e.sid, "a/b \"c\"");
  EXPECT_EQ(e.thread, "th01:xA");
  EXPECT_EQ(payload_of<proto::CmdPath>(e).path, "C:\\Program Files\\Git\\git.exe");
}

TEST_P(ParserTest, SidOfAChildWithAFreeTextPrefix) {
  const std::string sid = std::string("build 42 / step one/") + std::string(k_sid);
  const Event& e = accept(R"({"event":"version","sid":")" + sid + R"(","evt":"3","exe":"2.39.5"})");
  EXPECT_EQ(e.sid, sid);
}

TEST_P(ParserTest, NulEscapeOutsideEventAndSidIsKept) {
  const Event& e = accept(head("error", "x.c", 1) + R"(,"msg":"a\u0000b"})");
  EXPECT_EQ(payload_of<proto::Error>(e).msg, std::string_view("a\0b", 3));
}

TEST_P(ParserTest, UnknownEventTypeIsKept) {
  const Event& e = accept(
      head("frobnicate", "future.c", 99) +
      R"(,"t_abs":1.5,"widgets":[1,2,{"x":null}],"opts":{"deep":{"deeper":[true,false]}}})");
  EXPECT_EQ(e.kind, EventKind::unknown);
  EXPECT_EQ(e.event, "frobnicate");
  EXPECT_EQ(e.sid, k_sid);
  EXPECT_NE(e.as<proto::Unknown>(), nullptr);
  EXPECT_NE(e.json.find(R"("opts":{"deep":{"deeper":[true,false]}})"), std::string_view::npos);
}

TEST_P(ParserTest, UnknownFieldsAreKeptInTheJson) {
  const std::string line =
      head("exit", "git.c", 721) +
      R"(,"t_abs":0.1,"future":{"a":[1,{"b":"c"}],"n":-0.5e+2},"flag":false,"nothing":null,"code":0,"list":[]})";
  const Event& e = accept(line);
  EXPECT_EQ(e.kind, EventKind::exit);
  EXPECT_EQ(payload_of<proto::Exit>(e).code, 0);
  EXPECT_EQ(e.json, line);
}

TEST_P(ParserTest, KnownKeysOfOtherEventsAreIgnoredByThePayload) {
  const Event& e = accept(head("exit", "git.c", 721) + R"(,"code":0,"argv":["x"],"msg":"m"})");
  EXPECT_EQ(payload_of<proto::Exit>(e).code, 0);
}

TEST_P(ParserTest, EventNameIsCaseSensitive) {
  const Event& e = accept(R"({"event":"Version","sid":"s"})");
  EXPECT_EQ(e.kind, EventKind::unknown);
  EXPECT_EQ(e.event, "Version");
}

TEST_P(ParserTest, UnparsableTimeIsAProblem) {
  const Event& e = keep(R"({"event":"version","sid":"s","time":"2026-02-30T00:00:00.000000Z","evt":"3","exe":"x"})");
  EXPECT_EQ(e.time_text, "2026-02-30T00:00:00.000000Z");
  EXPECT_FALSE(e.time_us.has_value());
  EXPECT_NE(e.problems.find("time"), std::string::npos) << e.problems;
}

// ---------------------------------------------------------------------------
// Duplicate keys and wrong types: problems, not rejects.

TEST_P(ParserTest, DuplicateKeyFirstWins) {
  const Event& e = keep(head("exit", "git.c", 721) + R"(,"code":1,"t_abs":0.1,"code":2})");
  EXPECT_EQ(payload_of<proto::Exit>(e).code, 1);
  EXPECT_NE(e.problems.find("duplicate"), std::string::npos) << e.problems;
  EXPECT_NE(e.problems.find("code"), std::string::npos) << e.problems;
}

TEST_P(ParserTest, DuplicateEventAndSidFirstWins) {
  const Event& e = keep(R"({"event":"cmd_mode","sid":"first","name":"a","event":"start","sid":"second"})");
  EXPECT_EQ(e.kind, EventKind::cmd_mode);
  EXPECT_EQ(e.sid, "first");
  EXPECT_EQ(payload_of<proto::CmdMode>(e).name, "a");
  EXPECT_NE(e.problems.find("event"), std::string::npos) << e.problems;
  EXPECT_NE(e.problems.find("sid"), std::string::npos) << e.problems;
}

TEST_P(ParserTest, DuplicateKeyFirstWinsEvenWhenTheFirstHasTheWrongType) {
  // The first "code" is unusable; a later one must not take its place.
  const Event& e = keep(head("exit", "git.c", 721) + R"(,"code":"1","code":2})");
  EXPECT_FALSE(payload_of<proto::Exit>(e).code.has_value());
  EXPECT_NE(e.problems.find("duplicate"), std::string::npos) << e.problems;
}

TEST_P(ParserTest, DuplicateEventKeyAfterAWrongTypeDoesNotRescueTheLine) {
  const std::string reason = reject(R"({"event":7,"event":"version","sid":"s"})");
  EXPECT_NE(reason.find("event"), std::string::npos) << reason;
}

TEST_P(ParserTest, DuplicateUnknownKeysAreKept) {
  const Event& e = accept(R"({"event":"thread_start","sid":"s","x":1,"x":[2]})");
  EXPECT_EQ(e.kind, EventKind::thread_start);
}

TEST_P(ParserTest, WrongTypesAreProblemsNotRejects) {
  const Event& e = keep(head("child_start", "run-command.c", 735) +
                        R"(,"child_id":"2","child_class":7,"hook_name":false,"use_shell":"yes","argv":"git gc"})");
  EXPECT_EQ(e.kind, EventKind::child_start);
  const auto& c = payload_of<proto::ChildStart>(e);
  EXPECT_FALSE(c.child_id.has_value());
  EXPECT_FALSE(c.child_class.has_value());
  EXPECT_FALSE(c.hook_name.has_value());
  EXPECT_FALSE(c.use_shell.has_value());
  EXPECT_TRUE(c.argv.empty());
  for (const char* field : {"child_id", "child_class", "hook_name", "use_shell", "argv"}) {
    EXPECT_NE(e.problems.find(field), std::string::npos) << field << " in " << e.problems;
  }
}

TEST_P(ParserTest, WrongTypesInCommonFields) {
  const Event& e = keep(R"({"event":"exit","sid":"s","thread":1,"time":2,"file":["a"],"line":"7","repo":true,"code":0})");
  EXPECT_EQ(e.kind, EventKind::exit);
  EXPECT_FALSE(e.thread.has_value());
  EXPECT_FALSE(e.time_text.has_value());
  EXPECT_FALSE(e.time_us.has_value());
  EXPECT_FALSE(e.file.has_value());
  EXPECT_FALSE(e.line.has_value());
  EXPECT_FALSE(e.repo.has_value());
  EXPECT_EQ(payload_of<proto::Exit>(e).code, 0);
  for (const char* field : {"thread", "time", "file", "line", "repo"}) {
    EXPECT_NE(e.problems.find(field), std::string::npos) << field << " in " << e.problems;
  }
}

TEST_P(ParserTest, NonIntegralNumberInIntegerField) {
  const Event& e = keep(head("exit", "git.c", 721) + R"(,"code":1.5})");
  EXPECT_FALSE(payload_of<proto::Exit>(e).code.has_value());
  EXPECT_NE(e.problems.find("code"), std::string::npos) << e.problems;

  const Event& big = keep(head("exit", "git.c", 721) + R"(,"code":9223372036854775808})");
  EXPECT_FALSE(payload_of<proto::Exit>(big).code.has_value());
  EXPECT_NE(big.problems.find("code"), std::string::npos) << big.problems;
}

TEST_P(ParserTest, StringListWithANonStringElementIsAbsent) {
  const Event& e = keep(head("start", "common-main.c", 51) + R"(,"t_abs":0.1,"argv":["git",5,"x"]})");
  EXPECT_TRUE(payload_of<proto::Start>(e).argv.empty());
  EXPECT_NE(e.problems.find("argv"), std::string::npos) << e.problems;
}

TEST_P(ParserTest, DefParamValueMustBeAString) {
  const Event& e = keep(head("def_param", "trace2.c", 652) + R"(,"param":"core.abbrev","value":12})");
  EXPECT_EQ(payload_of<proto::DefParam>(e).param, "core.abbrev");
  EXPECT_FALSE(payload_of<proto::DefParam>(e).value.has_value());
  EXPECT_NE(e.problems.find("value"), std::string::npos) << e.problems;
}

TEST_P(ParserTest, DataValueOfAnotherTypeIsAProblem) {
  // data (not data_json) carries a string, or an integer from old producers.
  const Event& e = keep(head("data", "x.c", 1) + R"(,"category":"c","key":"k","value":{"a":1}})");
  EXPECT_EQ(e.kind, EventKind::data);
  EXPECT_FALSE(payload_of<proto::Data>(e).value.has_value());
  EXPECT_NE(e.problems.find("value"), std::string::npos) << e.problems;
}

TEST_P(ParserTest, ProblemsAreSeparated) {
  const Event& e = keep(R"({"event":"exit","sid":"s","code":"x","line":"y"})");
  EXPECT_NE(e.problems.find("; "), std::string::npos) << e.problems;
}

// ---------------------------------------------------------------------------
// Rejects: each with a readable reason.

TEST_P(ParserTest, RejectsEmptyLine) {
  EXPECT_NE(reject("").find("empty"), std::string::npos);
  EXPECT_NE(reject("   \t\r").find("empty"), std::string::npos);
}

TEST_P(ParserTest, RejectsNonJson) {
  // The first byte alone would pass for a literal, a number or an array.
  for (const char* line : {"hello world", "12:00:00.000000 git.c:455 trace: built-in: git status",
                           "nul", "-", "42 x", "\"s\" x", "[1", "[1,2] x", "[1,2]]", "[", "[tru]",
                           "true false", "GIT_TRACE2_EVENT=1"}) {
    EXPECT_EQ(reject(line), "not JSON") << line;
  }
}

TEST_P(ParserTest, RejectsJsonThatIsNotAnObject) {
  for (const char* line : {"[1,2]", "42", "\"event\"", "null", "true", "[]",
                           R"([{"event":"version","sid":"s"}])"}) {
    const std::string reason = reject(line);
    EXPECT_NE(reason.find("object"), std::string::npos) << line << ": " << reason;
  }
}

TEST_P(ParserTest, RejectsTruncatedLines) {
  const std::string full = head("start", "common-main.c", 51) + R"(,"t_abs":0.000842,"argv":["git","status"]})";
  // Every proper prefix (the first 40 ending inside the last fields and all
  // around the end, where a truncated write stops).
  for (std::size_t n = 1; n < full.size(); ++n) {
    const std::string prefix = full.substr(0, n);
    if (prefix.find_first_not_of(" ") == std::string::npos) {
      continue;
    }
    const ParseOutcome outcome = parse(prefix);
    EXPECT_FALSE(outcome.ok) << "accepted a truncated line: " << prefix;
    EXPECT_FALSE(outcome.reject_reason.empty());
  }
}

TEST(ParserBuffers, BytesAfterTheLineAreNeverPartOfIt) {
  // In place, what follows the line is readable: digits, a closing brace or
  // a quote there must not complete a truncated line.
  proto::Parser parser;
  Event e;
  const std::string padding(proto::Parser::padding_bytes(), ' ');
  for (const auto& [line, after] : std::vector<std::pair<std::string, std::string>>{
           {R"({"event":"exit","sid":"s","code":12)", "345}"},
           {R"({"event":"exit","sid":"s","code":12)", "}"},
           {R"({"event":"exit","sid":"s","msg":"ab)", "c\"}"},
           {R"({"event":"exit","sid":"s","x":tr)", "ue}"},
           {R"({"event":"exit","sid":"s","x":[1,2)", "]}"},
       }) {
    const std::string buffer = line + after + padding;
    const ParseOutcome outcome =
        parser.parse(std::string_view(buffer.data(), line.size()), buffer.size() - line.size(), e);
    EXPECT_FALSE(outcome.ok) << line;
    EXPECT_NE(outcome.reject_reason, "") << line;
  }
  // And a complete line followed by more digits keeps its own number.
  const std::string line = R"({"event":"exit","sid":"s","code":12})";
  const std::string buffer = line + "345" + padding;
  ASSERT_TRUE(parser.parse(std::string_view(buffer.data(), line.size()), buffer.size() - line.size(), e).ok);
  EXPECT_EQ(payload_of<proto::Exit>(e).code, 12);
}

TEST_P(ParserTest, RejectsTrailingContent) {
  const std::string line = R"({"event":"version","sid":"s","evt":"3","exe":"x"})";
  for (const std::string& bad : {line + " x", line + line, line + "}", line + ",", line + " 1",
                                 line + "[]", line + " \"s\"", line + "null"}) {
    const std::string reason = reject(bad);
    EXPECT_NE(reason.find("trailing"), std::string::npos) << bad << ": " << reason;
  }
}

TEST_P(ParserTest, RejectsMissingOrBadEventAndSid) {
  EXPECT_EQ(reject(R"({"sid":"s","evt":"3"})"), "missing field 'event'");
  EXPECT_EQ(reject(R"({"event":"version","evt":"3"})"), "missing field 'sid'");
  EXPECT_EQ(reject("{}"), "missing field 'event'");
  EXPECT_EQ(reject(R"({"event":"version","sid":42})"), "sid is not a string");
  EXPECT_EQ(reject(R"({"event":"version","sid":null})"), "sid is not a string");
  EXPECT_EQ(reject(R"({"event":["version"],"sid":"s"})"), "event is not a string");
  EXPECT_EQ(reject(R"({"event":null,"sid":"s"})"), "event is not a string");
  EXPECT_EQ(reject(R"({"event":"","sid":"s"})"), "event is empty");
  EXPECT_EQ(reject(R"({"event":"version","sid":""})"), "sid is empty");
}

TEST_P(ParserTest, RejectsNulInEventOrSid) {
  EXPECT_NE(reject(R"({"event":"version","sid":"a\u0000b"})").find("NUL"), std::string::npos);
  EXPECT_NE(reject(R"({"event":"vers\u0000ion","sid":"s"})").find("NUL"), std::string::npos);
}

TEST_P(ParserTest, RejectsRawNulAndControlBytes) {
  const std::string ok = R"({"event":"error","sid":"s","msg":"ab"})";
  // Inside a string, between tokens, and after the object.
  for (const char control : {'\0', '\x01', '\x1f', '\n', '\t'}) {
    std::string in_string = ok;
    in_string.insert(in_string.find("ab") + 1, 1, control);
    reject(in_string);
  }
  for (const char control : {'\0', '\x01', '\x0b', '\x0c'}) {
    std::string between = ok;
    between.insert(between.find(',') + 1, 1, control);
    reject(between);
    reject(ok + std::string(1, control));
    reject(std::string(1, control) + ok);
  }
  std::string nul_in_sid = ok;
  nul_in_sid.insert(nul_in_sid.find("\"s\"") + 1, 1, '\0');
  reject(nul_in_sid);
}

TEST_P(ParserTest, RejectsInvalidEscapes) {
  const std::string prefix = R"({"event":"error","sid":"s",)";
  for (const char* field : {
           R"("msg":"\x41")",       R"("msg":"\u12")",       R"("msg":"\u12G4")",
           R"("msg":"\ud800")",     R"("msg":"\ud800x")",    R"("msg":"\udc00")",
           R"("msg":"\ud800\u0041")", R"("msg":"a\")",     R"("unknown":"\q")",
           R"("\q":1)",             R"("sid2":"\ud800")",
       }) {
    const std::string line = prefix + field + "}";
    const std::string reason = reject(line);
    EXPECT_FALSE(reason.empty()) << line;
  }
  EXPECT_FALSE(reject(R"({"event":"version","sid":"\ud800"})").empty());
}

TEST_P(ParserTest, RejectsInvalidNumbers) {
  const std::string prefix = R"({"event":"exit","sid":"s",)";
  for (const char* field : {R"("x":1e999)", R"("t_abs":1e999)", R"("value":-1e999)",
                            R"("x":01)", R"("x":-)", R"("x":1.)", R"("x":.5)", R"("x":+1)",
                            R"("x":NaN)", R"("x":Infinity)", R"("x":0x10)", R"("code":1e)",
                            R"("x":[1,2e+])", R"("x":{"y":-01}})"}) {
    const std::string line = prefix + field + "}";
    const std::string reason = reject(line);
    EXPECT_FALSE(reason.empty()) << line;
  }
}

TEST_P(ParserTest, RejectsInvalidLiterals) {
  const std::string prefix = R"({"event":"child_start","sid":"s",)";
  for (const char* field : {R"("x":tru)", R"("x":truex)", R"("x":nul)", R"("x":False)",
                            R"("use_shell":tru)", R"("x":[true,fals])", R"("x":{"y":nulll}})",
                            R"("x":undefined)"}) {
    const std::string line = prefix + field + "}";
    const std::string reason = reject(line);
    EXPECT_FALSE(reason.empty()) << line;
  }
}

TEST_P(ParserTest, RejectsStructuralErrors) {
  for (const char* line : {
           R"({"event":"exit","sid":"s",})",
           R"({"event":"exit" "sid":"s"})",
           R"({"event":"exit","sid":"s","x":[1,]})",
           R"({"event":"exit","sid":"s","x":[1 2]})",
           R"({"event":"exit","sid":"s","x":{"a"}})",
           R"({"event":"exit","sid":"s","x":{1:2}})",
           R"({"event":"exit","sid":"s","x":]})",
           R"({"event":"exit","sid":"s","x"})",
           R"({"event":"exit","sid":"s",x:1})",
           R"({'event':'exit','sid':'s'})",
           R"({"event":"exit","sid":"s"]})",
           R"({"event":"exit","sid":"s","value":[1,{]})",
       }) {
    reject(line);
  }
}

TEST_P(ParserTest, RejectsDeepNesting) {
  const std::string prefix = R"({"event":"data_json","sid":"s","category":"c","key":"k",)";
  for (const std::string& field : {"\"x\":" + nested(100), "\"value\":" + nested(100),
                                   "\"argv\":" + nested(100), "\"code\":" + nested(100)}) {
    const std::string reason = reject(prefix + field + "}");
    EXPECT_NE(reason.find("nested"), std::string::npos) << field.substr(0, 8) << ": " << reason;
  }
  // Far deeper than simdjson's own limit.
  reject(prefix + "\"x\":" + nested(5000) + "}");
  reject(prefix + "\"value\":" + nested(5000) + "}");
}

TEST_P(ParserTest, DepthLimitIsTheSameForScalarsAndContainers) {
  // 64 levels of nesting (the top-level object counts as the first) are fine
  // whatever the innermost value is; 65 are not.
  const std::string prefix = R"({"event":"data_json","sid":"s","category":"c","key":"k","value":)";
  const std::string empty63 = std::string(63, '[') + std::string(63, ']');
  for (const std::string& value : {nested(63), empty63}) {
    const Event& e = accept(prefix + value + "}");
    EXPECT_EQ(payload_of<proto::Data>(e).value, value);
  }
  accept(R"({"event":"x","sid":"s","y":)" + nested(63) + "}");
  const std::string empty64 = std::string(64, '[') + std::string(64, ']');
  for (const std::string& value : {nested(64), empty64}) {
    reject(prefix + value + "}");
    reject(R"({"event":"x","sid":"s","y":)" + value + "}");
  }
}

TEST_P(ParserTest, RejectsOverlongSidAndEventName) {
  const std::string sid(10 * 1024, 'S');
  EXPECT_NE(reject(R"({"event":"version","sid":")" + sid + "\"}").find("sid"), std::string::npos);
  const std::string name(1000, 'e');
  EXPECT_NE(reject(R"({"event":")" + name + R"(","sid":"s"})").find("event"), std::string::npos);
  // At the limits exactly, still fine.
  const proto::ParserLimits limits;
  accept(R"({"event":"version","sid":")" + std::string(limits.max_sid_bytes, 'S') +
         R"(","evt":"3","exe":"x"})");
  accept(R"({"event":")" + std::string(limits.max_event_name_bytes, 'e') + R"(","sid":"s"})");
}

TEST_P(ParserTest, CustomLimits) {
  proto::Parser parser(proto::ParserLimits{.max_sid_bytes = 4, .max_event_name_bytes = 3, .max_depth = 2});
  Event e;
  const auto run = [&](std::string_view line) {
    const LineBuffer buffer(line, GetParam());
    return parser.parse(buffer.line(), buffer.readable_after(), e);
  };
  EXPECT_TRUE(run(R"({"event":"abc","sid":"1234"})").ok);
  EXPECT_FALSE(run(R"({"event":"abc","sid":"12345"})").ok);
  EXPECT_FALSE(run(R"({"event":"abcd","sid":"1234"})").ok);
  EXPECT_TRUE(run(R"({"event":"abc","sid":"1","x":[1]})").ok);
  EXPECT_FALSE(run(R"({"event":"abc","sid":"1","x":[[1]]})").ok);
  EXPECT_FALSE(run(R"({"event":"abc","sid":"1","x":[[]]})").ok);
}

struct ReasonCase {
  const char* name;
  std::string line;
  std::string_view expected;  // a part of the reason
};

// The reason says what is wrong, in words a person reading the log can act on.
class ParserReasons : public ::testing::TestWithParam<ReasonCase> {};

TEST_P(ParserReasons, ReasonNamesTheProblem) {
  const ReasonCase& c = GetParam();
  for (const Mode mode : {Mode::in_place, Mode::copied}) {
    proto::Parser parser;
    Event e;
    const LineBuffer buffer(c.line, mode);
    const ParseOutcome outcome = parser.parse(buffer.line(), buffer.readable_after(), e);
    EXPECT_FALSE(outcome.ok);
    EXPECT_NE(outcome.reject_reason.find(c.expected), std::string_view::npos)
        << "reason: " << outcome.reject_reason << "\n  line: " << c.line.substr(0, 200);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Classes, ParserReasons,
    ::testing::Values(
        ReasonCase{"not_json", "12:00:00.000000 git.c:455 trace: built-in: git status", "not JSON"},
        ReasonCase{"array", "[1,2]", "not a JSON object: the line holds an array"},
        ReasonCase{"string", R"("event")", "not a JSON object: the line holds a string"},
        ReasonCase{"truncated", R"({"event":"exit","sid":"s","code":0)", "not closed"},
        ReasonCase{"truncated_in_string", R"({"event":"exit","sid":"s","msg":"ab)", "unterminated string"},
        ReasonCase{"trailing_garbage", R"({"event":"exit","sid":"s"} x)", "trailing content"},
        ReasonCase{"two_objects", R"({"event":"exit","sid":"s"}{"event":"exit","sid":"s"})", "trailing content"},
        ReasonCase{"missing_event", R"({"sid":"s"})", "missing field 'event'"},
        ReasonCase{"missing_sid", R"({"event":"exit"})", "missing field 'sid'"},
        ReasonCase{"sid_not_string", R"({"event":"exit","sid":7})", "sid is not a string"},
        ReasonCase{"empty", "", "empty line"},
        ReasonCase{"raw_nul", std::string(R"({"event":"exit","sid":"a)") + '\0' + R"("})", "control character"},
        ReasonCase{"escaped_nul_in_sid", R"({"event":"exit","sid":"a\u0000"})", "NUL"},
        ReasonCase{"lone_surrogate", R"({"event":"exit","sid":"s","msg":"\ud800"})", "invalid escape in a string in field 'msg'"},
        ReasonCase{"huge_exponent", R"({"event":"exit","sid":"s","t_abs":1e999})", "number in field 't_abs'"},
        ReasonCase{"bad_literal", R"({"event":"exit","sid":"s","future":tru})", "invalid literal in field 'future'"},
        ReasonCase{"bad_structure", R"({"event":"exit","sid":"s","x":[1,]})", "bad structure"},
        ReasonCase{"deep", R"({"event":"exit","sid":"s","x":)" + nested(100) + "}", "nested too deeply in field 'x'"},
        ReasonCase{"long_sid", R"({"event":"exit","sid":")" + std::string(10240, 's') + "\"}", "sid too long"}),
    [](const ::testing::TestParamInfo<ReasonCase>& param_info) { return std::string(param_info.param.name); });

TEST_P(ParserTest, ReasonNamesOnlyTheStartOfAHugeKey) {
  // 2-byte characters, so that a cut at a fixed byte count would split one.
  std::string key = "k";
  for (int i = 0; i < 5000; ++i) {
    key += "\xC3\xA9";
  }
  const std::string reason = reject(R"({"event":"exit","sid":"s",")" + key + R"(":tru})");
  EXPECT_LT(reason.size(), 200u) << reason;
  EXPECT_TRUE(reason.starts_with("not JSON: invalid literal in field 'k\xC3\xA9")) << reason;
  EXPECT_TRUE(reason.ends_with("...'")) << reason;
  EXPECT_TRUE(proto::is_valid_utf8(reason));
}

TEST_P(ParserTest, IntegersBeyond64BitsAreValidJson) {
  {
    const Event& e = accept(R"({"event":"future","sid":"s","big":123456789012345678901234567890,"neg":-98765432109876543210})");
    EXPECT_EQ(e.kind, EventKind::unknown);
  }
  {
    const Event& e = accept(head("data_json", "x.c", 1) +
                            R"(,"category":"c","key":"k","value":[18446744073709551616,1e300]})");
    EXPECT_EQ(payload_of<proto::Data>(e).value, "[18446744073709551616,1e300]");
  }
  {
    const Event& e = accept(head("data", "x.c", 1) +
                            R"(,"category":"c","key":"k","value":123456789012345678901234567890})");
    EXPECT_EQ(payload_of<proto::Data>(e).value, "123456789012345678901234567890");
  }
  {
    const Event& e = keep(head("exit", "git.c", 1) +
                          R"(,"t_abs":123456789012345678901234567890,"code":123456789012345678901234567890})");
    const auto& x = payload_of<proto::Exit>(e);
    EXPECT_DOUBLE_EQ(x.t_abs.value_or(0), 1.2345678901234568e29);
    EXPECT_FALSE(x.code.has_value());
    EXPECT_NE(e.problems.find("code: not a 64-bit integer"), std::string::npos) << e.problems;
  }
  // Still invalid: overflowing a double, and leading zeros.
  reject(R"({"event":"future","sid":"s","big":1234567890123456789012345678901e999})");
  reject(R"({"event":"future","sid":"s","big":0123456789012345678901234567890})");
}

TEST_P(ParserTest, WrongTypedRequiredFieldIsNotAlsoReportedMissing) {
  const Event& e = keep(head("exit", "git.c", 1) + R"(,"code":"0"})");
  EXPECT_EQ(e.problems, "code: expected an integer, got a string");
  const Event& f = keep(head("exit", "git.c", 1) + R"(,"code":0.5})");
  EXPECT_EQ(f.problems, "code: not a 64-bit integer");
  const Event& g = keep(head("exit", "git.c", 1) + "}");
  EXPECT_EQ(g.problems, "missing field 'code'");
}

TEST_P(ParserTest, RejectedLineLeavesNoStaleEvent) {
  accept(head("exit", "git.c", 721) + R"(,"t_abs":0.1,"code":0})");
  reject(R"({"event":"version"})");
  EXPECT_EQ(m_event.kind, EventKind::unknown);
  EXPECT_TRUE(m_event.sid.empty());
  EXPECT_TRUE(m_event.event.empty());
  EXPECT_FALSE(m_event.time_us.has_value());
  EXPECT_FALSE(m_event.line.has_value());
  EXPECT_NE(m_event.as<proto::Unknown>(), nullptr);
}

// ---------------------------------------------------------------------------
// Invalid UTF-8, as git writes it (raw bytes inside strings).

TEST_P(ParserTest, InvalidUtf8InArgvIsRepaired) {
  const std::string line = head("start", "common-main.c", 51) +
                           ",\"t_abs\":0.1,\"argv\":[\"git\",\"add\",\"caf\xE9.txt\",\"\xFF\",\"\xC3\x28\"]}";
  const ParseOutcome outcome = parse(line);
  ASSERT_TRUE(outcome.ok) << outcome.reject_reason;
  EXPECT_TRUE(m_event.utf8_repaired);
  EXPECT_EQ(m_event.problems, "");
  EXPECT_TRUE(proto::is_valid_utf8(m_event.json));
  EXPECT_EQ(m_event.json, proto::repair_utf8(line));
  const std::string fffd(proto::k_replacement_character);
  EXPECT_EQ(strings(payload_of<proto::Start>(m_event).argv),
            (Strings{"git", "add", "caf" + fffd + ".txt", fffd, fffd + "("}));
  EXPECT_EQ(count_fffd(m_event.json), 3u);
}

TEST_P(ParserTest, InvalidUtf8InWorktreeIsRepaired) {
  const std::string line = head("def_repo", "repository.c", 136) +
                           ",\"repo\":1,\"worktree\":\"/home/\xC0\xAF/\xED\xA0\x80\"}";
  const ParseOutcome outcome = parse(line);
  ASSERT_TRUE(outcome.ok) << outcome.reject_reason;
  EXPECT_TRUE(m_event.utf8_repaired);
  EXPECT_TRUE(proto::is_valid_utf8(m_event.json));
  const std::string fffd(proto::k_replacement_character);
  // Overlong C0 AF: two replacements; surrogate ED A0 80: three.
  EXPECT_EQ(payload_of<proto::DefRepo>(m_event).worktree, "/home/" + fffd + fffd + "/" + fffd + fffd + fffd);
  EXPECT_EQ(m_event.json.size(), line.size() + 5 * 2);  // 5 bytes became 5 x 3 bytes
  EXPECT_EQ(count_fffd(m_event.json), 5u);
}

TEST_P(ParserTest, TruncatedSequenceAtTheEndOfAStringIsRepaired) {
  const std::string line = head("region_enter", "x.c", 1) + ",\"nesting\":1,\"msg\":\"caf\xE2\x82\"}";
  const ParseOutcome outcome = parse(line);
  ASSERT_TRUE(outcome.ok) << outcome.reject_reason;
  EXPECT_TRUE(m_event.utf8_repaired);
  EXPECT_EQ(payload_of<proto::Region>(m_event).msg, "caf" + std::string(proto::k_replacement_character));
  EXPECT_EQ(count_fffd(m_event.json), 1u);
  EXPECT_TRUE(proto::is_valid_utf8(m_event.json));
  // The quote after the truncated sequence survived, and so did the structure.
  EXPECT_EQ(m_event.json.substr(m_event.json.size() - 5), "\xEF\xBF\xBD\"}");
}

TEST_P(ParserTest, InvalidUtf8InSidKeysAndUnknownFields) {
  const ParseOutcome outcome =
      parse("{\"event\":\"error\",\"sid\":\"ab\xFF\",\"k\xFE\":\"\x80\",\"msg\":\"ok\"}");
  ASSERT_TRUE(outcome.ok) << outcome.reject_reason;
  EXPECT_TRUE(m_event.utf8_repaired);
  EXPECT_EQ(m_event.sid, "ab" + std::string(proto::k_replacement_character));
  EXPECT_EQ(payload_of<proto::Error>(m_event).msg, "ok");
  EXPECT_TRUE(proto::is_valid_utf8(m_event.json));
}

TEST_P(ParserTest, InvalidUtf8OutsideStringsIsStillRejected) {
  reject("{\"event\":\"error\",\"sid\":\"s\",\"x\":\xFF}");
  reject("{\"event\":\"error\",\"sid\":\"s\"}\xC3");
  reject("\xEF\xBB\xBF{\"event\":\"error\",\"sid\":\"s\"}");  // a BOM
}

// Stage 1 reports a control character or an unclosed string before
// invalid UTF-8 in the same line: the reason is the same as it would be for
// the repaired line, which is then never parsed.
TEST_P(ParserTest, InvalidUtf8BesideOtherFaultsGivesTheirReason) {
  EXPECT_EQ(reject("{\"event\":\"error\",\"sid\":\"s\xFF\",\"msg\":\"a\tb\"}"),
            "not JSON: unescaped control character in a string");
  EXPECT_EQ(reject("{\"event\":\"error\",\"sid\":\"s\xFF\",\"msg\":\"a"), "not JSON: unterminated string");
  EXPECT_EQ(reject("{\"event\":\"error\",\"sid\":\"s\xFF\",\"msg\":tru}"), "not JSON: invalid literal in field 'msg'");
}

TEST_P(ParserTest, InvalidUtf8InDataJsonValue) {
  const std::string line = head("data_json", "x.c", 1) +
                           ",\"category\":\"c\",\"key\":\"k\",\"value\":{\"path\":\"\xF0\x80\x80\"}}";
  const ParseOutcome outcome = parse(line);
  ASSERT_TRUE(outcome.ok) << outcome.reject_reason;
  const std::string fffd(proto::k_replacement_character);
  EXPECT_EQ(payload_of<proto::Data>(m_event).value, R"({"path":")" + fffd + fffd + fffd + "\"}");
  EXPECT_EQ(count_fffd(m_event.json), 3u);
  EXPECT_TRUE(proto::is_valid_utf8(m_event.json));
}

TEST_P(ParserTest, ValidMultibyteTextIsNotRepaired) {
  const std::string line = head("start", "x.c", 1) + R"(,"argv":["git","commit","-m","Gr\u00fc\u00dfe: )" +
                           "gr\xC3\xBC\xC3\x9F\x65 \xE2\x82\xAC \xF0\x9F\x98\x80\"]}";
  const Event& e = accept(line);
  EXPECT_EQ(strings(payload_of<proto::Start>(e).argv)[3],
            "Gr\xC3\xBC\xC3\x9F" "e: gr\xC3\xBC\xC3\x9F" "e \xE2\x82\xAC \xF0\x9F\x98\x80");
}

// ---------------------------------------------------------------------------
// Buffers, reuse and size.

TEST(ParserBuffers, InPlaceParseReturnsViewsIntoTheLine) {
  proto::Parser parser;
  Event e;
  const std::string line = head("cmd_name", "git.c", 455) + R"(,"name":"status"})";
  std::string buffer = line + std::string(proto::Parser::padding_bytes(), ' ');
  const std::string_view view(buffer.data(), line.size());
  ASSERT_TRUE(parser.parse(view, proto::Parser::padding_bytes(), e).ok);
  EXPECT_EQ(e.json.data(), buffer.data());
  EXPECT_EQ(e.json.size(), line.size());
  EXPECT_EQ(payload_of<proto::CmdName>(e).name, "status");
}

TEST(ParserBuffers, TooLittlePaddingForcesACopy) {
  proto::Parser parser;
  Event e;
  const std::string line = head("cmd_name", "git.c", 455) + R"(,"name":"status"})";
  for (const std::size_t after : {std::size_t{0}, proto::Parser::padding_bytes() - 1}) {
    std::string buffer = line + std::string(after, '}');
    ASSERT_TRUE(parser.parse(std::string_view(buffer.data(), line.size()), after, e).ok);
    EXPECT_EQ(e.json, line);
    EXPECT_NE(e.json.data(), buffer.data());
    // The copy owns the views: wiping the caller's bytes changes nothing.
    std::fill(buffer.begin(), buffer.end(), 'X');
    EXPECT_EQ(e.json, line);
    EXPECT_EQ(e.sid, k_sid);
    EXPECT_EQ(payload_of<proto::CmdName>(e).name, "status");
  }
  EXPECT_GT(proto::Parser::padding_bytes(), 0u);
}

TEST(ParserBuffers, ReuseAcrossManyLines) {
  proto::Parser parser;
  Event e;
  for (int i = 0; i < 2000; ++i) {
    std::string line;
    switch (i % 4) {
      case 0:
        line = head("start", "common-main.c", i) + R"(,"t_abs":0.1,"argv":["git","log","-)" +
               std::to_string(i) + "\"]}";
        break;
      case 1:
        line = head("data_json", "x.c", i) + R"(,"category":"c","key":"k","value":{"i":)" +
               std::to_string(i) + "}}";
        break;
      case 2:
        line = "not json " + std::to_string(i);
        break;
      default:
        line = head("error", "x.c", i) + ",\"msg\":\"bad \xFF " + std::to_string(i) + "\"}";
        break;
    }
    const std::size_t padding = (i % 3 == 0) ? proto::Parser::padding_bytes() : 0;
    std::string buffer = line + std::string(padding, '\n');
    const ParseOutcome outcome = parser.parse(std::string_view(buffer.data(), line.size()), padding, e);
    ASSERT_EQ(outcome.ok, i % 4 != 2) << i << ": " << outcome.reject_reason;
    if (!outcome.ok) {
      continue;
    }
    EXPECT_EQ(e.line, i);
    EXPECT_EQ(e.problems, "");
    switch (i % 4) {
      case 0:
        EXPECT_EQ(strings(payload_of<proto::Start>(e).argv),
                  (Strings{"git", "log", "-" + std::to_string(i)}));
        EXPECT_FALSE(e.utf8_repaired);
        break;
      case 1:
        EXPECT_EQ(payload_of<proto::Data>(e).value, "{\"i\":" + std::to_string(i) + "}");
        break;
      default:
        EXPECT_TRUE(e.utf8_repaired);
        EXPECT_EQ(payload_of<proto::Error>(e).msg, "bad " + std::string(proto::k_replacement_character) + " " + std::to_string(i));
        break;
    }
  }
}

TEST(ParserBuffers, MovedParserKeepsWorking) {
  proto::Parser first;
  Event e;
  ASSERT_TRUE(first.parse(R"({"event":"exit","sid":"s","code":1})", 0, e).ok);
  proto::Parser second(std::move(first));
  ASSERT_TRUE(second.parse(R"({"event":"exit","sid":"t","code":2})", 0, e).ok);
  EXPECT_EQ(e.sid, "t");
  proto::Parser third;
  third = std::move(second);
  ASSERT_TRUE(third.parse(R"({"event":"exit","sid":"u","code":3})", 0, e).ok);
  EXPECT_EQ(payload_of<proto::Exit>(e).code, 3);
}

TEST_P(ParserTest, FourMebibyteDataJsonString) {
  const std::string big(4 * 1024 * 1024, 'x');
  const std::string line = head("data_json", "x.c", 1) +
                           R"(,"category":"c","key":"k","value":{"blob":")" + big + "\"}}";
  const Event& e = accept(line);
  const auto& d = payload_of<proto::Data>(e);
  ASSERT_TRUE(d.value.has_value());
  EXPECT_EQ(d.value->size(), big.size() + 11);
  EXPECT_TRUE(d.value->starts_with(R"({"blob":"xxx)"));
  EXPECT_TRUE(d.value->ends_with("xxx\"}"));
}

TEST_P(ParserTest, FourMebibyteArgvAndRepair) {
  std::string arg(4 * 1024 * 1024, 'a');
  arg[arg.size() / 2] = '\xFF';
  const std::string line = head("start", "x.c", 1) + R"(,"argv":["git",")" + arg + "\"]}";
  const ParseOutcome outcome = parse(line);
  ASSERT_TRUE(outcome.ok) << outcome.reject_reason;
  EXPECT_TRUE(m_event.utf8_repaired);
  const auto argv = payload_of<proto::Start>(m_event).argv;
  ASSERT_EQ(argv.size(), 2u);
  EXPECT_EQ(argv[1].size(), arg.size() + 2);
  EXPECT_EQ(argv[1].substr(arg.size() / 2, 3), proto::k_replacement_character);
}

// ---------------------------------------------------------------------------
// Other producers (docs/trace2-format.md, "Other producers"), in the shapes
// their sources write.

// A line of Git Credential Manager's: .NET DateTimeOffset times, `depth`
// after `line`, t_abs on region and child events.
std::string gcm_head(std::string_view event) {
  std::string out = R"({"event":")";
  out.append(event).append(
      R"(","sid":"20261121T235101.565577Z-H0a7c9cdf-P000009e9/5f0d6a52-3c1e-4e7a-9b8f-2d0c3e4a5b6c",)"
      R"("thread":"main","time":"2026-11-21T23:51:01.7654321+00:00","file":"Trace2.cs","line":412,"depth":1)");
  return out;
}

TEST_P(ParserTest, NullForAnOptionalStringIsAbsent) {
  const Event& e = accept(gcm_head("region_enter") +
                          R"(,"t_abs":0.05,"repo":1,"nesting":1,"category":"auth","label":null,"msg":null})");
  const auto& r = payload_of<proto::Region>(e);
  EXPECT_EQ(r.category, "auth");
  EXPECT_FALSE(r.label.has_value());
  EXPECT_FALSE(r.msg.has_value());
  const Event& error = accept(gcm_head("error") + R"(,"msg":"fatal","fmt":null})");
  EXPECT_EQ(payload_of<proto::Error>(error).msg, "fatal");
  EXPECT_FALSE(payload_of<proto::Error>(error).fmt.has_value());
  // The common fields too.
  const Event& c = accept(R"({"event":"thread_start","sid":"s","thread":null,"time":null,"file":null})");
  EXPECT_FALSE(c.thread.has_value());
  EXPECT_FALSE(c.time_text.has_value());
  EXPECT_FALSE(c.file.has_value());
}

TEST_P(ParserTest, NullForARequiredStringIsAProblem) {
  const Event& e = keep(gcm_head("cmd_name") + R"(,"name":null})");
  EXPECT_EQ(e.problems, "name: expected a string, got null");
  EXPECT_FALSE(payload_of<proto::CmdName>(e).name.has_value());
  // Null is not absence for a number or a list.
  const Event& x = keep(gcm_head("exit") + R"(,"t_abs":null,"code":0})");
  EXPECT_EQ(x.problems, "t_abs: expected a number, got null");
}

TEST_P(ParserTest, GitCredentialManagerEvents) {
  const Event& v = accept(gcm_head("version") + R"(,"evt":"3","exe":"2.6.1"})");
  EXPECT_EQ(v.time_text, "2026-11-21T23:51:01.7654321+00:00");
  EXPECT_EQ(v.time_us, 1795305061765432);
  // Its region_leave has no t_rel (the duration goes under another key);
  // both region events carry t_abs.
  const Event& leave = accept(gcm_head("region_leave") +
                              R"(,"t_abs":0.31,"repo":1,"nesting":1,"category":"auth","label":"get","msg":"get","RelativeTime":0.26})");
  const auto& r = payload_of<proto::Region>(leave);
  EXPECT_FALSE(r.t_rel.has_value());
  EXPECT_DOUBLE_EQ(r.t_abs.value_or(-1), 0.31);
  const Event& start = accept(gcm_head("child_start") +
                              R"(,"t_abs":0.05,"argv":["git","config"],"child_id":0,"child_class":"git","use_shell":false})");
  EXPECT_DOUBLE_EQ(payload_of<proto::ChildStart>(start).t_abs.value_or(-1), 0.05);
  EXPECT_EQ(payload_of<proto::ChildStart>(start).child_id, 0);
  const Event& exit = accept(gcm_head("child_exit") + R"(,"t_abs":0.09,"t_rel":0.04,"child_id":0,"pid":4242,"code":0})");
  EXPECT_DOUBLE_EQ(payload_of<proto::ChildExit>(exit).t_abs.value_or(-1), 0.09);
  EXPECT_DOUBLE_EQ(payload_of<proto::ChildExit>(exit).t_rel.value_or(-1), 0.04);
}

// A line of repo's: Python's isoformat() + "Z", thread MainThread, no file.
std::string repo_head(std::string_view event, std::string_view time = "2026-11-21T23:51:01.565683+00:00Z") {
  std::string out = R"({"event":")";
  out.append(event).append(R"(","sid":"repo-20261121T235101Z-P00001b0d","thread":"MainThread","time":")");
  out.append(time).append("\"");
  return out;
}

TEST_P(ParserTest, RepoEvents) {
  const Event& v = accept(repo_head("version") + R"(,"evt":"2","exe":"2.50"})");
  EXPECT_EQ(v.time_us, 1795305061565683);
  const Event& whole = accept(repo_head("start", "2026-11-21T23:51:01+00:00Z") + R"(,"argv":["repo","sync"]})");
  EXPECT_EQ(whole.time_us, 1795305061000000);
  EXPECT_EQ(whole.time_text, "2026-11-21T23:51:01+00:00Z");

  const Event& c = accept(repo_head("command") + R"(,"name":"repo","subcommands":["sync","-j8"]})");
  EXPECT_EQ(c.kind, EventKind::command);
  EXPECT_EQ(c.event, "command");
  EXPECT_EQ(payload_of<proto::Command>(c).name, "repo");
  EXPECT_EQ(strings(payload_of<proto::Command>(c).subcommands), (Strings{"sync", "-j8"}));

  // "data-json" is data_json; the line stays as sent. Its value is a string
  // holding a JSON array; repo writes no category.
  const std::string line = repo_head("data-json") + R"(,"key":"repo/manifest.groups","value":"[\"default\"]"})";
  const Event& d = accept(line);
  EXPECT_EQ(d.kind, EventKind::data_json);
  EXPECT_EQ(d.event, "data_json");
  EXPECT_EQ(d.json, line);
  EXPECT_EQ(payload_of<proto::Data>(d).key, "repo/manifest.groups");
  EXPECT_FALSE(payload_of<proto::Data>(d).category.has_value());
  const Event& plain = accept(repo_head("data") + R"(,"key":"repo/sync.jobs","value":"8"})");
  EXPECT_EQ(payload_of<proto::Data>(plain).value, "8");
  // A multi-valued setting: data with an array.
  const Event& list = accept(repo_head("data") + R"(,"key":"repo/remote.aosp.fetch","value":["a","b"]})");
  EXPECT_EQ(payload_of<proto::Data>(list).value, R"(["a","b"])");
  EXPECT_TRUE(payload_of<proto::Data>(list).value_is_json);

  const Event& x = accept(repo_head("exit") + R"(,"code":0,"t_abs":12.5})");
  EXPECT_EQ(payload_of<proto::Exit>(x).code, 0);
  EXPECT_DOUBLE_EQ(payload_of<proto::Exit>(x).t_abs.value_or(-1), 12.5);
}

TEST_P(ParserTest, TimeWithAnOffsetIsNormalisedToUtc) {
  const Event& e = accept(R"({"event":"thread_start","sid":"s","time":"2026-11-22T01:21:01.565683+01:30"})");
  EXPECT_EQ(e.time_us, 1795305061565683);
  EXPECT_EQ(e.time_text, "2026-11-22T01:21:01.565683+01:30");
}

TEST(EventKinds, NamesRoundTrip) {
  for (int k = 0; k < static_cast<int>(EventKind::unknown); ++k) {
    const auto kind = static_cast<EventKind>(k);
    const std::string_view name = proto::to_string(kind);
    EXPECT_NE(name, "unknown");
    EXPECT_EQ(proto::event_kind_from_name(name), kind) << name;
  }
  EXPECT_EQ(proto::to_string(EventKind::unknown), "unknown");
  EXPECT_EQ(proto::event_kind_from_name("unknown"), EventKind::unknown);
  EXPECT_EQ(proto::event_kind_from_name(""), EventKind::unknown);
  EXPECT_EQ(proto::event_kind_from_name("exit "), EventKind::unknown);
  // Other producers' spellings map to git's kind, which keeps its name.
  EXPECT_EQ(proto::event_kind_from_name("data-json"), EventKind::data_json);
  EXPECT_EQ(proto::to_string(EventKind::data_json), "data_json");
  EXPECT_FALSE(proto::is_terminal(EventKind::child_exit));
  EXPECT_FALSE(proto::is_terminal(EventKind::thread_exit));
}

}  // namespace
