// RecordRepo over SQL: job_events, run_history, and telemetry_samples.
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

constexpr std::string_view kEventColumns = "id, job_id, time, kind, message";
constexpr std::string_view kRunColumns = "tenant, name, job_id, run_ms, finished_at";

}  // namespace

Status SqlTx::append_job_event(const JobEventRow& e) {
  return q("INSERT INTO job_events (job_id, time, kind, message) VALUES ($1, $2, $3, $4)",
           {e.job.value, ms(e.time), e.kind, e.message})
      .status();
}

Result<std::vector<JobEventRow>> SqlTx::list_job_events(core::JobId job) {
  CORRAL_ASSIGN_OR_RETURN(
      auto res, q(cat("SELECT ", kEventColumns, " FROM job_events WHERE job_id = $1 ORDER BY id"),
                  {job.value}));
  std::vector<JobEventRow> out;
  out.reserve(res.rows.size());
  for (const auto& r : res.rows) {
    RowReader in(r, "job_events", kEventColumns);
    out.push_back({.id = in.i64(0),
                   .job = core::JobId(in.i64(1)),
                   .time = in.time(2),
                   .kind = in.str(3),
                   .message = in.str(4)});
    if (!in.ok()) return in.status();
  }
  return out;
}

Status SqlTx::insert_run(const RunRow& row, std::int32_t keep) {
  CORRAL_RETURN_IF_ERROR(
      q("INSERT INTO run_history (tenant, name, job_id, run_ms, finished_at) "
        "VALUES ($1, $2, $3, $4, $5)",
        {row.tenant.value, row.name, row.job.value, row.run.count(), ms(row.finished_at)})
          .status());
  return q("DELETE FROM run_history WHERE name = $1 AND tenant = $2 AND id NOT IN (SELECT id "
           "FROM run_history WHERE name = $1 AND tenant = $2 ORDER BY id DESC LIMIT $3)",
           {row.name, row.tenant.value, std::int64_t{keep}})
      .status();
}

Result<std::vector<RunRow>> SqlTx::list_runs(const std::vector<std::string>& names) {
  // In chunks, so a long queue of distinct names stays within any driver's parameter limit.
  constexpr std::size_t kChunk = 256;
  std::vector<RunRow> out;
  for (std::size_t at = 0; at < names.size(); at += kChunk) {
    std::string sql = cat("SELECT ", kRunColumns, " FROM run_history WHERE name IN (");
    std::vector<SqlValue> params;
    for (std::size_t i = at; i < std::min(names.size(), at + kChunk); ++i) {
      params.emplace_back(names[i]);
      sql += (i == at ? "$" : ", $") + std::to_string(params.size());
    }
    sql += ") ORDER BY name, tenant, id DESC";
    CORRAL_ASSIGN_OR_RETURN(auto res, q(sql, std::move(params)));
    for (const auto& r : res.rows) {
      RowReader in(r, "run_history", kRunColumns);
      out.push_back({.tenant = core::TenantId(in.str(0)),
                     .name = in.str(1),
                     .job = core::JobId(in.i64(2)),
                     .run = core::Duration(in.i64(3)),
                     .finished_at = in.time(4)});
      if (!in.ok()) return in.status();
    }
  }
  return out;
}

Status SqlTx::insert_telemetry(const TelemetrySample& s) {
  // Doubles travel as text so both drivers keep full precision the same way.
  return q("INSERT INTO telemetry_samples (node, gpu_index, time, utilization, power_watts) "
           "VALUES ($1, $2, $3, CAST($4 AS DOUBLE PRECISION), CAST($5 AS DOUBLE PRECISION))",
           {s.node.value, std::int64_t{s.gpu_index}, ms(s.time), std::to_string(s.utilization),
            std::to_string(s.power_watts)})
      .status();
}

}  // namespace corral::store::detail
