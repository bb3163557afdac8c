// /v1/models (docs/models.md): the model registry. A model version is registered from an
// artifact its run reported (the digest must be that artifact's), with its input and
// output schemas and the gates a promotion must pass; aliases (production, canary, any
// name) point at versions, with a canary share for the serving side, and every move is
// kept with who, when, from, to, why and the gates' evaluation. Rollback moves an alias
// back to where its last move took it from, once: a retry changes nothing.
//
// The rules (gates, who may approve, how an alias moves) are registry/model.h and
// registry/alias.h; this file parses, asks them and stores.
//
// A model belongs to its runs' tenant and is visible exactly where they are: another
// tenant's model answers 404, as one that does not exist.
#include <algorithm>
#include <httplib.h>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/dataset.h"
#include "core/job_spec_parse.h"
#include "core/json_object.h"
#include "server/api/api_routes.h"
#include "server/api/api_views.h"
#include "server/api/model_registry.h"
#include "server/base/http_status.h"
#include "server/base/model_json.h"
#include "server/http/list_page.h"

namespace corral::server {
namespace {

using core::Result;
using core::Status;
using nlohmann::json;

Result<std::string> model_id(const Call& c) {
  const std::string id = c.path_param(1);
  if (id.size() > 63 || !core::is_dns_label(id)) {
    return core::not_found("model " + id.substr(0, 63) + " not found");
  }
  return id;
}

// The artifact of `run` at `uri`, reported or a checkpoint: its digest, or nullopt.
Result<std::optional<std::string>> run_artifact_digest(store::Tx& tx, core::JobId run,
                                                       const std::string& uri) {
  CORRAL_ASSIGN_OR_RETURN(const auto artifacts, tx.runs().list_artifacts(run));
  for (const auto& a : artifacts) {
    if (a.artifact.uri == uri) return std::optional<std::string>(a.artifact.digest);
  }
  CORRAL_ASSIGN_OR_RETURN(const auto checkpoints, tx.checkpoints().list_checkpoints(run));
  for (const auto& c : checkpoints) {
    if (c.uri == uri) return std::optional<std::string>(c.checksum);
  }
  return std::optional<std::string>();
}

Result<json> version_json(const store::ModelVersionRow& row,
                          const std::vector<store::ModelApprovalRow>& approvals) {
  CORRAL_ASSIGN_OR_RETURN(const registry::ModelVersion v, model_version(row));
  json out = content_json(v.content);
  out["model"] = row.name;
  out["version"] = row.version;
  out["tenant"] = row.tenant.value;
  out["createdBy"] = row.created_by;
  out["createdAtMs"] = core::to_ms(row.created_at);
  out["approved"] = json::array();
  for (const auto& a : approvals) {
    out["approved"].push_back(
        {{"name", a.name}, {"by", a.by}, {"reason", a.reason}, {"atMs", core::to_ms(a.at)}});
  }
  return out;
}

Result<Reply> version_reply(store::ModelRepo& models, const store::ModelVersionRow& row,
                            int code = 200) {
  CORRAL_ASSIGN_OR_RETURN(const auto approvals, models.list_model_approvals(row.name, row.version));
  CORRAL_ASSIGN_OR_RETURN(const json out, version_json(row, approvals));
  return json_reply(out, code);
}

// "reason": at most 1024 bytes, "" when absent.
Result<std::string> read_reason(const json& body) {
  const json reason = body.value("reason", json(""));
  if (!reason.is_string() || reason.get<std::string>().size() > 1024) {
    return core::invalid_argument("reason", "must be a string of at most 1024 bytes");
  }
  return reason.get<std::string>();
}

// A registration's body up to its artifact: {version, run, artifactUri, digest}; the
// schemas and gates are read once the run and its artifact check out, so a mistake there
// is reported before one in the rest.
Result<registry::ModelContent> read_registration(const json& body, std::string& version) {
  CORRAL_RETURN_IF_ERROR(core::only_fields(
      body, "",
      {"version", "run", "artifactUri", "digest", "inputSchema", "outputSchema", "gates"}));
  const json v = body.value("version", json());
  if (!v.is_string() || !core::is_dataset_version(v.get<std::string>())) {
    return core::invalid_argument("version", "must be 1 to 63 of letters, digits, '.', '_', '-'");
  }
  version = v.get<std::string>();
  registry::ModelContent content;
  const json run = body.value("run", json());
  if (!run.is_number_integer() || run.get<std::int64_t>() < 1) {
    return core::invalid_argument("run", "must be the id of the run that produced it");
  }
  content.run = core::JobId(run.get<std::int64_t>());
  const json uri = body.value("artifactUri", json());
  if (!uri.is_string() || uri.get<std::string>().empty() || uri.get<std::string>().size() > 4096) {
    return core::invalid_argument("artifactUri", "must be the URI of an artifact the run reported");
  }
  content.artifact_uri = uri.get<std::string>();
  const json digest = body.value("digest", json());
  if (!digest.is_string()) {
    return core::invalid_argument("digest", "must be the artifact's sha256:<64 hex>");
  }
  content.digest = digest.get<std::string>();
  return content;
}

// POST /v1/models/{id}/versions
Result<Reply> register_model_version(ApiContext& api, const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(const std::string id, model_id(c));
  CORRAL_ASSIGN_OR_RETURN(const json body, core::parse_json_object(c.body()));
  std::string version;
  CORRAL_ASSIGN_OR_RETURN(registry::ModelContent content, read_registration(body, version));
  const std::string run_text = std::to_string(content.run.value);
  auto run = visible_job(tx.jobs(), c.who, run_text);
  if (!run.ok()) return core::invalid_argument("run", "unknown run " + run_text);
  CORRAL_ASSIGN_OR_RETURN(const auto reported,
                          run_artifact_digest(tx, run->id, content.artifact_uri));
  if (!reported) {
    return core::invalid_argument(
        "artifactUri", "run " + run_text + " reported no artifact at " + content.artifact_uri);
  }
  if (*reported != content.digest) {
    return core::invalid_argument("digest", "does not match the artifact run " + run_text +
                                                " reported at that URI (" + *reported + ")");
  }
  CORRAL_ASSIGN_OR_RETURN(content.input, read_schema(body, "inputSchema"));
  CORRAL_ASSIGN_OR_RETURN(content.output, read_schema(body, "outputSchema"));
  CORRAL_ASSIGN_OR_RETURN(content.gates, read_model_gates(body));
  CORRAL_ASSIGN_OR_RETURN(const auto versions, tx.models().list_model_versions(id));
  if (!versions.empty() && versions.front().tenant != run->tenant) {
    return Status(core::StatusCode::kAlreadyExists,
                  "model id " + id + " is taken by another tenant; choose another id");
  }
  for (const auto& row : versions) {
    if (row.version != version) continue;
    CORRAL_ASSIGN_OR_RETURN(const registry::ModelVersion kept, model_version(row));
    if (kept.content == content) return version_reply(tx.models(), row);  // a retry
    return core::invalid_argument("version",
                                  "model version " + id + "@" + version +
                                      " is registered with other content: a version is immutable, "
                                      "register a new one");
  }
  const store::ModelVersionRow row{.name = id,
                                   .version = version,
                                   .tenant = run->tenant,
                                   .content = content_json(content).dump(),
                                   .created_by = c.who.id,
                                   .created_at = api.now()};
  CORRAL_RETURN_IF_ERROR(tx.models().insert_model_version(row));
  CORRAL_RETURN_IF_ERROR(api.pipeline.audit(tx, c, "model.register",
                                            "model/" + id + "@" + row.version, "", row.content));
  return version_reply(tx.models(), row, 201);
}

Result<Reply> get_model_version(ApiContext&, const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(const std::string id, model_id(c));
  CORRAL_ASSIGN_OR_RETURN(const auto row,
                          visible_model_version(tx.models(), c.who, id, c.path_param(2)));
  return version_reply(tx.models(), row);
}

// POST .../versions/{v}/approvals {name, reason}: one of the version's declared approvals.
Result<Reply> approve(ApiContext& api, const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(const std::string id, model_id(c));
  CORRAL_ASSIGN_OR_RETURN(const auto row,
                          visible_model_version(tx.models(), c.who, id, c.path_param(2)));
  CORRAL_ASSIGN_OR_RETURN(const registry::ModelVersion v, model_version(row));
  CORRAL_ASSIGN_OR_RETURN(const json body, core::parse_json_object(c.body()));
  CORRAL_RETURN_IF_ERROR(core::only_fields(body, "", {"name", "reason"}));
  const json name = body.value("name", json());
  const auto& gates = v.content.gates.approvals;
  const auto gate = std::find_if(gates.begin(), gates.end(), [&](const registry::ApprovalGate& g) {
    return name.is_string() && name.get<std::string>() == g.name;
  });
  if (gate == gates.end()) {
    json names = json::array();
    for (const registry::ApprovalGate& g : gates) names.push_back(g.name);
    return core::invalid_argument("name", "must be one of the approvals " + id + "@" + v.version +
                                              " asks for: " + names.dump());
  }
  CORRAL_ASSIGN_OR_RETURN(const std::string reason, read_reason(body));
  const std::string_view token_prefix = "token:";
  std::string registrant_owner;
  if (v.created_by.starts_with(token_prefix)) {
    CORRAL_ASSIGN_OR_RETURN(const auto registrant, tx.security().find_token_by_name(
                                                       v.created_by.substr(token_prefix.size())));
    if (registrant) registrant_owner = registrant->owner;
  }
  const registry::Approver who{
      .id = c.who.id, .owner = c.who.owner, .admin = c.who.role == Role::kAdmin};
  CORRAL_RETURN_IF_ERROR(registry::may_approve(who, v, registrant_owner, *gate));
  CORRAL_ASSIGN_OR_RETURN(const bool added, tx.models().insert_model_approval({.model = id,
                                                                               .version = v.version,
                                                                               .name = gate->name,
                                                                               .by = c.who.id,
                                                                               .reason = reason,
                                                                               .at = api.now()}));
  if (added) {
    // The audit entry names the approver (the actor: token, role, tenant and owner) and
    // what they approved and why.
    CORRAL_RETURN_IF_ERROR(
        api.pipeline.audit(tx, c, "model.approve", "model/" + id + "@" + v.version, "",
                           json{{"approval", gate->name}, {"reason", reason}}.dump()));
  }
  return version_reply(tx.models(), row, added ? 201 : 200);
}

json canary_json(const std::optional<registry::Canary>& canary) {
  if (!canary) return nullptr;
  return {{"version", canary->version}, {"weight", canary->weight}};
}

json alias_json(const store::ModelAliasRow& row) {
  const registry::AliasState a = alias_state(row);
  return {{"model", row.model},
          {"alias", row.alias},
          {"version", a.version},
          {"canary", canary_json(a.canary)},
          {"endpoint", a.endpoint},
          {"gated", a.gated},
          {"updatedAtMs", core::to_ms(row.updated_at)}};
}

Result<std::string> alias_name(const Call& c) {
  const std::string alias = c.path_param(2);
  if (alias.size() > 63 || !core::is_dns_label(alias)) {
    return core::invalid_argument("alias", "must be a DNS label");
  }
  return alias;
}

// Writes the alias's move from `was` (nullopt: a new alias) to `next`, and its history
// entry.
Status move_alias(ApiContext& api, const Call& c, store::Tx& tx, const std::string& id,
                  const std::string& alias, const std::optional<store::ModelAliasRow>& was,
                  const registry::AliasState& next, const std::string& kind, const json& record) {
  const store::ModelAliasRow row{.model = id,
                                 .alias = alias,
                                 .version = next.version,
                                 .state = alias_state_text(next),
                                 .updated_at = api.now()};
  CORRAL_ASSIGN_OR_RETURN(const bool won,
                          tx.models().put_model_alias(
                              row, was ? std::optional<std::string>(was->version) : std::nullopt));
  if (!won) return core::raced("alias " + alias + " of " + id + " moved meanwhile");
  CORRAL_RETURN_IF_ERROR(tx.models().append_alias_move({.model = id,
                                                        .alias = alias,
                                                        .kind = kind,
                                                        .from_version = was ? was->version : "",
                                                        .to_version = next.version,
                                                        .record = record.dump(),
                                                        .by = c.who.id,
                                                        .at = api.now()}));
  return api.pipeline.audit(tx, c, "model.alias." + kind, "model/" + id + "/alias/" + alias,
                            was ? was->version : "", next.version);
}

// {version, reason, canary: {version, weight}, endpoint, gated}: the versions must be
// registered versions of the model (`versions`).
Result<registry::AliasState> read_alias_move(const json& body, const std::string& id,
                                             const std::vector<store::ModelVersionRow>& versions) {
  CORRAL_RETURN_IF_ERROR(
      core::only_fields(body, "", {"version", "reason", "canary", "endpoint", "gated"}));
  const auto registered = [&](const json& v) {
    return v.is_string() && std::any_of(versions.begin(), versions.end(), [&](const auto& row) {
             return row.version == v.get<std::string>();
           });
  };
  registry::AliasState out;
  if (!registered(body.value("version", json()))) {
    return core::invalid_argument("version", "must be a registered version of " + id);
  }
  out.version = body["version"].get<std::string>();
  CORRAL_RETURN_IF_ERROR(read_reason(body).status());
  const json endpoint = body.value("endpoint", json(""));
  if (!endpoint.is_string() || endpoint.get<std::string>().size() > 2048) {
    return core::invalid_argument("endpoint", "must be a URL of at most 2048 bytes");
  }
  out.endpoint = endpoint.get<std::string>();
  if (body.contains("canary") && !body["canary"].is_null()) {
    const json& cn = body["canary"];
    if (!cn.is_object()) return core::invalid_argument("canary", "must be {version, weight}");
    CORRAL_RETURN_IF_ERROR(core::only_fields(cn, "canary", {"version", "weight"}));
    if (!registered(cn.value("version", json()))) {
      return core::invalid_argument("canary.version", "must be a registered version of " + id);
    }
    if (cn["version"] == out.version) {
      return core::invalid_argument("canary.version", "must differ from version");
    }
    const json w = cn.value("weight", json());
    if (!w.is_number() || !(w.get<double>() > 0 && w.get<double>() < 1)) {
      return core::invalid_argument("canary.weight",
                                    "must be a share of traffic above 0 and below 1");
    }
    out.canary = registry::Canary{.version = cn["version"], .weight = w.get<double>()};
  }
  if (body.contains("gated") && !body["gated"].is_boolean()) {
    return core::invalid_argument("gated", "must be true or false");
  }
  out.gated = body.value("gated", false);
  return out;
}

// Every gate of the versions `plan` gates, judged against `current` (the version the
// alias points at now), each as {version, gate, passed, detail}.
Result<std::vector<registry::VersionGates>> evaluate_move(
    store::Tx& tx, const std::vector<store::ModelVersionRow>& versions,
    const registry::AliasMovePlan& plan, const std::optional<std::string>& current) {
  std::vector<registry::VersionGates> out;
  if (plan.gate.empty()) return out;
  const auto row_of = [&](const std::string& version) -> const store::ModelVersionRow* {
    const auto it = std::find_if(versions.begin(), versions.end(),
                                 [&](const auto& r) { return r.version == version; });
    return it == versions.end() ? nullptr : &*it;
  };
  std::optional<registry::ModelVersion> from_version;
  std::optional<registry::GatedVersion> from;
  if (current && row_of(*current) != nullptr) {
    CORRAL_ASSIGN_OR_RETURN(from_version, model_version(*row_of(*current)));
    CORRAL_ASSIGN_OR_RETURN(from, gated_version(tx.runs(), *from_version));
  }
  for (const std::string& version : plan.gate) {
    CORRAL_ASSIGN_OR_RETURN(const registry::ModelVersion v, model_version(*row_of(version)));
    CORRAL_ASSIGN_OR_RETURN(const registry::GatedVersion to, gated_version(tx.runs(), v));
    CORRAL_ASSIGN_OR_RETURN(const auto rows, tx.models().list_model_approvals(v.model, v.version));
    std::vector<registry::Approval> approvals;
    for (const auto& a : rows) approvals.push_back({.name = a.name, .by = a.by});
    out.push_back({version, registry::evaluate_gates(to, from, approvals)});
  }
  return out;
}

json evaluation_json(const std::vector<registry::VersionGates>& gates) {
  json out = json::array();
  for (const auto& v : gates) {
    for (const auto& g : v.results) {
      out.push_back(
          {{"version", v.version}, {"gate", g.gate}, {"passed", g.passed}, {"detail", g.detail}});
    }
  }
  return out;
}

// POST /v1/models/{id}/aliases/{alias} {version, reason, canary: {version, weight},
// endpoint, gated}
Result<Reply> set_alias(ApiContext& api, const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(const std::string id, model_id(c));
  CORRAL_ASSIGN_OR_RETURN(const auto versions, visible_model(tx.models(), c.who, id));
  CORRAL_ASSIGN_OR_RETURN(const std::string alias, alias_name(c));
  CORRAL_ASSIGN_OR_RETURN(const json body, core::parse_json_object(c.body()));
  CORRAL_ASSIGN_OR_RETURN(const registry::AliasState asked, read_alias_move(body, id, versions));
  CORRAL_ASSIGN_OR_RETURN(const auto was, tx.models().get_model_alias(id, alias));
  const registry::AliasMovePlan plan = registry::plan_alias_move(
      alias, was ? std::optional(alias_state(*was)) : std::nullopt, asked);
  if (plan.retry) return json_reply(alias_json(*was));  // where it points already
  CORRAL_ASSIGN_OR_RETURN(
      const auto gates,
      evaluate_move(tx, versions, plan, was ? std::optional(was->version) : std::nullopt));
  CORRAL_RETURN_IF_ERROR(registry::judge_move(id, alias, gates));
  const json record = {{"reason", body.value("reason", "")},
                       {"canary", canary_json(plan.next.canary)},
                       {"endpoint", plan.next.endpoint},
                       {"gated", plan.next.gated},
                       {"evaluation", evaluation_json(gates)}};
  CORRAL_RETURN_IF_ERROR(move_alias(api, c, tx, id, alias, was, plan.next, "move", record));
  CORRAL_ASSIGN_OR_RETURN(const auto now, tx.models().get_model_alias(id, alias));
  json out = alias_json(*now);
  out["evaluation"] = record["evaluation"];
  return json_reply(out, was ? 200 : 201);
}

// POST .../aliases/{alias}/rollback {reason}: back to where its last move took it from.
// It passes no gate, since it returns to a version that held the alias before.
Result<Reply> rollback(ApiContext& api, const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(const std::string id, model_id(c));
  CORRAL_RETURN_IF_ERROR(visible_model(tx.models(), c.who, id).status());
  CORRAL_ASSIGN_OR_RETURN(const std::string alias, alias_name(c));
  CORRAL_ASSIGN_OR_RETURN(const json body,
                          core::parse_json_object(c.body().empty() ? "{}" : c.body()));
  CORRAL_ASSIGN_OR_RETURN(const std::string reason, read_reason(body));
  CORRAL_ASSIGN_OR_RETURN(const auto was, tx.models().get_model_alias(id, alias));
  if (!was) return core::not_found("alias " + alias + " of " + id + " not found");
  CORRAL_ASSIGN_OR_RETURN(const auto moves, tx.models().list_alias_moves(id, alias));
  std::vector<registry::AliasMoveRecord> history;
  for (const auto& m : moves) history.push_back({.kind = m.kind, .from_version = m.from_version});
  CORRAL_ASSIGN_OR_RETURN(const auto next,
                          registry::plan_rollback(id, alias, alias_state(*was), history));
  if (!next) return json_reply(alias_json(*was));  // a retry
  CORRAL_RETURN_IF_ERROR(move_alias(api, c, tx, id, alias, was, *next, "rollback",
                                    {{"reason", reason}, {"undoes", moves.back().id}}));
  CORRAL_ASSIGN_OR_RETURN(const auto now, tx.models().get_model_alias(id, alias));
  return json_reply(alias_json(*now));
}

Result<Reply> get_alias(ApiContext&, const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(const std::string id, model_id(c));
  CORRAL_RETURN_IF_ERROR(visible_model(tx.models(), c.who, id).status());
  CORRAL_ASSIGN_OR_RETURN(const std::string alias, alias_name(c));
  CORRAL_ASSIGN_OR_RETURN(const auto a, tx.models().get_model_alias(id, alias));
  if (!a) return core::not_found("alias " + alias + " of " + id + " not found");
  return json_reply(alias_json(*a));
}

Result<Reply> alias_history(ApiContext&, const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(const std::string id, model_id(c));
  CORRAL_RETURN_IF_ERROR(visible_model(tx.models(), c.who, id).status());
  CORRAL_ASSIGN_OR_RETURN(const std::string alias, alias_name(c));
  CORRAL_ASSIGN_OR_RETURN(const auto moves, tx.models().list_alias_moves(id, alias));
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
  CORRAL_ASSIGN_OR_RETURN(const auto versions, visible_model(tx.models(), c.who, id));
  json out = {{"id", id},
              {"tenant", versions.front().tenant.value},
              {"versions", json::array()},
              {"aliases", json::array()}};
  for (const auto& v : versions) {
    CORRAL_ASSIGN_OR_RETURN(const auto approvals, tx.models().list_model_approvals(id, v.version));
    CORRAL_ASSIGN_OR_RETURN(json one, version_json(v, approvals));
    out["versions"].push_back(std::move(one));
  }
  CORRAL_ASSIGN_OR_RETURN(const auto aliases, tx.models().list_model_aliases(id));
  for (const auto& a : aliases) out["aliases"].push_back(alias_json(a));
  return json_reply(out);
}

Result<Reply> list_models(ApiContext&, const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(const PageRequest page, c.page());
  CORRAL_ASSIGN_OR_RETURN(const std::string after, name_cursor(page));
  const std::optional<core::TenantId> tenant =
      c.who.role == Role::kAdmin ? std::nullopt : std::optional<core::TenantId>(c.who.tenant);
  CORRAL_ASSIGN_OR_RETURN(const auto rows, tx.models().list_models(tenant, after, page.limit + 1));
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
