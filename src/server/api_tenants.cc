#include <algorithm>
#include <httplib.h>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/job_spec_parse.h"
#include "server/api_routes.h"
#include "server/api_views.h"
#include "server/http_status.h"
#include "server/list_page.h"
#include "server/model_json.h"

namespace corral::server {
namespace {

using core::Result;
using core::Status;
using core::StatusCode;
using nlohmann::json;

Result<Reply> list_tenants(ApiContext&, const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(const PageRequest page, c.page());
  CORRAL_ASSIGN_OR_RETURN(auto rows, tx.list_tenants());
  CORRAL_ASSIGN_OR_RETURN(auto out,
                          name_page("tenants", std::move(rows), page,
                                    [&](const store::TenantRow& r) -> Result<std::optional<json>> {
                                      if (!can_see_tenant(c.who, r.id.value))
                                        return std::optional<json>();
                                      return std::optional<json>(parse_or_null(r.config_json));
                                    }));
  return json_reply(out);
}

Result<Reply> get_tenant(ApiContext&, const Call& c, store::Tx& tx) {
  const httplib::Request& req = c.req;
  const Principal& p = c.who;
  const std::string name = req.matches[1];
  if (!valid_name(name) || !can_see_tenant(p, name)) return core::not_found("tenant not found");
  CORRAL_ASSIGN_OR_RETURN(auto cfg, load_tenant(tx, name));
  json out = json::parse(tenant_config_to_json(cfg));
  CORRAL_ASSIGN_OR_RETURN(auto pending, tx.count_pending_jobs(cfg.tenant.id));
  out["pendingJobs"] = pending;
  return json_reply(out);
}

// Every scheduling cycle builds the tenant tree and fails as a whole on a missing parent
// or a cycle, so a write that would leave one is refused here, naming the field.
Status check_tenant_tree(store::Tx& tx, const TenantConfig& cfg) {
  if (!cfg.tenant.parent) return Status();
  const std::string& name = cfg.tenant.id.value;
  CORRAL_ASSIGN_OR_RETURN(const auto rows, tx.list_tenants());
  std::map<std::string, std::string> parent_of;  // "" : a root
  for (const auto& row : rows) {
    const auto stored = tenant_config_from_json(row.id.value, row.config_json);
    if (stored.ok() && stored->tenant.parent)
      parent_of[row.id.value] = stored->tenant.parent->value;
    if (stored.ok() && !stored->tenant.parent) parent_of[row.id.value] = "";
  }
  const std::string& parent = cfg.tenant.parent->value;
  if (!parent_of.contains(parent)) {
    return core::invalid_argument("parent", "unknown tenant \"" + parent + "\"");
  }
  parent_of[name] = parent;
  std::string chain = name;
  for (std::string at = parent; !at.empty(); at = parent_of[at]) {
    chain += " -> " + at;
    if (at == name) return core::invalid_argument("parent", "would make a cycle: " + chain);
    if (chain.size() > 64 * (parent_of.size() + 1)) break;  // a cycle among the others
  }
  return Status();
}

Result<Reply> put_tenant(ApiContext& api, const Call& c, store::Tx& tx) {
  const httplib::Request& req = c.req;
  const std::string name = req.matches[1];
  CORRAL_ASSIGN_OR_RETURN(auto cfg, tenant_config_from_json(name, req.body));
  CORRAL_ASSIGN_OR_RETURN(auto before, tx.get_tenant(cfg.tenant.id));
  // A DNS label, as a job spec's `tenant` must be: a tenant named otherwise takes no job.
  if (!before && (name.size() > 63 || !core::is_dns_label(name))) {
    return core::invalid_argument(
        "name", "must be a DNS label (lowercase letters, digits and '-', at most 63), got \"" +
                    name.substr(0, 80) + "\"");
  }
  CORRAL_RETURN_IF_ERROR(check_tenant_tree(tx, cfg));
  const std::string text = tenant_config_to_json(cfg);
  CORRAL_RETURN_IF_ERROR(
      tx.put_tenant({.id = cfg.tenant.id, .config_json = text, .updated_at = api.now()}));
  CORRAL_RETURN_IF_ERROR(api.pipeline.audit(tx, c, "tenant.put", "tenant/" + name,
                                            before ? before->config_json : "", text));
  Reply reply = json_reply(json::parse(text), before ? 200 : 201);
  reply.wake_scheduler = true;
  return reply;
}

Result<Reply> list_reservations(ApiContext&, const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(const PageRequest page, c.page());
  CORRAL_ASSIGN_OR_RETURN(auto rows, tx.list_reservations());
  CORRAL_ASSIGN_OR_RETURN(
      auto out, name_page("reservations", std::move(rows), page,
                          [&](const store::ReservationRow& r) -> Result<std::optional<json>> {
                            if (!can_see_tenant(c.who, r.tenant.value))
                              return std::optional<json>();
                            return std::optional<json>(parse_or_null(r.spec_json));
                          }));
  return json_reply(out);
}

// A reservation the fleet could never honour is refused, not stored: the scheduler
// would hand it every GPU of the type and still fall short. Counted over the nodes
// registered now, as registered (every GPU, healthy or not).
Status check_reservation_fits(store::Tx& tx, const core::Reservation& r) {
  for (std::size_t i = 0; i < r.nodes.size(); ++i) {
    CORRAL_ASSIGN_OR_RETURN(auto row, tx.get_node(r.nodes[i]));
    if (!row) {
      return core::invalid_argument("nodes[" + std::to_string(i) + "]",
                                    "unknown node \"" + r.nodes[i].value + "\"");
    }
  }
  if (!r.gpu_type) return Status();
  CORRAL_ASSIGN_OR_RETURN(auto rows, tx.list_nodes());
  std::int64_t gpus = 0;
  for (const auto& row : rows) {
    auto node = node_from_json(row.spec_json);
    if (!node.ok()) continue;  // stored by this server; a row it cannot read holds none
    for (const auto& g : node->gpus) gpus += g.type == *r.gpu_type ? 1 : 0;
  }
  if (r.count > gpus) {
    return core::invalid_argument("count", "asks for " + std::to_string(r.count) + " " +
                                               r.gpu_type->value + " but the fleet has " +
                                               std::to_string(gpus));
  }
  return Status();
}

Result<Reply> create_reservation(ApiContext& api, const Call& c, store::Tx& tx) {
  const httplib::Request& req = c.req;
  CORRAL_ASSIGN_OR_RETURN(const core::Reservation r, reservation_from_json(req.body));
  CORRAL_ASSIGN_OR_RETURN(auto tenant, tx.get_tenant(r.tenant));
  if (!tenant) return core::invalid_argument("tenant", "unknown tenant \"" + r.tenant.value + "\"");
  CORRAL_RETURN_IF_ERROR(check_reservation_fits(tx, r));
  const std::string text = reservation_to_json(r);
  const Status inserted = tx.insert_reservation(
      {.id = r.id, .tenant = r.tenant, .spec_json = text, .created_at = api.now()});
  if (inserted.code() == StatusCode::kAlreadyExists) {
    return Status(StatusCode::kAlreadyExists, "reservation " + r.id.value + " exists");
  }
  CORRAL_RETURN_IF_ERROR(inserted);
  CORRAL_RETURN_IF_ERROR(
      api.pipeline.audit(tx, c, "reservation.create", "reservation/" + r.id.value, "", text));
  Reply reply = json_reply(json::parse(text), 201);
  reply.wake_scheduler = true;
  return reply;
}

Result<Reply> list_allocations(ApiContext&, const Call& c, store::Tx& tx) {
  const Principal& p = c.who;
  CORRAL_ASSIGN_OR_RETURN(const PageRequest page, c.page());
  CORRAL_ASSIGN_OR_RETURN(const std::int64_t after, id_cursor(page));
  CORRAL_ASSIGN_OR_RETURN(auto rows, tx.list_active_allocations());
  std::map<std::int64_t, std::vector<store::AllocationRow>> by_job;
  for (auto& a : rows) {
    if (p.role == Role::kAgent && a.node.value != p.node) continue;
    by_job[a.job.value].push_back(std::move(a));
  }
  std::vector<json> items;
  std::vector<std::int64_t> keys;
  for (auto& [job_id, allocs] : by_job) {
    if (job_id <= after) continue;
    if (p.role == Role::kMember) {
      CORRAL_ASSIGN_OR_RETURN(auto job, tx.get_job(core::JobId(job_id)));
      if (!job || job->tenant.value != p.tenant) continue;
    }
    if (items.size() > static_cast<std::size_t>(page.limit)) break;
    items.push_back(allocation_json(allocs));
    keys.push_back(job_id);
  }
  return json_reply(page_answer("allocations", std::move(items), page,
                                [&](std::size_t i) { return std::to_string(keys[i]); }));
}

}  // namespace

std::vector<Route> tenant_routes(ApiContext& api) {
  return {
      read_route("GET", "/v1/tenants", kUsers, bind_api(api, list_tenants)),
      read_route("GET", R"(/v1/tenants/([^/]+))", kCallers, bind_api(api, get_tenant)),
      write_route("PUT", R"(/v1/tenants/([^/]+))", kAdmins, bind_api(api, put_tenant)),
      read_route("GET", "/v1/reservations", kUsers, bind_api(api, list_reservations)),
      write_route("POST", "/v1/reservations", kAdmins, bind_api(api, create_reservation)),
      read_route("GET", "/v1/allocations", kCallers, bind_api(api, list_allocations)),
  };
}

}  // namespace corral::server
