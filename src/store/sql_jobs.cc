// JobRepo over SQL: the jobs table, their secrets and the per-tenant pending counter.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "store/internal/sql_rows.h"
#include "store/internal/sql_tx.h"

namespace corral::store::detail {
namespace {

using core::Result;
using core::Status;

constexpr std::string_view kJobColumns =
    "id, tenant, name, priority_class, tier, gpus, spec_json, phase, attempt, reason, "
    "pending_kind, queue_position, created_at, updated_at, queued_at, restarts, not_before, "
    "preemptions, attained_gpu_ms, stop_grace_ms, planned_start_ms, planned_latest_ms, array_job, "
    "array_index, node_restarts, oom_restarts, retry_category, first_started_ms, submitted_by";

Result<JobRow> job_from(const SqlRow& r) {
  RowReader in(r, "jobs", kJobColumns);
  JobRow j{.id = core::JobId(in.i64(0)),
           .tenant = core::TenantId(in.str(1)),
           .name = in.str(2),
           .priority_class = in.str(3),
           .tier = in.i32(4),
           .gpus = in.i32(5),
           .spec_json = in.str(6),
           .phase = in.job_phase(7),
           .attempt = in.i32(8),
           .reason = in.str(9),
           .pending_kind = in.str(10),
           .queue_position = in.i32(11),
           .created_at = in.time(12),
           .updated_at = in.time(13),
           .queued_at = in.time(14),
           .restarts = in.i32(15),
           .not_before = in.time(16),
           .preemptions = in.i32(17),
           .attained_gpu_ms = in.i64(18),
           .stop_grace_ms = in.i64(19),
           .planned_start = in.time(20),
           .planned_latest = in.time(21),
           .array_job = core::JobId(in.i64(22)),
           .array_index = in.i32(23),
           .node_restarts = in.i32(24),
           .oom_restarts = in.i32(25),
           .retry_category = in.str(26),
           .first_started = in.time(27),
           .submitted_by = in.str(28)};
  if (!in.ok()) return in.status();
  return j;
}

}  // namespace

Result<std::vector<JobRow>> SqlTx::jobs(std::string_view sql, std::vector<SqlValue> params) {
  CORRAL_ASSIGN_OR_RETURN(auto res, q(sql, std::move(params)));
  std::vector<JobRow> out;
  out.reserve(res.rows.size());
  for (const auto& r : res.rows) {
    CORRAL_ASSIGN_OR_RETURN(auto job, job_from(r));
    out.push_back(std::move(job));
  }
  return out;
}

Result<JobRow> SqlTx::insert_job(const NewJob& job) {
  CORRAL_ASSIGN_OR_RETURN(
      auto rows,
      jobs(cat("INSERT INTO jobs (tenant, name, priority_class, tier, gpus, spec_json, phase, "
               "attempt, reason, pending_kind, queue_position, created_at, updated_at, queued_at, "
               "array_job, array_index, submitted_by) "
               "VALUES ($1, $2, $3, $4, $5, $6, 'pending', 0, '', '', 0, $7, $7, $7, $8, $9, $10) "
               "RETURNING ",
               kJobColumns),
           {job.tenant.value, job.name, job.priority_class, std::int64_t{job.tier},
            std::int64_t{job.gpus}, job.spec_json, ms(job.now), job.array_job.value,
            std::int64_t{job.array_index.value_or(0)}, job.submitted_by}));
  if (rows.size() != 1) return core::internal_error("insert_job: no row returned");
  // An array's first task names the array with its own id, known only now.
  if (job.array_index && job.array_job.value == 0) {
    CORRAL_RETURN_IF_ERROR(
        q("UPDATE jobs SET array_job = id WHERE id = $1", {rows[0].id.value}).status());
    rows[0].array_job = rows[0].id;
  }
  CORRAL_RETURN_IF_ERROR(add_pending(job.tenant, 1));
  CORRAL_RETURN_IF_ERROR(q("INSERT INTO job_secrets (job_id, secret_env_json) VALUES ($1, $2)",
                           {rows[0].id.value, job.secret_env_json})
                             .status());
  return std::move(rows[0]);
}

Result<std::optional<JobRow>> SqlTx::get_job(core::JobId id) {
  CORRAL_ASSIGN_OR_RETURN(
      auto rows, jobs(cat("SELECT ", kJobColumns, " FROM jobs WHERE id = $1"), {id.value}));
  return first_row(std::move(rows));
}

Result<std::vector<JobRow>> SqlTx::get_jobs(const std::vector<core::JobId>& ids) {
  std::vector<JobRow> out;
  for (IdChunk& chunk : id_chunks(ids)) {
    CORRAL_ASSIGN_OR_RETURN(auto rows,
                            jobs(cat("SELECT ", kJobColumns,
                                     cat(" FROM jobs WHERE id IN ", chunk.list, " ORDER BY id")),
                                 std::move(chunk.params)));
    for (auto& row : rows) out.push_back(std::move(row));
  }
  return out;
}

Result<std::vector<JobRow>> SqlTx::list_jobs(const JobFilter& filter) {
  std::string sql = cat("SELECT ", kJobColumns, " FROM jobs WHERE id > $1");
  std::vector<SqlValue> params{filter.after_id};
  if (filter.tenant) {
    params.emplace_back(filter.tenant->value);
    sql += " AND tenant = $" + std::to_string(params.size());
  }
  if (!filter.phases.empty()) {
    sql += " AND phase IN (";
    for (std::size_t i = 0; i < filter.phases.size(); ++i) {
      params.emplace_back(std::string(core::to_string(filter.phases[i])));
      sql += (i == 0 ? "$" : ", $") + std::to_string(params.size());
    }
    sql += ")";
  }
  params.emplace_back(std::int64_t{filter.limit});
  sql += " ORDER BY id LIMIT $" + std::to_string(params.size());
  return jobs(sql, std::move(params));
}

Result<std::vector<JobRow>> SqlTx::list_array_tasks(core::JobId array) {
  return jobs(cat("SELECT ", kJobColumns,
                  " FROM jobs WHERE array_job = $1 AND array_job > 0 ORDER BY array_index"),
              {array.value});
}

Result<std::vector<JobProgress>> SqlTx::list_job_progress(const std::vector<core::JobId>& ids,
                                                          const std::vector<core::JobId>& arrays) {
  constexpr std::string_view kColumns =
      "id, tenant, array_job, array_index, phase, attempt, updated_at, first_started_ms, "
      "attained_gpu_ms";
  std::map<std::int64_t, JobProgress> out;
  const auto read = [&](std::string_view where, const std::vector<core::JobId>& keys) -> Status {
    for (IdChunk& chunk : id_chunks(keys)) {
      CORRAL_ASSIGN_OR_RETURN(auto res, q(cat(cat("SELECT ", kColumns, " FROM jobs WHERE "), where,
                                              cat(" IN ", chunk.list)),
                                          std::move(chunk.params)));
      for (const auto& r : res.rows) {
        RowReader in(r, "jobs", kColumns);
        JobProgress p{.id = core::JobId(in.i64(0)),
                      .tenant = core::TenantId(in.str(1)),
                      .array_job = core::JobId(in.i64(2)),
                      .array_index = in.i32(3),
                      .phase = in.job_phase(4),
                      .attempt = in.i32(5),
                      .updated_at = in.time(6),
                      .first_started = in.time(7),
                      .attained_gpu_ms = in.i64(8)};
        if (!in.ok()) return in.status();
        out.insert_or_assign(p.id.value, std::move(p));
      }
    }
    return Status();
  };
  CORRAL_RETURN_IF_ERROR(read("id", ids));
  std::vector<core::JobId> named;
  for (const core::JobId& a : arrays) {
    if (a.value > 0) named.push_back(a);
  }
  CORRAL_RETURN_IF_ERROR(read("array_job", named));
  std::vector<JobProgress> rows;
  rows.reserve(out.size());
  for (auto& [id, p] : out) rows.push_back(std::move(p));
  return rows;
}

Result<std::optional<JobRow>> SqlTx::find_job_by_name(const core::TenantId& tenant,
                                                      std::string_view name) {
  CORRAL_ASSIGN_OR_RETURN(auto rows, jobs(cat("SELECT ", kJobColumns,
                                              " FROM jobs WHERE tenant = $1 AND name = $2 "
                                              "ORDER BY id DESC LIMIT 1"),
                                          {tenant.value, std::string(name)}));
  return first_row(std::move(rows));
}

Result<std::vector<JobRow>> SqlTx::list_jobs_holding_gpus() {
  return jobs(cat("SELECT ", kJobColumns,
                  " FROM jobs WHERE id IN (SELECT DISTINCT job_id FROM allocations "
                  "WHERE active = 1) ORDER BY id"),
              {});
}

// attained_gpu_ms is the store's own bookkeeping (release_allocations adds to it), so a
// caller's stale copy never overwrites it.
Result<bool> SqlTx::update_job(const JobRow& row, core::JobPhase expected) {
  CORRAL_ASSIGN_OR_RETURN(
      auto res,
      q("UPDATE jobs SET phase = $1, attempt = $2, reason = $3, pending_kind = $4, "
        "queue_position = $5, updated_at = $6, queued_at = $7, restarts = $10, "
        "not_before = $11, preemptions = $12, stop_grace_ms = $13, planned_start_ms = $14, "
        "planned_latest_ms = $15, node_restarts = $16, oom_restarts = $17, retry_category = $18, "
        "first_started_ms = $19 "
        "WHERE id = $8 AND phase = $9",
        {std::string(core::to_string(row.phase)), std::int64_t{row.attempt}, row.reason,
         row.pending_kind, std::int64_t{row.queue_position}, ms(row.updated_at), ms(row.queued_at),
         row.id.value, std::string(core::to_string(expected)), std::int64_t{row.restarts},
         ms(row.not_before), std::int64_t{row.preemptions}, row.stop_grace_ms,
         ms(row.planned_start), ms(row.planned_latest), std::int64_t{row.node_restarts},
         std::int64_t{row.oom_restarts}, row.retry_category, ms(row.first_started)}));
  if (res.affected != 1) return false;
  const bool was = expected == core::JobPhase::kPending;
  const bool is = row.phase == core::JobPhase::kPending;
  if (was != is) CORRAL_RETURN_IF_ERROR(add_pending(row.tenant, is ? 1 : -1));
  return true;
}

Result<std::string> SqlTx::get_job_secrets(core::JobId id) {
  CORRAL_ASSIGN_OR_RETURN(
      auto res, q("SELECT secret_env_json FROM job_secrets WHERE job_id = $1", {id.value}));
  if (res.rows.empty()) return core::not_found("job " + std::to_string(id.value));
  return res.rows[0][0].value_or("");
}

Result<std::vector<std::pair<core::JobId, std::string>>> SqlTx::list_job_secrets_without(
    std::string_view prefix, core::JobId after, std::int32_t limit) {
  // substr, not LIKE: a prefix's '_' or '%' would be a wildcard.
  CORRAL_ASSIGN_OR_RETURN(
      auto res,
      q("SELECT job_id, secret_env_json FROM job_secrets WHERE job_id > $1 AND secret_env_json "
        "<> '' AND substr(secret_env_json, 1, $2) <> $3 ORDER BY job_id LIMIT $4",
        {after.value, static_cast<std::int64_t>(prefix.size()), std::string(prefix),
         std::int64_t{limit}}));
  std::vector<std::pair<core::JobId, std::string>> out;
  for (const auto& r : res.rows) {
    RowReader in(r, "job_secrets", "job_id, secret_env_json");
    out.emplace_back(core::JobId(in.i64(0)), in.str(1));
    if (!in.ok()) return in.status();
  }
  return out;
}

Status SqlTx::replace_job_secrets(core::JobId id, std::string_view text) {
  return q("UPDATE job_secrets SET secret_env_json = $1 WHERE job_id = $2",
           {std::string(text), id.value})
      .status();
}

Result<std::int64_t> SqlTx::count_pending_jobs(const core::TenantId& tenant) {
  CORRAL_ASSIGN_OR_RETURN(
      auto res, q("SELECT pending FROM tenant_pending WHERE tenant = $1", {tenant.value}));
  if (res.rows.empty()) return std::int64_t{0};
  RowReader in(res.rows[0], "tenant_pending", "pending");
  const std::int64_t pending = in.i64(0);
  if (!in.ok()) return in.status();
  return pending;
}

Status SqlTx::add_pending(const core::TenantId& tenant, std::int64_t delta) {
  return q("INSERT INTO tenant_pending (tenant, pending) VALUES ($1, $2) ON CONFLICT (tenant) "
           "DO UPDATE SET pending = tenant_pending.pending + excluded.pending",
           {tenant.value, delta})
      .status();
}

}  // namespace corral::store::detail
