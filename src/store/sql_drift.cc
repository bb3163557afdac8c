// ModelRepo over SQL, its drift half (docs/drift.md): references, reports with their
// samples, logged predictions and their delayed labels, retraining templates and the
// jobs they submitted.
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

constexpr std::string_view kPredictionColumns =
    "model_id, version, prediction_id, segment, value, at, label, labeled_at";
constexpr std::string_view kRetrainingColumns =
    "r.job_id, r.tenant, r.model_id, r.version, r.report_id, r.submitted_at, j.phase, j.gpus";
constexpr std::string_view kEnded = "('succeeded', 'failed', 'cancelled')";
constexpr std::size_t kIdsPerQuery = 500;

SqlValue number(double d) { return fmt::format("{}", d); }  // shortest exact text

Result<std::vector<DriftPredictionRow>> read_predictions(const std::vector<SqlRow>& rows) {
  std::vector<DriftPredictionRow> out;
  for (const auto& row : rows) {
    RowReader in(row, "drift_predictions", kPredictionColumns);
    DriftPredictionRow p{.model = in.str(0),
                         .version = in.str(1),
                         .id = in.str(2),
                         .segment = in.str(3),
                         .value = in.f64(4),
                         .at = in.time(5),
                         .labeled_at = in.optional_time(7)};
    if (p.labeled_at) p.label = in.f64(6);
    if (!in.ok()) return in.status();
    out.push_back(std::move(p));
  }
  return out;
}

Result<std::vector<RetrainingJobRow>> read_retraining(const std::vector<SqlRow>& rows) {
  std::vector<RetrainingJobRow> out;
  for (const auto& row : rows) {
    RowReader in(row, "retraining_jobs", kRetrainingColumns);
    out.push_back({.job = core::JobId(in.i64(0)),
                   .tenant = core::TenantId(in.str(1)),
                   .model = in.str(2),
                   .version = in.str(3),
                   .report_id = in.i64(4),
                   .submitted_at = in.time(5),
                   .phase = in.str(6),
                   .gpus = in.i32(7)});
    if (!in.ok()) return in.status();
  }
  return out;
}

// " AND segment = $N" when the window names a segment (its value appended to `params`).
std::string segment_clause(const DriftWindow& w, std::vector<SqlValue>& params) {
  if (w.segment.empty()) return "";
  params.emplace_back(w.segment);
  return " AND segment = $" + std::to_string(params.size());
}

}  // namespace

Status SqlTx::put_drift_reference(std::string_view model, std::string_view version,
                                  std::string_view reference, std::string_view by, core::Time at) {
  return q("INSERT INTO drift_references (model_id, version, reference, set_by, set_at) VALUES "
           "($1, $2, $3, $4, $5) ON CONFLICT (model_id, version) DO UPDATE SET reference = "
           "excluded.reference, set_by = excluded.set_by, set_at = excluded.set_at",
           {std::string(model), std::string(version), std::string(reference), std::string(by),
            ms(at)})
      .status();
}

Result<std::optional<std::string>> SqlTx::drift_reference(std::string_view model,
                                                          std::string_view version) {
  CORRAL_ASSIGN_OR_RETURN(auto res, q("SELECT reference FROM drift_references WHERE model_id = "
                                      "$1 AND version = $2",
                                      {std::string(model), std::string(version)}));
  if (res.rows.empty()) return std::optional<std::string>();
  RowReader in(res.rows[0], "drift_references", "reference");
  std::string text = in.str(0);
  if (!in.ok()) return in.status();
  return std::optional<std::string>(std::move(text));
}

Result<std::int64_t> SqlTx::append_drift_report(const DriftReportRow& r) {
  CORRAL_ASSIGN_OR_RETURN(
      auto res, q("INSERT INTO drift_reports (model_id, version, segment, drifted, report, "
                  "samples, at) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
                  {r.model, r.version, r.segment, std::int64_t{r.drifted ? 1 : 0}, r.report,
                   r.samples, ms(r.at)}));
  if (res.rows.size() != 1) return core::internal_error("drift_reports: INSERT returned no id");
  RowReader in(res.rows[0], "drift_reports", "id");
  const std::int64_t id = in.i64(0);
  if (!in.ok()) return in.status();
  return id;
}

Result<std::vector<DriftReportRow>> SqlTx::list_drift_reports(std::string_view model,
                                                              std::string_view version,
                                                              std::int32_t limit) {
  constexpr std::string_view kColumns = "id, model_id, version, segment, drifted, report, at";
  CORRAL_ASSIGN_OR_RETURN(auto res,
                          q(cat("SELECT ", kColumns,
                                " FROM drift_reports WHERE model_id = $1 AND version = "
                                "$2 ORDER BY id DESC LIMIT $3"),
                            {std::string(model), std::string(version), std::int64_t{limit}}));
  std::vector<DriftReportRow> out;
  for (const auto& row : res.rows) {
    RowReader in(row, "drift_reports", kColumns);
    out.push_back({.id = in.i64(0),
                   .model = in.str(1),
                   .version = in.str(2),
                   .segment = in.str(3),
                   .drifted = in.flag(4),
                   .report = in.str(5),
                   .at = in.time(6)});
    if (!in.ok()) return in.status();
  }
  return out;
}

Result<std::vector<std::string>> SqlTx::list_drift_samples(const DriftWindow& w) {
  std::vector<SqlValue> params = {w.model, w.version, ms(w.from), ms(w.to)};
  const std::string segment = segment_clause(w, params);
  CORRAL_ASSIGN_OR_RETURN(auto res, q(cat("SELECT samples FROM drift_reports WHERE model_id = $1 "
                                          "AND version = $2 AND at >= $3 AND at < $4 AND samples "
                                          "<> ''",
                                          segment, " ORDER BY id"),
                                      std::move(params)));
  std::vector<std::string> out;
  for (const auto& row : res.rows) {
    RowReader in(row, "drift_reports", "samples");
    out.push_back(in.str(0));
    if (!in.ok()) return in.status();
  }
  return out;
}

Result<std::vector<DriftPredictionRow>> SqlTx::get_drift_predictions(
    std::string_view model, std::string_view version, const std::vector<std::string>& ids) {
  std::vector<DriftPredictionRow> out;
  for (std::size_t begin = 0; begin < ids.size(); begin += kIdsPerQuery) {
    std::vector<SqlValue> params = {std::string(model), std::string(version)};
    std::string list;
    for (std::size_t i = begin; i < std::min(ids.size(), begin + kIdsPerQuery); ++i) {
      params.emplace_back(ids[i]);
      list += (list.empty() ? "$" : ", $") + std::to_string(params.size());
    }
    CORRAL_ASSIGN_OR_RETURN(auto res, q(cat("SELECT ", kPredictionColumns,
                                            cat(" FROM drift_predictions WHERE model_id = $1 AND "
                                                "version = $2 AND prediction_id IN (",
                                                list, ")")),
                                        std::move(params)));
    CORRAL_ASSIGN_OR_RETURN(auto rows, read_predictions(res.rows));
    for (auto& r : rows) out.push_back(std::move(r));
  }
  return out;
}

Result<std::int64_t> SqlTx::insert_drift_predictions(const std::vector<DriftPredictionRow>& rows) {
  constexpr std::size_t kRowsPerInsert = 200;  // 6 parameters a row
  std::int64_t added = 0;
  for (std::size_t begin = 0; begin < rows.size(); begin += kRowsPerInsert) {
    std::string values;
    std::vector<SqlValue> params;
    for (std::size_t i = begin; i < std::min(rows.size(), begin + kRowsPerInsert); ++i) {
      const DriftPredictionRow& r = rows[i];
      const std::size_t b = params.size();
      values += fmt::format("{}(${}, ${}, ${}, ${}, ${}, ${})", values.empty() ? "" : ", ", b + 1,
                            b + 2, b + 3, b + 4, b + 5, b + 6);
      params.insert(params.end(), {r.model, r.version, r.id, r.segment, number(r.value), ms(r.at)});
    }
    CORRAL_ASSIGN_OR_RETURN(
        const auto res,
        q(cat("INSERT INTO drift_predictions (model_id, version, prediction_id, segment, value, "
              "at) VALUES ",
              values, " ON CONFLICT DO NOTHING"),
          std::move(params)));
    added += res.affected;
  }
  return added;
}

Status SqlTx::label_drift_prediction(std::string_view model, std::string_view version,
                                     std::string_view id, double label, core::Time at) {
  return q("UPDATE drift_predictions SET label = $1, labeled_at = $2 WHERE model_id = $3 AND "
           "version = $4 AND prediction_id = $5 AND labeled_at IS NULL",
           {number(label), ms(at), std::string(model), std::string(version), std::string(id)})
      .status();
}

Result<std::vector<DriftPredictionRow>> SqlTx::list_drift_predictions(const DriftWindow& w) {
  std::vector<SqlValue> params = {w.model, w.version, ms(w.from), ms(w.to)};
  const std::string segment = segment_clause(w, params);
  CORRAL_ASSIGN_OR_RETURN(
      auto res,
      q(cat("SELECT ", kPredictionColumns,
            cat(" FROM drift_predictions WHERE model_id = $1 AND version = $2 AND at >= $3 AND "
                "at < $4",
                segment,
                cat(w.labeled_only ? " AND labeled_at IS NOT NULL" : "",
                    " ORDER BY at, prediction_id"))),
        std::move(params)));
  return read_predictions(res.rows);
}

Status SqlTx::put_retraining_template(const RetrainingTemplateRow& r) {
  return q("INSERT INTO model_retraining (model_id, tenant, template, set_by, set_at) VALUES "
           "($1, $2, $3, $4, $5) ON CONFLICT (model_id) DO UPDATE SET tenant = excluded.tenant, "
           "template = excluded.template, set_by = excluded.set_by, set_at = excluded.set_at",
           {r.model, r.tenant.value, r.spec, r.by, ms(r.at)})
      .status();
}

Result<std::optional<RetrainingTemplateRow>> SqlTx::get_retraining_template(
    std::string_view model) {
  constexpr std::string_view kColumns = "model_id, tenant, template, set_by, set_at";
  CORRAL_ASSIGN_OR_RETURN(auto res,
                          q(cat("SELECT ", kColumns, " FROM model_retraining WHERE model_id = $1"),
                            {std::string(model)}));
  if (res.rows.empty()) return std::optional<RetrainingTemplateRow>();
  RowReader in(res.rows[0], "model_retraining", kColumns);
  RetrainingTemplateRow row{.model = in.str(0),
                            .tenant = core::TenantId(in.str(1)),
                            .spec = in.str(2),
                            .by = in.str(3),
                            .at = in.time(4)};
  if (!in.ok()) return in.status();
  return std::optional<RetrainingTemplateRow>(std::move(row));
}

Result<bool> SqlTx::delete_retraining_template(std::string_view model) {
  CORRAL_ASSIGN_OR_RETURN(
      auto res, q("DELETE FROM model_retraining WHERE model_id = $1", {std::string(model)}));
  return res.affected > 0;
}

Status SqlTx::lock_retraining_template(std::string_view model) {
  return q("UPDATE model_retraining SET set_at = set_at WHERE model_id = $1", {std::string(model)})
      .status();
}

Status SqlTx::insert_retraining_job(const RetrainingJobRow& r) {
  return q("INSERT INTO retraining_jobs (job_id, tenant, model_id, version, report_id, "
           "submitted_at) VALUES ($1, $2, $3, $4, $5, $6)",
           {r.job.value, r.tenant.value, r.model, r.version, r.report_id, ms(r.submitted_at)})
      .status();
}

Result<std::vector<RetrainingJobRow>> SqlTx::list_retraining_jobs(std::string_view model,
                                                                  std::int32_t limit) {
  std::vector<SqlValue> params = {std::int64_t{limit}};
  if (!model.empty()) params.emplace_back(std::string(model));
  CORRAL_ASSIGN_OR_RETURN(
      auto res,
      q(cat("SELECT ", kRetrainingColumns,
            cat(" FROM retraining_jobs r JOIN jobs j ON j.id = r.job_id",
                model.empty() ? "" : " WHERE r.model_id = $2", " ORDER BY r.job_id DESC LIMIT $1")),
        std::move(params)));
  return read_retraining(res.rows);
}

Result<std::vector<RetrainingJobRow>> SqlTx::list_open_retraining_jobs() {
  CORRAL_ASSIGN_OR_RETURN(
      auto res, q(cat("SELECT ", kRetrainingColumns,
                      cat(" FROM retraining_jobs r JOIN jobs j ON j.id = r.job_id WHERE j.phase "
                          "NOT IN ",
                          kEnded, " ORDER BY r.job_id")),
                  {}));
  return read_retraining(res.rows);
}

Result<std::vector<AllocationRow>> SqlTx::list_retraining_allocations(const core::TenantId& tenant,
                                                                      core::Time since) {
  return allocs(
      "WHERE job_id IN (SELECT job_id FROM retraining_jobs WHERE tenant = $1) AND "
      "(released_at IS NULL OR released_at >= $2) ORDER BY id",
      {tenant.value, ms(since)});
}

}  // namespace corral::store::detail
