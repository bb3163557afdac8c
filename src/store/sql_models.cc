// ModelRepo over SQL: model versions, approvals, aliases and their history (drift and
// retraining: sql_drift.cc).
#include <string>
#include <utility>
#include <vector>

#include "store/internal/sql_rows.h"
#include "store/internal/sql_tx.h"

namespace corral::store::detail {
namespace {

using core::Result;
using core::Status;

constexpr std::string_view kModelVersionColumns =
    "model_id, version, tenant, content, created_by, created_at";
constexpr std::string_view kApprovalColumns = "model_id, version, name, approved_by, reason, at";
constexpr std::string_view kAliasColumns = "model_id, alias, version, state, updated_at";
constexpr std::string_view kMoveColumns =
    "id, model_id, alias, kind, from_version, to_version, record, moved_by, at";

}  // namespace

Status SqlTx::insert_model_version(const ModelVersionRow& r) {
  return q(cat("INSERT INTO model_versions (", kModelVersionColumns,
               ") VALUES ($1, $2, $3, $4, $5, $6)"),
           {r.name, r.version, r.tenant.value, r.content, r.created_by, ms(r.created_at)})
      .status();
}

Result<std::optional<ModelVersionRow>> SqlTx::get_model_version(std::string_view model,
                                                                std::string_view version) {
  CORRAL_ASSIGN_OR_RETURN(auto rows, versioned_docs("model_versions", "model_id",
                                                    "WHERE model_id = $1 AND version = $2",
                                                    {std::string(model), std::string(version)}));
  return first_row(std::move(rows));
}

Result<std::vector<ModelVersionRow>> SqlTx::list_model_versions(std::string_view model) {
  return versioned_docs("model_versions", "model_id", "WHERE model_id = $1 ORDER BY version",
                        {std::string(model)});
}

Result<std::vector<ModelSummary>> SqlTx::list_models(const std::optional<core::TenantId>& tenant,
                                                     std::string_view after, std::int32_t limit) {
  constexpr std::string_view kColumns = "model_id, MIN(tenant), COUNT(*), MAX(created_at)";
  std::vector<SqlValue> params = {std::string(after), std::int64_t{limit}};
  if (tenant) params.emplace_back(tenant->value);
  CORRAL_ASSIGN_OR_RETURN(auto res, q(cat("SELECT ", kColumns,
                                          cat(" FROM model_versions WHERE model_id > $1",
                                              tenant ? " AND tenant = $3" : "",
                                              " GROUP BY model_id ORDER BY model_id LIMIT $2")),
                                      std::move(params)));
  return read_summaries(res.rows, "model_versions", kColumns);
}

Result<bool> SqlTx::insert_model_approval(const ModelApprovalRow& r) {
  CORRAL_ASSIGN_OR_RETURN(auto res,
                          q(cat("INSERT INTO model_approvals (", kApprovalColumns,
                                ") VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING"),
                            {r.model, r.version, r.name, r.by, r.reason, ms(r.at)}));
  return res.affected == 1;
}

Result<std::vector<ModelApprovalRow>> SqlTx::list_model_approvals(std::string_view model,
                                                                  std::string_view version) {
  CORRAL_ASSIGN_OR_RETURN(auto res, q(cat("SELECT ", kApprovalColumns,
                                          " FROM model_approvals WHERE model_id = $1 AND "
                                          "version = $2 ORDER BY name"),
                                      {std::string(model), std::string(version)}));
  std::vector<ModelApprovalRow> out;
  for (const auto& row : res.rows) {
    RowReader in(row, "model_approvals", kApprovalColumns);
    out.push_back({.model = in.str(0),
                   .version = in.str(1),
                   .name = in.str(2),
                   .by = in.str(3),
                   .reason = in.str(4),
                   .at = in.time(5)});
    if (!in.ok()) return in.status();
  }
  return out;
}

Result<std::vector<ModelAliasRow>> SqlTx::model_aliases(std::string_view where_order,
                                                        std::vector<SqlValue> params) {
  CORRAL_ASSIGN_OR_RETURN(auto res,
                          q(cat("SELECT ", kAliasColumns, cat(" FROM model_aliases ", where_order)),
                            std::move(params)));
  std::vector<ModelAliasRow> out;
  for (const auto& row : res.rows) {
    RowReader in(row, "model_aliases", kAliasColumns);
    out.push_back({.model = in.str(0),
                   .alias = in.str(1),
                   .version = in.str(2),
                   .state = in.str(3),
                   .updated_at = in.time(4)});
    if (!in.ok()) return in.status();
  }
  return out;
}

Result<std::optional<ModelAliasRow>> SqlTx::get_model_alias(std::string_view model,
                                                            std::string_view alias) {
  CORRAL_ASSIGN_OR_RETURN(auto rows, model_aliases("WHERE model_id = $1 AND alias = $2",
                                                   {std::string(model), std::string(alias)}));
  return first_row(std::move(rows));
}

Result<std::vector<ModelAliasRow>> SqlTx::list_model_aliases(std::string_view model) {
  return model_aliases("WHERE model_id = $1 ORDER BY alias", {std::string(model)});
}

Result<bool> SqlTx::put_model_alias(const ModelAliasRow& r,
                                    const std::optional<std::string>& expected) {
  if (!expected) {
    CORRAL_ASSIGN_OR_RETURN(auto res, q(cat("INSERT INTO model_aliases (", kAliasColumns,
                                            ") VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING"),
                                        {r.model, r.alias, r.version, r.state, ms(r.updated_at)}));
    return res.affected == 1;
  }
  CORRAL_ASSIGN_OR_RETURN(
      auto res, q("UPDATE model_aliases SET version = $1, state = $2, updated_at = $3 WHERE "
                  "model_id = $4 AND alias = $5 AND version = $6",
                  {r.version, r.state, ms(r.updated_at), r.model, r.alias, *expected}));
  return res.affected == 1;
}

Status SqlTx::append_alias_move(const AliasMoveRow& r) {
  return q("INSERT INTO model_alias_moves (model_id, alias, kind, from_version, to_version, "
           "record, moved_by, at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
           {r.model, r.alias, r.kind, r.from_version, r.to_version, r.record, r.by, ms(r.at)})
      .status();
}

Result<std::vector<AliasMoveRow>> SqlTx::list_alias_moves(std::string_view model,
                                                          std::string_view alias) {
  CORRAL_ASSIGN_OR_RETURN(auto res, q(cat("SELECT ", kMoveColumns,
                                          " FROM model_alias_moves WHERE model_id = $1 AND "
                                          "alias = $2 ORDER BY id"),
                                      {std::string(model), std::string(alias)}));
  std::vector<AliasMoveRow> out;
  for (const auto& row : res.rows) {
    RowReader in(row, "model_alias_moves", kMoveColumns);
    out.push_back({.id = in.i64(0),
                   .model = in.str(1),
                   .alias = in.str(2),
                   .kind = in.str(3),
                   .from_version = in.str(4),
                   .to_version = in.str(5),
                   .record = in.str(6),
                   .by = in.str(7),
                   .at = in.time(8)});
    if (!in.ok()) return in.status();
  }
  return out;
}

}  // namespace corral::store::detail
