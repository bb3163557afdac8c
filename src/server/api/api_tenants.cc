#include <algorithm>
#include <httplib.h>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/job_spec_parse.h"
#include "server/api/api_routes.h"
#include "server/api/api_views.h"
#include "server/base/http_status.h"
#include "server/base/model_json.h"
#include "server/base/stored_documents.h"
#include "server/http/list_page.h"

namespace corral::server {
namespace {

using core::Result;
using core::Status;
using core::StatusCode;
using nlohmann::json;

Result<Reply> list_tenants(ApiContext&, const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(const PageRequest page, c.page());
  CORRAL_ASSIGN_OR_RETURN(auto rows, tx.tenants().list_tenants());
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
  CORRAL_ASSIGN_OR_RETURN(auto cfg, load_tenant(tx.tenants(), name));
  json out = json::parse(tenant_config_to_json(cfg));
  CORRAL_ASSIGN_OR_RETURN(auto pending, tx.jobs().count_pending_jobs(cfg.tenant.id));
  out["pendingJobs"] = pending;
  return json_reply(out);
}

// Every scheduling cycle builds the tenant tree and fails as a whole on a missing parent
// or a cycle, so a write that would leave one is refused here, naming the field.
Status check_tenant_tree(store::Tx& tx, const TenantConfig& cfg) {
  if (!cfg.tenant.parent) return Status();
  const std::string& name = cfg.tenant.id.value;
  CORRAL_ASSIGN_OR_RETURN(const auto rows, tx.tenants().list_tenants());
  std::map<std::string, std::string> parent_of;  // "" : a root
  for (const TenantConfig& stored : stored_tenants(rows)) {
    parent_of[stored.tenant.id.value] = stored.tenant.parent ? stored.tenant.parent->value : "";
  }
  const std::string& parent = cfg.tenant.parent->value;
  if (!parent_of.contains(parent)) {
    return core::invalid_argument("parent", "unknown tenant \"" + parent + "\"");
  }
  // Only a leaf tenant runs jobs (sched/snapshot.h): a tenant with jobs takes no child.
  CORRAL_ASSIGN_OR_RETURN(const auto jobs, tx.jobs().list_jobs({.tenant = core::TenantId(parent),
                                                                .phases = core::unfinished_phases(),
                                                                .limit = 1}));
  if (!jobs.empty()) {
    return core::invalid_argument("parent", "tenant " + parent + " has unfinished jobs (job " +
                                                std::to_string(jobs[0].id.value) +
                                                "); only a leaf tenant runs jobs");
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
  // Its row and its parent's, locked until commit, before check_tenant_tree() looks for
  // the parent's jobs: a submission to the parent locks that row too, so one of the two
  // sees the other's commit (store::TenantRepo::lock_tenants).
  std::vector<core::TenantId> locked = {cfg.tenant.id};
  if (cfg.tenant.parent) locked.push_back(*cfg.tenant.parent);
  CORRAL_RETURN_IF_ERROR(tx.tenants().lock_tenants(std::move(locked), store::TenantLock::kWrite));
  CORRAL_ASSIGN_OR_RETURN(auto before, tx.tenants().get_tenant(cfg.tenant.id));
  // A DNS label, as a job spec's `tenant` must be: a tenant named otherwise takes no job.
  if (!before && (name.size() > 63 || !core::is_dns_label(name))) {
    return core::invalid_argument(
        "name", "must be a DNS label (lowercase letters, digits and '-', at most 63), got \"" +
                    name.substr(0, 80) + "\"");
  }
  CORRAL_RETURN_IF_ERROR(check_tenant_tree(tx, cfg));
  const std::string text = tenant_config_to_json(cfg);
  CORRAL_RETURN_IF_ERROR(
      tx.tenants().put_tenant({.id = cfg.tenant.id, .config_json = text, .updated_at = api.now()}));
  CORRAL_RETURN_IF_ERROR(api.pipeline.audit(tx, c, "tenant.put", "tenant/" + name,
                                            before ? before->config_json : "", text));
  Reply reply = json_reply(json::parse(text), before ? 200 : 201);
  reply.wake_scheduler = true;
  return reply;
}

// Only an unused tenant other than default goes: no child tenant, no unfinished job, no
// reservation. Its finished jobs and ledger entries keep its name. A tenant named in
// corrald's config comes back at the next start.
Result<Reply> delete_tenant(ApiContext& api, const Call& c, store::Tx& tx) {
  const std::string name = c.req.matches[1];
  if (!valid_name(name)) return core::not_found("tenant not found");
  // Locked until commit, as in put_tenant(): a submission to it waits, or is seen.
  CORRAL_RETURN_IF_ERROR(
      tx.tenants().lock_tenants({core::TenantId(name)}, store::TenantLock::kWrite));
  CORRAL_ASSIGN_OR_RETURN(auto row, tx.tenants().get_tenant(core::TenantId(name)));
  if (!row) return core::not_found("tenant " + name + " not found");
  // Every spec without `tenant:` goes to default: without it each of them would fail.
  if (name == "default") {
    return core::failed_precondition(
        "tenant default takes every job that names no tenant; it cannot be deleted");
  }
  CORRAL_ASSIGN_OR_RETURN(const auto rows, tx.tenants().list_tenants());
  for (const TenantConfig& other : stored_tenants(rows)) {
    if (other.tenant.parent && other.tenant.parent->value == name) {
      return core::failed_precondition("tenant " + name + " is the parent of " +
                                       other.tenant.id.value + "; move or delete it first");
    }
  }
  CORRAL_ASSIGN_OR_RETURN(
      const auto unfinished,
      tx.jobs().list_jobs(
          {.tenant = core::TenantId(name), .phases = core::unfinished_phases(), .limit = 1}));
  if (!unfinished.empty()) {
    return core::failed_precondition("tenant " + name + " has unfinished jobs (job " +
                                     std::to_string(unfinished[0].id.value) +
                                     "); cancel them first");
  }
  CORRAL_ASSIGN_OR_RETURN(const auto reservations, tx.tenants().list_reservations());
  for (const auto& r : reservations) {
    if (r.tenant.value == name) {
      return core::failed_precondition("tenant " + name + " holds reservation " + r.id.value +
                                       "; delete it first");
    }
  }
  CORRAL_RETURN_IF_ERROR(tx.tenants().delete_tenant(core::TenantId(name)));
  CORRAL_RETURN_IF_ERROR(
      api.pipeline.audit(tx, c, "tenant.delete", "tenant/" + name, row->config_json, ""));
  Reply reply = json_reply({{"name", name}, {"deleted", true}});
  reply.wake_scheduler = true;
  return reply;
}

Result<Reply> list_allocations(ApiContext&, const Call& c, store::Tx& tx) {
  const Principal& p = c.who;
  CORRAL_ASSIGN_OR_RETURN(const PageRequest page, c.page());
  CORRAL_ASSIGN_OR_RETURN(const std::int64_t after, id_cursor(page));
  CORRAL_ASSIGN_OR_RETURN(auto rows, tx.allocations().list_active_allocations());
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
      CORRAL_ASSIGN_OR_RETURN(auto job, tx.jobs().get_job(core::JobId(job_id)));
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
      write_route("DELETE", R"(/v1/tenants/([^/]+))", kAdmins, bind_api(api, delete_tenant)),
      read_route("GET", "/v1/allocations", kCallers, bind_api(api, list_allocations)),
  };
}

}  // namespace corral::server
