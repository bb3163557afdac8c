#include "server/controllers/audit.h"

#include <string>

#include "server/base/crypto.h"

namespace corral::server {

std::string audit_hash(const store::AuditRow& row) {
  std::string text = row.prev_hash;
  for (const std::string& field :
       {std::to_string(row.seq), std::to_string(core::to_ms(row.time)), row.actor, row.action,
        row.target, row.before, row.after, row.request_id}) {
    text += '\x1f';
    text += field;
  }
  return sha256_hex(text);
}

core::Status append_audit(store::AuditRepo& audit, const AuditDraft& draft) {
  CORRAL_ASSIGN_OR_RETURN(const store::AuditHead head, audit.lock_audit_head());
  store::AuditRow row{.seq = head.next_seq,
                      .time = draft.time,
                      .actor = draft.actor,
                      .action = draft.action,
                      .target = draft.target,
                      .before = draft.before,
                      .after = draft.after,
                      .request_id = draft.request_id,
                      .prev_hash = head.prev_hash};
  row.hash = audit_hash(row);
  return audit.insert_audit(row);
}

AuditVerdict verify_audit_chain(const std::vector<store::AuditRow>& rows,
                                const store::AuditHead& head) {
  AuditVerdict v;
  v.entries = static_cast<std::int64_t>(rows.size());
  auto bad = [&](std::int64_t seq, std::string why) { return v.failed(seq, std::move(why)); };
  std::string prev;
  std::int64_t expected_seq = 1;
  for (const auto& row : rows) {
    if (row.seq != expected_seq) {
      return bad(expected_seq, "entry " + std::to_string(expected_seq) + " is missing");
    }
    if (row.prev_hash != prev) {
      return bad(row.seq,
                 "entry " + std::to_string(row.seq) + " does not link to the entry before it");
    }
    if (audit_hash(row) != row.hash) {
      return bad(row.seq, "entry " + std::to_string(row.seq) + " was modified");
    }
    prev = row.hash;
    ++expected_seq;
  }
  // The head names the last entry written; fewer entries means the newest were removed.
  if (head.next_seq != expected_seq || head.prev_hash != prev) {
    return bad(expected_seq, "the log ends at entry " + std::to_string(expected_seq - 1) +
                                 " but the head says " + std::to_string(head.next_seq - 1));
  }
  return v;
}

core::Result<AuditChain> read_audit_chain(store::Store& store) {
  AuditChain chain;
  const core::Status transacted = store.read([&](store::Tx& tx) {
    chain.rows.clear();
    std::int64_t after = 0;
    while (true) {
      CORRAL_ASSIGN_OR_RETURN(auto page, tx.audit().list_audit(after, 10000));
      if (page.empty()) break;
      after = page.back().seq;
      for (auto& r : page) chain.rows.push_back(std::move(r));
    }
    CORRAL_ASSIGN_OR_RETURN(chain.head, tx.audit().read_audit_head());
    return core::Status();
  });
  if (!transacted.ok()) return transacted;
  return chain;
}

core::Result<AuditVerdict> verify_audit(store::Store& store) {
  CORRAL_ASSIGN_OR_RETURN(const AuditChain chain, read_audit_chain(store));
  return verify_audit_chain(chain.rows, chain.head);
}

}  // namespace corral::server
