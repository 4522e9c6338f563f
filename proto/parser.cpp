#include "proto/parser.hpp"

#include <simdjson.h>

#include <array>
#include <charconv>
#include <cstring>
#include <optional>

#include "proto/length_buckets.hpp"
#include "proto/timestamp.hpp"
#include "proto/utf8.hpp"

namespace trace2d::proto {
namespace {

namespace od = simdjson::ondemand;

// Every key the EVENT format defines, across all event types. A key means the
// same thing (and has the same JSON type) in every event that carries it.
enum class Key : std::uint8_t {
  event, sid, thread, time, file, line, repo,                                  // common
  evt, exe, t_abs, t_rel, argv, code, signo, msg, fmt, path, ancestry, name,   //
  hierarchy, alias, child_id, child_class, hook_name, cd, use_shell, pid,      //
  ready, exec_id, scope, param, value, worktree, nesting, category, label,     //
  key, intervals, t_total, t_min, t_max, count,                                //
  subcommands,                                                                 // repo's command
  count_of_keys
};

enum class Shape : std::uint8_t { string, integer, number, boolean, string_list, any };

struct KeyInfo {
  std::string_view name;
  Shape shape;
};

constexpr std::array<KeyInfo, static_cast<std::size_t>(Key::count_of_keys)> k_keys{{
    {"event", Shape::string},      {"sid", Shape::string},        {"thread", Shape::string},
    {"time", Shape::string},       {"file", Shape::string},       {"line", Shape::integer},
    {"repo", Shape::integer},      {"evt", Shape::string},        {"exe", Shape::string},
    {"t_abs", Shape::number},      {"t_rel", Shape::number},      {"argv", Shape::string_list},
    {"code", Shape::integer},      {"signo", Shape::integer},     {"msg", Shape::string},
    {"fmt", Shape::string},        {"path", Shape::string},       {"ancestry", Shape::string_list},
    {"name", Shape::string},       {"hierarchy", Shape::string},  {"alias", Shape::string},
    {"child_id", Shape::integer},  {"child_class", Shape::string}, {"hook_name", Shape::string},
    {"cd", Shape::string},         {"use_shell", Shape::boolean}, {"pid", Shape::integer},
    {"ready", Shape::string},      {"exec_id", Shape::integer},   {"scope", Shape::string},
    {"param", Shape::string},      {"value", Shape::any},         {"worktree", Shape::string},
    {"nesting", Shape::integer},   {"category", Shape::string},   {"label", Shape::string},
    {"key", Shape::string},        {"intervals", Shape::integer}, {"t_total", Shape::number},
    {"t_min", Shape::number},      {"t_max", Shape::number},      {"count", Shape::integer},
    {"subcommands", Shape::string_list},
}};

constexpr auto key_name = [](std::size_t index) { return k_keys[index].name; };  // a type of its own: inlined

constexpr LengthBuckets<11, 16> k_key_buckets(k_keys.size(), key_name);  // 11: "child_class"

std::optional<Key> find_key(std::string_view name) {
  const std::optional<std::size_t> index = k_key_buckets.find(name, key_name);
  return index ? std::optional<Key>(static_cast<Key>(*index)) : std::nullopt;
}

constexpr std::string_view json_type_name(od::json_type t) {
  switch (t) {
    case od::json_type::array: return "an array";
    case od::json_type::object: return "an object";
    case od::json_type::number: return "a number";
    case od::json_type::string: return "a string";
    case od::json_type::boolean: return "a boolean";
    case od::json_type::null: return "null";
  }
  return "an unknown type";
}

// A short description of why simdjson found the text invalid.
std::string_view describe(simdjson::error_code error) {
  switch (error) {
    case simdjson::DEPTH_ERROR: return "nested too deeply";
    case simdjson::NUMBER_ERROR:
    case simdjson::NUMBER_OUT_OF_RANGE: return "invalid or out-of-range number";
    case simdjson::STRING_ERROR: return "invalid escape in a string";
    case simdjson::UNESCAPED_CHARS: return "unescaped control character in a string";
    case simdjson::UNCLOSED_STRING: return "unterminated string";
    case simdjson::UTF8_ERROR: return "invalid UTF-8";
    // The first byte promised a literal (or value) the rest did not deliver.
    case simdjson::T_ATOM_ERROR:
    case simdjson::F_ATOM_ERROR:
    case simdjson::N_ATOM_ERROR:
    case simdjson::INCORRECT_TYPE: return "invalid literal";
    case simdjson::TAPE_ERROR:
    case simdjson::INCOMPLETE_ARRAY_OR_OBJECT:
      return "bad structure (a missing or extra comma, colon, brace, bracket or key)";
    default: return simdjson::error_message(error);
  }
}

constexpr std::string_view shape_name(Shape s) {
  switch (s) {
    case Shape::string: return "a string";
    case Shape::integer: return "an integer";
    case Shape::number: return "a number";
    case Shape::boolean: return "a boolean";
    case Shape::string_list: return "an array of strings";
    case Shape::any: return "any JSON";
  }
  return "?";
}

// Which fields each event type must have (besides event and sid). Missing
// ones are noted as problems; the event is still kept.
std::span<const Key> required_keys(EventKind kind) {
  static constexpr Key version[] = {Key::evt, Key::exe};
  static constexpr Key start[] = {Key::argv};
  static constexpr Key exit[] = {Key::code};
  static constexpr Key signal[] = {Key::signo};
  static constexpr Key cmd_path[] = {Key::path};
  static constexpr Key cmd_ancestry[] = {Key::ancestry};
  static constexpr Key name[] = {Key::name};
  static constexpr Key alias[] = {Key::alias, Key::argv};
  static constexpr Key child_start[] = {Key::child_id, Key::child_class, Key::argv};
  static constexpr Key child_exit[] = {Key::child_id, Key::pid, Key::code};
  static constexpr Key child_ready[] = {Key::child_id, Key::pid, Key::ready};
  static constexpr Key exec[] = {Key::exec_id, Key::argv};
  static constexpr Key exec_result[] = {Key::exec_id, Key::code};
  static constexpr Key def_param[] = {Key::param};
  static constexpr Key def_repo[] = {Key::repo, Key::worktree};
  // region_leave's t_rel is not required: Git Credential Manager does not
  // write it, and the region's duration then comes from its t_abs or times.
  // data's category neither: repo does not write it.
  static constexpr Key data[] = {Key::key, Key::value};
  static constexpr Key timer[] = {Key::category, Key::name, Key::intervals, Key::t_total};
  static constexpr Key counter[] = {Key::category, Key::name, Key::count};
  switch (kind) {
    case EventKind::version: return version;
    case EventKind::start: return start;
    case EventKind::exit:
    case EventKind::atexit: return exit;
    case EventKind::signal: return signal;
    case EventKind::cmd_path: return cmd_path;
    case EventKind::cmd_ancestry: return cmd_ancestry;
    case EventKind::cmd_name:
    case EventKind::cmd_mode: return name;
    case EventKind::alias: return alias;
    case EventKind::child_start: return child_start;
    case EventKind::child_exit: return child_exit;
    case EventKind::child_ready: return child_ready;
    case EventKind::exec: return exec;
    case EventKind::exec_result: return exec_result;
    case EventKind::def_param: return def_param;
    case EventKind::def_repo: return def_repo;
    case EventKind::data:
    case EventKind::data_json: return data;
    case EventKind::timer:
    case EventKind::th_timer: return timer;
    case EventKind::counter:
    case EventKind::th_counter: return counter;
    default: return {};
  }
}

// One slot per key; the first occurrence wins, even when it is unusable.
struct Slot {
  bool seen = false;     // the key occurred (a later occurrence is a duplicate)
  bool present = false;  // ... and its value is usable
  bool null = false;     // ... as null, which for a string means "absent"
  std::string_view text;  // string, or JSON text for `value`
  std::int64_t integer = 0;
  double number = 0;
  bool boolean = false;
  std::uint32_t list_begin = 0;
  std::uint32_t list_size = 0;
  bool value_is_json = false;
  od::json_type type{};     // the JSON type of the value
  bool wrong_type = false;  // the key was there with another JSON type
};

// Where a line that failed as a whole JSON object went wrong: after a complete
// first value (trailing content), or before its end (truncated/unbalanced).
// Only used to word a reject reason; simdjson has already said it is invalid.
bool has_trailing_content(std::string_view line) {
  std::size_t depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (depth <= 1) {
        return line.find_first_not_of(" \t\r\n", i + 1) != std::string_view::npos;
      }
      --depth;
    }
  }
  return false;
}

}  // namespace

struct Parser::Impl {
  ParserLimits limits;
  od::parser parser;
  od::parser nested_parser;  // validates object/array values found by raw_json()
  std::string padded;        // copy of a line that arrived without padding
  std::string repaired;      // UTF-8-repaired copy of a line
  std::string reason;
  std::array<Slot, static_cast<std::size_t>(Key::count_of_keys)> slots;
  // The slots the current line filled: only those need clearing for the next.
  std::array<Key, static_cast<std::size_t>(Key::count_of_keys)> touched{};
  std::size_t touched_count = 0;
  std::vector<std::string_view> lists;

  explicit Impl(ParserLimits l) : limits(l), parser(), nested_parser() {}

  Slot& slot(Key k) { return slots[static_cast<std::size_t>(k)]; }

  ParseOutcome reject(std::string_view why) {
    return ParseOutcome{false, why};
  }
  ParseOutcome reject_with(std::string_view what, simdjson::error_code error) {
    reason.assign(what);
    reason.append(": ");
    reason.append(describe(error));
    return ParseOutcome{false, reason};
  }

  template <typename... Parts>
  static void note(Event& out, const Parts&... parts) {
    if (!out.problems.empty()) {
      out.problems.append("; ");
    }
    (out.problems.append(std::string_view(parts)), ...);
  }

  // Reads a number. simdjson 3.0's get_number() fails on integers beyond 64
  // bits, which are valid JSON: read those as a double (still refusing what
  // does not fit one, like 1e999). `integral` says whether `n` holds it.
  static simdjson::error_code read_number(od::value value, od::number& n, double& d, bool& integral) {
    if (value.get_number().get(n) == simdjson::SUCCESS) {
      integral = true;
      d = n.as_double();
      return simdjson::SUCCESS;
    }
    integral = false;
    return value.get_double().get(d);
  }

  // Visits (and so validates) a value of any type. `depth` is the nesting
  // level the value has if it is an object or array: the line's top-level
  // object is level 1, so its fields' values are level 2.
  simdjson::error_code validate(od::value value, std::size_t depth) {
    od::json_type type{};
    if (auto e = value.type().get(type)) {
      return e;
    }
    if ((type == od::json_type::object || type == od::json_type::array) && depth > limits.max_depth) {
      return simdjson::DEPTH_ERROR;
    }
    switch (type) {
      case od::json_type::object: {
        od::object object;
        if (auto e = value.get_object().get(object)) {
          return e;
        }
        for (auto field : object) {
          std::string_view key;
          if (auto e = field.unescaped_key().get(key)) {
            return e;
          }
          od::value inner;
          if (auto e = field.value().get(inner)) {
            return e;
          }
          if (auto e = validate(inner, depth + 1)) {
            return e;
          }
        }
        return simdjson::SUCCESS;
      }
      case od::json_type::array: {
        od::array array;
        if (auto e = value.get_array().get(array)) {
          return e;
        }
        for (auto element : array) {
          od::value inner;
          if (auto e = element.get(inner)) {
            return e;
          }
          if (auto e = validate(inner, depth + 1)) {
            return e;
          }
        }
        return simdjson::SUCCESS;
      }
      case od::json_type::string: {
        std::string_view s;
        return value.get_string().get(s);
      }
      case od::json_type::number: {
        od::number n;
        double d = 0;
        bool integral = false;
        return read_number(value, n, d, integral);
      }
      case od::json_type::boolean: {
        bool b = false;
        return value.get_bool().get(b);
      }
      case od::json_type::null: {
        bool is_null = false;
        if (auto e = value.is_null().get(is_null)) {
          return e;
        }
        return is_null ? simdjson::SUCCESS : simdjson::N_ATOM_ERROR;
      }
    }
    return simdjson::INCORRECT_TYPE;
  }

  // The JSON text of a number, trimmed of the whitespace simdjson keeps.
  static std::string_view trimmed_token(std::string_view token) {
    while (!token.empty() && (token.back() == ' ' || token.back() == '\t' || token.back() == '\r')) {
      token.remove_suffix(1);
    }
    return token;
  }

  // Validates an object/array value and returns its JSON text.
  simdjson::error_code capture_container(od::value value, od::json_type type, std::size_t depth,
                                         std::string_view& text) {
    if (type == od::json_type::object) {
      od::object object;
      if (auto e = value.get_object().get(object)) {
        return e;
      }
      if (auto e = object.raw_json().get(text)) {
        return e;
      }
    } else {
      od::array array;
      if (auto e = value.get_array().get(array)) {
        return e;
      }
      if (auto e = array.raw_json().get(text)) {
        return e;
      }
    }
    text = trimmed_token(text);
    // raw_json() skips without checking scalars inside; a second pass over the
    // same bytes (still inside our padded buffer) validates them.
    od::document nested;
    if (auto e = nested_parser.iterate(text.data(), text.size(), text.size() + simdjson::SIMDJSON_PADDING)
                     .get(nested)) {
      return e;
    }
    od::value root;
    if (auto e = nested.get_value().get(root)) {
      return e;
    }
    return validate(root, depth);
  }

  // Reads one field into its slot. Returns an error only for invalid JSON (the
  // line is then rejected); a usable value of the wrong type is a problem.
  simdjson::error_code read_field(Key key, od::value value, Event& out) {
    Slot& s = slot(key);
    const KeyInfo& info = k_keys[static_cast<std::size_t>(key)];
    if (s.seen) {
      note(out, "duplicate key '", info.name, "' (first kept)");
      return validate(value, 2);
    }
    s.seen = true;
    touched[touched_count++] = key;  // each key at most once: `seen` guards
    od::json_type type{};
    if (auto e = value.type().get(type)) {
      return e;
    }
    s.type = type;
    const auto mismatch = [&]() {
      s.wrong_type = true;
      note(out, info.name, ": expected ", shape_name(info.shape), ", got ", json_type_name(type));
      return validate(value, 2);
    };
    switch (info.shape) {
      case Shape::string:
        // Producers that serialise objects (Git Credential Manager) write
        // null for a string they do not have: absent, as if not written. A
        // field the event requires is noted below.
        if (type == od::json_type::null) {
          s.null = true;
          return validate(value, 2);
        }
        if (type != od::json_type::string) {
          return mismatch();
        }
        if (auto e = value.get_string().get(s.text)) {
          return e;
        }
        break;
      case Shape::integer:
      case Shape::number: {
        if (type != od::json_type::number) {
          return mismatch();
        }
        od::number n;
        double d = 0;
        bool integral = false;
        if (auto e = read_number(value, n, d, integral)) {
          return e;
        }
        if (info.shape == Shape::number) {
          s.number = d;
        } else if (integral && n.is_int64()) {
          s.integer = n.get_int64();
        } else {
          s.wrong_type = true;
          note(out, info.name, ": not a 64-bit integer");
          return simdjson::SUCCESS;
        }
        break;
      }
      case Shape::boolean:
        if (type != od::json_type::boolean) {
          return mismatch();
        }
        if (auto e = value.get_bool().get(s.boolean)) {
          return e;
        }
        break;
      case Shape::string_list: {
        if (type != od::json_type::array) {
          return mismatch();
        }
        if (limits.max_depth < 2) {
          return simdjson::DEPTH_ERROR;
        }
        od::array array;
        if (auto e = value.get_array().get(array)) {
          return e;
        }
        s.list_begin = static_cast<std::uint32_t>(lists.size());
        bool all_strings = true;
        for (auto element : array) {
          od::value item;
          if (auto e = element.get(item)) {
            return e;
          }
          od::json_type item_type{};
          if (auto e = item.type().get(item_type)) {
            return e;
          }
          if (item_type == od::json_type::string) {
            std::string_view text;
            if (auto e = item.get_string().get(text)) {
              return e;
            }
            lists.push_back(text);
          } else {
            if (all_strings) {
              note(out, info.name, ": expected an array of strings, got ", json_type_name(item_type),
                   " in it");
              all_strings = false;
            }
            if (auto e = validate(item, 3)) {
              return e;
            }
          }
        }
        if (!all_strings) {
          // A list with holes would misplace its elements: leave it absent.
          lists.resize(s.list_begin);
          s.wrong_type = true;
          return simdjson::SUCCESS;
        }
        s.list_size = static_cast<std::uint32_t>(lists.size()) - s.list_begin;
        break;
      }
      case Shape::any:
        if (type == od::json_type::string) {
          if (auto e = value.get_string().get(s.text)) {
            return e;
          }
        } else if (type == od::json_type::object || type == od::json_type::array) {
          if (auto e = capture_container(value, type, 2, s.text)) {
            return e;
          }
          s.value_is_json = true;
        } else {
          const std::string_view token = value.raw_json_token();
          if (auto e = validate(value, 2)) {
            return e;
          }
          s.text = trimmed_token(token);
          s.value_is_json = true;
        }
        break;
    }
    s.present = true;
    return simdjson::SUCCESS;
  }

  // A reject for invalid JSON found in a field's value (or key).
  ParseOutcome reject_field(std::string_view key, simdjson::error_code error) {
    if (error == simdjson::DEPTH_ERROR) {
      reason.assign("JSON nested too deeply");
    } else {
      reason.assign("not JSON: ");
      reason.append(describe(error));
    }
    // A key can be megabytes long: name at most its start, cut between characters.
    constexpr std::size_t k_max_key_in_reason = 64;
    const std::string_view shown = utf8_prefix(key, k_max_key_in_reason);
    reason.append(" in field '").append(shown).append(shown.size() < key.size() ? "...'" : "'");
    return ParseOutcome{false, reason};
  }

  // The `value` key means a string in def_param, a string (or, from old
  // producers, a number; from repo, an array: a multi-valued setting) in
  // data, and any JSON in data_json.
  std::optional<std::string_view> value_for(EventKind kind, Event& out) {
    Slot& s = slot(Key::value);
    if (!s.present) {
      return std::nullopt;
    }
    const bool fits = kind == EventKind::data_json || s.type == od::json_type::string ||
                      (kind == EventKind::data &&
                       (s.type == od::json_type::number || s.type == od::json_type::array));
    if (!fits) {
      note(out, "value: expected ", kind == EventKind::data ? "a string, a number or an array" : "a string",
           ", got ", json_type_name(s.type));
      return std::nullopt;
    }
    return s.text;
  }

  std::optional<std::string_view> text(Key k) {
    const Slot& s = slot(k);
    return s.present ? std::optional<std::string_view>(s.text) : std::nullopt;
  }
  std::optional<std::int64_t> integer(Key k) {
    const Slot& s = slot(k);
    return s.present ? std::optional<std::int64_t>(s.integer) : std::nullopt;
  }
  std::optional<double> number(Key k) {
    const Slot& s = slot(k);
    return s.present ? std::optional<double>(s.number) : std::nullopt;
  }
  std::optional<bool> boolean(Key k) {
    const Slot& s = slot(k);
    return s.present ? std::optional<bool>(s.boolean) : std::nullopt;
  }
  StringList list(Key k) {
    const Slot& s = slot(k);
    if (!s.present) {
      return {};
    }
    return StringList(lists.data() + s.list_begin, s.list_size);
  }

  Payload build_payload(EventKind kind, Event& out) {
    switch (kind) {
      case EventKind::version: return Version{text(Key::evt), text(Key::exe)};
      case EventKind::too_many_files: return TooManyFiles{};
      case EventKind::start: return Start{number(Key::t_abs), list(Key::argv)};
      case EventKind::exit:
      case EventKind::atexit: return Exit{number(Key::t_abs), integer(Key::code)};
      case EventKind::signal: return Signal{number(Key::t_abs), integer(Key::signo)};
      case EventKind::error: return Error{text(Key::msg), text(Key::fmt)};
      case EventKind::cmd_path: return CmdPath{text(Key::path)};
      case EventKind::cmd_ancestry: return CmdAncestry{list(Key::ancestry)};
      case EventKind::cmd_name: return CmdName{text(Key::name), text(Key::hierarchy)};
      case EventKind::cmd_mode: return CmdMode{text(Key::name)};
      case EventKind::alias: return Alias{text(Key::alias), list(Key::argv)};
      case EventKind::child_start:
        return ChildStart{number(Key::t_abs),    integer(Key::child_id), text(Key::child_class),
                          text(Key::hook_name),  text(Key::cd),          boolean(Key::use_shell),
                          list(Key::argv)};
      case EventKind::child_exit:
        return ChildExit{integer(Key::child_id), integer(Key::pid), integer(Key::code),
                         number(Key::t_rel), number(Key::t_abs)};
      case EventKind::child_ready:
        return ChildReady{integer(Key::child_id), integer(Key::pid), text(Key::ready),
                          number(Key::t_rel)};
      case EventKind::thread_start: return ThreadStart{};
      case EventKind::thread_exit: return ThreadExit{number(Key::t_rel)};
      case EventKind::exec: return Exec{integer(Key::exec_id), text(Key::exe), list(Key::argv)};
      case EventKind::exec_result: return ExecResult{integer(Key::exec_id), integer(Key::code)};
      case EventKind::def_param:
        return DefParam{text(Key::scope), text(Key::param), value_for(kind, out)};
      case EventKind::def_repo: return DefRepo{text(Key::worktree)};
      case EventKind::region_enter:
      case EventKind::region_leave:
        return Region{integer(Key::nesting), text(Key::category), text(Key::label), text(Key::msg),
                      number(Key::t_rel),    number(Key::t_abs)};
      case EventKind::data:
      case EventKind::data_json: {
        const std::optional<std::string_view> value = value_for(kind, out);
        return Data{number(Key::t_abs),  number(Key::t_rel), integer(Key::nesting),
                    text(Key::category), text(Key::key),     value,
                    value && slot(Key::value).value_is_json};
      }
      case EventKind::timer:
      case EventKind::th_timer:
        return Timer{text(Key::category), text(Key::name),  integer(Key::intervals),
                     number(Key::t_total), number(Key::t_min), number(Key::t_max)};
      case EventKind::counter:
      case EventKind::th_counter:
        return Counter{text(Key::category), text(Key::name), integer(Key::count)};
      case EventKind::printf: return Printf{number(Key::t_abs), text(Key::msg)};
      case EventKind::command: return Command{text(Key::name), list(Key::subcommands)};
      case EventKind::unknown: return Unknown{};
    }
    return Unknown{};
  }

  // Whether a document that is not an object is still JSON: type() only looks
  // at the first byte, and "12:00 trace: ..." is no number.
  bool is_whole_json(od::document& doc, od::json_type type) {
    bool ok = false;
    switch (type) {
      case od::json_type::object: return false;
      case od::json_type::array: {
        od::array array;
        if (doc.get_array().get(array) != simdjson::SUCCESS) {
          return false;  // never iterate an array that failed to open
        }
        ok = true;
        for (auto element : array) {
          od::value item;
          if (element.get(item) != simdjson::SUCCESS || validate(item, 2) != simdjson::SUCCESS) {
            ok = false;
            break;
          }
        }
        break;
      }
      case od::json_type::string: {
        std::string_view text;
        ok = doc.get_string().get(text) == simdjson::SUCCESS;
        break;
      }
      case od::json_type::number: {
        double d = 0;
        ok = doc.get_double().get(d) == simdjson::SUCCESS;
        break;
      }
      case od::json_type::boolean: {
        bool b = false;
        ok = doc.get_bool().get(b) == simdjson::SUCCESS;
        break;
      }
      case od::json_type::null: {
        bool is_null = false;
        ok = doc.is_null().get(is_null) == simdjson::SUCCESS && is_null;
        break;
      }
    }
    // Nothing may follow the value.
    return ok && doc.current_location().error() != simdjson::SUCCESS;
  }

  ParseOutcome parse(std::string_view line, std::size_t readable_after, Event& out) {
    // Nothing of the previous event survives, even when this line is rejected.
    out.event = {};
    out.kind = EventKind::unknown;
    out.sid = {};
    out.thread.reset();
    out.time_text.reset();
    out.time_us.reset();
    out.file.reset();
    out.line.reset();
    out.repo.reset();
    out.payload = Unknown{};
    out.json = {};
    out.utf8_repaired = false;
    out.problems.clear();
    lists.clear();
    for (std::size_t i = 0; i < touched_count; ++i) {
      slot(touched[i]) = Slot{};
    }
    touched_count = 0;

    if (line.find_first_not_of(" \t\r") == std::string_view::npos) {
      return reject("empty line");
    }

    std::string_view input = line;
    if (readable_after < simdjson::SIMDJSON_PADDING) {
      padded.assign(input);
      padded.append(simdjson::SIMDJSON_PADDING, '\0');
      input = std::string_view(padded.data(), input.size());
    }
    od::document doc;
    simdjson::error_code indexed = parser.iterate(input.data(), input.size(), input.size() + simdjson::SIMDJSON_PADDING)
                                       .get(doc);
    // Invalid UTF-8 (git copies raw bytes into strings): stage 1 has found
    // it while indexing (it reports control characters and unclosed strings
    // first, which a repair would not change), so the bytes are checked once
    // and only such a line is read twice, as a repaired copy.
    if (indexed == simdjson::UTF8_ERROR) {
      repaired.clear();
      append_repaired_utf8(repaired, line);
      repaired.append(simdjson::SIMDJSON_PADDING, '\0');
      input = std::string_view(repaired.data(), repaired.size() - simdjson::SIMDJSON_PADDING);
      out.utf8_repaired = true;
      indexed = parser.iterate(input.data(), input.size(), input.size() + simdjson::SIMDJSON_PADDING).get(doc);
    }
    out.json = input;
    if (indexed) {
      return reject_with("not JSON", indexed);
    }
    od::object object;
    if (auto e = doc.get_object().get(object)) {
      if (e == simdjson::INCOMPLETE_ARRAY_OR_OBJECT) {
        // simdjson checks the last byte before anything else.
        return reject(has_trailing_content(input) ? "not JSON: trailing content after the object"
                                                  : "not JSON: the object is not closed (truncated line?)");
      }
      od::json_type type{};
      if (doc.type().get(type) != simdjson::SUCCESS || !is_whole_json(doc, type)) {
        return reject("not JSON");
      }
      reason.assign("not a JSON object: the line holds ");
      reason.append(json_type_name(type));
      return ParseOutcome{false, reason};
    }
    const char* const input_end = input.data() + input.size();
    for (auto field : object) {
      // A key without escapes (all of git's) is used in place; unescaping
      // would copy it.
      std::string_view key;
      // key() fails on a broken object (`{"a":1,}`): reject, never throw.
      od::raw_json_string raw;
      if (auto e = field.key().get(raw)) {
        return reject_with("not JSON", e);
      }
      const char* const raw_key = raw.raw();
      const auto* const close =
          static_cast<const char*>(std::memchr(raw_key, '"', static_cast<std::size_t>(input_end - raw_key)));
      if (close != nullptr && std::memchr(raw_key, '\\', static_cast<std::size_t>(close - raw_key)) == nullptr) {
        key = std::string_view(raw_key, static_cast<std::size_t>(close - raw_key));
      } else if (auto e = field.unescaped_key().get(key)) {
        return reject_with("not JSON", e);
      }
      od::value value;
      if (auto e = field.value().get(value)) {
        return reject_with("not JSON", e);
      }
      const std::optional<Key> found = find_key(key);
      if (!found) {
        // Unknown field: kept verbatim in the stored JSON, but still validated.
        if (auto e = validate(value, 2)) {
          return reject_field(key, e);
        }
        continue;
      }
      if (auto e = read_field(*found, value, out)) {
        return reject_field(key, e);
      }
    }
    if (doc.current_location().error() == simdjson::SUCCESS) {
      return reject("not JSON: trailing content after the object");
    }

    const Slot& event = slot(Key::event);
    const Slot& sid = slot(Key::sid);
    if (!event.present) {
      return reject(event.wrong_type || event.null ? "event is not a string" : "missing field 'event'");
    }
    if (!sid.present) {
      return reject(sid.wrong_type || sid.null ? "sid is not a string" : "missing field 'sid'");
    }
    if (event.text.empty()) {
      return reject("event is empty");
    }
    if (event.text.size() > limits.max_event_name_bytes) {
      return reject("event name too long");
    }
    if (sid.text.empty()) {
      return reject("sid is empty");
    }
    if (sid.text.size() > limits.max_sid_bytes) {
      return reject("sid too long");
    }
    if (sid.text.find('\0') != std::string_view::npos ||
        event.text.find('\0') != std::string_view::npos) {
      return reject("NUL character in event or sid");
    }

    out.kind = event_kind_from_name(event.text);
    out.event = out.kind == EventKind::unknown ? event.text : to_string(out.kind);
    out.sid = sid.text;
    out.thread = text(Key::thread);
    out.time_text = text(Key::time);
    out.time_us.reset();
    if (out.time_text) {
      out.time_us = parse_utc_timestamp(*out.time_text);
      if (!out.time_us) {
        note(out, "time: not a UTC timestamp");
      }
    }
    out.file = text(Key::file);
    out.line = integer(Key::line);
    out.repo = integer(Key::repo);
    for (Key k : required_keys(out.kind)) {
      const Slot& s = slot(k);
      if (!s.seen) {  // present with a wrong type: already noted
        note(out, "missing field '", k_keys[static_cast<std::size_t>(k)].name, "'");
      } else if (s.null) {
        note(out, k_keys[static_cast<std::size_t>(k)].name, ": expected a string, got null");
      }
    }
    out.payload = build_payload(out.kind, out);
    return ParseOutcome{true, {}};
  }
};

Parser::Parser(ParserLimits limits) : m_impl(std::make_unique<Impl>(limits)) {}
Parser::~Parser() = default;
Parser::Parser(Parser&&) noexcept = default;
Parser& Parser::operator=(Parser&&) noexcept = default;

ParseOutcome Parser::parse(std::string_view line, std::size_t readable_after, Event& out) {
  return m_impl->parse(line, readable_after, out);
}

std::size_t Parser::padding_bytes() { return simdjson::SIMDJSON_PADDING; }

}  // namespace trace2d::proto
