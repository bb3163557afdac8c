// The PostgreSQL driver: libpq directly, a small pool of connections.
//
// Parameters go as text (libpq's text protocol) and PostgreSQL infers their types from
// the statement; results come back as text. Transactions run at READ COMMITTED: the
// shared store's writes are compare-and-set updates and unique inserts, which are
// correct at that level, and conflicts surface as unique violations (AlreadyExists) or
// serialization failures (Aborted, which transact() retries).
#include <charconv>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <libpq-fe.h>

#include "store/internal/sql.h"
#include "store/store.h"

namespace corral::store {
namespace {

using core::Result;
using core::Status;
using core::StatusCode;
using detail::SqlResult;
using detail::SqlValue;

class PgConn final : public detail::SqlConn {
 public:
  explicit PgConn(PGconn* conn) : conn_(conn) {}
  ~PgConn() override { PQfinish(conn_); }
  PgConn(const PgConn&) = delete;
  PgConn& operator=(const PgConn&) = delete;

  detail::Dialect dialect() const override { return detail::Dialect::kPostgres; }

  Result<SqlResult> query(std::string_view sql, std::span<const SqlValue> params) override {
    std::vector<std::string> texts(params.size());
    std::vector<const char*> values(params.size(), nullptr);
    for (std::size_t i = 0; i < params.size(); ++i) {
      if (const auto* n = std::get_if<std::int64_t>(&params[i])) {
        texts[i] = std::to_string(*n);
        values[i] = texts[i].c_str();
      } else if (const auto* s = std::get_if<std::string>(&params[i])) {
        values[i] = s->c_str();
      }
    }
    // Each statement text is prepared once per connection: parsing and planning the
    // same dozen statements for every submission cost more than executing them.
    auto prepared = prepared_.find(sql);
    if (prepared == prepared_.end()) {
      const std::string name = "corral_" + std::to_string(prepared_.size());
      const std::string text(sql);
      PGresult* made =
          PQprepare(conn_, name.c_str(), text.c_str(), static_cast<int>(params.size()), nullptr);
      std::unique_ptr<PGresult, decltype(&PQclear)> made_guard(made, &PQclear);
      CORRAL_RETURN_IF_ERROR(check(made));
      prepared = prepared_.emplace(text, name).first;
    }
    PGresult* res = PQexecPrepared(conn_, prepared->second.c_str(), static_cast<int>(params.size()),
                                   values.data(), nullptr, nullptr, 0);
    std::unique_ptr<PGresult, decltype(&PQclear)> guard(res, &PQclear);
    CORRAL_RETURN_IF_ERROR(check(res));
    SqlResult result;
    const int rows = PQntuples(res);
    const int columns = PQnfields(res);
    result.rows.reserve(static_cast<std::size_t>(rows));
    for (int r = 0; r < rows; ++r) {
      detail::SqlRow row(static_cast<std::size_t>(columns));
      for (int c = 0; c < columns; ++c) {
        if (PQgetisnull(res, r, c) != 0) continue;
        row[static_cast<std::size_t>(c)] =
            std::string(PQgetvalue(res, r, c), static_cast<std::size_t>(PQgetlength(res, r, c)));
      }
      result.rows.push_back(std::move(row));
    }
    // PQcmdTuples is "" for statements that count nothing, else the count in digits;
    // checked, since a throwing conversion must not escape the store.
    const std::string_view affected = PQcmdTuples(res);
    if (!affected.empty()) {
      const auto [end, ec] =
          std::from_chars(affected.data(), affected.data() + affected.size(), result.affected);
      if (ec != std::errc() || end != affected.data() + affected.size()) {
        return core::internal_error("postgresql: row count \"" + std::string(affected) +
                                    "\" is not a number");
      }
    }
    return result;
  }

  Status exec_script(std::string_view sql) override {
    const std::string text(sql);
    PGresult* res = PQexec(conn_, text.c_str());
    std::unique_ptr<PGresult, decltype(&PQclear)> guard(res, &PQclear);
    return check(res);
  }

  Status begin() override { return exec_script("BEGIN"); }
  Status commit() override { return exec_script("COMMIT"); }
  void rollback() override { (void)exec_script("ROLLBACK"); }
  bool healthy() const override { return PQstatus(conn_) == CONNECTION_OK; }

 private:
  Status check(PGresult* res) {
    const ExecStatusType st = res == nullptr ? PGRES_FATAL_ERROR : PQresultStatus(res);
    if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) return Status();
    const char* state = res == nullptr ? nullptr : PQresultErrorField(res, PG_DIAG_SQLSTATE);
    const std::string code = state == nullptr ? "" : state;
    std::string message = std::string("postgresql: ") + PQerrorMessage(conn_);
    while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) {
      message.pop_back();
    }
    if (code == "23505") return Status(StatusCode::kAlreadyExists, std::move(message));
    if (code == "40001" || code == "40P01") return core::raced(std::move(message));
    if (PQstatus(conn_) != CONNECTION_OK || code.starts_with("08")) {
      return Status(StatusCode::kUnavailable, std::move(message));
    }
    return Status(StatusCode::kInternal, std::move(message));
  }

  PGconn* conn_;
  std::map<std::string, std::string, std::less<>> prepared_;  // statement text -> name
};

Result<std::unique_ptr<detail::SqlConn>> connect(const std::string& url) {
  PGconn* raw = PQconnectdb(url.c_str());
  auto conn = std::make_unique<PgConn>(raw);
  if (PQstatus(raw) != CONNECTION_OK) {
    std::string message = PQerrorMessage(raw);
    while (!message.empty() && message.back() == '\n') message.pop_back();
    return Status(StatusCode::kUnavailable, "postgresql: cannot connect: " + message);
  }
  // Quiet NOTICEs (e.g. "table exists") would otherwise go to stderr.
  CORRAL_RETURN_IF_ERROR(conn->exec_script("SET client_min_messages = warning"));
  // A corrald that stops in the middle of a transaction (paused, hung, swapping) would
  // hold its row locks, the shard lease row among them, for as long as it stays stopped,
  // and no other replica could take its shards over. After 5 s idle in a transaction the
  // server ends the session and its locks go; corrald itself never pauses that long
  // between two statements of one transaction (docs/scale-out.md).
  CORRAL_RETURN_IF_ERROR(conn->exec_script("SET idle_in_transaction_session_timeout = '5s'"));
  return std::unique_ptr<detail::SqlConn>(std::move(conn));
}

// Up to `size` connections, opened on demand; broken ones are dropped and reopened.
class PgPool final : public detail::ConnPool {
 public:
  PgPool(std::string url, int size) : url_(std::move(url)), size_(size) {}

  Result<std::unique_ptr<detail::SqlConn>> acquire() override {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return !idle_.empty() || open_ < size_; });
    if (!idle_.empty()) {
      auto conn = std::move(idle_.back());
      idle_.pop_back();
      return conn;
    }
    ++open_;
    lock.unlock();
    auto conn = connect(url_);
    if (!conn.ok()) {
      std::lock_guard relock(mu_);
      --open_;
      cv_.notify_one();
    }
    return conn;
  }

  void release(std::unique_ptr<detail::SqlConn> conn) override {
    std::lock_guard lock(mu_);
    if (conn->healthy()) {
      idle_.push_back(std::move(conn));
    } else {
      --open_;
    }
    cv_.notify_one();
  }

  std::string_view kind() const override { return "postgresql"; }

 private:
  const std::string url_;
  const int size_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<detail::SqlConn>> idle_;  // guarded by mu_
  int open_ = 0;                                        // guarded by mu_
};

}  // namespace

Result<std::unique_ptr<Store>> open_postgres_store(const std::string& url, int connections) {
  // Writes go through group commit on one connection at a time: every submission
  // updates two shared rows (the audit head, the tenant's pending counter), so
  // concurrent transactions would only queue on those row locks through each other's
  // commit fsync; batched, one fsync covers a whole batch. Reads (the scheduler's scan,
  // API GETs) get their own connections so they never wait behind a batch.
  auto pool = std::make_unique<PgPool>(url, 1);
  auto readers = std::make_unique<PgPool>(url, connections < 1 ? 1 : connections);
  CORRAL_ASSIGN_OR_RETURN(auto conn, pool->acquire());
  auto version = detail::migrate(*conn);
  pool->release(std::move(conn));
  if (!version.ok()) return version.status();
  return detail::make_sql_store(std::move(pool), *version, /*group_commit=*/true,
                                std::move(readers));
}

}  // namespace corral::store
