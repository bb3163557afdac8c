// AuditRepo: who did what, before and after; append-only and hash-chained. The chain is
// computed by the server, which owns the hash function; the store keeps the head row and
// serializes appenders on it, so the chain cannot fork.
//
// One of the repositories store::Tx is made of (store.h).
// Thread safety: as Tx (used only by the thread running the transaction, only during it).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"
#include "core/status.h"
#include "core/time.h"

namespace corral::store {

struct AuditRow {
  std::int64_t seq = 0;  // 1, 2, 3, ... with no gaps
  core::Time time;
  std::string actor;
  std::string action;
  std::string target;
  std::string before;  // summaries, never secrets
  std::string after;
  std::string request_id;
  std::string prev_hash;  // the hash of entry seq-1 ("" for the first)
  std::string hash;
};

// The chain's head, locked for the rest of the transaction by lock_audit_head().
struct AuditHead {
  std::int64_t next_seq = 1;
  std::string prev_hash;
};

class AuditRepo {
 public:
  virtual ~AuditRepo() = default;

  // lock_audit_head() serializes appenders until the transaction ends; the caller
  // computes the entry's hash and inserts it with insert_audit().
  virtual core::Result<AuditHead> lock_audit_head() = 0;
  virtual core::Status insert_audit(const AuditRow& row) = 0;
  // The head as it stands, without locking it (for verification).
  virtual core::Result<AuditHead> read_audit_head() = 0;
  virtual core::Result<std::vector<AuditRow>> list_audit(std::int64_t after_seq,
                                                         std::int32_t limit) = 0;
};

}  // namespace corral::store
