// TenantRepo over SQL: tenants and reservations.
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
  std::vector<TenantRow> out;
  out.reserve(res.rows.size());
  for (const auto& r : res.rows) {
    RowReader in(r, "tenants", kTenantColumns);
    out.push_back(
        {.id = core::TenantId(in.str(0)), .config_json = in.str(1), .updated_at = in.time(2)});
    if (!in.ok()) return in.status();
  }
  return out;
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
  return q("DELETE FROM tenants WHERE name = $1", {id.value}).status();
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
  std::vector<ReservationRow> out;
  out.reserve(res.rows.size());
  for (const auto& r : res.rows) {
    RowReader in(r, "reservations", kReservationColumns);
    out.push_back({.id = core::ReservationId(in.str(0)),
                   .tenant = core::TenantId(in.str(1)),
                   .spec_json = in.str(2),
                   .created_at = in.time(3)});
    if (!in.ok()) return in.status();
  }
  return out;
}

}  // namespace corral::store::detail
