// AuditRepo over SQL: audit_log and its head row, which serializes appenders.
#include <string>
#include <utility>
#include <vector>

#include "store/internal/sql_rows.h"
#include "store/internal/sql_tx.h"

namespace corral::store::detail {
namespace {

using core::Result;
using core::Status;

constexpr std::string_view kAuditColumns =
    "seq, time, actor, action, target, before_summary, after_summary, request_id, prev_hash, "
    "hash";
constexpr std::string_view kHeadColumns = "seq, hash";

// The head row as stored: the last seq used and its hash.
Result<AuditHead> head_from(const SqlResult& res, std::int64_t next_after) {
  if (res.rows.size() != 1) return core::internal_error("audit_head row missing");
  RowReader in(res.rows[0], "audit_head", kHeadColumns);
  AuditHead head{.next_seq = in.i64(0) + next_after, .prev_hash = in.str(1)};
  if (!in.ok()) return in.status();
  return head;
}

}  // namespace

Result<AuditHead> SqlTx::lock_audit_head() {
  // The UPDATE takes the row lock in PostgreSQL (SQLite has one writer anyway), so
  // the chain cannot fork under concurrent appenders. It returns the seq it took.
  CORRAL_ASSIGN_OR_RETURN(
      auto res, q("UPDATE audit_head SET seq = seq + 1 WHERE id = 1 RETURNING seq, hash", {}));
  return head_from(res, 0);
}

Status SqlTx::insert_audit(const AuditRow& a) {
  CORRAL_RETURN_IF_ERROR(q(cat("INSERT INTO audit_log (", kAuditColumns,
                               ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"),
                           {a.seq, ms(a.time), a.actor, a.action, a.target, a.before, a.after,
                            a.request_id, a.prev_hash, a.hash})
                             .status());
  return q("UPDATE audit_head SET hash = $1 WHERE id = 1", {a.hash}).status();
}

Result<AuditHead> SqlTx::read_audit_head() {
  CORRAL_ASSIGN_OR_RETURN(auto res, q("SELECT seq, hash FROM audit_head WHERE id = 1", {}));
  return head_from(res, 1);
}

Result<std::vector<AuditRow>> SqlTx::list_audit(std::int64_t after_seq, std::int32_t limit) {
  CORRAL_ASSIGN_OR_RETURN(auto res, q(cat("SELECT ", kAuditColumns,
                                          " FROM audit_log WHERE seq > $1 ORDER BY seq LIMIT $2"),
                                      {after_seq, std::int64_t{limit}}));
  return read_rows<AuditRow>(res, "audit_log", kAuditColumns, [](RowReader& in) {
    return AuditRow{.seq = in.i64(0),
                    .time = in.time(1),
                    .actor = in.str(2),
                    .action = in.str(3),
                    .target = in.str(4),
                    .before = in.str(5),
                    .after = in.str(6),
                    .request_id = in.str(7),
                    .prev_hash = in.str(8),
                    .hash = in.str(9)};
  });
}

}  // namespace corral::store::detail
