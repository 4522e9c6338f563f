#include "ctl/query/restricted_database.hpp"

#include <sys/random.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <regex>
#include <set>
#include <stdexcept>
#include <utility>
#include <vector>

#include "ctl/query/database.hpp"
#include "ctl/query/database_diagnosis.hpp"
#include "model/command_identity.hpp"

namespace trace2d::ctl {
namespace {

using NameSet = std::set<std::string, std::less<>>;

// What the authorizer needs: the names the setup gave each kind of object.
struct Restriction {
  // The attached file's schema name, drawn at random for the connection: a
  // statement can reach the file only through the names it gets here, and
  // a user cannot name what they cannot learn (the TEMP schema's SQL and
  // EXPLAIN, which would show it, are refused to user statements).
  std::string schema;
  // The view the recreated views read `names` through; `names` itself is
  // readable only by trace2ctl's own statements.
  std::string names_alias;
  NameSet filtered;   // store tables with a filter view of the same name
  NameSet denied;     // placeholders for tables this trace2ctl does not know
  NameSet recreated;  // store views created again in TEMP
  bool user_sql = false;
};

// How much of the file SQLite may map (its pages are then read without a
// system call each).
constexpr std::int64_t k_store_mmap_bytes = std::int64_t{256} << 20;

// The objects every command relies on (as open_database() checks them).
constexpr std::array<std::string_view, 5> k_required_objects{
    "schema_version", "sessions", "event_store", "names", "events"};

std::string quoted(std::string_view identifier) {
  std::string out = "\"";
  for (const char c : identifier) {
    out += c;
    if (c == '"') {
      out += '"';
    }
  }
  out += '"';
  return out;
}

std::string random_token() {
  std::array<unsigned char, 16> bytes{};
  std::size_t filled = 0;
  while (filled < bytes.size()) {
    const ssize_t n = ::getrandom(bytes.data() + filled, bytes.size() - filled, 0);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      throw std::runtime_error(std::string("cannot draw a random schema name: ") + std::strerror(errno));
    }
    filled += static_cast<std::size_t>(n);
  }
  std::string hex;
  for (const unsigned char b : bytes) {
    char two[3];
    std::snprintf(two, sizeof two, "%02x", b);
    hex += two;
  }
  return hex;
}

bool contains(const NameSet& set, const char* name) { return name != nullptr && set.contains(std::string_view(name)); }

bool equal(const char* a, std::string_view b) { return a != nullptr && std::string_view(a) == b; }

bool is_schema_table(const char* table) {
  return equal(table, "sqlite_master") || equal(table, "sqlite_schema") || equal(table, "sqlite_temp_master") ||
         equal(table, "sqlite_temp_schema");
}

int read_allowed(const Restriction& r, const char* table, const char* column, const char* schema, const char* view) {
  if (equal(schema, r.schema)) {
    // A filtered table used without any of its columns (count(*) over its
    // filter view, or a join no column of which is used, once SQLite has
    // flattened the view) is checked outside the view, with no column: the
    // view's filter still holds. For `names`, whose view filters nothing,
    // that tells a user how many names there are, and nothing of them.
    if (equal(column, "") && contains(r.filtered, table)) {
      return SQLITE_OK;
    }
    // A store table only from inside its own filter view; `sessions` also
    // from the others, whose filter looks up the row's session. A CTE named
    // like a filter view would pass this test, but needs the schema's name.
    if (!contains(r.filtered, view)) {
      return SQLITE_DENY;
    }
    if (equal(table, view) || equal(table, "sessions")) {
      return SQLITE_OK;
    }
    if (equal(table, "names") && equal(view, r.names_alias)) {
      return SQLITE_OK;
    }
    return SQLITE_DENY;
  }
  if (equal(schema, "temp")) {
    if (contains(r.denied, table)) {
      return SQLITE_DENY;
    }
    if (equal(table, "names") || is_schema_table(table)) {
      return r.user_sql ? SQLITE_DENY : SQLITE_OK;
    }
    if (equal(table, r.names_alias)) {
      return contains(r.recreated, view) ? SQLITE_OK : SQLITE_DENY;
    }
    return contains(r.filtered, table) || contains(r.recreated, table) ? SQLITE_OK : SQLITE_DENY;
  }
  if (equal(schema, "main")) {
    // The in-memory main database is empty; its table-valued functions
    // read nothing of the file.
    if (is_schema_table(table) || equal(table, "json_each") || equal(table, "json_tree")) {
      return SQLITE_OK;
    }
  }
  if ((schema == nullptr || equal(schema, "main")) && table != nullptr && !r.user_sql) {
    // pragma_table_info() (in main, or without a schema): the PRAGMA check decides.
    return std::string_view(table).starts_with("pragma_table_") ? SQLITE_OK : SQLITE_DENY;
  }
  return SQLITE_DENY;
}

int authorize(void* state, int action, const char* arg3, const char* arg4, const char* schema,
              const char* view) {
  const auto& r = *static_cast<const Restriction*>(state);
  switch (action) {
    case SQLITE_SELECT:
    case SQLITE_RECURSIVE:
    case SQLITE_TRANSACTION:
    case SQLITE_SAVEPOINT:
      return SQLITE_OK;
    case SQLITE_FUNCTION:
      return is_refused_function(arg4) ? SQLITE_DENY : SQLITE_OK;
    case SQLITE_READ:
      return read_allowed(r, arg3, arg4, schema, view);
    case SQLITE_PRAGMA:
      // show and status ask for a view's columns; nothing else.
      return !r.user_sql && (equal(arg3, "table_info") || equal(arg3, "table_xinfo")) ? SQLITE_OK : SQLITE_DENY;
    case SQLITE_UPDATE:
      // SQLite registers a table-valued function (json_each) in the empty
      // in-memory schema on first use; query_only keeps it from writing.
      return equal(arg3, "sqlite_master") && equal(schema, "main") ? SQLITE_OK : SQLITE_DENY;
    default:
      // ATTACH, DETACH, CREATE, DROP, ALTER, INSERT, DELETE, ANALYZE, ...
      return SQLITE_DENY;
  }
}

std::string where_clause(RowFilter filter, uid_t uid, const std::string& schema) {
  const std::string u = std::to_string(uid);
  const auto owned_session = [&](std::string_view column) {
    // EXISTS on the session's primary key: a filter on one session stays a
    // lookup, for the row and for its session.
    return " AS r WHERE EXISTS (SELECT 1 FROM " + quoted(schema) + ".sessions AS s WHERE s.id = r." +
           std::string(column) + " AND s.peer_uid = " + u + ")";
  };
  switch (filter) {
    case RowFilter::own_sessions:
    case RowFilter::by_peer_uid:
      return " WHERE peer_uid = " + u;
    case RowFilter::by_session:
      return owned_session("session");
    case RowFilter::by_session_id:
      return owned_session("session_id");
    case RowFilter::by_uid:
      return " WHERE uid = " + u;
    case RowFilter::everything:
    case RowFilter::shared_names:
      return "";
    case RowFilter::nothing:
    case RowFilter::denied:
      return " WHERE 0";
  }
  return " WHERE 0";
}

// `CREATE VIEW x AS ...` as `CREATE TEMP VIEW x AS ...`, reading `names`
// through the alias only views may read.
std::string recreated_view_sql(const std::string& sql, const std::string& names_alias) {
  static const std::regex create(R"(^\s*CREATE\s+VIEW\s+)", std::regex::icase);
  static const std::regex names(R"(\b(FROM|JOIN)(\s+)names\b)", std::regex::icase);
  if (!std::regex_search(sql, create)) {
    throw std::runtime_error("unexpected view definition in the database: " + sql.substr(0, 80));
  }
  std::string out = std::regex_replace(sql, create, "CREATE TEMP VIEW ", std::regex_constants::format_first_only);
  return std::regex_replace(out, names, "$1$2" + quoted(names_alias));
}

struct StoreObject {
  std::string type;
  std::string name;
  std::string sql;
};

std::vector<StoreObject> read_store_schema(db::Database& db, const std::string& path, const std::string& schema) {
  std::vector<StoreObject> objects;
  try {
    db::Statement stmt = db.prepare("SELECT type, name, coalesce(sql, '') FROM " + quoted(schema) +
                                    ".sqlite_schema WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\\_%'"
                                    " ESCAPE '\\' ORDER BY rowid");
    while (stmt.step()) {
      objects.push_back({std::string(stmt.column_text(0)), std::string(stmt.column_text(1)),
                         std::string(stmt.column_text(2))});
    }
  } catch (const db::SqliteError& e) {
    if (is_query_timeout(e)) {
      throw;
    }
    throw std::runtime_error(diagnose_unreadable_database(path, e.what()));
  }
  std::string missing;
  for (const std::string_view required : k_required_objects) {
    bool found = false;
    for (const StoreObject& o : objects) {
      found = found || o.name == required;
    }
    if (!found) {
      missing += missing.empty() ? "" : ", ";
      missing += required;
    }
  }
  if (!missing.empty()) {
    throw std::runtime_error("'" + path + "' is not a trace2d database: it lacks " + missing +
                             "; --db must name the database trace2d writes");
  }
  return objects;
}

}  // namespace

RowFilter row_filter_for(std::string_view table) {
  struct Rule {
    std::string_view table;
    RowFilter filter;
  };
  // Every table trace2d's schema has (docs/schema.md); a table added later
  // stays unreadable here until it gets a line.
  static constexpr std::array<Rule, 16> k_rules{{
      {"sessions", RowFilter::own_sessions},
      {"event_store", RowFilter::by_session},
      {"problem_store", RowFilter::by_session},
      {"region_store", RowFilter::by_session},
      {"child_store", RowFilter::by_session},
      {"otlp_pending", RowFilter::by_session_id},
      {"rejects", RowFilter::by_peer_uid},
      {"uid_stats", RowFilter::by_uid},
      {"withheld_stats", RowFilter::by_uid},
      {"names", RowFilter::shared_names},
      {"schema_version", RowFilter::everything},
      // The daemon's health (pid, version, queue, commit latency, database
      // size): what `systemctl status` shows any user; nobody's sessions.
      {"daemon_status", RowFilter::everything},
      // Every sender's traffic per source, the exporter's endpoint and
      // totals, watched files' paths: not the user's.
      {"source_stats", RowFilter::nothing},
      {"otlp_export", RowFilter::nothing},
      {"otlp_dropped", RowFilter::nothing},
      {"file_offsets", RowFilter::nothing},
  }};
  for (const Rule& rule : k_rules) {
    if (rule.table == table) {
      return rule.filter;
    }
  }
  return RowFilter::denied;
}

db::Database open_restricted_database(const std::string& path, uid_t uid, std::chrono::milliseconds timeout) {
  check_database_file(path);
  auto restriction = std::make_shared<Restriction>();
  const std::string token = random_token();
  restriction->schema = "store_" + token;
  restriction->names_alias = "names_" + token;
  Restriction& r = *restriction;

  // Read-only in memory: ATTACH opens the file with the main database's
  // flags, so read-only too. TEMP is writable for the views below until
  // query_only and the authorizer close it.
  db::Database db(":memory:", db::OpenMode::read_only);
  db.set_busy_timeout(k_busy_timeout_ms);
  refuse_extensions(db);
  limit_query_time(db, timeout);
  {
    db::Statement attach = db.prepare("ATTACH ?1 AS " + quoted(r.schema));
    attach.bind_text(1, path);
    attach.run();
  }
  // Through the views, a listing reads the user's session rows where the
  // owner reads a covering index: many more pages, each a pread() without
  // a mapping (40,000 instead of 7,000 for 70,000 sessions).
  db.exec("PRAGMA " + quoted(r.schema) + ".mmap_size = " + std::to_string(k_store_mmap_bytes));
  const std::vector<StoreObject> objects = read_store_schema(db, path, r.schema);

  const std::string store = quoted(r.schema) + ".";
  for (const StoreObject& o : objects) {
    if (o.type != "table") {
      continue;
    }
    const RowFilter filter = row_filter_for(o.name);
    const std::string name = quoted(o.name);
    if (filter == RowFilter::denied) {
      // A placeholder, so that the name never reaches the file (and an
      // error never names its schema).
      db.exec("CREATE TEMP VIEW " + name + " AS SELECT NULL AS denied WHERE 0");
      r.denied.insert(o.name);
      continue;
    }
    db.exec("CREATE TEMP VIEW " + name + " AS SELECT * FROM " + store + name + where_clause(filter, uid, r.schema));
    r.filtered.insert(o.name);
    if (filter == RowFilter::shared_names) {
      db.exec("CREATE TEMP VIEW " + quoted(r.names_alias) + " AS SELECT * FROM " + store + name);
      r.filtered.insert(r.names_alias);
    }
  }
  for (const StoreObject& o : objects) {
    if (o.type != "view") {
      continue;
    }
    try {
      db.exec(recreated_view_sql(o.sql, r.names_alias));
    } catch (const db::SqliteError& e) {
      throw std::runtime_error("cannot recreate view '" + o.name + "' of '" + path + "': " + e.what());
    }
    r.recreated.insert(o.name);
  }
  db.exec("PRAGMA query_only = 1");
  model::register_sql_functions(db);
  sqlite3_set_authorizer(db.handle(), authorize, restriction.get());
  db.keep_with_connection(std::move(restriction));
  return db;
}

bool is_restricted(const db::Database& db) { return db.kept_state() != nullptr; }

UserSqlScope::UserSqlScope(db::Database& db) {
  if (auto* r = static_cast<Restriction*>(db.kept_state())) {
    m_flag = &r->user_sql;
    *m_flag = true;
  }
}

UserSqlScope::~UserSqlScope() {
  if (m_flag != nullptr) {
    *m_flag = false;
  }
}

}  // namespace trace2d::ctl
