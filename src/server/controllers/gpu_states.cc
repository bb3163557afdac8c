#include "server/controllers/gpu_states.h"

#include <map>

namespace corral::server {
namespace {

constexpr const char* kUnhealthy = "unhealthy";
constexpr const char* kDrained = "drained";
constexpr std::int32_t kWholeNode = -1;

bool drained(core::NodeAdminState s) { return s != core::NodeAdminState::kActive; }

}  // namespace

core::Status record_gpu_conditions(store::LedgerRepo& ledger, const core::NodeId& node,
                                   const std::vector<store::GpuObservation>& before,
                                   const std::vector<store::GpuObservation>& after,
                                   core::Time now) {
  // index -> unhealthy. A GPU not judged before (the first report since a join) is
  // written either way: both writes are no-ops when the history already says so.
  std::map<std::int32_t, bool> was;
  for (const auto& g : before) was[g.index] = g.condition == core::GpuCondition::kUnhealthy;
  for (const auto& g : after) {
    const bool unhealthy = g.condition == core::GpuCondition::kUnhealthy;
    const auto it = was.find(g.index);
    if (it != was.end() && it->second == unhealthy) continue;
    if (unhealthy) {
      CORRAL_RETURN_IF_ERROR(ledger.open_gpu_state({.node = node,
                                                    .gpu_index = g.index,
                                                    .kind = kUnhealthy,
                                                    .reason = g.problem,
                                                    .start = now}));
    } else {
      CORRAL_RETURN_IF_ERROR(ledger.close_gpu_state(node, g.index, kUnhealthy, now));
    }
  }
  return core::Status();
}

core::Status record_admin_state(store::LedgerRepo& ledger, const core::NodeId& node,
                                core::NodeAdminState before, core::NodeAdminState after,
                                const std::string& reason, core::Time now) {
  if (drained(before) == drained(after)) return core::Status();
  if (drained(after)) {
    return ledger.open_gpu_state(
        {.node = node, .gpu_index = kWholeNode, .kind = kDrained, .reason = reason, .start = now});
  }
  return ledger.close_gpu_state(node, kWholeNode, kDrained, now);
}

core::Status record_node_lost(store::LedgerRepo& ledger, const core::NodeId& node,
                              const std::string& why, core::Time now) {
  return ledger.open_gpu_state({.node = node,
                                .gpu_index = kWholeNode,
                                .kind = kUnhealthy,
                                .reason = "node lost: " + why,
                                .start = now});
}

core::Status record_node_joined(store::LedgerRepo& ledger, const core::NodeId& node,
                                core::Time now) {
  return ledger.close_gpu_state(node, kWholeNode, kUnhealthy, now);
}

}  // namespace corral::server
