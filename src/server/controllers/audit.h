// The audit log: every mutating API call appends who did what to which object, with a
// before/after summary, in the same transaction as the change itself. Entries form a
// hash chain: each entry's hash covers its fields and the previous entry's hash, and
// the store's audit_head row keeps the last hash, so editing, deleting or truncating
// any entry breaks verification.
//
//   hash(n) = sha256(prev_hash | seq | time | actor | action | target | before | after |
//                    request_id)          (fields joined with '\x1f')
//
// Thread safety: free functions; append_audit runs inside the caller's transaction.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "core/time.h"
#include "store/store.h"

namespace corral::server {

struct AuditDraft {
  std::string actor;
  std::string action;  // "job.submit", "node.cordon", ...
  std::string target;  // "job/42", "node/n1"
  std::string before;  // short summaries; never secrets
  std::string after;
  std::string request_id;
  core::Time time;
};

// The hash of `row` given its prev_hash (the formula above).
std::string audit_hash(const store::AuditRow& row);

// Locks the chain's head, computes the entry's hash and inserts it.
core::Status append_audit(store::AuditRepo& audit, const AuditDraft& draft);

struct AuditVerdict {
  bool ok = true;
  std::int64_t entries = 0;
  std::int64_t first_bad_seq = 0;  // 0 when ok
  std::string problem;             // empty when ok
  std::int64_t anchors = 0;        // anchor lines checked (audit_anchor.h)

  // This verdict, failed at `seq` for `why`: what a check returns at its first problem.
  AuditVerdict failed(std::int64_t seq, std::string why) const {
    AuditVerdict v = *this;
    v.ok = false;
    v.first_bad_seq = seq;
    v.problem = std::move(why);
    return v;
  }
};

// Checks a whole chain read in seq order against the head the store keeps: no gaps,
// each prev_hash is the previous hash, each hash recomputes, and the last entry is the
// head (so deleting the newest entries shows too).
AuditVerdict verify_audit_chain(const std::vector<store::AuditRow>& rows,
                                const store::AuditHead& head);

// The whole chain in seq order and its head, read in one transaction.
struct AuditChain {
  std::vector<store::AuditRow> rows;
  store::AuditHead head;
};
core::Result<AuditChain> read_audit_chain(store::Store& store);

// Reads the whole chain and the head in one transaction and verifies them (the anchor
// file, audit_anchor.h, is checked on top by verify_audit_anchored).
core::Result<AuditVerdict> verify_audit(store::Store& store);

}  // namespace corral::server
