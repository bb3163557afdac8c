#include <algorithm>
#include <httplib.h>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/api/api_routes.h"
#include "server/api/api_views.h"
#include "server/base/http_status.h"
#include "server/base/model_json.h"
#include "server/base/stored_documents.h"
#include "server/controllers/node_admin.h"
#include "server/controllers/node_health.h"
#include "server/http/list_page.h"
#include "server/reports/rack_power.h"

namespace corral::server {
namespace {

using core::Result;
using core::Status;
using nlohmann::json;

// What a node's view shows besides its registration: read once for a whole page.
struct NodeFacts {
  std::map<std::string, store::ObservedNode> observed;     // by node
  std::map<std::string, store::AgentSessionRow> sessions;  // by node
  std::vector<store::AllocationRow> active;                // of these nodes
  // The tenant of each job in `active`: a caller sees the ids of its own tenant's jobs
  // only (issue 38, item 12); other tenants' GPUs show as held.
  std::map<std::int64_t, std::string> tenant_of_job;
};

// Reads the tenants of the jobs `facts.active` names, in one query.
core::Status read_tenants(store::JobRepo& jobs, NodeFacts& facts) {
  std::vector<core::JobId> ids;
  for (const auto& a : facts.active) ids.push_back(a.job);
  std::sort(ids.begin(), ids.end(), [](auto& x, auto& y) { return x.value < y.value; });
  ids.erase(
      std::unique(ids.begin(), ids.end(), [](auto& x, auto& y) { return x.value == y.value; }),
      ids.end());
  if (ids.empty()) return core::ok_status();
  CORRAL_ASSIGN_OR_RETURN(const auto rows, jobs.get_jobs(ids));
  for (const auto& j : rows) facts.tenant_of_job[j.id.value] = j.tenant.value;
  return core::ok_status();
}

Result<NodeFacts> facts_of_every_node(store::Tx& tx) {
  NodeFacts facts;
  CORRAL_ASSIGN_OR_RETURN(auto observed, tx.nodes().list_observed());
  for (auto& o : observed) facts.observed[o.node.value] = std::move(o);
  CORRAL_ASSIGN_OR_RETURN(auto sessions, tx.agents().list_agent_sessions());
  for (auto& s : sessions) facts.sessions[s.node.value] = std::move(s);
  CORRAL_ASSIGN_OR_RETURN(facts.active, tx.allocations().list_active_allocations());
  CORRAL_RETURN_IF_ERROR(read_tenants(tx.jobs(), facts));
  return facts;
}

Result<NodeFacts> facts_of_node(store::Tx& tx, const core::NodeId& id) {
  NodeFacts facts;
  CORRAL_ASSIGN_OR_RETURN(auto observed, tx.nodes().get_observed(id));
  if (observed) facts.observed[id.value] = std::move(*observed);
  CORRAL_ASSIGN_OR_RETURN(auto session, tx.agents().get_agent_session(id));
  if (session) facts.sessions[id.value] = std::move(*session);
  CORRAL_ASSIGN_OR_RETURN(facts.active, tx.allocations().list_active_allocations_on(id));
  CORRAL_RETURN_IF_ERROR(read_tenants(tx.jobs(), facts));
  return facts;
}

json observed_json(const store::ObservedNode& o) {
  json gpus = json::array();
  for (const auto& g : o.gpus) {
    json one = {{"index", g.index},
                {"health", std::string(core::to_string(g.condition))},
                {"problem", g.problem}};
    if (g.throttled_since) one["throttledSinceMs"] = core::to_ms(*g.throttled_since);
    gpus.push_back(std::move(one));
  }
  return {{"inventory", json::parse(core::encode_observed_inventory(o.inventory))},
          {"gpus", std::move(gpus)},
          {"readings", json::parse(core::encode_gpu_health(o.readings))}};
}

// The registration with its GPUs' health as observed, its agent and its allocations.
// A GPU that holds a job of a tenant `who` may not see shows as held, with neither the
// job's id nor its tenant: ids and tenant names are the other tenant's business.
Result<json> node_view(ApiContext& api, const Principal& who, const store::NodeRow& row,
                       const NodeFacts& facts) {
  CORRAL_ASSIGN_OR_RETURN(core::Node node, stored_node_from_json(row.spec_json));
  const auto observed = facts.observed.find(row.id.value);
  if (observed != facts.observed.end()) apply_observation(node, observed->second);
  json out = json::parse(node_to_json(node));
  if (observed != facts.observed.end()) {
    out["heartbeatAtMs"] = core::to_ms(observed->second.heartbeat_at);
    out["observed"] = observed_json(observed->second);
  }
  out["admin"] = std::string(core::to_string(row.admin));
  out["adminReason"] = row.admin_reason;
  const auto it = facts.sessions.find(row.id.value);
  // The log key never leaves corrald.
  out["agent"] = nullptr;
  if (it != facts.sessions.end()) {
    const store::AgentSessionRow& session = it->second;
    out["agent"] = {{"url", session.agent_url},
                    {"epoch", session.epoch},
                    {"lost", session.lost},
                    {"joinedAtMs", core::to_ms(session.joined_at)},
                    {"heartbeatAtMs", core::to_ms(session.heartbeat_at)},
                    {"heartbeatAgeMs", core::to_ms(api.now() - session.heartbeat_at)}};
  }
  json allocated = json::array();
  for (const auto& a : facts.active) {
    if (a.node == row.id) {
      const auto tenant = facts.tenant_of_job.find(a.job.value);
      // A job gone from the store between the two reads is nobody's to show.
      const bool visible =
          tenant != facts.tenant_of_job.end() && can_see_tenant(who, tenant->second);
      // A GPU of shares is listed once per share, each with its thousandths.
      json one = {{"index", a.gpu_index}, {"held", true}, {"shareMilli", a.share_milli}};
      if (visible) one["job"] = a.job.value;
      allocated.push_back(std::move(one));
    }
  }
  // One word for where the node stands: a lost agent outranks the admin state, and a
  // draining node with nothing left on it is drained.
  const bool lost = it != facts.sessions.end() && it->second.lost;
  std::string state = std::string(core::to_string(row.admin));
  if (lost) {
    state = "lost";
  } else if (row.admin == core::NodeAdminState::kDraining && allocated.empty()) {
    state = "drained";
  }
  out["state"] = state;
  out["allocated"] = allocated;
  return out;
}

Result<json> view_of_node(ApiContext& api, const Principal& who, store::Tx& tx,
                          const store::NodeRow& row) {
  CORRAL_ASSIGN_OR_RETURN(const NodeFacts facts, facts_of_node(tx, row.id));
  return node_view(api, who, row, facts);
}

Result<Reply> list_nodes(ApiContext& api, const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(const PageRequest page, c.page());
  CORRAL_ASSIGN_OR_RETURN(auto rows, tx.nodes().list_nodes());
  CORRAL_ASSIGN_OR_RETURN(const NodeFacts facts, facts_of_every_node(tx));
  CORRAL_ASSIGN_OR_RETURN(
      auto out, name_page("nodes", std::move(rows), page,
                          [&](const store::NodeRow& r) -> Result<std::optional<json>> {
                            CORRAL_ASSIGN_OR_RETURN(auto v, node_view(api, c.who, r, facts));
                            return std::optional<json>(std::move(v));
                          }));
  return json_reply(out);
}

Result<Reply> get_node(ApiContext& api, const Call& c, store::Tx& tx) {
  const std::string id = c.req.matches[1];
  if (!valid_name(id)) return core::not_found("node not found");
  CORRAL_ASSIGN_OR_RETURN(auto row, tx.nodes().get_node(core::NodeId(id)));
  if (!row) return core::not_found("node " + id + " not found");
  CORRAL_ASSIGN_OR_RETURN(auto v, view_of_node(api, c.who, tx, *row));
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
  CORRAL_ASSIGN_OR_RETURN(const Registration reg, store_registration(tx.nodes(), node, now));
  const auto& existing = reg.before;
  CORRAL_RETURN_IF_ERROR(api.pipeline.audit(tx, c, existing ? "node.update" : "node.register",
                                            "node/" + node.id.value, existing ? "registered" : "",
                                            std::to_string(node.gpus.size()) + " gpus"));
  CORRAL_ASSIGN_OR_RETURN(auto row, tx.nodes().get_node(node.id));
  CORRAL_ASSIGN_OR_RETURN(auto v, view_of_node(api, c.who, tx, *row));
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
  CORRAL_ASSIGN_OR_RETURN(auto row, tx.nodes().get_node(core::NodeId(id)));
  if (!row) return core::not_found("node " + id + " not found");
  const core::NodeAdminState before = row->admin;
  const NodeAdminAction action = verb == "cordon"  ? NodeAdminAction::kCordon
                                 : verb == "drain" ? NodeAdminAction::kDrain
                                                   : NodeAdminAction::kUndrain;
  CORRAL_ASSIGN_OR_RETURN(const std::string reason, action_reason(req.body));
  Effects fx;
  CORRAL_ASSIGN_OR_RETURN(*row, set_node_admin(tx, api.lifecycle(fx), *row, action,
                                               p.id + (reason.empty() ? "" : ": " + reason)));
  // The reason is its own field, as the operator gave it (not only inside the text).
  CORRAL_RETURN_IF_ERROR(api.pipeline.audit(
      tx, c, "node." + verb, "node/" + id, std::string(core::to_string(before)),
      json{{"state", std::string(core::to_string(row->admin))}, {"reason", reason}}.dump()));
  CORRAL_ASSIGN_OR_RETURN(auto v, view_of_node(api, c.who, tx, *row));
  Reply reply = json_reply(v);
  reply.wake_scheduler = true;
  reply.effects = fx;
  return reply;
}

// GET /v1/racks: each rack's power cap and the watts in use against it (rack_power.h).
// Figures only, no job or tenant: every caller that may list nodes may see them.
Result<Reply> list_racks(ApiContext& api, const Call&, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(const auto racks, read_rack_power(tx));
  return json_reply({{"atMs", core::to_ms(api.now())}, {"racks", rack_power_json(racks)}});
}

// DELETE /v1/nodes/{id}: a node leaves the fleet. Refused while it holds work (drain it
// first) or while its agent is connected (it would register the node again at once).
Result<Reply> delete_node(ApiContext& api, const Call& c, store::Tx& tx) {
  const std::string id = c.req.matches[1];
  if (!valid_name(id)) return core::not_found("node not found");
  CORRAL_ASSIGN_OR_RETURN(auto row, tx.nodes().get_node(core::NodeId(id)));
  if (!row) return core::not_found("node " + id + " not found");
  CORRAL_ASSIGN_OR_RETURN(const auto held, tx.allocations().list_active_allocations_on(row->id));
  if (!held.empty()) {
    return core::failed_precondition("node " + id + " holds work (job " +
                                     std::to_string(held.front().job.value) +
                                     "); drain it first: corral drain " + id + " --reason ...");
  }
  CORRAL_ASSIGN_OR_RETURN(const auto session, tx.agents().get_agent_session(row->id));
  if (session && !session->lost) {
    return core::failed_precondition("node " + id +
                                     "'s agent is connected and would register it again; stop "
                                     "corral-agent there first");
  }
  CORRAL_RETURN_IF_ERROR(tx.nodes().delete_node(row->id));
  CORRAL_RETURN_IF_ERROR(
      api.pipeline.audit(tx, c, "node.delete", "node/" + id, row->spec_json, ""));
  Reply reply = json_reply({{"name", id}, {"deleted", true}});
  reply.wake_scheduler = true;
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
      write_route("DELETE", R"(/v1/nodes/([^/]+))", kAdmins, bind_api(api, delete_node)),
      read_route("GET", "/v1/racks", kCallers, bind_api(api, list_racks)),
  };
}

}  // namespace corral::server
