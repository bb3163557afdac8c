// FaultyStore: a store::Store that wraps a real one and fails the Nth write with
// Unavailable, once (a transient fault: the next try succeeds) or for good (a persistent
// one: every write from the Nth on fails), like SQLite's transient and persistent fault
// simulation and LevelDB's ErrorEnv. Controller tests use it to show that a failed write
// leaves the store as it was and that a retry succeeds.
//
// What counts as a write (Fault::Unit):
//   kMutation  each call of a mutating repository method (insert_*, update_*, upsert_*, put_*,
//              release_*, delete_*, set_*, clear_*, append_*, lock_audit_head,
//              acquire_epoch, check_epoch; not cluster_id, which writes only on a store's
//              first call). The failing call reaches nothing below; the caller's callback
//              sees the Unavailable, returns it, and the real transaction rolls back.
//   kTransact  each transact() call. The callback runs in full, then the transaction is
//              rolled back and transact() returns Unavailable: a commit that was lost.
// Reads (read(), and read-only repository methods) never fail and are not counted.
//
// Thread safety: safe for concurrent use if the wrapped store is; the counter is atomic.
// It does not own the wrapped store, which must outlive it.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "core/status.h"
#include "store/store.h"

namespace corral::testing {

struct Fault {
  enum class Unit { kMutation, kTransact };
  Unit unit = Unit::kMutation;
  std::int64_t nth = 1;     // 1-based: the first write is 1
  bool persistent = false;  // false: only the Nth write fails; true: the Nth and every later
  // Set: only the mutating repository methods whose name starts with it count (and fail), e.g.
  // "insert_telemetry" for a store whose telemetry writes fail and nothing else. kMutation.
  std::string only;
};

class FaultyStore final : public store::Store {
 public:
  FaultyStore(store::Store& inner, Fault fault) : inner_(inner), fault_(fault) {}

  core::Status transact(const std::function<core::Status(store::Tx&)>& fn) override;
  core::Status read(const std::function<core::Status(store::Tx&)>& fn) override {
    return inner_.read(fn);
  }
  std::string_view kind() const override { return inner_.kind(); }
  std::int64_t schema_version() const override { return inner_.schema_version(); }

  // How many writes of the fault's unit were attempted so far (failed ones included).
  std::int64_t writes() const { return writes_.load(); }
  // How many of them were made to fail.
  std::int64_t failures() const { return failures_.load(); }

  // Counts one write; Unavailable naming `what` when it is one that must fail. Used by the
  // wrapping Tx; callers need not call it.
  core::Status count_write(std::string_view what);

 private:
  store::Store& inner_;
  const Fault fault_;
  std::atomic<std::int64_t> writes_{0};
  std::atomic<std::int64_t> failures_{0};
};

}  // namespace corral::testing
