// TenantRepo over SQL: tenants, their row locks and submit buckets, and reservations.
#include <string>
#include <utility>
#include <vector>

#include "store/internal/sql_rows.h"
#include "store/internal/sql_tx.h"

namespace corral::store::detail {
namespace {

using core::Result;
using core::Status;

constexpr std::string_view kTenantColumns = "name, config_json, updated_at";
constexpr std::string_view kReservationColumns = "id, tenant, spec_json, created_at";

}  // namespace

Result<std::vector<TenantRow>> SqlTx::tenants(std::string_view where,
                                              std::vector<SqlValue> params) {
  CORRAL_ASSIGN_OR_RETURN(
      auto res, q(cat("SELECT ", kTenantColumns, cat(" FROM tenants ", where, " ORDER BY name")),
                  std::move(params)));
  return read_rows<TenantRow>(res, "tenants", kTenantColumns, [](RowReader& in) {
    return TenantRow{
        .id = core::TenantId(in.str(0)), .config_json = in.str(1), .updated_at = in.time(2)};
  });
}

Status SqlTx::put_tenant(const TenantRow& t) {
  return q("INSERT INTO tenants (name, config_json, updated_at) VALUES ($1, $2, $3) "
           "ON CONFLICT (name) DO UPDATE SET config_json = excluded.config_json, "
           "updated_at = excluded.updated_at",
           {t.id.value, t.config_json, ms(t.updated_at)})
      .status();
}

Result<std::optional<TenantRow>> SqlTx::get_tenant(const core::TenantId& id) {
  CORRAL_ASSIGN_OR_RETURN(auto rows, tenants("WHERE name = $1", {id.value}));
  return first_row(std::move(rows));
}

Result<std::vector<TenantRow>> SqlTx::list_tenants() { return tenants("", {}); }

Status SqlTx::delete_tenant(const core::TenantId& id) {
  CORRAL_RETURN_IF_ERROR(q("DELETE FROM tenant_pending WHERE tenant = $1", {id.value}).status());
  CORRAL_RETURN_IF_ERROR(q("DELETE FROM submit_buckets WHERE tenant = $1", {id.value}).status());
  return q("DELETE FROM tenants WHERE name = $1", {id.value}).status();
}

Status SqlTx::lock_tenants(std::vector<core::TenantId> tenants, TenantLock mode) {
  if (conn_.dialect() != Dialect::kPostgres || tenants.empty()) return Status();
  const char* how = mode == TenantLock::kSubmit    ? " ORDER BY name FOR KEY SHARE"
                    : mode == TenantLock::kRecount ? " ORDER BY name FOR NO KEY UPDATE"
                                                   : " ORDER BY name FOR UPDATE";
  IdChunk names = tenant_list(tenants);
  return q(cat("SELECT name FROM tenants WHERE name IN ", names.list, how), std::move(names.params))
      .status();
}

Result<SubmitBucketRow> SqlTx::lock_submit_bucket(const SubmitBucketRow& fresh) {
  // An upsert that changes nothing: it stores `fresh` for a new tenant, and otherwise
  // locks the row (a concurrent first insert waits for the other's commit, then locks).
  CORRAL_ASSIGN_OR_RETURN(
      auto res, q("INSERT INTO submit_buckets (tenant, tokens, as_of) VALUES ($1, CAST($2 AS "
                  "DOUBLE PRECISION), $3) ON CONFLICT (tenant) DO UPDATE SET tenant = "
                  "excluded.tenant RETURNING tokens, as_of",
                  {fresh.tenant.value, double_text(fresh.tokens), ms(fresh.as_of)}));
  if (res.rows.size() != 1)
    return core::internal_error("submit_buckets: the upsert returned no row");
  RowReader in(res.rows[0], "submit_buckets", "tokens, as_of");
  SubmitBucketRow row{.tenant = fresh.tenant, .tokens = in.f64(0), .as_of = in.time(1)};
  if (!in.ok()) return in.status();
  return row;
}

Status SqlTx::put_submit_bucket(const SubmitBucketRow& row) {
  return q("UPDATE submit_buckets SET tokens = CAST($2 AS DOUBLE PRECISION), as_of = $3 WHERE "
           "tenant = $1",
           {row.tenant.value, double_text(row.tokens), ms(row.as_of)})
      .status();
}

Status SqlTx::delete_reservation(const core::ReservationId& id) {
  return q("DELETE FROM reservations WHERE id = $1", {id.value}).status();
}

Status SqlTx::insert_reservation(const ReservationRow& r) {
  return q("INSERT INTO reservations (id, tenant, spec_json, created_at) VALUES ($1, $2, $3, $4)",
           {r.id.value, r.tenant.value, r.spec_json, ms(r.created_at)})
      .status();
}

Result<std::vector<ReservationRow>> SqlTx::list_reservations() {
  CORRAL_ASSIGN_OR_RETURN(
      auto res, q(cat("SELECT ", kReservationColumns, " FROM reservations ORDER BY id"), {}));
  return read_rows<ReservationRow>(res, "reservations", kReservationColumns, [](RowReader& in) {
    return ReservationRow{.id = core::ReservationId(in.str(0)),
                          .tenant = core::TenantId(in.str(1)),
                          .spec_json = in.str(2),
                          .created_at = in.time(3)};
  });
}

}  // namespace corral::store::detail
