// The seam between the shared SQL store (sql_store.cc and the repositories in sql_*.cc)
// and the two database drivers (sqlite/, postgres/). A driver runs one statement at a
// time with typed parameters and returns rows as text; everything else (schema, queries,
// row mapping) is shared, so the two stores cannot drift apart. SQL is written once with
// PostgreSQL's `$N` placeholders; the SQLite driver rewrites them to `?N`, which binds the
// same index.
//
// Thread safety: a SqlConn needs external synchronization (one user at a time).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/result.h"
#include "core/status.h"
#include "store/store.h"

namespace corral::store::detail {

enum class Dialect { kSqlite, kPostgres };

using SqlValue = std::variant<std::nullptr_t, std::int64_t, std::string>;
using SqlRow = std::vector<std::optional<std::string>>;

struct SqlResult {
  std::vector<SqlRow> rows;
  std::int64_t affected = 0;  // rows changed by INSERT/UPDATE/DELETE
};

class SqlConn {
 public:
  virtual ~SqlConn() = default;
  virtual Dialect dialect() const = 0;
  // One statement. Errors: AlreadyExists on a unique violation, Aborted (core::raced)
  // on a serialization failure, deadlock or busy database, Unavailable when the
  // connection is gone, Internal otherwise.
  virtual core::Result<SqlResult> query(std::string_view sql, std::span<const SqlValue> params) = 0;
  // Several statements, no parameters (migrations).
  virtual core::Status exec_script(std::string_view sql) = 0;
  // Starts a write transaction (SQLite: BEGIN IMMEDIATE, so a writer never has to
  // upgrade its lock).
  virtual core::Status begin() = 0;
  virtual core::Status commit() = 0;
  virtual void rollback() = 0;
  // False after a connection-level failure; the pool replaces such connections.
  virtual bool healthy() const = 0;
};

// One migration: a version, a name and its SQL (with {{...}} dialect markers).
struct Migration {
  std::int64_t version;
  std::string_view name;
  std::string_view sql;
};
// Every migration, by version (generated from src/store/migrations/ at build time).
std::span<const Migration> migrations();

// Replaces the dialect markers of migration text:
//   {{ID}}   an auto-assigned 64-bit integer primary key
std::string render_migration(std::string_view sql, Dialect dialect);

// Applies every migration newer than the database's, each in its own transaction with
// its schema_migrations row. Returns the version reached.
core::Result<std::int64_t> migrate(SqlConn& conn);

// Hands out connections. Thread safety: safe for concurrent use.
class ConnPool {
 public:
  virtual ~ConnPool() = default;
  virtual core::Result<std::unique_ptr<SqlConn>> acquire() = 0;
  virtual void release(std::unique_ptr<SqlConn> conn) = 0;
  virtual std::string_view kind() const = 0;
};

// The Store over a pool of connections. `schema_version` is what migrate() reached.
// `group_commit`: batch concurrent transactions into one commit (SQLite, whose single
// writer would otherwise pay one fsync per call; PostgreSQL, whose shared hot rows
// would otherwise serialize calls through one fsync each).
// `readers`: connections for Store::read (SQLite: WAL readers beside the writer;
// PostgreSQL: connections apart from the writer's); null reads through `pool`.
std::unique_ptr<Store> make_sql_store(std::unique_ptr<ConnPool> pool, std::int64_t schema_version,
                                      bool group_commit,
                                      std::unique_ptr<ConnPool> readers = nullptr);

}  // namespace corral::store::detail
