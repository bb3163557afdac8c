// DatasetRepo over SQL: dataset versions and the versions each job was admitted on.
#include <string>
#include <utility>
#include <vector>

#include "store/internal/sql_rows.h"
#include "store/internal/sql_tx.h"

namespace corral::store::detail {
namespace {

using core::Result;
using core::Status;

constexpr std::string_view kDatasetVersionColumns =
    "dataset_id, version, tenant, uri, digest, schema_hash, size_bytes, parents, shared_with, "
    "created_by, created_at, status, status_reason, status_by, status_at";

template <typename T, typename F>
std::string join(const std::vector<T>& items, F text) {
  std::string out;
  for (const T& item : items) {
    if (!out.empty()) out += ',';  // not `"," + text`: GCC 12's -Wrestrict misfires on it at -O2
    out += text(item);
  }
  return out;
}

core::QualityStatus status_of(const std::string& text) {
  return core::quality_status_from(text).value_or(core::QualityStatus::kPending);
}

}  // namespace

Result<std::vector<core::DatasetVersion>> SqlTx::dataset_versions(std::string_view where_order,
                                                                  std::vector<SqlValue> params) {
  CORRAL_ASSIGN_OR_RETURN(auto res, q(cat("SELECT ", kDatasetVersionColumns,
                                          cat(" FROM dataset_versions ", where_order)),
                                      std::move(params)));
  std::vector<core::DatasetVersion> out;
  out.reserve(res.rows.size());
  for (const auto& r : res.rows) {
    RowReader in(r, "dataset_versions", kDatasetVersionColumns);
    core::DatasetVersion v{.ref = {in.str(0), in.str(1)},
                           .tenant = core::TenantId(in.str(2)),
                           .uri = in.str(3),
                           .digest = in.str(4),
                           .schema_hash = in.str(5),
                           .size_bytes = in.i64(6),
                           .created_by = in.str(9),
                           .created_at = in.time(10),
                           .status = status_of(in.str(11)),
                           .status_reason = in.str(12),
                           .status_by = in.str(13),
                           .status_at = in.time(14)};
    for (const std::string& p : split_commas(in.str(7))) {
      const auto at = p.find('@');
      v.parents.push_back({p.substr(0, at), at == std::string::npos ? "" : p.substr(at + 1)});
    }
    for (const std::string& t : split_commas(in.str(8))) v.shared_with.emplace_back(t);
    if (!in.ok()) return in.status();
    out.push_back(std::move(v));
  }
  return out;
}

Status SqlTx::insert_dataset_version(const core::DatasetVersion& v) {
  return q(cat("INSERT INTO dataset_versions (", kDatasetVersionColumns,
               ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)"),
           {v.ref.dataset, v.ref.version, v.tenant.value, v.uri, v.digest, v.schema_hash,
            v.size_bytes, join(v.parents, [](const core::DatasetRef& p) { return p.text(); }),
            join(v.shared_with, [](const core::TenantId& t) { return t.value; }), v.created_by,
            ms(v.created_at), std::string(core::to_string(v.status)), v.status_reason, v.status_by,
            ms(v.status_at)})
      .status();
}

Result<std::optional<core::DatasetVersion>> SqlTx::get_dataset_version(
    const core::DatasetRef& ref) {
  CORRAL_ASSIGN_OR_RETURN(auto rows, dataset_versions("WHERE dataset_id = $1 AND version = $2",
                                                      {ref.dataset, ref.version}));
  return first_row(std::move(rows));
}

Result<std::optional<core::TenantId>> SqlTx::dataset_owner(std::string_view dataset) {
  CORRAL_ASSIGN_OR_RETURN(auto res, q("SELECT tenant FROM dataset_versions WHERE dataset_id = $1 "
                                      "LIMIT 1",
                                      {std::string(dataset)}));
  if (res.rows.empty()) return std::optional<core::TenantId>();
  RowReader in(res.rows[0], "dataset_versions", "tenant");
  core::TenantId owner(in.str(0));
  if (!in.ok()) return in.status();
  return std::optional<core::TenantId>(std::move(owner));
}

Result<std::vector<core::DatasetVersion>> SqlTx::list_dataset_versions(std::string_view dataset,
                                                                       std::string_view after,
                                                                       std::int32_t limit) {
  return dataset_versions("WHERE dataset_id = $1 AND version > $2 ORDER BY version LIMIT $3",
                          {std::string(dataset), std::string(after), std::int64_t{limit}});
}

Result<std::vector<DatasetSummary>> SqlTx::list_datasets(
    const std::optional<core::TenantId>& visible_to, std::string_view after, std::int32_t limit) {
  constexpr std::string_view kColumns = "dataset_id, MIN(tenant), COUNT(*), MAX(created_at)";
  // A tenant sees its own versions and those shared with it (names hold no comma, % or _).
  const std::string where =
      visible_to ? "WHERE dataset_id > $1 AND (tenant = $3 OR ',' || shared_with || ',' LIKE "
                   "'%,' || $3 || ',%')"
                 : "WHERE dataset_id > $1";
  std::vector<SqlValue> params = {std::string(after), std::int64_t{limit}};
  if (visible_to) params.emplace_back(visible_to->value);
  CORRAL_ASSIGN_OR_RETURN(auto res, q(cat("SELECT ", kColumns,
                                          cat(" FROM dataset_versions ", where,
                                              " GROUP BY dataset_id ORDER BY dataset_id LIMIT $2")),
                                      std::move(params)));
  return read_summaries(res.rows, "dataset_versions", kColumns);
}

Status SqlTx::set_dataset_status(const core::DatasetRef& ref, core::QualityStatus status,
                                 std::string_view reason, std::string_view by, core::Time at) {
  return q("UPDATE dataset_versions SET status = $1, status_reason = $2, status_by = $3, "
           "status_at = $4 WHERE dataset_id = $5 AND version = $6",
           {std::string(core::to_string(status)), std::string(reason), std::string(by), ms(at),
            ref.dataset, ref.version})
      .status();
}

Status SqlTx::record_job_datasets(core::JobId job, const std::vector<core::DatasetRef>& refs) {
  for (const core::DatasetRef& ref : refs) {
    CORRAL_RETURN_IF_ERROR(q("INSERT INTO job_datasets (job_id, dataset_id, version) VALUES ($1, "
                             "$2, $3) ON CONFLICT DO NOTHING",
                             {job.value, ref.dataset, ref.version})
                               .status());
  }
  return Status();
}

Result<std::vector<core::JobId>> SqlTx::list_jobs_using(const core::DatasetRef& ref,
                                                        core::JobId after, std::int32_t limit) {
  CORRAL_ASSIGN_OR_RETURN(auto res,
                          q("SELECT job_id FROM job_datasets WHERE dataset_id = $1 AND "
                            "version = $2 AND job_id > $3 ORDER BY job_id LIMIT $4",
                            {ref.dataset, ref.version, after.value, std::int64_t{limit}}));
  std::vector<core::JobId> out;
  for (const auto& r : res.rows) {
    RowReader in(r, "job_datasets", "job_id");
    out.emplace_back(in.i64(0));
    if (!in.ok()) return in.status();
  }
  return out;
}

Result<std::vector<DatasetHold>> SqlTx::list_dataset_holds() {
  constexpr std::string_view kColumns =
      "j.job_id, j.dataset_id, j.version, v.status, v.status_reason, b.tenant";
  CORRAL_ASSIGN_OR_RETURN(
      auto res,
      q(cat("SELECT ", kColumns,
            " FROM job_datasets j JOIN dataset_versions v ON v.dataset_id = j.dataset_id AND "
            "v.version = j.version JOIN jobs b ON b.id = j.job_id WHERE v.status <> 'passed' "
            "AND b.phase IN ('pending', 'requeued') ORDER BY j.job_id, j.dataset_id, j.version"),
        {}));
  std::vector<DatasetHold> out;
  for (const auto& r : res.rows) {
    RowReader in(r, "job_datasets", kColumns);
    out.push_back({.job = core::JobId(in.i64(0)),
                   .tenant = core::TenantId(in.str(5)),
                   .ref = {in.str(1), in.str(2)},
                   .status = status_of(in.str(3)),
                   .reason = in.str(4)});
    if (!in.ok()) return in.status();
  }
  return out;
}

}  // namespace corral::store::detail
