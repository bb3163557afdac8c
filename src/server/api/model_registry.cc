#include "server/api/model_registry.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/agent_protocol.h"
#include "core/job_spec_parse.h"
#include "core/json_object.h"
#include "server/api/api_views.h"

namespace corral::server {
namespace {

using core::Result;
using core::Status;
using nlohmann::json;

Result<std::string> metric_name(const json& m, const std::string& path) {
  const json name = m.value("metric", json());
  if (!name.is_string() || !core::is_metric_name(name.get<std::string>())) {
    return core::invalid_argument(path + ".metric", "must be a metric name");
  }
  return name.get<std::string>();
}

Result<registry::MetricGate> read_metric_gate(const json& m, const std::string& path) {
  if (!m.is_object()) return core::invalid_argument(path, "must be an object");
  CORRAL_RETURN_IF_ERROR(core::only_fields(m, path, {"metric", "min", "max"}));
  registry::MetricGate gate;
  CORRAL_ASSIGN_OR_RETURN(gate.metric, metric_name(m, path));
  if (m.contains("min") == m.contains("max")) {
    return core::invalid_argument(path, "needs exactly one of min and max");
  }
  gate.at_least = m.contains("min");
  const char* bound = gate.at_least ? "min" : "max";
  if (!m[bound].is_number() || !std::isfinite(m[bound].get<double>())) {
    return core::invalid_argument(path + "." + bound, "must be a finite number");
  }
  gate.bound = m[bound].get<double>();
  return gate;
}

Result<registry::ImprovementGate> read_improvement_gate(const json& m, const std::string& path) {
  if (!m.is_object()) return core::invalid_argument(path, "must be an object");
  CORRAL_RETURN_IF_ERROR(core::only_fields(m, path, {"metric", "minDelta", "direction"}));
  registry::ImprovementGate gate;
  CORRAL_ASSIGN_OR_RETURN(gate.metric, metric_name(m, path));
  const json delta = m.value("minDelta", json(0.0));
  if (!delta.is_number() || !(delta.get<double>() >= 0) || !std::isfinite(delta.get<double>())) {
    return core::invalid_argument(path + ".minDelta", "must be a finite number of at least 0");
  }
  gate.min_delta = delta.get<double>();
  const json direction = m.value("direction", json("higher"));
  if (direction != "higher" && direction != "lower") {
    return core::invalid_argument(path + ".direction",
                                  "must be higher or lower (which way is better)");
  }
  gate.higher_is_better = direction == "higher";
  return gate;
}

// A plain name, or {name, approvers: 1 to 32 token owners}.
Result<registry::ApprovalGate> read_approval_gate(const json& a, const std::string& path) {
  const json name = a.is_object() ? a.value("name", json()) : a;
  if (!name.is_string() || !core::is_dns_label(name.get<std::string>())) {
    return core::invalid_argument(a.is_object() ? path + ".name" : path,
                                  "must be an approval name (a DNS label)");
  }
  registry::ApprovalGate gate{.name = name.get<std::string>()};
  if (!a.is_object()) return gate;
  CORRAL_RETURN_IF_ERROR(core::only_fields(a, path, {"name", "approvers"}));
  const json approvers = a.value("approvers", json());
  const auto is_owner = [](const json& o) {
    return o.is_string() && !o.get<std::string>().empty() && o.get<std::string>().size() <= 200;
  };
  if (!approvers.is_array() || approvers.empty() || approvers.size() > 32 ||
      !std::all_of(approvers.begin(), approvers.end(), is_owner)) {
    return core::invalid_argument(
        path + ".approvers",
        "must be 1 to 32 token owners (as `corral token create --owner` wrote them)");
  }
  gate.approvers = approvers.get<std::vector<std::string>>();
  return gate;
}

// gates[key]: an array of at most 32 entries, each read by `read`.
template <typename Gate, typename Read>
Status read_list(const json& g, const char* key, Read read, std::vector<Gate>& out) {
  const json v = g.value(key, json::array());
  if (!v.is_array() || v.size() > 32) {
    return core::invalid_argument(std::string("gates.") + key,
                                  "must be an array of at most 32 entries");
  }
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string path = std::string("gates.") + key + "[" + std::to_string(i) + "]";
    CORRAL_ASSIGN_OR_RETURN(Gate gate, read(v[i], path));
    out.push_back(std::move(gate));
  }
  return Status();
}

json gates_json(const registry::ModelGates& g) {
  json out = {{"metrics", json::array()},
              {"improvement", json::array()},
              {"schemaCompatible", g.schema_compatible},
              {"approvals", json::array()}};
  for (const auto& m : g.metrics) {
    out["metrics"].push_back({{"metric", m.metric}, {m.at_least ? "min" : "max", m.bound}});
  }
  for (const auto& m : g.improvement) {
    out["improvement"].push_back({{"metric", m.metric},
                                  {"minDelta", m.min_delta},
                                  {"direction", m.higher_is_better ? "higher" : "lower"}});
  }
  for (const auto& a : g.approvals) {
    if (a.approvers.empty()) {
      out["approvals"].push_back(a.name);
    } else {
      out["approvals"].push_back({{"name", a.name}, {"approvers", a.approvers}});
    }
  }
  return out;
}

}  // namespace

Result<store::ModelVersionRow> visible_model_version(store::ModelRepo& models, const Principal& who,
                                                     const std::string& id,
                                                     const std::string& version) {
  CORRAL_ASSIGN_OR_RETURN(const auto v, models.get_model_version(id, version));
  if (!v || !can_see_tenant(who, v->tenant.value)) {
    return core::not_found("model version " + id.substr(0, 63) + "@" + version.substr(0, 63) +
                           " not found");
  }
  return *v;
}

Result<std::vector<store::ModelVersionRow>> visible_model(store::ModelRepo& models,
                                                          const Principal& who,
                                                          const std::string& id) {
  CORRAL_ASSIGN_OR_RETURN(auto versions, models.list_model_versions(id));
  if (versions.empty() || !can_see_tenant(who, versions.front().tenant.value)) {
    return core::not_found("model " + id.substr(0, 63) + " not found");
  }
  return versions;
}

Result<registry::ModelGates> read_model_gates(const json& body) {
  registry::ModelGates out;
  if (!body.contains("gates") || body["gates"].is_null()) return out;
  const json& g = body["gates"];
  if (!g.is_object()) return core::invalid_argument("gates", "must be an object");
  CORRAL_RETURN_IF_ERROR(
      core::only_fields(g, "gates", {"metrics", "improvement", "schemaCompatible", "approvals"}));
  CORRAL_RETURN_IF_ERROR(read_list(g, "metrics", read_metric_gate, out.metrics));
  CORRAL_RETURN_IF_ERROR(read_list(g, "improvement", read_improvement_gate, out.improvement));
  if (g.contains("schemaCompatible")) {
    if (!g["schemaCompatible"].is_boolean()) {
      return core::invalid_argument("gates.schemaCompatible", "must be true or false");
    }
    out.schema_compatible = g["schemaCompatible"].get<bool>();
  }
  CORRAL_RETURN_IF_ERROR(read_list(g, "approvals", read_approval_gate, out.approvals));
  return out;
}

Result<registry::Schema> read_schema(const json& body, const char* key) {
  if (!body.contains(key) || body[key].is_null()) return registry::Schema();
  const json& s = body[key];
  if (!s.is_object()) return core::invalid_argument(key, "must be an object of field: type");
  if (s.size() > 256) return core::invalid_argument(key, "must have at most 256 fields");
  registry::Schema out;
  for (const auto& [name, type] : s.items()) {
    const std::string path = std::string(key) + "." + name;
    if (!core::is_metric_name(name)) {
      return core::invalid_argument(path,
                                    "must be a field name of letters, digits, '_', '.', '/', '-'");
    }
    if (!type.is_string() || type.get<std::string>().empty() ||
        type.get<std::string>().size() > 64) {
      return core::invalid_argument(path, "must be a type name of 1 to 64 characters");
    }
    out.emplace(name, type.get<std::string>());
  }
  return out;
}

json content_json(const registry::ModelContent& c) {
  return {{"run", c.run.value},       {"artifactUri", c.artifact_uri},
          {"digest", c.digest},       {"inputSchema", c.input},
          {"outputSchema", c.output}, {"gates", gates_json(c.gates)}};
}

Result<registry::ModelVersion> model_version(const store::ModelVersionRow& row) {
  const auto unreadable = [&](const std::string& why) {
    return core::internal_error("stored model version " + row.name + "@" + row.version +
                                " is unreadable: " + why);
  };
  const json c = json::parse(row.content, nullptr, false);
  if (!c.is_object() || !c.value("run", json()).is_number_integer() ||
      !c.value("artifactUri", json()).is_string() || !c.value("digest", json()).is_string()) {
    return unreadable("not {run, artifactUri, digest, ...}");
  }
  registry::ModelVersion v{.model = row.name, .version = row.version, .created_by = row.created_by};
  v.content.run = core::JobId(c["run"].get<std::int64_t>());
  v.content.artifact_uri = c["artifactUri"].get<std::string>();
  v.content.digest = c["digest"].get<std::string>();
  auto input = read_schema(c, "inputSchema");
  auto output = read_schema(c, "outputSchema");
  auto gates = read_model_gates(c);
  for (const Status& s : {input.status(), output.status(), gates.status()}) {
    if (!s.ok()) return unreadable(s.to_string());
  }
  v.content.input = *std::move(input);
  v.content.output = *std::move(output);
  v.content.gates = *std::move(gates);
  return v;
}

registry::AliasState alias_state(const store::ModelAliasRow& row) {
  const json s = json::parse(row.state, nullptr, false);
  registry::AliasState state{.version = row.version};
  if (!s.is_object()) return state;
  const json canary = s.value("canary", json());
  if (canary.is_object()) {
    state.canary = registry::Canary{.version = canary.value("version", ""),
                                    .weight = canary.value("weight", 0.0)};
  }
  state.endpoint = s.value("endpoint", "");
  state.gated = s.value("gated", false);
  return state;
}

std::string alias_state_text(const registry::AliasState& state) {
  json out = {{"canary", nullptr}, {"endpoint", state.endpoint}, {"gated", state.gated}};
  if (state.canary) {
    out["canary"] = {{"version", state.canary->version}, {"weight", state.canary->weight}};
  }
  return out.dump();
}

Result<registry::GatedVersion> gated_version(store::RunRepo& runs,
                                             const registry::ModelVersion& v) {
  registry::GatedVersion out{.version = &v};
  CORRAL_ASSIGN_OR_RETURN(const auto metrics, runs.summarize_metrics(v.content.run));
  for (const auto& m : metrics) out.metrics.emplace(m.name, m.last_value);
  return out;
}

}  // namespace corral::server
