// /v1/models (docs/models.md): the model registry. A model version is registered from an
// artifact its run reported (the digest must be that artifact's), with its input and
// output schemas and the gates a promotion must pass; aliases (production, canary, any
// name) point at versions, with a canary share for the serving side, and every move is
// kept with who, when, from, to, why and the gates' evaluation. Rollback moves an alias
// back to where its last move took it from, once: a retry changes nothing.
//
// A model belongs to its runs' tenant and is visible exactly where they are: another
// tenant's model answers 404, as one that does not exist.
#include <algorithm>
#include <cmath>
#include <httplib.h>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/agent_protocol.h"
#include "core/dataset.h"
#include "core/job_spec_parse.h"
#include "core/json_object.h"
#include "server/api_routes.h"
#include "server/api_views.h"
#include "server/http_status.h"
#include "server/list_page.h"
#include "server/model_json.h"
#include "server/model_registry.h"

namespace corral::server {
namespace {

using core::Result;
using core::Status;
using nlohmann::json;

// The alias every promotion to is gated, whatever its state says.
constexpr const char* kProduction = "production";

Result<std::string> model_id(const Call& c) {
  const std::string id = c.path_param(1);
  if (id.size() > 63 || !core::is_dns_label(id)) {
    return core::not_found("model " + id.substr(0, 63) + " not found");
  }
  return id;
}

// {field: type}: at most 256 fields, names as metric names, types 1 to 64 plain bytes.
Result<json> read_schema(const json& body, const char* key) {
  if (!body.contains(key) || body[key].is_null()) return json::object();
  const json& s = body[key];
  if (!s.is_object()) return core::invalid_argument(key, "must be an object of field: type");
  if (s.size() > 256) return core::invalid_argument(key, "must have at most 256 fields");
  for (const auto& [name, type] : s.items()) {
    const std::string path = std::string(key) + "." + name;
    if (!core::is_metric_name(name))
      return core::invalid_argument(path,
                                    "must be a field name of letters, digits, '_', '.', '/', '-'");
    if (!type.is_string() || type.get<std::string>().empty() ||
        type.get<std::string>().size() > 64) {
      return core::invalid_argument(path, "must be a type name of 1 to 64 characters");
    }
  }
  return s;
}

// The artifact of `run` at `uri`, reported or a checkpoint: its digest, or nullopt.
Result<std::optional<std::string>> run_artifact_digest(store::Tx& tx, core::JobId run,
                                                       const std::string& uri) {
  CORRAL_ASSIGN_OR_RETURN(const auto artifacts, tx.list_artifacts(run));
  for (const auto& a : artifacts) {
    if (a.artifact.uri == uri) return std::optional<std::string>(a.artifact.digest);
  }
  CORRAL_ASSIGN_OR_RETURN(const auto checkpoints, tx.list_checkpoints(run));
  for (const auto& c : checkpoints) {
    if (c.uri == uri) return std::optional<std::string>(c.checksum);
  }
  return std::optional<std::string>();
}

json version_json(const store::ModelVersionRow& v,
                  const std::vector<store::ModelApprovalRow>& approvals) {
  json out = json::parse(v.content, nullptr, false);
  if (!out.is_object()) out = json::object();
  out["model"] = v.name;
  out["version"] = v.version;
  out["tenant"] = v.tenant.value;
  out["createdBy"] = v.created_by;
  out["createdAtMs"] = core::to_ms(v.created_at);
  out["approved"] = json::array();
  for (const auto& a : approvals) {
    out["approved"].push_back(
        {{"name", a.name}, {"by", a.by}, {"reason", a.reason}, {"atMs", core::to_ms(a.at)}});
  }
  return out;
}

// POST /v1/models/{id}/versions
Result<Reply> register_model_version(ApiContext& api, const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(const std::string id, model_id(c));
  CORRAL_ASSIGN_OR_RETURN(const json body, core::parse_json_object(c.body()));
  for (const auto& [k, v] : body.items()) {
    static const std::vector<std::string> kKeys = {
        "version", "run", "artifactUri", "digest", "inputSchema", "outputSchema", "gates"};
    if (std::find(kKeys.begin(), kKeys.end(), k) == kKeys.end())
      return core::invalid_argument(k, "unknown field");
  }
  const json version = body.value("version", json());
  if (!version.is_string() || !core::is_dataset_version(version.get<std::string>())) {
    return core::invalid_argument("version", "must be 1 to 63 of letters, digits, '.', '_', '-'");
  }
  const json run_id = body.value("run", json());
  if (!run_id.is_number_integer() || run_id.get<std::int64_t>() < 1) {
    return core::invalid_argument("run", "must be the id of the run that produced it");
  }
  auto run = visible_job(tx, c.who, std::to_string(run_id.get<std::int64_t>()));
  if (!run.ok())
    return core::invalid_argument("run",
                                  "unknown run " + std::to_string(run_id.get<std::int64_t>()));
  const json uri = body.value("artifactUri", json());
  if (!uri.is_string() || uri.get<std::string>().empty() || uri.get<std::string>().size() > 4096) {
    return core::invalid_argument("artifactUri", "must be the URI of an artifact the run reported");
  }
  const json digest = body.value("digest", json());
  if (!digest.is_string())
    return core::invalid_argument("digest", "must be the artifact's sha256:<64 hex>");
  CORRAL_ASSIGN_OR_RETURN(const auto reported,
                          run_artifact_digest(tx, run->id, uri.get<std::string>()));
  if (!reported) {
    return core::invalid_argument("artifactUri", "run " + std::to_string(run->id.value) +
                                                     " reported no artifact at " +
                                                     uri.get<std::string>());
  }
  if (*reported != digest.get<std::string>()) {
    return core::invalid_argument("digest", "does not match the artifact run " +
                                                std::to_string(run->id.value) +
                                                " reported at that URI (" + *reported + ")");
  }
  CORRAL_ASSIGN_OR_RETURN(const json input, read_schema(body, "inputSchema"));
  CORRAL_ASSIGN_OR_RETURN(const json output, read_schema(body, "outputSchema"));
  CORRAL_ASSIGN_OR_RETURN(const json gates, read_model_gates(body));
  const json content = {{"run", run->id.value}, {"artifactUri", uri},     {"digest", digest},
                        {"inputSchema", input}, {"outputSchema", output}, {"gates", gates}};
  CORRAL_ASSIGN_OR_RETURN(const auto versions, tx.list_model_versions(id));
  if (!versions.empty() && versions.front().tenant != run->tenant) {
    return Status(core::StatusCode::kAlreadyExists,
                  "model id " + id + " is taken by another tenant; choose another id");
  }
  for (const auto& v : versions) {
    if (v.version != version.get<std::string>()) continue;
    if (v.content == content.dump()) {
      CORRAL_ASSIGN_OR_RETURN(const auto approvals, tx.list_model_approvals(id, v.version));
      return json_reply(version_json(v, approvals));
    }
    return core::invalid_argument("version",
                                  "model version " + id + "@" + v.version +
                                      " is registered with other content: a version is immutable, "
                                      "register a new one");
  }
  const store::ModelVersionRow row{.name = id,
                                   .version = version.get<std::string>(),
                                   .tenant = run->tenant,
                                   .content = content.dump(),
                                   .created_by = c.who.id,
                                   .created_at = api.now()};
  CORRAL_RETURN_IF_ERROR(tx.insert_model_version(row));
  CORRAL_RETURN_IF_ERROR(api.pipeline.audit(tx, c, "model.register",
                                            "model/" + id + "@" + row.version, "", row.content));
  return json_reply(version_json(row, {}), 201);
}

Result<Reply> get_model_version(ApiContext&, const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(const std::string id, model_id(c));
  CORRAL_ASSIGN_OR_RETURN(const auto v, visible_model_version(tx, c.who, id, c.path_param(2)));
  CORRAL_ASSIGN_OR_RETURN(const auto approvals, tx.list_model_approvals(id, v.version));
  return json_reply(version_json(v, approvals));
}

// POST .../versions/{v}/approvals {name, reason}: one of the version's declared approvals.
Result<Reply> approve(ApiContext& api, const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(const std::string id, model_id(c));
  CORRAL_ASSIGN_OR_RETURN(const auto v, visible_model_version(tx, c.who, id, c.path_param(2)));
  CORRAL_ASSIGN_OR_RETURN(const json body, core::parse_json_object(c.body()));
  for (const auto& [k, value] : body.items()) {
    if (k != "name" && k != "reason") return core::invalid_argument(k, "unknown field");
  }
  const json name = body.value("name", json());
  const auto gates = approval_gates(json::parse(v.content).value("gates", json::object()));
  const auto gate = std::find_if(gates.begin(), gates.end(),
                                 [&](const ApprovalGate& g) { return name == g.name; });
  if (gate == gates.end()) {
    json names = json::array();
    for (const ApprovalGate& g : gates) names.push_back(g.name);
    return core::invalid_argument("name", "must be one of the approvals " + id + "@" + v.version +
                                              " asks for: " + names.dump());
  }
  const json reason = body.value("reason", json(""));
  if (!reason.is_string() || reason.get<std::string>().size() > 1024) {
    return core::invalid_argument("reason", "must be a string of at most 1024 bytes");
  }
  const std::string_view token_prefix = "token:";
  std::optional<store::TokenRow> registrant;
  if (v.created_by.starts_with(token_prefix)) {
    CORRAL_ASSIGN_OR_RETURN(registrant,
                            tx.find_token_by_name(v.created_by.substr(token_prefix.size())));
  }
  CORRAL_RETURN_IF_ERROR(may_approve(c.who, v, registrant, *gate));
  CORRAL_ASSIGN_OR_RETURN(const bool added,
                          tx.insert_model_approval({.model = id,
                                                    .version = v.version,
                                                    .name = name.get<std::string>(),
                                                    .by = c.who.id,
                                                    .reason = reason.get<std::string>(),
                                                    .at = api.now()}));
  if (added) {
    // The audit entry names the approver (the actor: token, role, tenant and owner) and
    // what they approved and why.
    CORRAL_RETURN_IF_ERROR(
        api.pipeline.audit(tx, c, "model.approve", "model/" + id + "@" + v.version, "",
                           json{{"approval", gate->name}, {"reason", reason}}.dump()));
  }
  CORRAL_ASSIGN_OR_RETURN(const auto approvals, tx.list_model_approvals(id, v.version));
  return json_reply(version_json(v, approvals), added ? 201 : 200);
}

json alias_json(const store::ModelAliasRow& a) {
  json out = json::parse(a.state, nullptr, false);
  if (!out.is_object()) out = json::object();
  out["model"] = a.model;
  out["alias"] = a.alias;
  out["version"] = a.version;
  out["updatedAtMs"] = core::to_ms(a.updated_at);
  return out;
}

Result<std::string> alias_name(const Call& c) {
  const std::string alias = c.path_param(2);
  if (alias.size() > 63 || !core::is_dns_label(alias)) {
    return core::invalid_argument("alias", "must be a DNS label");
  }
  return alias;
}

// Writes the alias's move from `was` (nullopt: a new alias) and its history entry.
Status move_alias(ApiContext& api, const Call& c, store::Tx& tx, const std::string& id,
                  const std::optional<store::ModelAliasRow>& was, store::ModelAliasRow next,
                  const std::string& kind, json record) {
  next.updated_at = api.now();
  CORRAL_ASSIGN_OR_RETURN(
      const bool won,
      tx.put_model_alias(next, was ? std::optional<std::string>(was->version) : std::nullopt));
  if (!won) return core::raced("alias " + next.alias + " of " + id + " moved meanwhile");
  CORRAL_RETURN_IF_ERROR(tx.append_alias_move({.model = id,
                                               .alias = next.alias,
                                               .kind = kind,
                                               .from_version = was ? was->version : "",
                                               .to_version = next.version,
                                               .record = record.dump(),
                                               .by = c.who.id,
                                               .at = api.now()}));
  return api.pipeline.audit(tx, c, "model.alias." + kind, "model/" + id + "/alias/" + next.alias,
                            was ? was->version : "", next.version);
}

// Every model operation but registration needs the model: its versions, visible.
// POST /v1/models/{id}/aliases/{alias} {version, reason, canary: {version, weight},
// endpoint, gated}
Result<Reply> set_alias(ApiContext& api, const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(const std::string id, model_id(c));
  CORRAL_ASSIGN_OR_RETURN(const auto versions, visible_model(tx, c.who, id));
  CORRAL_ASSIGN_OR_RETURN(const std::string alias, alias_name(c));
  CORRAL_ASSIGN_OR_RETURN(const json body, core::parse_json_object(c.body()));
  for (const auto& [k, v] : body.items()) {
    if (k != "version" && k != "reason" && k != "canary" && k != "endpoint" && k != "gated") {
      return core::invalid_argument(k, "unknown field");
    }
  }
  const auto find = [&](const json& v) -> const store::ModelVersionRow* {
    if (!v.is_string()) return nullptr;
    for (const auto& row : versions) {
      if (row.version == v.get<std::string>()) return &row;
    }
    return nullptr;
  };
  const store::ModelVersionRow* to = find(body.value("version", json()));
  if (to == nullptr)
    return core::invalid_argument("version", "must be a registered version of " + id);
  const json reason = body.value("reason", json(""));
  if (!reason.is_string() || reason.get<std::string>().size() > 1024) {
    return core::invalid_argument("reason", "must be a string of at most 1024 bytes");
  }
  json state = {{"canary", nullptr}, {"endpoint", body.value("endpoint", json(""))}};
  if (!state["endpoint"].is_string() || state["endpoint"].get<std::string>().size() > 2048) {
    return core::invalid_argument("endpoint", "must be a URL of at most 2048 bytes");
  }
  const store::ModelVersionRow* canary = nullptr;
  if (body.contains("canary") && !body["canary"].is_null()) {
    const json& cn = body["canary"];
    if (!cn.is_object()) return core::invalid_argument("canary", "must be {version, weight}");
    for (const auto& [k, v] : cn.items()) {
      if (k != "version" && k != "weight")
        return core::invalid_argument("canary." + k, "unknown field");
    }
    canary = find(cn.value("version", json()));
    if (canary == nullptr)
      return core::invalid_argument("canary.version", "must be a registered version of " + id);
    if (canary == to) return core::invalid_argument("canary.version", "must differ from version");
    const json w = cn.value("weight", json());
    if (!w.is_number() || !(w.get<double>() > 0 && w.get<double>() < 1)) {
      return core::invalid_argument("canary.weight",
                                    "must be a share of traffic above 0 and below 1");
    }
    state["canary"] = {{"version", canary->version}, {"weight", w}};
  }
  CORRAL_ASSIGN_OR_RETURN(const auto was, tx.get_model_alias(id, alias));
  const json was_state = was ? json::parse(was->state, nullptr, false) : json::object();
  if (body.contains("gated") && !body["gated"].is_boolean())
    return core::invalid_argument("gated", "must be true or false");
  // Once gated, always: a promotion cannot switch its own gates off.
  const bool gated =
      alias == kProduction || was_state.value("gated", false) || body.value("gated", false);
  state["gated"] = gated;
  const store::ModelAliasRow next{
      .model = id, .alias = alias, .version = to->version, .state = state.dump()};
  if (was && was->version == next.version && was->state == next.state) {
    return json_reply(alias_json(*was));  // where it points already: a retry
  }
  json record = {{"reason", reason},
                 {"canary", state["canary"]},
                 {"endpoint", state["endpoint"]},
                 {"gated", gated},
                 {"evaluation", json::array()}};
  if (gated) {
    std::optional<store::ModelVersionRow> current;
    if (was) {
      for (const auto& row : versions) {
        if (row.version == was->version) current = row;
      }
    }
    std::string failed;
    for (const store::ModelVersionRow* v : {to, canary}) {
      if (v == nullptr) continue;
      CORRAL_ASSIGN_OR_RETURN(const json evaluation, evaluate_gates(tx, *v, current));
      for (const json& e : evaluation) {
        record["evaluation"].push_back({{"version", v->version},
                                        {"gate", e["gate"]},
                                        {"passed", e["passed"]},
                                        {"detail", e["detail"]}});
        if (e["passed"] == false) {
          failed += (failed.empty() ? "" : "; ") + v->version + ": " +
                    e["gate"].get<std::string>() + " failed (" + e["detail"].get<std::string>() +
                    ")";
        }
      }
    }
    if (!failed.empty()) {
      return core::failed_precondition("alias " + alias + " of " + id + " is gated: " + failed);
    }
  }
  CORRAL_RETURN_IF_ERROR(move_alias(api, c, tx, id, was, next, "move", record));
  CORRAL_ASSIGN_OR_RETURN(const auto now, tx.get_model_alias(id, alias));
  json out = alias_json(*now);
  out["evaluation"] = record["evaluation"];
  return json_reply(out, was ? 200 : 201);
}

// POST .../aliases/{alias}/rollback {reason}: back to where its last move took it from.
// A rollback right after a rollback changes nothing, so a retry is safe; it passes no
// gate, since it returns to a version that held the alias before.
Result<Reply> rollback(ApiContext& api, const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(const std::string id, model_id(c));
  CORRAL_RETURN_IF_ERROR(visible_model(tx, c.who, id).status());
  CORRAL_ASSIGN_OR_RETURN(const std::string alias, alias_name(c));
  CORRAL_ASSIGN_OR_RETURN(const json body,
                          core::parse_json_object(c.body().empty() ? "{}" : c.body()));
  const json reason = body.value("reason", json(""));
  if (!reason.is_string() || reason.get<std::string>().size() > 1024) {
    return core::invalid_argument("reason", "must be a string of at most 1024 bytes");
  }
  CORRAL_ASSIGN_OR_RETURN(const auto was, tx.get_model_alias(id, alias));
  if (!was) return core::not_found("alias " + alias + " of " + id + " not found");
  CORRAL_ASSIGN_OR_RETURN(const auto moves, tx.list_alias_moves(id, alias));
  if (!moves.empty() && moves.back().kind == "rollback") return json_reply(alias_json(*was));
  if (moves.empty() || moves.back().from_version.empty()) {
    return core::failed_precondition("alias " + alias + " of " + id + " has no earlier version");
  }
  json state = json::parse(was->state, nullptr, false);
  state["canary"] = nullptr;  // the rollback takes all traffic back
  const store::ModelAliasRow next{
      .model = id, .alias = alias, .version = moves.back().from_version, .state = state.dump()};
  CORRAL_RETURN_IF_ERROR(move_alias(api, c, tx, id, was, next, "rollback",
                                    {{"reason", reason}, {"undoes", moves.back().id}}));
  CORRAL_ASSIGN_OR_RETURN(const auto now, tx.get_model_alias(id, alias));
  return json_reply(alias_json(*now));
}

Result<Reply> get_alias(ApiContext&, const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(const std::string id, model_id(c));
  CORRAL_RETURN_IF_ERROR(visible_model(tx, c.who, id).status());
  CORRAL_ASSIGN_OR_RETURN(const std::string alias, alias_name(c));
  CORRAL_ASSIGN_OR_RETURN(const auto a, tx.get_model_alias(id, alias));
  if (!a) return core::not_found("alias " + alias + " of " + id + " not found");
  return json_reply(alias_json(*a));
}

Result<Reply> alias_history(ApiContext&, const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(const std::string id, model_id(c));
  CORRAL_RETURN_IF_ERROR(visible_model(tx, c.who, id).status());
  CORRAL_ASSIGN_OR_RETURN(const std::string alias, alias_name(c));
  CORRAL_ASSIGN_OR_RETURN(const auto moves, tx.list_alias_moves(id, alias));
  json out = json::array();
  for (const auto& m : moves) {
    json e = json::parse(m.record, nullptr, false);
    if (!e.is_object()) e = json::object();
    e["id"] = m.id;
    e["kind"] = m.kind;
    e["from"] = m.from_version.empty() ? json(nullptr) : json(m.from_version);
    e["to"] = m.to_version;
    e["by"] = m.by;
    e["atMs"] = core::to_ms(m.at);
    out.push_back(std::move(e));
  }
  return json_reply({{"moves", std::move(out)}, {"nextCursor", nullptr}});
}

Result<Reply> get_model(ApiContext&, const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(const std::string id, model_id(c));
  CORRAL_ASSIGN_OR_RETURN(const auto versions, visible_model(tx, c.who, id));
  json out = {{"id", id},
              {"tenant", versions.front().tenant.value},
              {"versions", json::array()},
              {"aliases", json::array()}};
  for (const auto& v : versions) {
    CORRAL_ASSIGN_OR_RETURN(const auto approvals, tx.list_model_approvals(id, v.version));
    out["versions"].push_back(version_json(v, approvals));
  }
  CORRAL_ASSIGN_OR_RETURN(const auto aliases, tx.list_model_aliases(id));
  for (const auto& a : aliases) out["aliases"].push_back(alias_json(a));
  return json_reply(out);
}

Result<Reply> list_models(ApiContext&, const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(const PageRequest page, c.page());
  CORRAL_ASSIGN_OR_RETURN(const std::string after, name_cursor(page));
  const std::optional<core::TenantId> tenant =
      c.who.role == Role::kAdmin ? std::nullopt : std::optional<core::TenantId>(c.who.tenant);
  CORRAL_ASSIGN_OR_RETURN(const auto rows, tx.list_models(tenant, after, page.limit + 1));
  std::vector<json> items;
  for (const auto& m : rows) {
    items.push_back({{"id", m.id},
                     {"tenant", m.tenant.value},
                     {"versions", m.versions},
                     {"latestAtMs", core::to_ms(m.latest)}});
  }
  return json_reply(
      page_answer("models", std::move(items), page, [&](std::size_t i) { return rows[i].id; }));
}

}  // namespace

std::vector<Route> model_routes(ApiContext& api) {
  const std::string model = R"(/v1/models/([^/]+))";
  const std::string alias = model + R"(/aliases/([^/]+))";
  return {
      read_route("GET", "/v1/models", kUsers, bind_api(api, list_models)),
      read_route("GET", model, kUsers, bind_api(api, get_model)),
      write_route("POST", model + "/versions", kUsers, bind_api(api, register_model_version)),
      read_route("GET", model + R"(/versions/([^/]+))", kUsers, bind_api(api, get_model_version)),
      write_route("POST", model + R"(/versions/([^/]+)/approvals)", kUsers, bind_api(api, approve)),
      read_route("GET", alias, kUsers, bind_api(api, get_alias)),
      write_route("POST", alias, kUsers, bind_api(api, set_alias)),
      write_route("POST", alias + "/rollback", kUsers, bind_api(api, rollback)),
      read_route("GET", alias + "/history", kUsers, bind_api(api, alias_history)),
  };
}

}  // namespace corral::server
