// The Store over SQL: the transaction machinery (one transaction per call, or grouped
// commits) around SqlTx, whose queries live by repository in sql_*.cc. The drivers
// (sqlite/, postgres/) differ only in how they connect and run a statement.
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "store/internal/sql.h"
#include "store/internal/sql_tx.h"
#include "store/store.h"

namespace corral::store::detail {
namespace {

using core::Result;
using core::Status;

// Thread safety: safe for concurrent use; the pool hands each transaction its own
// connection (SQLite's pool has one, so its transactions run one at a time).
class SqlStore final : public Store {
 public:
  SqlStore(std::unique_ptr<ConnPool> pool, std::int64_t version, bool group_commit,
           std::unique_ptr<ConnPool> readers)
      : pool_(std::move(pool)),
        readers_(std::move(readers)),
        version_(version),
        group_commit_(group_commit) {}

  Status read(const std::function<Status(Tx&)>& fn) override {
    if (!readers_) return transact(fn);
    CORRAL_ASSIGN_OR_RETURN(auto conn, readers_->acquire());
    // SQLite: a deferred BEGIN takes a WAL read snapshot at the first read and never
    // blocks the writer. PostgreSQL: REPEATABLE READ gives every statement of the read
    // the same snapshot. Either way the read is rolled back (it wrote nothing).
    Status status = conn->exec_script(conn->dialect() == Dialect::kPostgres
                                          ? "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
                                          : "BEGIN");
    if (status.ok()) {
      SqlTx tx(*conn);
      status = fn(tx);
      conn->rollback();
    }
    readers_->release(std::move(conn));
    return status;
  }

  Status transact(const std::function<Status(Tx&)>& fn) override {
    // Races (serialization conflicts, deadlocks, lost compare-and-sets:
    // ErrorReason::kRaced) are retried a few times from the start; a unique-key clash or
    // any other refusal is not a race but an answer, so it goes back to the caller. A
    // grouped call that raced is retried in a later batch, not in its own: the locks its
    // batch holds (another replica's batch waiting on them) would make a deadlock recur.
    constexpr int kAttempts = 5;
    Status last;
    for (int attempt = 0; attempt < kAttempts; ++attempt) {
      last = group_commit_ ? transact_grouped(fn) : run_once(fn);
      if (!last.is(core::ErrorReason::kRaced)) return last;
    }
    return last;
  }

  std::string_view kind() const override { return pool_->kind(); }
  std::int64_t schema_version() const override { return version_; }

 private:
  // One caller's work in a group commit.
  struct Waiter {
    const std::function<Status(Tx&)>* fn;
    Status result;
    bool done = false;
  };

  // Group commit (leader/follower): callers queue their work; whoever finds no leader
  // becomes one, runs everything queued in one transaction (each in a savepoint) and
  // commits once, then wakes the others. One fsync then covers the whole batch, which
  // is what lets SQLite acknowledge thousands of durable submissions a second.
  Status transact_grouped(const std::function<Status(Tx&)>& fn) {
    Waiter me{&fn};
    std::unique_lock lock(gc_mu_);
    queue_.push_back(&me);
    while (!me.done) {
      if (leader_active_) {
        gc_cv_.wait(lock);
        continue;
      }
      leader_active_ = true;
      constexpr std::size_t kMaxBatch = 512;
      std::vector<Waiter*> batch;
      while (!queue_.empty() && batch.size() < kMaxBatch) {
        batch.push_back(queue_.front());
        queue_.pop_front();
      }
      lock.unlock();
      run_batch(batch);
      lock.lock();
      for (Waiter* w : batch) w->done = true;
      leader_active_ = false;
      gc_cv_.notify_all();
    }
    return me.result;
  }

  void run_batch(const std::vector<Waiter*>& batch) {
    auto conn = pool_->acquire();
    if (!conn.ok()) {
      for (Waiter* w : batch) w->result = conn.status();
      return;
    }
    SqlConn& c = **conn;
    Status begun = c.begin();
    if (begun.ok()) {
      SqlTx tx(c);
      for (Waiter* w : batch) {
        w->result = c.exec_script("SAVEPOINT corral_call");
        if (!w->result.ok()) continue;
        w->result = (*w->fn)(tx);
        if (w->result.ok()) {
          w->result = c.exec_script("RELEASE corral_call");
          continue;
        }
        // Undo only this caller's writes; the rest of the batch stands. A race goes back
        // to transact(), which tries again in a later batch.
        (void)c.exec_script("ROLLBACK TO corral_call; RELEASE corral_call");
      }
      begun = c.commit();
      if (!begun.ok()) c.rollback();
    }
    if (!begun.ok()) {
      for (Waiter* w : batch) {
        if (w->result.ok()) w->result = begun;
      }
    }
    pool_->release(std::move(*conn));
  }

  Status run_once(const std::function<Status(Tx&)>& fn) {
    CORRAL_ASSIGN_OR_RETURN(auto conn, pool_->acquire());
    Status status = conn->begin();
    if (status.ok()) {
      SqlTx tx(*conn);
      status = fn(tx);
      if (status.ok()) {
        status = conn->commit();
      }
      if (!status.ok()) conn->rollback();
    }
    pool_->release(std::move(conn));
    return status;
  }

  std::unique_ptr<ConnPool> pool_;
  std::unique_ptr<ConnPool> readers_;  // may be null
  const std::int64_t version_;
  const bool group_commit_;

  std::mutex gc_mu_;
  std::condition_variable gc_cv_;
  std::deque<Waiter*> queue_;   // guarded by gc_mu_
  bool leader_active_ = false;  // guarded by gc_mu_
};

}  // namespace

std::unique_ptr<Store> make_sql_store(std::unique_ptr<ConnPool> pool, std::int64_t version,
                                      bool group_commit, std::unique_ptr<ConnPool> readers) {
  return std::make_unique<SqlStore>(std::move(pool), version, group_commit, std::move(readers));
}

}  // namespace corral::store::detail

namespace corral::store {

core::Result<std::unique_ptr<Store>> open_store(const std::string& url_or_path) {
  if (url_or_path.starts_with("postgresql://") || url_or_path.starts_with("postgres://")) {
    return open_postgres_store(url_or_path);
  }
  return open_sqlite_store(url_or_path);
}

std::int64_t latest_schema_version() {
  const auto all = detail::migrations();
  return all.empty() ? 0 : all.back().version;
}

}  // namespace corral::store
