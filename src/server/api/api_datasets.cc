// /v1/datasets (docs/datasets.md): dataset versions registered once and never changed,
// their quality status moved with a reason, and the jobs admitted on each. A member
// sees its tenant's datasets and those shared with it; anything else answers 404, the
// same as a dataset that does not exist, so no other tenant's data leaks.
#include <algorithm>
#include <httplib.h>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/dataset.h"
#include "core/job_spec_parse.h"
#include "core/json_object.h"
#include "server/api/api_routes.h"
#include "server/api/api_views.h"
#include "server/base/http_status.h"
#include "server/base/model_json.h"
#include "server/controllers/dataset_gate.h"
#include "server/http/list_page.h"

namespace corral::server {
namespace {

using core::DatasetRef;
using core::DatasetVersion;
using core::QualityStatus;
using core::Result;
using core::Status;
using nlohmann::json;

json version_json(const DatasetVersion& v) {
  json parents = json::array();
  for (const DatasetRef& p : v.parents) parents.push_back(p.text());
  json shared = json::array();
  for (const core::TenantId& t : v.shared_with) shared.push_back(t.value);
  return {{"dataset", v.ref.dataset},
          {"version", v.ref.version},
          {"ref", v.ref.text()},
          {"tenant", v.tenant.value},
          {"uri", v.uri},
          {"digest", v.digest},
          {"schemaHash", v.schema_hash},
          {"sizeBytes", v.size_bytes},
          {"parents", parents},
          {"privacy", v.shared() ? json{{"shared", shared}} : json("tenant-confidential")},
          {"createdBy", v.created_by},
          {"createdAtMs", core::to_ms(v.created_at)},
          {"status", std::string(core::to_string(v.status))},
          {"statusReason", v.status_reason},
          {"statusBy", v.status_by},
          {"statusAtMs", core::to_ms(v.status_at)}};
}

// Admins see everything; a member its tenant's versions and those shared with it.
bool can_see(const Principal& p, const DatasetVersion& v) {
  return p.role == Role::kAdmin ||
         (p.role == Role::kMember && v.visible_to(core::TenantId(p.tenant)));
}

Status unknown_version(const DatasetRef& ref) {
  return core::not_found("dataset version " + ref.text() + " not found");
}

Result<std::string> dataset_id(const Call& c) {
  const std::string id = c.path_param(1);
  if (id.size() > 63 || !core::is_dns_label(id)) {
    return core::not_found("dataset " + id.substr(0, 63) + " not found");
  }
  return id;
}

// The version the path names, if `c`'s caller may see it; NotFound otherwise.
Result<DatasetVersion> visible_dataset_version(const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(const std::string id, dataset_id(c));
  const DatasetRef ref{id, c.path_param(2)};
  if (!core::is_dataset_version(ref.version)) return unknown_version(ref);
  CORRAL_ASSIGN_OR_RETURN(auto v, tx.datasets().get_dataset_version(ref));
  if (!v || !can_see(c.who, *v)) return unknown_version(ref);
  return *v;
}

// POST /v1/datasets/{id}/versions {version, tenant?, uri, digest, ...}. A retry with
// the same content answers the version as registered (200); other content under a
// registered version is refused, naming the first field that differs.
Result<Reply> register_dataset_version(ApiContext& api, const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(const std::string id, dataset_id(c));
  CORRAL_ASSIGN_OR_RETURN(json body, core::parse_json_object(c.body()));
  const json version = body.value("version", json());
  if (!version.is_string() || !core::is_dataset_version(version.get<std::string>())) {
    return core::invalid_argument("version", "must be 1 to 63 of letters, digits, '.', '_', '-'");
  }
  body.erase("version");
  CORRAL_ASSIGN_OR_RETURN(const auto owner, tx.datasets().dataset_owner(id));
  std::string tenant = c.who.role == Role::kMember ? c.who.tenant : "";
  if (body.contains("tenant")) {
    if (!body["tenant"].is_string()) return core::invalid_argument("tenant", "must be a string");
    const std::string named = body["tenant"].get<std::string>();
    if (c.who.role == Role::kMember && named != tenant) {
      return permission_denied("a member of tenant " + tenant + " registers only its own datasets");
    }
    tenant = named;
    body.erase("tenant");
  }
  if (tenant.empty()) tenant = owner ? owner->value : "default";
  CORRAL_ASSIGN_OR_RETURN(auto tenant_row, tx.tenants().get_tenant(core::TenantId(tenant)));
  if (!tenant_row) return core::invalid_argument("tenant", "unknown tenant \"" + tenant + "\"");
  if (owner && owner->value != tenant) {
    // Dataset ids are one namespace, as bucket names are; which tenant holds one is not said.
    return Status(core::StatusCode::kAlreadyExists,
                  "dataset id " + id + " is taken by another tenant; choose another id");
  }
  const DatasetRef ref{id, version.get<std::string>()};
  CORRAL_ASSIGN_OR_RETURN(DatasetVersion v,
                          core::parse_dataset_version(ref, core::TenantId(tenant), body.dump()));
  CORRAL_ASSIGN_OR_RETURN(const auto existing, tx.datasets().get_dataset_version(ref));
  if (existing) {
    if (core::dataset_content_json(*existing) == core::dataset_content_json(v)) {
      return json_reply(version_json(*existing));
    }
    const json was = json::parse(core::dataset_content_json(*existing));
    const json now = json::parse(core::dataset_content_json(v));
    std::string field = "version";
    for (const auto& [k, value] : now.items()) {
      if (was[k] != value) {
        field = k == "sharedWith" ? "privacy" : k;
        break;
      }
    }
    return core::invalid_argument(field, "differs from registered version " + ref.text() +
                                             ": a version is immutable, register a new one");
  }
  for (std::size_t i = 0; i < v.parents.size(); ++i) {
    CORRAL_ASSIGN_OR_RETURN(const auto parent, tx.datasets().get_dataset_version(v.parents[i]));
    if (!parent || !parent->visible_to(v.tenant)) {
      return core::invalid_argument("parents[" + std::to_string(i) + "]",
                                    "unknown dataset version " + v.parents[i].text());
    }
  }
  for (std::size_t i = 0; i < v.shared_with.size(); ++i) {
    CORRAL_ASSIGN_OR_RETURN(const auto t, tx.tenants().get_tenant(v.shared_with[i]));
    if (!t) {
      return core::invalid_argument("privacy.shared[" + std::to_string(i) + "]",
                                    "unknown tenant \"" + v.shared_with[i].value + "\"");
    }
  }
  v.created_by = c.who.id;
  v.created_at = api.now();
  v.status_by = c.who.id;
  v.status_at = api.now();
  CORRAL_RETURN_IF_ERROR(tx.datasets().insert_dataset_version(v));
  CORRAL_RETURN_IF_ERROR(api.pipeline.audit(tx, c, "dataset.register", "dataset/" + ref.text(), "",
                                            core::dataset_content_json(v)));
  return json_reply(version_json(v), 201);
}

// POST .../status {status, reason}: pending -> passed | quarantined; passed ->
// quarantined; quarantined -> passed | pending with a reason. The same status again
// changes nothing (a retry). Admins and the owner tenant's members move it.
Result<Reply> move_status(ApiContext& api, const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(DatasetVersion v, visible_dataset_version(c, tx));
  if (c.who.role != Role::kAdmin && v.tenant.value != c.who.tenant) {
    return permission_denied("only the owner tenant " + v.tenant.value +
                             " or an admin moves the status of " + v.ref.text());
  }
  CORRAL_ASSIGN_OR_RETURN(const json body, core::parse_json_object(c.body()));
  for (const auto& [k, value] : body.items()) {
    if (k != "status" && k != "reason") return core::invalid_argument(k, "unknown field");
  }
  const json status = body.value("status", json());
  const auto to =
      status.is_string() ? core::quality_status_from(status.get<std::string>()) : std::nullopt;
  if (!to) return core::invalid_argument("status", "must be pending, passed or quarantined");
  const json reason_json = body.value("reason", json(""));
  if (!reason_json.is_string() || reason_json.get<std::string>().size() > 1024) {
    return core::invalid_argument("reason", "must be a string of at most 1024 bytes");
  }
  const std::string reason = reason_json.get<std::string>();
  if (*to == v.status) return json_reply(version_json(v));
  if (*to == QualityStatus::kPending && v.status == QualityStatus::kPassed) {
    return core::failed_precondition(v.ref.text() +
                                     " has passed; quarantine it to take it out of use");
  }
  if ((*to == QualityStatus::kQuarantined || v.status == QualityStatus::kQuarantined) &&
      reason.empty()) {
    return core::invalid_argument("reason",
                                  *to == QualityStatus::kQuarantined
                                      ? "is required to quarantine a version"
                                      : "is required to take a version out of quarantine");
  }
  const std::string before(core::to_string(v.status));
  v.status = *to;
  v.status_reason = reason;
  v.status_by = c.who.id;
  v.status_at = api.now();
  CORRAL_RETURN_IF_ERROR(
      tx.datasets().set_dataset_status(v.ref, v.status, reason, v.status_by, v.status_at));
  Effects fx;  // a stop asked of a running job's agents
  CORRAL_RETURN_IF_ERROR(apply_dataset_status(tx, api.lifecycle(fx), v).status());
  CORRAL_RETURN_IF_ERROR(api.pipeline.audit(
      tx, c, "dataset.status", "dataset/" + v.ref.text(), before,
      std::string(core::to_string(*to)) + (reason.empty() ? "" : ": " + reason)));
  Reply reply = json_reply(version_json(v));
  reply.wake_scheduler = true;
  reply.effects = fx;
  return reply;
}

// Content never changes: a PUT of a version is refused with what to do instead.
Result<Reply> refuse_change(ApiContext&, const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(const DatasetVersion v, visible_dataset_version(c, tx));
  return core::failed_precondition("dataset version " + v.ref.text() +
                                   " is immutable: register a new version (POST /v1/datasets/" +
                                   v.ref.dataset + "/versions); only its status moves");
}

std::optional<core::TenantId> visible_tenant(const Principal& p) {
  if (p.role == Role::kAdmin) return std::nullopt;
  return core::TenantId(p.tenant);
}

json summary_json(const store::DatasetSummary& d) {
  return {{"id", d.id},
          {"tenant", d.tenant.value},
          {"versions", d.versions},
          {"latestAtMs", core::to_ms(d.latest)}};
}

Result<Reply> list_datasets(ApiContext&, const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(const PageRequest page, c.page());
  CORRAL_ASSIGN_OR_RETURN(const std::string after, name_cursor(page));
  CORRAL_ASSIGN_OR_RETURN(
      auto rows, tx.datasets().list_datasets(visible_tenant(c.who), after, page.limit + 1));
  std::vector<json> items;
  for (const auto& d : rows) items.push_back(summary_json(d));
  return json_reply(
      page_answer("datasets", std::move(items), page, [&](std::size_t i) { return rows[i].id; }));
}

// The versions of the path's dataset the caller may see, paged by version.
Result<Reply> list_versions(ApiContext&, const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(const std::string id, dataset_id(c));
  CORRAL_ASSIGN_OR_RETURN(const PageRequest page, c.page());
  CORRAL_ASSIGN_OR_RETURN(const std::string after, name_cursor(page));
  std::vector<json> items;
  std::vector<std::string> keys;
  std::string from = after;
  // A member may see only some versions (shared ones); read on until the page is full.
  while (items.size() <= static_cast<std::size_t>(page.limit)) {
    CORRAL_ASSIGN_OR_RETURN(auto rows,
                            tx.datasets().list_dataset_versions(id, from, page.limit + 1));
    for (const auto& v : rows) {
      if (!can_see(c.who, v)) continue;
      items.push_back(version_json(v));
      keys.push_back(v.ref.version);
    }
    if (rows.size() <= static_cast<std::size_t>(page.limit)) break;
    from = rows.back().ref.version;
  }
  if (items.empty() && after.empty()) return core::not_found("dataset " + id + " not found");
  return json_reply(
      page_answer("versions", std::move(items), page, [&](std::size_t i) { return keys[i]; }));
}

Result<Reply> get_dataset(ApiContext&, const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(const std::string id, dataset_id(c));
  store::DatasetSummary d{.id = id};
  for (std::string after;;) {
    CORRAL_ASSIGN_OR_RETURN(const auto rows, tx.datasets().list_dataset_versions(id, after, 1000));
    for (const auto& v : rows) {
      if (!can_see(c.who, v)) continue;
      d.tenant = v.tenant;
      ++d.versions;
      d.latest = std::max(d.latest, v.created_at);
    }
    if (rows.size() < 1000) break;
    after = rows.back().ref.version;
  }
  if (d.versions == 0) return core::not_found("dataset " + id + " not found");
  return json_reply(summary_json(d));
}

Result<Reply> get_dataset_version(ApiContext&, const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(const DatasetVersion v, visible_dataset_version(c, tx));
  return json_reply(version_json(v));
}

// The jobs admitted on a version, those of tenants the caller may see.
Result<Reply> version_jobs(ApiContext&, const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(const DatasetVersion v, visible_dataset_version(c, tx));
  CORRAL_ASSIGN_OR_RETURN(const PageRequest page, c.page());
  CORRAL_ASSIGN_OR_RETURN(const std::int64_t after, id_cursor(page));
  std::vector<json> items;
  std::vector<std::int64_t> keys;
  core::JobId from(after);
  while (items.size() <= static_cast<std::size_t>(page.limit)) {
    CORRAL_ASSIGN_OR_RETURN(const auto ids,
                            tx.datasets().list_jobs_using(v.ref, from, page.limit + 1));
    CORRAL_ASSIGN_OR_RETURN(const auto jobs, tx.jobs().get_jobs(ids));
    for (const auto& j : jobs) {
      if (!can_see_tenant(c.who, j.tenant.value)) continue;
      items.push_back({{"id", j.id.value},
                       {"name", j.name},
                       {"tenant", j.tenant.value},
                       {"phase", std::string(core::to_string(j.phase))},
                       {"attempt", j.attempt},
                       {"createdAtMs", core::to_ms(j.created_at)}});
      keys.push_back(j.id.value);
    }
    if (ids.size() <= static_cast<std::size_t>(page.limit)) break;
    from = ids.back();
  }
  return json_reply(page_answer("jobs", std::move(items), page,
                                [&](std::size_t i) { return std::to_string(keys[i]); }));
}

}  // namespace

std::vector<Route> dataset_routes(ApiContext& api) {
  const std::string version = R"(/v1/datasets/([^/]+)/versions/([^/]+))";
  return {
      read_route("GET", "/v1/datasets", kUsers, bind_api(api, list_datasets)),
      read_route("GET", R"(/v1/datasets/([^/]+))", kUsers, bind_api(api, get_dataset)),
      read_route("GET", R"(/v1/datasets/([^/]+)/versions)", kUsers, bind_api(api, list_versions)),
      write_route("POST", R"(/v1/datasets/([^/]+)/versions)", kUsers,
                  bind_api(api, register_dataset_version)),
      read_route("GET", version, kUsers, bind_api(api, get_dataset_version)),
      read_route("GET", version + "/jobs", kUsers, bind_api(api, version_jobs)),
      write_route("POST", version + "/status", kUsers, bind_api(api, move_status)),
      read_route("PUT", version, kUsers, bind_api(api, refuse_change)),
  };
}

}  // namespace corral::server
