// FeatureRepo over SQL: feature set versions, values, watermarks, and runs' lookups.
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

constexpr std::string_view kSetColumns = "name, version, tenant, content, created_by, created_at";
constexpr std::string_view kValueColumns = "id, entity, event_time, value_json";
constexpr std::string_view kRunFeatureColumns =
    "job_id, name, version, lookups, row_count, latest_at, first_lookup_at, last_lookup_at, "
    "watermarks";
// Rows per INSERT: 6 parameters each, far under both databases' limits.
constexpr std::size_t kRowsPerInsert = 500;

}  // namespace

Status SqlTx::insert_feature_set(const FeatureSetRow& r) {
  return q(cat("INSERT INTO feature_sets (", kSetColumns, ") VALUES ($1, $2, $3, $4, $5, $6)"),
           {r.name, r.version, r.tenant.value, r.content, r.created_by, ms(r.created_at)})
      .status();
}

Result<std::optional<FeatureSetRow>> SqlTx::get_feature_set(std::string_view name,
                                                            std::string_view version) {
  CORRAL_ASSIGN_OR_RETURN(auto rows,
                          versioned_docs("feature_sets", "name", "WHERE name = $1 AND version = $2",
                                         {std::string(name), std::string(version)}));
  return first_row(std::move(rows));
}

Result<std::vector<FeatureSetRow>> SqlTx::list_feature_sets(
    const std::optional<core::TenantId>& tenant) {
  if (!tenant) return versioned_docs("feature_sets", "name", "ORDER BY name, version", {});
  return versioned_docs("feature_sets", "name", "WHERE tenant = $1 ORDER BY name, version",
                        {tenant->value});
}

Status SqlTx::append_feature_values(std::string_view name, std::string_view version,
                                    const std::vector<core::FeatureValue>& values, core::Time at) {
  for (std::size_t begin = 0; begin < values.size(); begin += kRowsPerInsert) {
    std::string rows;
    std::vector<SqlValue> params;
    for (std::size_t i = begin; i < std::min(values.size(), begin + kRowsPerInsert); ++i) {
      const std::size_t b = params.size();
      rows += fmt::format("{}(${}, ${}, ${}, ${}, ${}, ${})", rows.empty() ? "" : ", ", b + 1,
                          b + 2, b + 3, b + 4, b + 5, b + 6);
      params.insert(params.end(), {std::string(name), std::string(version), values[i].entity,
                                   values[i].event_ms, values[i].values, ms(at)});
    }
    CORRAL_RETURN_IF_ERROR(q(cat("INSERT INTO feature_values (name, version, entity, event_time, "
                                 "value_json, written_at) VALUES ",
                                 rows),
                             std::move(params))
                               .status());
  }
  return Status();
}

Result<std::vector<core::FeatureValue>> SqlTx::feature_values(std::string_view name,
                                                              std::string_view version,
                                                              std::string_view entity,
                                                              std::int64_t from_ms,
                                                              std::int64_t to_ms) {
  CORRAL_ASSIGN_OR_RETURN(
      auto res, q(cat("SELECT ", kValueColumns,
                      " FROM feature_values WHERE name = $1 AND version = $2 AND entity = $3 AND "
                      "event_time >= $4 AND event_time <= $5"),
                  {std::string(name), std::string(version), std::string(entity), from_ms, to_ms}));
  std::vector<core::FeatureValue> out;
  for (const auto& row : res.rows) {
    RowReader in(row, "feature_values", kValueColumns);
    out.push_back(
        {.entity = in.str(1), .event_ms = in.i64(2), .seq = in.i64(0), .values = in.str(3)});
    if (!in.ok()) return in.status();
  }
  return out;
}

Status SqlTx::raise_watermarks(std::string_view name, std::string_view version,
                               const std::map<std::string, std::int64_t>& marks) {
  for (const auto& [source, mark] : marks) {
    CORRAL_RETURN_IF_ERROR(
        q("INSERT INTO feature_watermarks (name, version, source, watermark) VALUES ($1, $2, $3, "
          "$4) ON CONFLICT (name, version, source) DO UPDATE SET watermark = excluded.watermark "
          "WHERE feature_watermarks.watermark < excluded.watermark",
          {std::string(name), std::string(version), source, mark})
            .status());
  }
  return Status();
}

Result<std::map<std::string, std::int64_t>> SqlTx::watermarks(std::string_view name,
                                                              std::string_view version) {
  CORRAL_ASSIGN_OR_RETURN(auto res, q("SELECT source, watermark FROM feature_watermarks WHERE "
                                      "name = $1 AND version = $2 ORDER BY source",
                                      {std::string(name), std::string(version)}));
  std::map<std::string, std::int64_t> out;
  for (const auto& row : res.rows) {
    RowReader in(row, "feature_watermarks", "source, watermark");
    out[in.str(0)] = in.i64(1);
    if (!in.ok()) return in.status();
  }
  return out;
}

// One statement for both databases: a run's first lookup of a version inserts its row,
// every later one adds to it (CASE, not MAX or GREATEST, which only one of them has).
Status SqlTx::record_run_feature_lookup(const RunFeatureRow& u) {
  return q(cat("INSERT INTO run_features (", kRunFeatureColumns,
               ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (job_id, name, version) "
               "DO UPDATE SET lookups = run_features.lookups + excluded.lookups, row_count = "
               "run_features.row_count + excluded.row_count, latest_at = CASE WHEN "
               "excluded.latest_at > run_features.latest_at THEN excluded.latest_at ELSE "
               "run_features.latest_at END, last_lookup_at = excluded.last_lookup_at, "
               "watermarks = excluded.watermarks"),
           {u.job.value, u.name, u.version, u.lookups, u.rows, u.latest_at_ms,
            ms(u.first_lookup_at), ms(u.last_lookup_at), u.watermarks})
      .status();
}

Result<std::vector<RunFeatureRow>> SqlTx::list_run_features(core::JobId job) {
  CORRAL_ASSIGN_OR_RETURN(auto res, q(cat("SELECT ", kRunFeatureColumns,
                                          " FROM run_features WHERE job_id = $1 ORDER BY name, "
                                          "version"),
                                      {job.value}));
  std::vector<RunFeatureRow> out;
  for (const auto& row : res.rows) {
    RowReader in(row, "run_features", kRunFeatureColumns);
    out.push_back({.job = core::JobId(in.i64(0)),
                   .name = in.str(1),
                   .version = in.str(2),
                   .lookups = in.i64(3),
                   .rows = in.i64(4),
                   .latest_at_ms = in.i64(5),
                   .first_lookup_at = in.time(6),
                   .last_lookup_at = in.time(7),
                   .watermarks = in.str(8)});
    if (!in.ok()) return in.status();
  }
  return out;
}

}  // namespace corral::store::detail
