// A model version as the registry keeps it (docs/models.md): the artifact a run produced,
// its input and output schemas, and the gates a gated alias move to it must pass; and
// the rules over them: who may record an approval, and what each gate says of a version
// against the one an alias points at now.
//
// Pure: the caller brings the facts (the runs' metrics, the approvals recorded), so the
// rules are tested on hand-built values (tests/registry) and the API only reads and
// writes them (server/api/api_models.cc).
//
// Thread safety: plain values and pure functions.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/ids.h"
#include "core/status.h"

namespace corral::registry {

// {field: type}, as the version declares it.
using Schema = std::map<std::string, std::string>;

// The run's last reported `metric` must be at least (or at most) `bound`.
struct MetricGate {
  std::string metric;
  bool at_least = true;  // min; false: max
  double bound = 0;
  friend bool operator==(const MetricGate&, const MetricGate&) = default;
};

// The run's last `metric` must beat the current version's by at least `min_delta`.
struct ImprovementGate {
  std::string metric;
  double min_delta = 0;
  bool higher_is_better = true;
  friend bool operator==(const ImprovementGate&, const ImprovementGate&) = default;
};

// One approval a promotion needs: by one of `approvers` (token owners), or by an admin
// where it names none; never by the version's registrant.
struct ApprovalGate {
  std::string name;
  std::vector<std::string> approvers;
  friend bool operator==(const ApprovalGate&, const ApprovalGate&) = default;
};

struct ModelGates {
  std::vector<MetricGate> metrics;
  std::vector<ImprovementGate> improvement;
  bool schema_compatible = false;  // no new input, no output lost or retyped
  std::vector<ApprovalGate> approvals;
  friend bool operator==(const ModelGates&, const ModelGates&) = default;
};

// What a registration says, immutable once registered: a retry with the same content is
// the same version, other content under its name is refused.
struct ModelContent {
  core::JobId run;
  std::string artifact_uri;
  std::string digest;
  Schema input;
  Schema output;
  ModelGates gates;
  friend bool operator==(const ModelContent&, const ModelContent&) = default;
};

struct ModelVersion {
  std::string model;
  std::string version;
  ModelContent content;
  std::string created_by;  // the registrant's principal ("token:<name>")
};

// The last value each metric of a run reported.
using RunMetrics = std::map<std::string, double>;

// A version and what its run reported: what a gate is judged on.
struct GatedVersion {
  const ModelVersion* version = nullptr;
  RunMetrics metrics;
};

// An approval recorded for a version.
struct Approval {
  std::string name;
  std::string by;
};

struct GateResult {
  std::string gate;  // "metric loss <= 0.3", "approval safety", ...
  bool passed = false;
  std::string detail;
  friend bool operator==(const GateResult&, const GateResult&) = default;
};

// Every gate of `to` against `from` (the version the alias points at now, if any; an
// improvement or compatibility gate passes where there is no other version), in the
// order metrics, improvement, schema, approvals.
std::vector<GateResult> evaluate_gates(const GatedVersion& to,
                                       const std::optional<GatedVersion>& from,
                                       const std::vector<Approval>& approvals);

// Who asks to approve: their principal, the owner their token was made for, and whether
// they are an admin.
struct Approver {
  std::string id;
  std::string owner;
  bool admin = false;
};

// Ok when `who` may record `gate` for `v`; `registrant_owner` is the owner of the token
// that registered it ("" when unknown or gone). PermissionDenied saying who may otherwise.
core::Status may_approve(const Approver& who, const ModelVersion& v,
                         const std::string& registrant_owner, const ApprovalGate& gate);

}  // namespace corral::registry
