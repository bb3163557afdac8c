#include "server/model_registry.h"

#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "core/agent_protocol.h"
#include "core/job_spec_parse.h"
#include "server/api_views.h"

namespace corral::server {
namespace {

using core::Result;
using core::Status;
using nlohmann::json;

// The newest value run `run` reported for `metric`, if any.
Result<std::optional<double>> last_value(store::Tx& tx, std::int64_t run,
                                         const std::string& metric) {
  CORRAL_ASSIGN_OR_RETURN(const auto metrics, tx.summarize_metrics(core::JobId(run)));
  for (const auto& m : metrics) {
    if (m.name == metric) return std::optional<double>(m.last_value);
  }
  return std::optional<double>();
}

}  // namespace

Result<store::ModelVersionRow> visible_model_version(store::Tx& tx, const Principal& who,
                                                     const std::string& id,
                                                     const std::string& version) {
  CORRAL_ASSIGN_OR_RETURN(const auto v, tx.get_model_version(id, version));
  if (!v || !can_see_tenant(who, v->tenant.value)) {
    return core::not_found("model version " + id.substr(0, 63) + "@" + version.substr(0, 63) +
                           " not found");
  }
  return *v;
}

Result<std::vector<store::ModelVersionRow>> visible_model(store::Tx& tx, const Principal& who,
                                                          const std::string& id) {
  CORRAL_ASSIGN_OR_RETURN(auto versions, tx.list_model_versions(id));
  if (versions.empty() || !can_see_tenant(who, versions.front().tenant.value)) {
    return core::not_found("model " + id.substr(0, 63) + " not found");
  }
  return versions;
}

Result<json> read_model_gates(const json& body) {
  json out = {{"metrics", json::array()},
              {"improvement", json::array()},
              {"schemaCompatible", false},
              {"approvals", json::array()}};
  if (!body.contains("gates") || body["gates"].is_null()) return out;
  const json& g = body["gates"];
  if (!g.is_object()) return core::invalid_argument("gates", "must be an object");
  for (const auto& [k, v] : g.items()) {
    if (!out.contains(k)) return core::invalid_argument("gates." + k, "unknown field");
  }
  const auto list = [&](const char* key) -> Result<json> {
    const json v = g.value(key, json::array());
    if (!v.is_array() || v.size() > 32) {
      return core::invalid_argument(std::string("gates.") + key,
                                    "must be an array of at most 32 entries");
    }
    return v;
  };
  CORRAL_ASSIGN_OR_RETURN(const json metrics, list("metrics"));
  for (std::size_t i = 0; i < metrics.size(); ++i) {
    const std::string path = "gates.metrics[" + std::to_string(i) + "]";
    const json& m = metrics[i];
    if (!m.is_object()) return core::invalid_argument(path, "must be an object");
    for (const auto& [k, v] : m.items()) {
      if (k != "metric" && k != "min" && k != "max")
        return core::invalid_argument(path + "." + k, "unknown field");
    }
    if (!m.value("metric", json()).is_string() ||
        !core::is_metric_name(m["metric"].get<std::string>())) {
      return core::invalid_argument(path + ".metric", "must be a metric name");
    }
    if (m.contains("min") == m.contains("max"))
      return core::invalid_argument(path, "needs exactly one of min and max");
    const char* bound = m.contains("min") ? "min" : "max";
    if (!m[bound].is_number() || !std::isfinite(m[bound].get<double>())) {
      return core::invalid_argument(path + "." + bound, "must be a finite number");
    }
    out["metrics"].push_back(m);
  }
  CORRAL_ASSIGN_OR_RETURN(const json improvement, list("improvement"));
  for (std::size_t i = 0; i < improvement.size(); ++i) {
    const std::string path = "gates.improvement[" + std::to_string(i) + "]";
    const json& m = improvement[i];
    if (!m.is_object()) return core::invalid_argument(path, "must be an object");
    for (const auto& [k, v] : m.items()) {
      if (k != "metric" && k != "minDelta" && k != "direction")
        return core::invalid_argument(path + "." + k, "unknown field");
    }
    if (!m.value("metric", json()).is_string() ||
        !core::is_metric_name(m["metric"].get<std::string>())) {
      return core::invalid_argument(path + ".metric", "must be a metric name");
    }
    const json delta = m.value("minDelta", json(0.0));
    if (!delta.is_number() || !(delta.get<double>() >= 0) || !std::isfinite(delta.get<double>())) {
      return core::invalid_argument(path + ".minDelta", "must be a finite number of at least 0");
    }
    const json direction = m.value("direction", json("higher"));
    if (direction != "higher" && direction != "lower") {
      return core::invalid_argument(path + ".direction",
                                    "must be higher or lower (which way is better)");
    }
    out["improvement"].push_back(
        {{"metric", m["metric"]}, {"minDelta", delta}, {"direction", direction}});
  }
  if (g.contains("schemaCompatible")) {
    if (!g["schemaCompatible"].is_boolean())
      return core::invalid_argument("gates.schemaCompatible", "must be true or false");
    out["schemaCompatible"] = g["schemaCompatible"];
  }
  CORRAL_ASSIGN_OR_RETURN(const json approvals, list("approvals"));
  for (std::size_t i = 0; i < approvals.size(); ++i) {
    const std::string path = "gates.approvals[" + std::to_string(i) + "]";
    const json& a = approvals[i];
    const json name = a.is_object() ? a.value("name", json()) : a;
    if (!name.is_string() || !core::is_dns_label(name.get<std::string>())) {
      return core::invalid_argument(a.is_object() ? path + ".name" : path,
                                    "must be an approval name (a DNS label)");
    }
    if (!a.is_object()) {
      out["approvals"].push_back(a);
      continue;
    }
    for (const auto& [k, v] : a.items()) {
      if (k != "name" && k != "approvers")
        return core::invalid_argument(path + "." + k, "unknown field");
    }
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
    out["approvals"].push_back({{"name", name}, {"approvers", approvers}});
  }
  return out;
}

std::vector<ApprovalGate> approval_gates(const json& gates) {
  std::vector<ApprovalGate> out;
  for (const json& a : gates.value("approvals", json::array())) {
    if (a.is_string()) {
      out.push_back({a.get<std::string>(), {}});
    } else {
      out.push_back({a.value("name", ""), a.value("approvers", std::vector<std::string>())});
    }
  }
  return out;
}

Status may_approve(const Principal& who, const store::ModelVersionRow& v,
                   const std::optional<store::TokenRow>& registrant, const ApprovalGate& gate) {
  const auto refuse = [&](const std::string& why) {
    return Status(core::StatusCode::kPermissionDenied,
                  "approval " + gate.name + " of " + v.name + "@" + v.version + ": " + why);
  };
  // Separation of duties: the person who registered the version never approves it, by
  // the token that registered it or by another token made for the same owner.
  if (who.id == v.created_by ||
      (registrant && !registrant->owner.empty() && registrant->owner == who.owner)) {
    return refuse("its registrant cannot approve it; someone else must");
  }
  if (gate.approvers.empty()) {
    if (who.role == Role::kAdmin) return Status();
    return refuse("needs an admin (the version names no approvers for it)");
  }
  if (!who.owner.empty() &&
      std::find(gate.approvers.begin(), gate.approvers.end(), who.owner) != gate.approvers.end()) {
    return Status();
  }
  return refuse("only its named approvers may approve it: " + json(gate.approvers).dump());
}

// Every gate of `to` (against `from`, the version the alias points at now, if any), each
// {gate, passed, detail}.
Result<json> evaluate_gates(store::Tx& tx, const store::ModelVersionRow& to,
                            const std::optional<store::ModelVersionRow>& from) {
  const json t = json::parse(to.content);
  const json f = from ? json::parse(from->content) : json();
  const json& gates = t["gates"];
  json out = json::array();
  const auto add = [&](std::string gate, bool passed, std::string detail) {
    out.push_back({{"gate", std::move(gate)}, {"passed", passed}, {"detail", std::move(detail)}});
  };
  for (const json& m : gates["metrics"]) {
    const std::string metric = m["metric"];
    const bool at_least = m.contains("min");
    const double bound = m[at_least ? "min" : "max"];
    const std::string gate = fmt::format("metric {} {} {}", metric, at_least ? ">=" : "<=", bound);
    CORRAL_ASSIGN_OR_RETURN(const auto v, last_value(tx, t["run"], metric));
    if (!v) {
      add(gate, false, "run " + t["run"].dump() + " reported no " + metric);
      continue;
    }
    add(gate, at_least ? *v >= bound : *v <= bound, fmt::format("{} is {}", metric, *v));
  }
  for (const json& m : gates["improvement"]) {
    const std::string metric = m["metric"];
    const double delta = m["minDelta"];
    const bool higher = m["direction"] == "higher";
    const std::string gate = fmt::format("improvement {} by at least {} ({} is better)", metric,
                                         delta, higher ? "higher" : "lower");
    if (!from || from->version == to.version) {
      add(gate, true, "no other version to improve on");
      continue;
    }
    CORRAL_ASSIGN_OR_RETURN(const auto now_v, last_value(tx, t["run"], metric));
    CORRAL_ASSIGN_OR_RETURN(const auto was_v, last_value(tx, f["run"], metric));
    if (!now_v || !was_v) {
      add(gate, false,
          fmt::format("{} missing from {}", metric, !now_v ? to.version : from->version));
      continue;
    }
    const double gain = higher ? *now_v - *was_v : *was_v - *now_v;
    add(gate, gain >= delta,
        fmt::format("{} {} against {} of {}", metric, *now_v, *was_v, from->version));
  }
  if (gates["schemaCompatible"] == true) {
    const std::string gate = "schema compatible";
    if (!from || from->version == to.version) {
      add(gate, true, "no other version to be compatible with");
    } else {
      // It takes no input the current one does not, and gives every output it gives.
      std::string broken;
      for (const auto& [name, type] : t["inputSchema"].items()) {
        if (f["inputSchema"].value(name, json()) != type) broken += " input " + name;
      }
      for (const auto& [name, type] : f["outputSchema"].items()) {
        if (t["outputSchema"].value(name, json()) != type) broken += " output " + name;
      }
      add(gate, broken.empty(),
          broken.empty() ? "compatible with " + from->version
                         : "incompatible with " + from->version + ":" + broken);
    }
  }
  CORRAL_ASSIGN_OR_RETURN(const auto approvals, tx.list_model_approvals(to.name, to.version));
  for (const ApprovalGate& gate : approval_gates(gates)) {
    const auto a = std::find_if(approvals.begin(), approvals.end(),
                                [&](const auto& r) { return r.name == gate.name; });
    add("approval " + gate.name, a != approvals.end(),
        a != approvals.end() ? "approved by " + a->by : "not approved");
  }
  return out;
}
}  // namespace corral::server
