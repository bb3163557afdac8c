// AllocationRepo over SQL: one row per GPU held; the unique index
// allocations_one_active_per_gpu refuses a second active row of one whole GPU, and the
// insert itself refuses a row the GPU's active rows leave no room for (shares).
#include <string>
#include <utility>
#include <vector>

#include "store/internal/sql_rows.h"
#include "store/internal/sql_tx.h"

namespace corral::store::detail {
namespace {

using core::Result;
using core::Status;
using core::StatusCode;

constexpr std::string_view kAllocColumns =
    "id, job_id, attempt, node, gpu_index, gpu_type, epoch, active, borrowed, created_at, "
    "released_at, share_milli";

Result<AllocationRow> alloc_from(const SqlRow& r) {
  RowReader in(r, "allocations", kAllocColumns);
  AllocationRow a{.id = in.i64(0),
                  .job = core::JobId(in.i64(1)),
                  .attempt = in.i32(2),
                  .node = core::NodeId(in.str(3)),
                  .gpu_index = in.i32(4),
                  .gpu_type = core::GpuTypeId(in.str(5)),
                  .epoch = in.i64(6),
                  .active = in.flag(7),
                  .borrowed = in.flag(8),
                  .created_at = in.time(9),
                  .released_at = in.optional_time(10),
                  .share_milli = in.i32(11)};
  if (!in.ok()) return in.status();
  return a;
}

}  // namespace

Result<std::vector<AllocationRow>> SqlTx::allocs(std::string_view where_order,
                                                 std::vector<SqlValue> params) {
  CORRAL_ASSIGN_OR_RETURN(
      auto res,
      q(cat("SELECT ", kAllocColumns, cat(" FROM allocations ", where_order)), std::move(params)));
  std::vector<AllocationRow> out;
  out.reserve(res.rows.size());
  for (const auto& r : res.rows) {
    CORRAL_ASSIGN_OR_RETURN(auto row, alloc_from(r));
    out.push_back(std::move(row));
  }
  return out;
}

Status SqlTx::insert_allocation(const AllocationRow& a) {
  // PostgreSQL reads committed rows: two writers could each find room for a share beside
  // the other's (or a whole GPU beside a share). Each insert first takes its GPU's lock,
  // held until the transaction ends, so they count one after the other. SQLite has one
  // writer: there the lock is the transaction itself.
  if (conn_.dialect() == Dialect::kPostgres) {
    CORRAL_RETURN_IF_ERROR(q("SELECT pg_advisory_xact_lock(hashtext(CAST($1 AS TEXT)), "
                             "CAST($2 AS INTEGER))",
                             {a.node.value, std::int64_t{a.gpu_index}})
                               .status());
  }
  // One statement: the row goes in only if the GPU's active rows (a whole GPU counting
  // 1000) leave room for it. The unique indexes still refuse two whole rows, or two shares
  // of one job, should two writers race.
  auto res = q(
      cat("INSERT INTO allocations (job_id, attempt, node, gpu_index, gpu_type, epoch, "
          "active, borrowed, created_at, share_milli) SELECT CAST($1 AS BIGINT), CAST($2 "
          "AS INTEGER), CAST($3 AS TEXT), CAST($4 AS INTEGER), CAST($5 AS TEXT), CAST($6 "
          "AS BIGINT), CAST($7 AS INTEGER), CAST($8 AS INTEGER), CAST($9 AS BIGINT), "
          "CAST($10 AS INTEGER) WHERE $7 = 0 OR (SELECT COALESCE(SUM(",
          kHeldMilli,
          "), 0) FROM allocations WHERE node = $3 AND gpu_index = $4 AND active = 1) + "
          "$11 <= 1000"),
      {a.job.value, std::int64_t{a.attempt}, a.node.value, std::int64_t{a.gpu_index},
       a.gpu_type.value, a.epoch, std::int64_t{a.active ? 1 : 0}, std::int64_t{a.borrowed ? 1 : 0},
       ms(a.created_at), std::int64_t{a.share_milli}, a.milli()});
  const std::string gpu = a.node.value + "/" + std::to_string(a.gpu_index);
  if (res.status().code() == StatusCode::kAlreadyExists || (res.ok() && res->affected == 0)) {
    return Status(StatusCode::kAlreadyExists,
                  a.share_milli > 0 ? "gpu " + gpu + " has no room for a share of " +
                                          std::to_string(a.share_milli) + " thousandths"
                                    : "gpu " + gpu + " already has an active allocation");
  }
  return res.status();
}

Result<std::int64_t> SqlTx::release_allocations(core::JobId job, core::Time now) {
  CORRAL_RETURN_IF_ERROR(q(cat("UPDATE jobs SET attained_gpu_ms = attained_gpu_ms + (SELECT "
                               "COALESCE(SUM(($1 - created_at) * ",
                               kHeldMilli,
                               " / 1000), 0) FROM allocations WHERE job_id = $2 AND active = 1) "
                               "WHERE id = $2"),
                           {ms(now), job.value})
                             .status());
  CORRAL_ASSIGN_OR_RETURN(auto res, q("UPDATE allocations SET active = 0, released_at = $1 "
                                      "WHERE job_id = $2 AND active = 1",
                                      {ms(now), job.value}));
  return res.affected;
}

Result<std::vector<AllocationRow>> SqlTx::list_active_allocations() {
  return allocs("WHERE active = 1 ORDER BY node, gpu_index", {});
}

Result<std::vector<AllocationRow>> SqlTx::list_active_allocations_of(
    const std::vector<core::JobId>& jobs) {
  std::vector<AllocationRow> out;
  for (IdChunk& chunk : id_chunks(jobs)) {
    CORRAL_ASSIGN_OR_RETURN(auto rows, allocs(cat("WHERE active = 1 AND job_id IN ", chunk.list,
                                                  " ORDER BY job_id, node, gpu_index"),
                                              std::move(chunk.params)));
    for (auto& row : rows) out.push_back(std::move(row));
  }
  return out;
}

Result<std::vector<AllocationRow>> SqlTx::list_allocations(core::JobId job) {
  return allocs("WHERE job_id = $1 ORDER BY id", {job.value});
}

Result<std::vector<AllocationRow>> SqlTx::list_allocations_overlapping(core::Time from,
                                                                       core::Time to) {
  // Two branches so each uses an index: active rows (released_at NULL) and rows released
  // after `from`.
  return allocs(
      "WHERE created_at < $2 AND (released_at IS NULL OR released_at > $1) ORDER BY node, "
      "gpu_index, created_at, id",
      {ms(from), ms(to)});
}

Result<std::vector<AllocationRow>> SqlTx::list_active_allocations_on(const core::NodeId& node) {
  return allocs("WHERE node = $1 AND active = 1 ORDER BY gpu_index", {node.value});
}

Result<std::int64_t> SqlTx::release_allocations_on(const core::NodeId& node, core::Time now) {
  CORRAL_RETURN_IF_ERROR(
      q(cat("UPDATE jobs SET attained_gpu_ms = attained_gpu_ms + (SELECT COALESCE(SUM(($1 - "
            "created_at) * ",
            kHeldMilli,
            " / 1000), 0) FROM allocations WHERE job_id = jobs.id AND node = $2 AND active = 1) "
            "WHERE id IN (SELECT job_id FROM allocations WHERE node = $2 AND active = 1)"),
        {ms(now), node.value})
          .status());
  CORRAL_ASSIGN_OR_RETURN(auto res, q("UPDATE allocations SET active = 0, released_at = $1 "
                                      "WHERE node = $2 AND active = 1",
                                      {ms(now), node.value}));
  return res.affected;
}

}  // namespace corral::store::detail
