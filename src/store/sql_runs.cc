// RunRepo over SQL: attempts as placed, metric points, artifacts and reproductions.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "store/internal/sql_rows.h"
#include "store/internal/sql_tx.h"

namespace corral::store::detail {
namespace {

using core::Result;
using core::Status;

constexpr std::string_view kAttemptColumns =
    "job_id, attempt, gpu_type, gpus, packed, restored_from, restored_step, started_at";
constexpr std::string_view kMetricColumns = "name, step, value, attempt, at";
constexpr std::string_view kRungColumns =
    "sweep_job, trial_job, rung, seq, step, value, continued, at";
constexpr std::string_view kArtifactColumns = "job_id, attempt, name, uri, digest, size_bytes, at";
// Rows per INSERT: 6 parameters each, far under both databases' limits.
constexpr std::size_t kMetricRowsPerInsert = 500;

}  // namespace

Status SqlTx::put_run_attempt(const RunAttemptRow& r) {
  std::string gpus;
  for (const std::string& g : r.gpus) {
    if (!gpus.empty()) gpus += ',';
    gpus += g;
  }
  return q(cat("INSERT INTO run_attempts (", kAttemptColumns,
               ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (job_id, attempt) DO "
               "UPDATE SET gpu_type = excluded.gpu_type, gpus = excluded.gpus, packed = "
               "excluded.packed, restored_from = excluded.restored_from, restored_step = "
               "excluded.restored_step, started_at = excluded.started_at"),
           {r.job.value, std::int64_t{r.attempt}, r.gpu_type.value, gpus, r.packed, r.restored_from,
            r.restored_step, ms(r.started_at)})
      .status();
}

Result<std::vector<RunAttemptRow>> SqlTx::list_run_attempts(core::JobId job) {
  CORRAL_ASSIGN_OR_RETURN(auto res, q(cat("SELECT ", kAttemptColumns,
                                          " FROM run_attempts WHERE job_id = $1 ORDER BY attempt"),
                                      {job.value}));
  std::vector<RunAttemptRow> out;
  for (const auto& row : res.rows) {
    RowReader in(row, "run_attempts", kAttemptColumns);
    out.push_back({.job = core::JobId(in.i64(0)),
                   .attempt = in.i32(1),
                   .gpu_type = core::GpuTypeId(in.str(2)),
                   .gpus = split_commas(in.str(3)),
                   .packed = in.str(4),
                   .restored_from = in.str(5),
                   .restored_step = in.i64(6),
                   .started_at = in.time(7)});
    if (!in.ok()) return in.status();
  }
  return out;
}

Result<std::int64_t> SqlTx::put_metrics(core::JobId job, std::int32_t attempt,
                                        const std::vector<core::MetricPoint>& points,
                                        core::Time at) {
  // One row per (name, step), the batch's last value winning: PostgreSQL refuses a
  // statement that updates one row twice.
  std::map<std::pair<std::string, std::int64_t>, double> rows;
  for (const core::MetricPoint& p : points) rows[{p.name, p.step}] = p.value;
  std::int64_t added = 0;
  auto next = rows.begin();
  while (next != rows.end()) {
    std::string values;
    std::vector<SqlValue> params;
    for (std::size_t n = 0; n < kMetricRowsPerInsert && next != rows.end(); ++n, ++next) {
      const std::size_t base = params.size();
      values += fmt::format("{}(${}, ${}, ${}, ${}, ${}, ${})", values.empty() ? "" : ", ",
                            base + 1, base + 2, base + 3, base + 4, base + 5, base + 6);
      params.insert(params.end(), {job.value, next->first.first, next->first.second,
                                   fmt::format("{}", next->second),  // shortest exact text
                                   std::int64_t{attempt}, ms(at)});
    }
    // New keys first, counted; then the value of keys already there, where it changed. A
    // retry (same value, same attempt) leaves the row, and its time, as they were.
    const std::string insert =
        cat("INSERT INTO run_metrics (job_id, name, step, value, attempt, at) VALUES ", values,
            " ON CONFLICT (job_id, name, step) ");
    CORRAL_ASSIGN_OR_RETURN(const auto fresh, q(insert + "DO NOTHING", params));
    added += fresh.affected;
    CORRAL_RETURN_IF_ERROR(q(insert +
                                 "DO UPDATE SET value = excluded.value, attempt = "
                                 "excluded.attempt, at = excluded.at WHERE run_metrics.value "
                                 "<> excluded.value OR run_metrics.attempt <> excluded.attempt",
                             std::move(params))
                               .status());
  }
  if (added > 0) {
    CORRAL_RETURN_IF_ERROR(q("INSERT INTO run_metric_totals (job_id, points) VALUES ($1, $2) ON "
                             "CONFLICT (job_id) DO UPDATE SET points = run_metric_totals.points + "
                             "excluded.points",
                             {job.value, added})
                               .status());
  }
  return added;
}

Result<std::int64_t> SqlTx::count_metric_points(core::JobId job) {
  CORRAL_ASSIGN_OR_RETURN(auto res,
                          q("SELECT points FROM run_metric_totals WHERE job_id = $1", {job.value}));
  if (res.rows.empty()) return std::int64_t{0};
  RowReader in(res.rows[0], "run_metric_totals", "points");
  const std::int64_t n = in.i64(0);
  if (!in.ok()) return in.status();
  return n;
}

Result<std::vector<MetricRow>> SqlTx::list_metrics(core::JobId job, std::string_view name,
                                                   std::string_view after_name,
                                                   std::int64_t after_step, std::int32_t limit) {
  std::vector<SqlValue> params = {job.value, std::string(after_name), after_step,
                                  std::int64_t{limit}};
  std::string where = "job_id = $1 AND (name > $2 OR (name = $2 AND step > $3))";
  if (!name.empty()) {
    where += " AND name = $5";
    params.emplace_back(std::string(name));
  }
  CORRAL_ASSIGN_OR_RETURN(
      auto res, q(cat("SELECT ", kMetricColumns,
                      cat(" FROM run_metrics WHERE ", where, " ORDER BY name, step LIMIT $4")),
                  std::move(params)));
  std::vector<MetricRow> out;
  out.reserve(res.rows.size());
  for (const auto& row : res.rows) {
    RowReader in(row, "run_metrics", kMetricColumns);
    out.push_back({.name = in.str(0),
                   .step = in.i64(1),
                   .value = in.f64(2),
                   .attempt = in.i32(3),
                   .at = in.time(4)});
    if (!in.ok()) return in.status();
  }
  return out;
}

Result<std::vector<MetricSummary>> SqlTx::summarize_metrics(core::JobId job) {
  constexpr std::string_view kColumns = "m.name, c.points, m.step, m.value";
  CORRAL_ASSIGN_OR_RETURN(
      auto res,
      q(cat("SELECT ", kColumns,
            " FROM run_metrics m JOIN (SELECT name, COUNT(*) AS points, MAX(step) AS last FROM "
            "run_metrics WHERE job_id = $1 GROUP BY name) c ON m.name = c.name AND m.step = "
            "c.last WHERE m.job_id = $1 ORDER BY m.name"),
        {job.value}));
  std::vector<MetricSummary> out;
  for (const auto& row : res.rows) {
    RowReader in(row, "run_metrics", kColumns);
    out.push_back(
        {.name = in.str(0), .points = in.i64(1), .last_step = in.i64(2), .last_value = in.f64(3)});
    if (!in.ok()) return in.status();
  }
  return out;
}

Result<std::vector<std::pair<core::JobId, MetricRow>>> SqlTx::list_last_metric(
    core::JobId array, std::string_view name) {
  constexpr std::string_view kColumns = "m.job_id, m.name, m.step, m.value, m.attempt, m.at";
  CORRAL_ASSIGN_OR_RETURN(
      auto res,
      q(cat("SELECT ", kColumns,
            " FROM run_metrics m JOIN (SELECT r.job_id, MAX(r.step) AS last FROM run_metrics r "
            "JOIN jobs j ON j.id = r.job_id WHERE j.array_job = $1 AND r.name = $2 GROUP BY "
            "r.job_id) l ON m.job_id = l.job_id AND m.step = l.last WHERE m.name = $2 ORDER BY "
            "m.job_id"),
        {array.value, std::string(name)}));
  std::vector<std::pair<core::JobId, MetricRow>> out;
  for (const auto& row : res.rows) {
    RowReader in(row, "run_metrics", kColumns);
    out.emplace_back(core::JobId(in.i64(0)), MetricRow{.name = in.str(1),
                                                       .step = in.i64(2),
                                                       .value = in.f64(3),
                                                       .attempt = in.i32(4),
                                                       .at = in.time(5)});
    if (!in.ok()) return in.status();
  }
  return out;
}

Result<bool> SqlTx::insert_sweep_rung(const SweepRungRow& r) {
  auto res = q(cat("INSERT INTO sweep_rungs (", kRungColumns,
                   ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (trial_job, rung) DO "
                   "NOTHING"),
               {r.sweep.value, r.trial.value, std::int64_t{r.rung}, std::int64_t{r.seq}, r.step,
                fmt::format("{}", r.value), std::int64_t{r.continued ? 1 : 0}, ms(r.at)});
  // (sweep, rung, seq) taken: another verdict at this rung committed first; judged again
  // on the retry, with that one in view.
  if (!res.ok() && res.status().code() == core::StatusCode::kAlreadyExists) {
    return core::raced(fmt::format("sweep {} rung {} was judged meanwhile", r.sweep.value, r.rung));
  }
  CORRAL_RETURN_IF_ERROR(res.status());
  return res->affected == 1;
}

namespace {

Result<std::vector<SweepRungRow>> rung_rows(const SqlResult& res) {
  std::vector<SweepRungRow> out;
  for (const auto& row : res.rows) {
    RowReader in(row, "sweep_rungs", kRungColumns);
    out.push_back({.sweep = core::JobId(in.i64(0)),
                   .trial = core::JobId(in.i64(1)),
                   .rung = in.i32(2),
                   .seq = in.i32(3),
                   .step = in.i64(4),
                   .value = in.f64(5),
                   .continued = in.i64(6) != 0,
                   .at = in.time(7)});
    if (!in.ok()) return in.status();
  }
  return out;
}

}  // namespace

Result<std::vector<SweepRungRow>> SqlTx::list_sweep_rungs(core::JobId sweep,
                                                          std::optional<std::int32_t> rung) {
  std::vector<SqlValue> params = {sweep.value};
  if (rung) params.emplace_back(std::int64_t{*rung});
  CORRAL_ASSIGN_OR_RETURN(auto res, q(cat("SELECT ", kRungColumns,
                                          cat(" FROM sweep_rungs WHERE sweep_job = $1",
                                              rung ? " AND rung = $2" : "", " ORDER BY rung, seq")),
                                      std::move(params)));
  return rung_rows(res);
}

Result<std::vector<SweepRungRow>> SqlTx::list_trial_rungs(core::JobId trial) {
  CORRAL_ASSIGN_OR_RETURN(auto res, q(cat("SELECT ", kRungColumns,
                                          " FROM sweep_rungs WHERE trial_job = $1 ORDER BY rung"),
                                      {trial.value}));
  return rung_rows(res);
}

Result<bool> SqlTx::insert_artifact(const ArtifactRow& r) {
  const core::ArtifactReport& a = r.artifact;
  CORRAL_ASSIGN_OR_RETURN(
      auto res,
      q(cat("INSERT INTO run_artifacts (", kArtifactColumns,
            ") VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING"),
        {r.job.value, std::int64_t{r.attempt}, a.name, a.uri, a.digest, a.bytes, ms(r.at)}));
  if (res.affected == 1) return true;
  CORRAL_ASSIGN_OR_RETURN(auto known, q("SELECT digest, size_bytes FROM run_artifacts WHERE "
                                        "job_id = $1 AND uri = $2",
                                        {r.job.value, a.uri}));
  RowReader in(known.rows.at(0), "run_artifacts", "digest, size_bytes");
  const std::string digest = in.str(0);
  const std::int64_t bytes = in.i64(1);
  if (!in.ok()) return in.status();
  if (digest != a.digest || bytes != a.bytes) {
    return Status(core::StatusCode::kAlreadyExists,
                  "artifact " + a.uri + " of run " + std::to_string(r.job.value) +
                      " is recorded with another digest or size; an artifact never changes");
  }
  return false;
}

Result<std::vector<ArtifactRow>> SqlTx::list_artifacts(core::JobId job) {
  CORRAL_ASSIGN_OR_RETURN(auto res, q(cat("SELECT ", kArtifactColumns,
                                          " FROM run_artifacts WHERE job_id = $1 ORDER BY at, uri"),
                                      {job.value}));
  std::vector<ArtifactRow> out;
  for (const auto& row : res.rows) {
    RowReader in(row, "run_artifacts", kArtifactColumns);
    out.push_back(
        {.job = core::JobId(in.i64(0)),
         .attempt = in.i32(1),
         .artifact = {.name = in.str(2), .uri = in.str(3), .digest = in.str(4), .bytes = in.i64(5)},
         .at = in.time(6)});
    if (!in.ok()) return in.status();
  }
  return out;
}

Status SqlTx::set_run_origin(core::JobId job, core::JobId of) {
  return q("INSERT INTO run_origins (job_id, reproduces) VALUES ($1, $2)", {job.value, of.value})
      .status();
}

Result<std::optional<core::JobId>> SqlTx::run_origin(core::JobId job) {
  CORRAL_ASSIGN_OR_RETURN(auto res,
                          q("SELECT reproduces FROM run_origins WHERE job_id = $1", {job.value}));
  if (res.rows.empty()) return std::optional<core::JobId>();
  RowReader in(res.rows[0], "run_origins", "reproduces");
  const core::JobId of(in.i64(0));
  if (!in.ok()) return in.status();
  return std::optional<core::JobId>(of);
}

}  // namespace corral::store::detail
