#include "server/controllers/node_admin.h"

#include "server/base/log.h"
#include "server/base/model_json.h"
#include "server/controllers/gpu_states.h"

namespace corral::server {

core::Result<Registration> store_registration(store::NodeRepo& nodes, const core::Node& node,
                                              core::Time now) {
  Registration out;
  CORRAL_ASSIGN_OR_RETURN(out.before, nodes.get_node(node.id));
  out.spec_json = node_to_json(node);
  const auto& before = out.before;
  CORRAL_RETURN_IF_ERROR(
      nodes.upsert_node({.id = node.id,
                         .spec_json = out.spec_json,
                         .admin = before ? before->admin : core::NodeAdminState::kActive,
                         .admin_reason = before ? before->admin_reason : "",
                         .created_at = before ? before->created_at : now,
                         .updated_at = now}));
  return out;
}

const char* to_string(NodeAdminAction action) {
  switch (action) {
    case NodeAdminAction::kCordon:
      return "cordon";
    case NodeAdminAction::kDrain:
      return "drain";
    case NodeAdminAction::kUndrain:
      return "undrain";
  }
  return "?";
}

namespace {

// A node the health controller drained comes back only once its GPUs report healthy.
core::Status check_healthy(store::NodeRepo& nodes, const store::NodeRow& row) {
  CORRAL_ASSIGN_OR_RETURN(auto observed, nodes.get_observed(row.id));
  if (!observed) return core::Status();
  for (const store::GpuObservation& g : observed->gpus) {
    if (g.condition == core::GpuCondition::kUnhealthy) {
      return core::failed_precondition("node " + row.id.value + " gpu " + std::to_string(g.index) +
                                       " still reports " + g.problem +
                                       "; undrain once it reports healthy");
    }
  }
  return core::Status();
}

}  // namespace

core::Result<store::NodeRow> set_node_admin(store::Tx& tx, const LifecycleContext& ctx,
                                            store::NodeRow row, NodeAdminAction action,
                                            const std::string& by) {
  if (action == NodeAdminAction::kUndrain) CORRAL_RETURN_IF_ERROR(check_healthy(tx.nodes(), row));
  const core::NodeAdminState before = row.admin;
  row.admin = action == NodeAdminAction::kCordon  ? core::NodeAdminState::kCordoned
              : action == NodeAdminAction::kDrain ? core::NodeAdminState::kDraining
                                                  : core::NodeAdminState::kActive;
  row.admin_reason =
      action == NodeAdminAction::kUndrain ? "" : std::string(to_string(action)) + " by " + by;
  row.updated_at = ctx.now;
  CORRAL_RETURN_IF_ERROR(tx.nodes().upsert_node(row));
  CORRAL_RETURN_IF_ERROR(
      record_admin_state(tx.ledger(), row.id, before, row.admin, row.admin_reason, ctx.now));
  LogEvent line(to_string(action));
  line.add("node", row.id.value).add("by", by).add("before", std::string(core::to_string(before)));
  if (action == NodeAdminAction::kDrain) {
    // Draining asks running work to checkpoint and leave (preempt -> requeue).
    CORRAL_ASSIGN_OR_RETURN(const std::int32_t jobs,
                            drain_jobs_on(tx, ctx, row.id, row.admin_reason));
    line.add("jobs", jobs);
  }
  ctx.fx.log.push_back(std::move(line));
  return row;
}

}  // namespace corral::server
