// The SQLite driver: one database file in WAL mode with synchronous=FULL.
//
// Why FULL and not NORMAL: with WAL, NORMAL survives a process crash (kill -9) but may
// lose the last commits on power loss or an OS crash, because the WAL is fsynced only
// at checkpoints. The API promises that an acknowledged submission is durable, so each
// commit fsyncs the WAL (FULL). The cost is one fsync per commit, which group commit
// (sql_store.cc) shares among every transaction waiting at that moment.
//
// One connection, used by one transaction at a time: SQLite has a single writer
// anyway, and serializing in-process is cheaper than SQLITE_BUSY retries.
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <sqlite3.h>

#include "store/internal/sql.h"
#include "store/store.h"

namespace corral::store {
namespace {

using core::Result;
using core::Status;
using core::StatusCode;
using detail::SqlResult;
using detail::SqlValue;

// `$12` becomes `?12`, which SQLite binds to parameter 12, as PostgreSQL does `$12`.
std::string to_sqlite_placeholders(std::string_view sql) {
  std::string out(sql);
  for (std::size_t i = 0; i + 1 < out.size(); ++i) {
    if (out[i] == '$' && out[i + 1] >= '0' && out[i + 1] <= '9') out[i] = '?';
  }
  return out;
}

Status sqlite_status(sqlite3* db, int rc, std::string_view what) {
  const int primary = rc & 0xff;
  std::string message = std::string(what) + ": " + sqlite3_errmsg(db);
  if (rc == SQLITE_CONSTRAINT_UNIQUE || rc == SQLITE_CONSTRAINT_PRIMARYKEY) {
    return Status(StatusCode::kAlreadyExists, std::move(message));
  }
  if (primary == SQLITE_BUSY || primary == SQLITE_LOCKED) {
    return core::raced(std::move(message));
  }
  if (primary == SQLITE_IOERR || primary == SQLITE_FULL || primary == SQLITE_CANTOPEN) {
    return Status(StatusCode::kUnavailable, std::move(message));
  }
  if (primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB) {
    return Status(StatusCode::kDataLoss, std::move(message));
  }
  return Status(StatusCode::kInternal, std::move(message));
}

class SqliteConn final : public detail::SqlConn {
 public:
  explicit SqliteConn(sqlite3* db) : db_(db) {}
  ~SqliteConn() override {
    for (auto& [sql, stmt] : statements_) sqlite3_finalize(stmt);
    sqlite3_close_v2(db_);
  }
  SqliteConn(const SqliteConn&) = delete;
  SqliteConn& operator=(const SqliteConn&) = delete;

  detail::Dialect dialect() const override { return detail::Dialect::kSqlite; }

  Result<SqlResult> query(std::string_view sql, std::span<const SqlValue> params) override {
    // Statements are prepared once per connection and reused: the same few dozen SQL
    // texts run for every request, and preparing is most of a small statement's cost.
    int rc = SQLITE_OK;
    sqlite3_stmt* stmt = nullptr;
    if (auto it = statements_.find(sql); it != statements_.end()) {
      stmt = it->second;
    } else {
      const std::string text = to_sqlite_placeholders(sql);
      rc = sqlite3_prepare_v3(db_, text.data(), static_cast<int>(text.size()),
                              SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
      if (rc != SQLITE_OK) return sqlite_status(db_, rc, "prepare");
      statements_.emplace(std::string(sql), stmt);
    }
    // Reset on every path out, so the statement is ready (and holds no read lock) next time.
    struct Reset {
      sqlite3_stmt* s;
      ~Reset() {
        sqlite3_reset(s);
        sqlite3_clear_bindings(s);
      }
    } reset{stmt};
    for (std::size_t i = 0; i < params.size(); ++i) {
      const int ix = static_cast<int>(i) + 1;
      if (const auto* n = std::get_if<std::int64_t>(&params[i])) {
        rc = sqlite3_bind_int64(stmt, ix, *n);
      } else if (const auto* s = std::get_if<std::string>(&params[i])) {
        rc = sqlite3_bind_text(stmt, ix, s->data(), static_cast<int>(s->size()), SQLITE_TRANSIENT);
      } else {
        rc = sqlite3_bind_null(stmt, ix);
      }
      if (rc != SQLITE_OK) return sqlite_status(db_, rc, "bind");
    }
    SqlResult result;
    const int columns = sqlite3_column_count(stmt);
    while (true) {
      rc = sqlite3_step(stmt);
      if (rc == SQLITE_DONE) break;
      if (rc != SQLITE_ROW) return sqlite_status(db_, sqlite3_extended_errcode(db_), "step");
      detail::SqlRow row(static_cast<std::size_t>(columns));
      for (int c = 0; c < columns; ++c) {
        if (sqlite3_column_type(stmt, c) == SQLITE_NULL) continue;
        const auto* bytes = sqlite3_column_text(stmt, c);
        const int size = sqlite3_column_bytes(stmt, c);
        row[static_cast<std::size_t>(c)] =
            std::string(reinterpret_cast<const char*>(bytes), static_cast<std::size_t>(size));
      }
      result.rows.push_back(std::move(row));
    }
    result.affected = sqlite3_changes64(db_);
    return result;
  }

  Status exec_script(std::string_view sql) override {
    const std::string text(sql);
    char* error = nullptr;
    const int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &error);
    if (rc != SQLITE_OK) {
      std::string message = error != nullptr ? error : "unknown error";
      sqlite3_free(error);
      return core::internal_error("sqlite: " + message);
    }
    return Status();
  }

  Status begin() override { return exec_script("BEGIN IMMEDIATE"); }
  Status commit() override { return exec_script("COMMIT"); }
  void rollback() override {
    if (sqlite3_get_autocommit(db_) == 0) (void)exec_script("ROLLBACK");
  }
  bool healthy() const override { return true; }

 private:
  sqlite3* db_;
  std::map<std::string, sqlite3_stmt*, std::less<>> statements_;
};

// A pool of one: each transaction holds the only connection.
class SqlitePool final : public detail::ConnPool {
 public:
  explicit SqlitePool(std::unique_ptr<detail::SqlConn> conn) : conn_(std::move(conn)) {}

  Result<std::unique_ptr<detail::SqlConn>> acquire() override {
    mu_.lock();
    return std::move(conn_);
  }
  void release(std::unique_ptr<detail::SqlConn> conn) override {
    conn_ = std::move(conn);
    mu_.unlock();
  }
  std::string_view kind() const override { return "sqlite"; }

 private:
  std::mutex mu_;  // held from acquire() to release()
  std::unique_ptr<detail::SqlConn> conn_;
};

// Read connections: opened up front, handed out one per reader.
class SqliteReadPool final : public detail::ConnPool {
 public:
  explicit SqliteReadPool(std::vector<std::unique_ptr<detail::SqlConn>> conns)
      : idle_(std::move(conns)) {}

  Result<std::unique_ptr<detail::SqlConn>> acquire() override {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return !idle_.empty(); });
    auto conn = std::move(idle_.back());
    idle_.pop_back();
    return conn;
  }
  void release(std::unique_ptr<detail::SqlConn> conn) override {
    std::lock_guard lock(mu_);
    idle_.push_back(std::move(conn));
    cv_.notify_one();
  }
  std::string_view kind() const override { return "sqlite"; }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<detail::SqlConn>> idle_;  // guarded by mu_
};

Result<std::unique_ptr<detail::SqlConn>> open_reader(const std::string& path) {
  sqlite3* db = nullptr;
  const int rc =
      sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr);
  auto conn = std::make_unique<SqliteConn>(db);
  if (rc != SQLITE_OK) {
    return Status(StatusCode::kUnavailable,
                  "sqlite: cannot open " + path + ": " + sqlite3_errstr(rc));
  }
  sqlite3_extended_result_codes(db, 1);
  CORRAL_RETURN_IF_ERROR(conn->exec_script("PRAGMA busy_timeout=5000;"));
  return std::unique_ptr<detail::SqlConn>(std::move(conn));
}

}  // namespace

Result<std::unique_ptr<Store>> open_sqlite_store(const std::string& path) {
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(
      path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  auto conn = std::make_unique<SqliteConn>(db);
  if (rc != SQLITE_OK) {
    return Status(StatusCode::kUnavailable,
                  "sqlite: cannot open " + path + ": " + sqlite3_errstr(rc));
  }
  sqlite3_extended_result_codes(db, 1);
  // WAL: readers never block the writer; FULL: every commit is fsynced (see above).
  CORRAL_RETURN_IF_ERROR(
      conn->exec_script("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON; "
                        "PRAGMA busy_timeout=5000;"));
  CORRAL_ASSIGN_OR_RETURN(const std::int64_t version, detail::migrate(*conn));
  // Readers see committed WAL snapshots while the writer works.
  constexpr int kReaders = 4;
  std::vector<std::unique_ptr<detail::SqlConn>> readers;
  for (int i = 0; i < kReaders; ++i) {
    CORRAL_ASSIGN_OR_RETURN(auto reader, open_reader(path));
    readers.push_back(std::move(reader));
  }
  return detail::make_sql_store(std::make_unique<SqlitePool>(std::move(conn)), version,
                                /*group_commit=*/true,
                                std::make_unique<SqliteReadPool>(std::move(readers)));
}

}  // namespace corral::store
