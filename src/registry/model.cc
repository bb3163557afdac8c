#include "registry/model.h"

#include <algorithm>

#include <fmt/format.h>

namespace corral::registry {
namespace {

std::optional<double> value_of(const RunMetrics& metrics, const std::string& metric) {
  const auto it = metrics.find(metric);
  return it == metrics.end() ? std::nullopt : std::optional<double>(it->second);
}

// Where there is no other version, a comparison gate has nothing to compare with.
bool nothing_to_compare(const GatedVersion& to, const std::optional<GatedVersion>& from) {
  return !from || from->version->version == to.version->version;
}

// The new version takes no input the current one does not, and gives every output it
// gives, each with the same type.
std::string schema_breaks(const ModelContent& to, const ModelContent& from) {
  std::string broken;
  for (const auto& [name, type] : to.input) {
    const auto it = from.input.find(name);
    if (it == from.input.end() || it->second != type) broken += " input " + name;
  }
  for (const auto& [name, type] : from.output) {
    const auto it = to.output.find(name);
    if (it == to.output.end() || it->second != type) broken += " output " + name;
  }
  return broken;
}

// `s` as a JSON string, as the approvers were written: quoted, '"', '\\' and control
// characters escaped.
std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", static_cast<int>(c));
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace

std::vector<GateResult> evaluate_gates(const GatedVersion& to,
                                       const std::optional<GatedVersion>& from,
                                       const std::vector<Approval>& approvals) {
  const ModelContent& t = to.version->content;
  std::vector<GateResult> out;
  for (const MetricGate& m : t.gates.metrics) {
    const std::string gate =
        fmt::format("metric {} {} {}", m.metric, m.at_least ? ">=" : "<=", m.bound);
    const auto v = value_of(to.metrics, m.metric);
    if (!v) {
      out.push_back({gate, false, fmt::format("run {} reported no {}", t.run.value, m.metric)});
      continue;
    }
    out.push_back(
        {gate, m.at_least ? *v >= m.bound : *v <= m.bound, fmt::format("{} is {}", m.metric, *v)});
  }
  for (const ImprovementGate& m : t.gates.improvement) {
    const std::string gate = fmt::format("improvement {} by at least {} ({} is better)", m.metric,
                                         m.min_delta, m.higher_is_better ? "higher" : "lower");
    if (nothing_to_compare(to, from)) {
      out.push_back({gate, true, "no other version to improve on"});
      continue;
    }
    const auto now_v = value_of(to.metrics, m.metric);
    const auto was_v = value_of(from->metrics, m.metric);
    if (!now_v || !was_v) {
      out.push_back({gate, false,
                     fmt::format("{} missing from {}", m.metric,
                                 !now_v ? to.version->version : from->version->version)});
      continue;
    }
    const double gain = m.higher_is_better ? *now_v - *was_v : *was_v - *now_v;
    out.push_back(
        {gate, gain >= m.min_delta,
         fmt::format("{} {} against {} of {}", m.metric, *now_v, *was_v, from->version->version)});
  }
  if (t.gates.schema_compatible) {
    const std::string gate = "schema compatible";
    if (nothing_to_compare(to, from)) {
      out.push_back({gate, true, "no other version to be compatible with"});
    } else {
      const std::string broken = schema_breaks(t, from->version->content);
      const std::string& other = from->version->version;
      out.push_back({gate, broken.empty(),
                     broken.empty() ? "compatible with " + other
                                    : "incompatible with " + other + ":" + broken});
    }
  }
  for (const ApprovalGate& gate : t.gates.approvals) {
    const auto a = std::find_if(approvals.begin(), approvals.end(),
                                [&](const Approval& r) { return r.name == gate.name; });
    out.push_back({"approval " + gate.name, a != approvals.end(),
                   a != approvals.end() ? "approved by " + a->by : "not approved"});
  }
  return out;
}

core::Status may_approve(const Approver& who, const ModelVersion& v,
                         const std::string& registrant_owner, const ApprovalGate& gate) {
  const auto refuse = [&](const std::string& why) {
    return core::Status(core::StatusCode::kPermissionDenied,
                        "approval " + gate.name + " of " + v.model + "@" + v.version + ": " + why);
  };
  // Separation of duties: the person who registered the version never approves it, by
  // the token that registered it or by another token made for the same owner.
  if (who.id == v.created_by || (!registrant_owner.empty() && registrant_owner == who.owner)) {
    return refuse("its registrant cannot approve it; someone else must");
  }
  if (gate.approvers.empty()) {
    if (who.admin) return core::Status();
    return refuse("needs an admin (the version names no approvers for it)");
  }
  if (!who.owner.empty() &&
      std::find(gate.approvers.begin(), gate.approvers.end(), who.owner) != gate.approvers.end()) {
    return core::Status();
  }
  std::string names;
  for (const std::string& a : gate.approvers) names += (names.empty() ? "" : ",") + json_string(a);
  return refuse("only its named approvers may approve it: [" + names + "]");
}

}  // namespace corral::registry
