// NodeRepo and RackCapRepo over SQL: nodes (desired admin state), node_observations and
// gpu_conditions (what agents observed) and rack_caps.
#include <functional>
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

constexpr std::string_view kNodeColumns =
    "name, spec_json, admin, created_at, updated_at, admin_reason";
constexpr std::string_view kObservedColumns = "node, inventory_json, heartbeat_at, readings_json";
constexpr std::string_view kConditionColumns =
    "node, gpu_index, health, problem, throttled_since, power_limit_w";
constexpr std::string_view kRackCapColumns = "rack, declared_by, power_cap_watts, updated_at";

}  // namespace

Result<std::vector<NodeRow>> SqlTx::nodes(std::string_view where, std::vector<SqlValue> params) {
  CORRAL_ASSIGN_OR_RETURN(
      auto res, q(cat("SELECT ", kNodeColumns, cat(" FROM nodes ", where, " ORDER BY name")),
                  std::move(params)));
  return read_rows<NodeRow>(res, "nodes", kNodeColumns, [](RowReader& in) {
    return NodeRow{.id = core::NodeId(in.str(0)),
                   .spec_json = in.str(1),
                   .admin = in.admin_state(2),
                   .admin_reason = in.str(5),
                   .created_at = in.time(3),
                   .updated_at = in.time(4)};
  });
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

Status SqlTx::delete_node(const core::NodeId& id) {
  CORRAL_RETURN_IF_ERROR(q("DELETE FROM gpu_conditions WHERE node = $1", {id.value}).status());
  CORRAL_RETURN_IF_ERROR(q("DELETE FROM node_observations WHERE node = $1", {id.value}).status());
  return q("DELETE FROM nodes WHERE name = $1", {id.value}).status();
}

Result<std::map<std::string, std::vector<GpuObservation>, std::less<>>> SqlTx::gpu_conditions(
    std::string_view where, std::vector<SqlValue> params) {
  CORRAL_ASSIGN_OR_RETURN(auto gpus,
                          q(cat("SELECT ", kConditionColumns,
                                cat(" FROM gpu_conditions ", where, " ORDER BY node, gpu_index")),
                            std::move(params)));
  std::map<std::string, std::vector<GpuObservation>, std::less<>> by_node;
  for (const auto& r : gpus.rows) {
    RowReader in(r, "gpu_conditions", kConditionColumns);
    const std::int64_t throttled_since = in.i64(4);  // 0: not throttled
    by_node[in.str(0)].push_back(
        {.index = in.i32(1),
         .condition = in.gpu_condition(2),
         .problem = in.str(3),
         .throttled_since = throttled_since != 0
                                ? std::optional(core::time_from_ms(throttled_since))
                                : std::nullopt,
         .power_limit_w = in.i32(5)});
    if (!in.ok()) return in.status();
  }
  return by_node;
}

Result<std::vector<ObservedNode>> SqlTx::observed(std::string_view where,
                                                  std::vector<SqlValue> params,
                                                  bool with_readings) {
  // The readings are the last column: left out, they are neither read nor decoded.
  const std::string_view columns =
      with_readings ? kObservedColumns
                    : kObservedColumns.substr(0, kObservedColumns.rfind(", readings_json"));
  CORRAL_ASSIGN_OR_RETURN(
      auto res,
      q(cat("SELECT ", columns, cat(" FROM node_observations ", where, " ORDER BY node")), params));
  CORRAL_ASSIGN_OR_RETURN(auto by_node, gpu_conditions(where, std::move(params)));
  std::vector<ObservedNode> out;
  out.reserve(res.rows.size());
  for (const auto& r : res.rows) {
    RowReader in(r, "node_observations", columns);
    out.push_back({.node = core::NodeId(in.str(0)),
                   .inventory = in.observed_inventory(1),
                   .heartbeat_at = in.time(2)});
    if (with_readings) out.back().readings = in.gpu_readings(3);
    if (!in.ok()) return in.status();
    const auto judged = by_node.find(out.back().node.value);
    if (judged != by_node.end()) out.back().gpus = std::move(judged->second);
  }
  return out;
}

Status SqlTx::upsert_observed(const ObservedNode& row) {
  CORRAL_RETURN_IF_ERROR(
      q("INSERT INTO node_observations (node, inventory_json, readings_json, heartbeat_at) "
        "VALUES ($1, $2, $3, $4) ON CONFLICT (node) DO UPDATE SET "
        "inventory_json = excluded.inventory_json, readings_json = excluded.readings_json, "
        "heartbeat_at = excluded.heartbeat_at",
        {row.node.value, core::encode_observed_inventory(row.inventory),
         core::encode_gpu_health(row.readings), ms(row.heartbeat_at)})
          .status());
  return put_gpu_conditions(row.node, row.gpus);
}

Status SqlTx::put_gpu_conditions(const core::NodeId& id, const std::vector<GpuObservation>& gpus) {
  CORRAL_RETURN_IF_ERROR(q("DELETE FROM gpu_conditions WHERE node = $1", {id.value}).status());
  for (const GpuObservation& g : gpus) {
    CORRAL_RETURN_IF_ERROR(
        q("INSERT INTO gpu_conditions (node, gpu_index, health, problem, throttled_since, "
          "power_limit_w) VALUES ($1, $2, $3, $4, $5, $6)",
          {id.value, std::int64_t{g.index}, std::string(core::to_string(g.condition)), g.problem,
           g.throttled_since ? ms(*g.throttled_since) : std::int64_t{0},
           std::int64_t{g.power_limit_w}})
            .status());
  }
  return Status();
}

Result<bool> SqlTx::update_observed(const core::NodeId& id,
                                    const std::optional<std::vector<GpuObservation>>& gpus,
                                    const std::vector<core::GpuHealth>& readings,
                                    core::Time heartbeat_at) {
  CORRAL_ASSIGN_OR_RETURN(auto res,
                          q("UPDATE node_observations SET readings_json = $2, "
                            "heartbeat_at = $3 WHERE node = $1 RETURNING node",
                            {id.value, core::encode_gpu_health(readings), ms(heartbeat_at)}));
  if (res.rows.empty()) return false;
  if (gpus) CORRAL_RETURN_IF_ERROR(put_gpu_conditions(id, *gpus));
  return true;
}

Result<std::vector<GpuObservation>> SqlTx::list_gpu_conditions(const core::NodeId& id) {
  CORRAL_ASSIGN_OR_RETURN(auto by_node, gpu_conditions("WHERE node = $1", {id.value}));
  const auto it = by_node.find(id.value);
  return it == by_node.end() ? std::vector<GpuObservation>{} : std::move(it->second);
}

Result<std::optional<ObservedNode>> SqlTx::get_observed(const core::NodeId& id) {
  CORRAL_ASSIGN_OR_RETURN(auto rows, observed("WHERE node = $1", {id.value}));
  return first_row(std::move(rows));
}

Result<std::vector<ObservedNode>> SqlTx::list_observed() { return observed("", {}); }

Result<std::vector<ObservedNode>> SqlTx::list_observed_without_readings() {
  return observed("", {}, false);
}

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

Result<std::map<std::string, std::int64_t>> SqlTx::lock_rack_holdings(
    const std::vector<std::string>& racks, const std::vector<core::NodeId>& nodes) {
  std::map<std::string, std::int64_t> out;
  if (!racks.empty() && conn_.dialect() == Dialect::kPostgres) {
    IdChunk list = name_list(racks);
    CORRAL_RETURN_IF_ERROR(q(cat("SELECT rack FROM rack_caps WHERE rack IN ", list.list,
                                 " ORDER BY rack, declared_by FOR UPDATE"),
                             std::move(list.params))
                               .status());
  }
  if (nodes.empty()) return out;
  std::vector<std::string> names;
  for (const auto& n : nodes) names.push_back(n.value);
  IdChunk list = name_list(std::move(names));
  CORRAL_ASSIGN_OR_RETURN(auto res, q(cat("SELECT node, COUNT(DISTINCT gpu_index) FROM allocations "
                                          "WHERE active = 1 AND node IN ",
                                          list.list, " GROUP BY node"),
                                      std::move(list.params)));
  for (const auto& r : res.rows) {
    RowReader in(r, "allocations", "node, count");
    std::string node = in.str(0);
    const std::int64_t n = in.i64(1);
    if (!in.ok()) return in.status();
    out[std::move(node)] = n;
  }
  return out;
}

Result<std::vector<RackCapRow>> SqlTx::list_rack_caps() {
  CORRAL_ASSIGN_OR_RETURN(
      auto res,
      q(cat("SELECT ", kRackCapColumns, " FROM rack_caps ORDER BY rack, declared_by"), {}));
  return read_rows<RackCapRow>(res, "rack_caps", kRackCapColumns, [](RowReader& in) {
    return RackCapRow{.rack = in.str(0),
                      .declared_by = in.str(1),
                      .power_cap_watts = in.i64(2),
                      .updated_at = in.time(3)};
  });
}

}  // namespace corral::store::detail
