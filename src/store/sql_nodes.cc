// NodeRepo and RackCapRepo over SQL: nodes (desired admin state), node_inventory (what
// agents observed) and rack_caps.
#include <string>
#include <utility>
#include <vector>

#include "store/internal/sql_rows.h"
#include "store/internal/sql_tx.h"

namespace corral::store::detail {
namespace {

using core::Result;
using core::Status;

constexpr std::string_view kNodeColumns =
    "name, spec_json, admin, created_at, updated_at, admin_reason";
constexpr std::string_view kInventoryColumns = "node, inventory_json, heartbeat_at";
constexpr std::string_view kRackCapColumns = "rack, declared_by, power_cap_watts, updated_at";

}  // namespace

Result<std::vector<NodeRow>> SqlTx::nodes(std::string_view where, std::vector<SqlValue> params) {
  CORRAL_ASSIGN_OR_RETURN(
      auto res, q(cat("SELECT ", kNodeColumns, cat(" FROM nodes ", where, " ORDER BY name")),
                  std::move(params)));
  std::vector<NodeRow> out;
  out.reserve(res.rows.size());
  for (const auto& r : res.rows) {
    RowReader in(r, "nodes", kNodeColumns);
    out.push_back({.id = core::NodeId(in.str(0)),
                   .spec_json = in.str(1),
                   .admin = in.admin_state(2),
                   .admin_reason = in.str(5),
                   .created_at = in.time(3),
                   .updated_at = in.time(4)});
    if (!in.ok()) return in.status();
  }
  return out;
}

Status SqlTx::upsert_node(const NodeRow& n) {
  return q("INSERT INTO nodes (name, spec_json, admin, created_at, updated_at, admin_reason) "
           "VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (name) DO UPDATE SET "
           "spec_json = excluded.spec_json, admin = excluded.admin, "
           "updated_at = excluded.updated_at, admin_reason = excluded.admin_reason",
           {n.id.value, n.spec_json, std::string(core::to_string(n.admin)), ms(n.created_at),
            ms(n.updated_at), n.admin_reason})
      .status();
}

Result<std::optional<NodeRow>> SqlTx::get_node(const core::NodeId& id) {
  CORRAL_ASSIGN_OR_RETURN(auto rows, nodes("WHERE name = $1", {id.value}));
  return first_row(std::move(rows));
}

Result<std::vector<NodeRow>> SqlTx::list_nodes() { return nodes("", {}); }

Result<std::vector<InventoryRow>> SqlTx::inventory(std::string_view where,
                                                   std::vector<SqlValue> params) {
  CORRAL_ASSIGN_OR_RETURN(auto res, q(cat("SELECT ", kInventoryColumns,
                                          cat(" FROM node_inventory ", where, " ORDER BY node")),
                                      std::move(params)));
  std::vector<InventoryRow> out;
  out.reserve(res.rows.size());
  for (const auto& r : res.rows) {
    RowReader in(r, "node_inventory", kInventoryColumns);
    out.push_back(
        {.node = core::NodeId(in.str(0)), .inventory_json = in.str(1), .heartbeat_at = in.time(2)});
    if (!in.ok()) return in.status();
  }
  return out;
}

Status SqlTx::upsert_inventory(const InventoryRow& row) {
  return q("INSERT INTO node_inventory (node, inventory_json, heartbeat_at) VALUES ($1, $2, $3) "
           "ON CONFLICT (node) DO UPDATE SET inventory_json = excluded.inventory_json, "
           "heartbeat_at = excluded.heartbeat_at",
           {row.node.value, row.inventory_json, ms(row.heartbeat_at)})
      .status();
}

Result<std::optional<InventoryRow>> SqlTx::get_inventory(const core::NodeId& id) {
  CORRAL_ASSIGN_OR_RETURN(auto rows, inventory("WHERE node = $1", {id.value}));
  return first_row(std::move(rows));
}

Result<std::vector<InventoryRow>> SqlTx::list_inventory() { return inventory("", {}); }

Status SqlTx::put_rack_cap(const RackCapRow& row) {
  return q("INSERT INTO rack_caps (rack, declared_by, power_cap_watts, updated_at) VALUES ($1, "
           "$2, $3, $4) ON CONFLICT (rack, declared_by) DO UPDATE SET power_cap_watts = "
           "excluded.power_cap_watts, updated_at = excluded.updated_at",
           {row.rack, row.declared_by, row.power_cap_watts, ms(row.updated_at)})
      .status();
}

Status SqlTx::delete_rack_caps(std::string_view declared_by) {
  return q("DELETE FROM rack_caps WHERE declared_by = $1", {std::string(declared_by)}).status();
}

Result<std::vector<RackCapRow>> SqlTx::list_rack_caps() {
  CORRAL_ASSIGN_OR_RETURN(
      auto res,
      q(cat("SELECT ", kRackCapColumns, " FROM rack_caps ORDER BY rack, declared_by"), {}));
  std::vector<RackCapRow> out;
  out.reserve(res.rows.size());
  for (const auto& r : res.rows) {
    RowReader in(r, "rack_caps", kRackCapColumns);
    out.push_back({.rack = in.str(0),
                   .declared_by = in.str(1),
                   .power_cap_watts = in.i64(2),
                   .updated_at = in.time(3)});
    if (!in.ok()) return in.status();
  }
  return out;
}

}  // namespace corral::store::detail
