// The node admin controller: what an operator's cordon, drain and undrain do to a node
// and the work on it (docs/cli.md#nodes). The user API's node routes call it; the
// health controller's automatic drain (agent_reports.h) records its reason the same way.
//
//   cordon   no new placements; running work stays
//   drain    no new placements; running work checkpoints and is requeued elsewhere
//   undrain  back to active, refused while any GPU still reports unhealthy
//
// Thread safety: free functions over the caller's Tx.
#pragma once

#include <optional>
#include <string>

#include "core/result.h"
#include "server/controllers/lifecycle.h"
#include "store/store.h"

namespace corral::server {

// A node's registration (POST /v1/nodes, or an agent's join): its labels are desired
// state and replace the stored ones; the admin state and reason an operator or the
// health controller set are kept.
struct Registration {
  std::optional<store::NodeRow> before;  // nullopt: a new node
  std::string spec_json;                 // the node as stored (model_json.h)
};
core::Result<Registration> store_registration(store::NodeRepo& nodes, const core::Node& node,
                                              core::Time now);

enum class NodeAdminAction { kCordon, kDrain, kUndrain };

// "cordon", "drain", "undrain".
const char* to_string(NodeAdminAction action);

// Applies `action` to the registered node `row` on behalf of `by` (a caller's id, kept in
// the admin reason), in the caller's transaction; draining preempts the node's running
// jobs (ctx.fx records the stops). FailedPrecondition for an undrain while a GPU reports
// unhealthy. Returns the node as it now is.
core::Result<store::NodeRow> set_node_admin(store::Tx& tx, const LifecycleContext& ctx,
                                            store::NodeRow row, NodeAdminAction action,
                                            const std::string& by);

}  // namespace corral::server
