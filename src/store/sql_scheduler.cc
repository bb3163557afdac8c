// SchedulerRepo over SQL: scheduler_lease (fencing epochs and lease expiry), replicas,
// tenant_usage, elastic_targets, and the cross-shard tenant count.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "store/internal/sql_rows.h"
#include "store/internal/sql_tx.h"

namespace corral::store::detail {
namespace {

using core::Result;
using core::Status;

constexpr std::string_view kTenantUsageColumns = "tenant, gpu_seconds, as_of";
constexpr std::string_view kElasticColumns = "job_id, gpus";
constexpr std::string_view kLeaseColumns = "shard, epoch, holder, expires_at";
constexpr std::string_view kReplicaColumns =
    "name, address, started_at, expires_at, config_fingerprint";
constexpr std::string_view kSchedConfigColumns = "fingerprint, summary, set_by, set_at";

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

Result<std::optional<std::int64_t>> SqlTx::claim_lease(std::string_view shard,
                                                       std::string_view holder, core::Time now,
                                                       core::Time expires_at) {
  // One statement, so two replicas claiming at once cannot both win: the second waits on
  // the row the first updated and then finds its lease live (PostgreSQL re-checks the
  // WHERE on the new row; SQLite has one writer).
  CORRAL_ASSIGN_OR_RETURN(
      auto res, q("INSERT INTO scheduler_lease (shard, epoch, holder, expires_at) VALUES ($1, 1, "
                  "$2, $4) ON CONFLICT (shard) DO UPDATE SET epoch = scheduler_lease.epoch + 1, "
                  "holder = excluded.holder, expires_at = excluded.expires_at WHERE "
                  "scheduler_lease.expires_at <= $3 OR scheduler_lease.holder = excluded.holder "
                  "RETURNING epoch",
                  {std::string(shard), std::string(holder), ms(now), ms(expires_at)}));
  if (res.rows.empty()) return std::optional<std::int64_t>();
  RowReader in(res.rows[0], "scheduler_lease", "epoch");
  const std::int64_t epoch = in.i64(0);
  if (!in.ok()) return in.status();
  return std::optional<std::int64_t>(epoch);
}

Status SqlTx::renew_lease(std::string_view shard, std::int64_t epoch, core::Time expires_at) {
  CORRAL_ASSIGN_OR_RETURN(
      auto res, q("UPDATE scheduler_lease SET expires_at = $3 WHERE shard = $1 AND epoch = $2",
                  {std::string(shard), epoch, ms(expires_at)}));
  if (res.affected != 1) {
    return core::stale_epoch("the lease of shard " + std::string(shard) + " at epoch " +
                             std::to_string(epoch) + " was taken over");
  }
  return Status();
}

Status SqlTx::release_lease(std::string_view shard, std::int64_t epoch) {
  return q("UPDATE scheduler_lease SET expires_at = 0 WHERE shard = $1 AND epoch = $2",
           {std::string(shard), epoch})
      .status();
}

Status SqlTx::hand_over_lease(std::string_view shard, std::int64_t epoch, std::string_view to,
                              core::Time expires_at) {
  return q("UPDATE scheduler_lease SET holder = $3, expires_at = $4 WHERE shard = $1 AND "
           "epoch = $2",
           {std::string(shard), epoch, std::string(to), ms(expires_at)})
      .status();
}

Result<std::vector<LeaseRow>> SqlTx::list_leases() {
  CORRAL_ASSIGN_OR_RETURN(
      auto res, q(cat("SELECT ", kLeaseColumns, " FROM scheduler_lease ORDER BY shard"), {}));
  return read_rows<LeaseRow>(res, "scheduler_lease", kLeaseColumns, [](RowReader& in) {
    return LeaseRow{
        .shard = in.str(0), .epoch = in.i64(1), .holder = in.str(2), .expires_at = in.time(3)};
  });
}

Status SqlTx::put_replica(const ReplicaRow& row) {
  return q("INSERT INTO replicas (name, address, started_at, expires_at, config_fingerprint) "
           "VALUES ($1, $2, $3, $4, $5) ON CONFLICT (name) DO UPDATE SET address = "
           "excluded.address, started_at = excluded.started_at, expires_at = excluded.expires_at, "
           "config_fingerprint = excluded.config_fingerprint",
           {row.name, row.address, ms(row.started_at), ms(row.expires_at), row.config_fingerprint})
      .status();
}

Result<std::vector<ReplicaRow>> SqlTx::list_replicas() {
  CORRAL_ASSIGN_OR_RETURN(auto res,
                          q(cat("SELECT ", kReplicaColumns, " FROM replicas ORDER BY name"), {}));
  return read_rows<ReplicaRow>(res, "replicas", kReplicaColumns, [](RowReader& in) {
    return ReplicaRow{.name = in.str(0),
                      .address = in.str(1),
                      .started_at = in.time(2),
                      .expires_at = in.time(3),
                      .config_fingerprint = in.str(4)};
  });
}

Result<std::optional<SchedConfigRow>> SqlTx::get_sched_config() {
  CORRAL_ASSIGN_OR_RETURN(
      auto res,
      q(cat("SELECT ", kSchedConfigColumns, " FROM sched_config WHERE singleton = 1"), {}));
  if (res.rows.empty()) return std::optional<SchedConfigRow>();
  RowReader in(res.rows[0], "sched_config", kSchedConfigColumns);
  SchedConfigRow row{
      .fingerprint = in.str(0), .summary = in.str(1), .set_by = in.str(2), .set_at = in.time(3)};
  if (!in.ok()) return in.status();
  return std::optional<SchedConfigRow>(std::move(row));
}

Result<bool> SqlTx::replace_sched_config(const SchedConfigRow& row, std::string_view expected) {
  // Both compare-and-set: a first insert loses to a concurrent one, a replacement to
  // another replacement of the same config.
  const std::vector<SqlValue> args = {row.fingerprint, row.summary, row.set_by, ms(row.set_at),
                                      std::string(expected)};
  CORRAL_ASSIGN_OR_RETURN(
      auto res,
      expected.empty()
          ? q("INSERT INTO sched_config (singleton, fingerprint, summary, set_by, set_at) VALUES "
              "(1, $1, $2, $3, $4) ON CONFLICT (singleton) DO NOTHING RETURNING singleton",
              {row.fingerprint, row.summary, row.set_by, ms(row.set_at)})
          : q("UPDATE sched_config SET fingerprint = $1, summary = $2, set_by = $3, set_at = $4 "
              "WHERE singleton = 1 AND fingerprint = $5 RETURNING singleton",
              args));
  return !res.rows.empty();
}

Result<TenantTypeCounts> SqlTx::lock_tenant_holdings(const std::vector<core::TenantId>& tenants) {
  TenantTypeCounts out;
  if (tenants.empty()) return out;
  CORRAL_RETURN_IF_ERROR(lock_tenants(tenants, TenantLock::kRecount));
  IdChunk names = tenant_list(tenants);
  CORRAL_ASSIGN_OR_RETURN(
      auto res, q(cat(cat("SELECT j.tenant, a.gpu_type, SUM(", kHeldMilli,
                          ") FROM allocations a JOIN jobs j ON j.id = a.job_id WHERE a.active = 1 "
                          "AND j.tenant IN "),
                      names.list, " GROUP BY j.tenant, a.gpu_type"),
                  std::move(names.params)));
  for (const auto& r : res.rows) {
    RowReader in(r, "allocations", "tenant, gpu_type, count");
    std::string tenant = in.str(0);
    std::string type = in.str(1);
    const std::int64_t n = in.i64(2);
    if (!in.ok()) return in.status();
    out[{std::move(tenant), std::move(type)}] = n;
  }
  return out;
}

Status SqlTx::notify(std::string_view channel, std::string_view payload) {
  if (conn_.dialect() != Dialect::kPostgres) return Status();
  return q("SELECT pg_notify($1, $2)", {std::string(channel), std::string(payload)}).status();
}

Status SqlTx::put_tenant_usage(const TenantUsageRow& row) {
  return q("INSERT INTO tenant_usage (tenant, gpu_seconds, as_of) VALUES ($1, CAST($2 AS "
           "DOUBLE PRECISION), $3) ON CONFLICT (tenant) DO UPDATE SET gpu_seconds = "
           "excluded.gpu_seconds, as_of = excluded.as_of",
           {row.tenant.value, double_text(row.gpu_seconds), ms(row.as_of)})
      .status();
}

Result<std::vector<TenantUsageRow>> SqlTx::list_tenant_usage() {
  CORRAL_ASSIGN_OR_RETURN(
      auto res, q(cat("SELECT ", kTenantUsageColumns, " FROM tenant_usage ORDER BY tenant"), {}));
  return read_rows<TenantUsageRow>(res, "tenant_usage", kTenantUsageColumns, [](RowReader& in) {
    return TenantUsageRow{
        .tenant = core::TenantId(in.str(0)), .gpu_seconds = in.f64(1), .as_of = in.time(2)};
  });
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
  return read_rows<ElasticTargetRow>(res, "elastic_targets", kElasticColumns, [](RowReader& in) {
    return ElasticTargetRow{.job = core::JobId(in.i64(0)), .gpus = in.i32(1)};
  });
}

}  // namespace corral::store::detail
