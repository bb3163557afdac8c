#include "registry/alias.h"

namespace corral::registry {

AliasMovePlan plan_alias_move(std::string_view alias, const std::optional<AliasState>& was,
                              const AliasState& asked) {
  AliasMovePlan plan{.next = asked};
  plan.next.gated = alias == kProduction || (was && was->gated) || asked.gated;
  plan.retry = was && *was == plan.next;
  if (plan.next.gated && !plan.retry) {
    plan.gate.push_back(plan.next.version);
    if (plan.next.canary) plan.gate.push_back(plan.next.canary->version);
  }
  return plan;
}

core::Status judge_move(std::string_view model, std::string_view alias,
                        const std::vector<VersionGates>& gates) {
  std::string failed;
  for (const VersionGates& v : gates) {
    for (const GateResult& g : v.results) {
      if (g.passed) continue;
      failed +=
          (failed.empty() ? "" : "; ") + v.version + ": " + g.gate + " failed (" + g.detail + ")";
    }
  }
  if (failed.empty()) return core::Status();
  return core::failed_precondition("alias " + std::string(alias) + " of " + std::string(model) +
                                   " is gated: " + failed);
}

core::Result<std::optional<AliasState>> plan_rollback(std::string_view model,
                                                      std::string_view alias, const AliasState& now,
                                                      const std::vector<AliasMoveRecord>& moves) {
  if (!moves.empty() && moves.back().kind == "rollback") return std::optional<AliasState>();
  if (moves.empty() || moves.back().from_version.empty()) {
    return core::failed_precondition("alias " + std::string(alias) + " of " + std::string(model) +
                                     " has no earlier version");
  }
  AliasState next = now;
  next.version = moves.back().from_version;
  next.canary.reset();
  return std::optional<AliasState>(std::move(next));
}

}  // namespace corral::registry
