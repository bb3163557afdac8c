// SchedulerRepo over SQL: scheduler_lease (fencing epochs), tenant_usage and
// elastic_targets.
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "store/internal/sql_rows.h"
#include "store/internal/sql_tx.h"

namespace corral::store::detail {
namespace {

using core::Result;
using core::Status;

constexpr std::string_view kUsageColumns = "tenant, gpu_seconds, as_of";
constexpr std::string_view kElasticColumns = "job_id, gpus";

}  // namespace

Result<std::int64_t> SqlTx::acquire_epoch(std::string_view shard, std::string_view holder) {
  CORRAL_ASSIGN_OR_RETURN(auto res,
                          q("INSERT INTO scheduler_lease (shard, epoch, holder) VALUES ($1, 1, $2) "
                            "ON CONFLICT (shard) DO UPDATE SET epoch = scheduler_lease.epoch + 1, "
                            "holder = excluded.holder RETURNING epoch",
                            {std::string(shard), std::string(holder)}));
  if (res.rows.size() != 1) return core::internal_error("acquire_epoch: no row returned");
  RowReader in(res.rows[0], "scheduler_lease", "epoch");
  const std::int64_t epoch = in.i64(0);
  if (!in.ok()) return in.status();
  return epoch;
}

Status SqlTx::check_epoch(std::string_view shard, std::int64_t epoch) {
  // A no-op UPDATE that matches only the current epoch: it locks the lease row, so a
  // concurrent acquire_epoch() waits for this transaction or fences it.
  CORRAL_ASSIGN_OR_RETURN(auto res, q("UPDATE scheduler_lease SET epoch = epoch WHERE shard = "
                                      "$1 AND epoch = $2",
                                      {std::string(shard), epoch}));
  if (res.affected != 1) {
    return core::stale_epoch("scheduler epoch " + std::to_string(epoch) + " of shard " +
                             std::string(shard) + " is stale");
  }
  return Status();
}

Status SqlTx::put_tenant_usage(const TenantUsageRow& row) {
  // The double travels as text, like telemetry's, so both drivers keep its precision.
  char text[64];
  std::snprintf(text, sizeof text, "%.17g", row.gpu_seconds);
  return q("INSERT INTO tenant_usage (tenant, gpu_seconds, as_of) VALUES ($1, CAST($2 AS "
           "DOUBLE PRECISION), $3) ON CONFLICT (tenant) DO UPDATE SET gpu_seconds = "
           "excluded.gpu_seconds, as_of = excluded.as_of",
           {row.tenant.value, std::string(text), ms(row.as_of)})
      .status();
}

Result<std::vector<TenantUsageRow>> SqlTx::list_tenant_usage() {
  CORRAL_ASSIGN_OR_RETURN(
      auto res, q(cat("SELECT ", kUsageColumns, " FROM tenant_usage ORDER BY tenant"), {}));
  std::vector<TenantUsageRow> out;
  out.reserve(res.rows.size());
  for (const auto& r : res.rows) {
    RowReader in(r, "tenant_usage", kUsageColumns);
    out.push_back(
        {.tenant = core::TenantId(in.str(0)), .gpu_seconds = in.f64(1), .as_of = in.time(2)});
    if (!in.ok()) return in.status();
  }
  return out;
}

Status SqlTx::set_elastic_target(const ElasticTargetRow& row, core::Time now) {
  return q("INSERT INTO elastic_targets (job_id, gpus, updated_at) VALUES ($1, $2, $3) "
           "ON CONFLICT (job_id) DO UPDATE SET gpus = excluded.gpus, "
           "updated_at = excluded.updated_at",
           {row.job.value, std::int64_t{row.gpus}, ms(now)})
      .status();
}

Status SqlTx::clear_elastic_target(core::JobId job) {
  return q("DELETE FROM elastic_targets WHERE job_id = $1", {job.value}).status();
}

Result<std::vector<ElasticTargetRow>> SqlTx::list_elastic_targets() {
  CORRAL_ASSIGN_OR_RETURN(
      auto res, q(cat("SELECT ", kElasticColumns, " FROM elastic_targets ORDER BY job_id"), {}));
  std::vector<ElasticTargetRow> out;
  out.reserve(res.rows.size());
  for (const auto& r : res.rows) {
    RowReader in(r, "elastic_targets", kElasticColumns);
    out.push_back({.job = core::JobId(in.i64(0)), .gpus = in.i32(1)});
    if (!in.ok()) return in.status();
  }
  return out;
}

}  // namespace corral::store::detail
