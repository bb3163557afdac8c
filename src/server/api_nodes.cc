#include <algorithm>
#include <httplib.h>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/api_routes.h"
#include "server/api_views.h"
#include "server/http_status.h"
#include "server/list_page.h"
#include "server/model_json.h"
#include "server/node_admin.h"

namespace corral::server {
namespace {

using core::Result;
using core::Status;
using nlohmann::json;

Result<json> node_view(ApiContext& api, store::Tx& tx, const store::NodeRow& row,
                       const std::vector<store::AllocationRow>& active) {
  json out = parse_or_null(row.spec_json);
  CORRAL_ASSIGN_OR_RETURN(auto inv, tx.get_inventory(row.id));
  if (inv) {
    const json observed = parse_or_null(inv->inventory_json);
    if (observed.is_object() && observed.contains("gpus")) out["gpus"] = observed["gpus"];
    out["heartbeatAtMs"] = core::to_ms(inv->heartbeat_at);
    if (observed.is_object() && observed.contains("observed")) {
      out["observed"] = observed["observed"];
    }
  }
  out["admin"] = std::string(core::to_string(row.admin));
  out["adminReason"] = row.admin_reason;
  CORRAL_ASSIGN_OR_RETURN(auto session, tx.get_agent_session(row.id));
  // The log key never leaves corrald.
  out["agent"] = session ? json{{"url", session->agent_url},
                                {"epoch", session->epoch},
                                {"lost", session->lost},
                                {"joinedAtMs", core::to_ms(session->joined_at)},
                                {"heartbeatAtMs", core::to_ms(session->heartbeat_at)},
                                {"heartbeatAgeMs", core::to_ms(api.now() - session->heartbeat_at)}}
                         : json(nullptr);
  json allocated = json::array();
  for (const auto& a : active) {
    if (a.node == row.id) {
      allocated.push_back({{"index", a.gpu_index}, {"job", a.job.value}});
    }
  }
  out["allocated"] = allocated;
  return out;
}

Result<Reply> list_nodes(ApiContext& api, const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(const PageRequest page, c.page());
  CORRAL_ASSIGN_OR_RETURN(auto rows, tx.list_nodes());
  CORRAL_ASSIGN_OR_RETURN(const auto active, tx.list_active_allocations());
  CORRAL_ASSIGN_OR_RETURN(
      auto out, name_page("nodes", std::move(rows), page,
                          [&](const store::NodeRow& r) -> Result<std::optional<json>> {
                            CORRAL_ASSIGN_OR_RETURN(auto v, node_view(api, tx, r, active));
                            return std::optional<json>(std::move(v));
                          }));
  return json_reply(out);
}

Result<Reply> get_node(ApiContext& api, const Call& c, store::Tx& tx) {
  const httplib::Request& req = c.req;
  const std::string id = req.matches[1];
  if (!valid_name(id)) return core::not_found("node not found");
  CORRAL_ASSIGN_OR_RETURN(auto row, tx.get_node(core::NodeId(id)));
  if (!row) return core::not_found("node " + id + " not found");
  CORRAL_ASSIGN_OR_RETURN(auto active, tx.list_active_allocations());
  CORRAL_ASSIGN_OR_RETURN(auto v, node_view(api, tx, *row, active));
  return json_reply(v);
}

Result<Reply> register_node(ApiContext& api, const Call& c, store::Tx& tx) {
  const httplib::Request& req = c.req;
  const Principal& p = c.who;
  CORRAL_ASSIGN_OR_RETURN(const core::Node node, node_from_json(req.body));
  if (p.role == Role::kAgent && p.node != node.id.value) {
    return permission_denied("an agent of node " + p.node + " may not report for node " +
                             node.id.value);
  }
  const core::Time now = api.now();
  // The registration's labels are desired state; its GPUs and health are observed.
  CORRAL_ASSIGN_OR_RETURN(const Registration reg, store_registration(tx, node, now));
  const auto& existing = reg.before;
  const std::string& spec = reg.spec_json;
  CORRAL_RETURN_IF_ERROR(
      tx.upsert_inventory({.node = node.id, .inventory_json = spec, .heartbeat_at = now}));
  CORRAL_RETURN_IF_ERROR(api.pipeline.audit(tx, c, existing ? "node.update" : "node.register",
                                            "node/" + node.id.value, existing ? "registered" : "",
                                            std::to_string(node.gpus.size()) + " gpus"));
  CORRAL_ASSIGN_OR_RETURN(auto row, tx.get_node(node.id));
  CORRAL_ASSIGN_OR_RETURN(auto active, tx.list_active_allocations());
  CORRAL_ASSIGN_OR_RETURN(auto v, node_view(api, tx, *row, active));
  Reply reply = json_reply(v, existing ? 200 : 201);
  reply.wake_scheduler = true;
  return reply;
}

Result<Reply> set_admin(ApiContext& api, const Call& c, store::Tx& tx) {
  const httplib::Request& req = c.req;
  const Principal& p = c.who;
  const std::string id = req.matches[1];
  const std::string verb = req.matches[2];
  if (!valid_name(id)) return core::not_found("node not found");
  CORRAL_ASSIGN_OR_RETURN(auto row, tx.get_node(core::NodeId(id)));
  if (!row) return core::not_found("node " + id + " not found");
  const core::NodeAdminState before = row->admin;
  const NodeAdminAction action = verb == "cordon"  ? NodeAdminAction::kCordon
                                 : verb == "drain" ? NodeAdminAction::kDrain
                                                   : NodeAdminAction::kUndrain;
  Effects fx;
  CORRAL_ASSIGN_OR_RETURN(*row, set_node_admin(tx, api.lifecycle(fx), *row, action, p.id));
  CORRAL_RETURN_IF_ERROR(api.pipeline.audit(tx, c, "node." + verb, "node/" + id,
                                            std::string(core::to_string(before)),
                                            std::string(core::to_string(row->admin))));
  CORRAL_ASSIGN_OR_RETURN(auto active, tx.list_active_allocations());
  CORRAL_ASSIGN_OR_RETURN(auto v, node_view(api, tx, *row, active));
  Reply reply = json_reply(v);
  reply.wake_scheduler = true;
  reply.effects = fx;
  return reply;
}

}  // namespace

std::vector<Route> node_routes(ApiContext& api) {
  return {
      read_route("GET", "/v1/nodes", kCallers, bind_api(api, list_nodes)),
      write_route("POST", "/v1/nodes", {Role::kAdmin, Role::kAgent}, bind_api(api, register_node)),
      read_route("GET", R"(/v1/nodes/([^/]+))", kCallers, bind_api(api, get_node)),
      write_route("POST", R"(/v1/nodes/([^/]+)/(cordon|drain|undrain))", kAdmins,
                  bind_api(api, set_admin)),
  };
}

}  // namespace corral::server
