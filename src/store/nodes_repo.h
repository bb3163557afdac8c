// NodeRepo: a node as registered with its admin state (desired: cordon, drain), and what
// its agent last reported (observed: inventory, heartbeat). They are two tables so an
// observation never overwrites desired state (ARCHITECTURE.md's state table).
//
// One of the repositories store::Tx is made of (store.h).
// Thread safety: as Tx (used only by the thread running the transaction, only during it).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/agent_protocol.h"
#include "core/ids.h"
#include "core/result.h"
#include "core/status.h"
#include "core/time.h"
#include "core/topology.h"

namespace corral::store {

// A node as registered: its place in the fleet and its admin state (desired).
struct NodeRow {
  core::NodeId id;
  std::string spec_json;  // labels, cpus, memory, GPUs as registered
  core::NodeAdminState admin = core::NodeAdminState::kActive;
  std::string admin_reason;  // why cordoned/draining ("" when active)
  core::Time created_at;
  core::Time updated_at;
};

// A GPU as corrald judged its agent's last readings.
struct GpuObservation {
  std::int32_t index = 0;
  core::GpuCondition condition = core::GpuCondition::kOk;
  std::string problem;  // why it is not ok: "XID 79 (fell off the bus)" ("" when ok)
  // Since when its readings have shown a throttle reason corrald counts (agents.
  // throttleReasons), without a break; none: not throttled.
  std::optional<core::Time> throttled_since;
  // The power limit its readings last gave, else the join's inventory's (0: none known):
  // what a rack's power cap counts it at. Kept here, with what changes rarely, so a
  // scheduling cycle needs no node's readings.
  std::int32_t power_limit_w = 0;

  friend bool operator==(const GpuObservation&, const GpuObservation&) = default;
};

// What a node's agent last reported (observed). Never overwrites NodeRow: a GPU the
// registration lists and `gpus` does not judge keeps the registration's health.
struct ObservedNode {
  core::NodeId node;
  core::ObservedInventory inventory;      // what the agent found when it joined
  std::vector<GpuObservation> gpus;       // one per registered GPU, by index
  std::vector<core::GpuHealth> readings;  // the readings they were judged from (evidence)
  core::Time heartbeat_at;

  friend bool operator==(const ObservedNode&, const ObservedNode&) = default;
};

class NodeRepo {
 public:
  virtual ~NodeRepo() = default;

  // Desired: registration and admin state. Reads of a stored admin state the build does
  // not know are DataLoss.
  virtual core::Status upsert_node(const NodeRow& row) = 0;
  virtual core::Result<std::optional<NodeRow>> get_node(const core::NodeId& id) = 0;
  virtual core::Result<std::vector<NodeRow>> list_nodes() = 0;  // by name
  // Removes the registration and what its agent observed (the agent session and its
  // fencing epoch stay, so a returning agent never reuses an epoch). The caller checks
  // that nothing runs there.
  virtual core::Status delete_node(const core::NodeId& id) = 0;

  // Observed: the agent's last report, replaced whole. Reads of stored values this build
  // cannot decode are DataLoss.
  virtual core::Status upsert_observed(const ObservedNode& row) = 0;
  // A heartbeat's write, cheaper than upsert_observed() (it is most of a fleet's writes):
  // the readings and time, and the GPUs' conditions only when given (nullopt: as they
  // were), leaving the inventory the join wrote. False when the node has no observation
  // yet: upsert_observed() it instead.
  virtual core::Result<bool> update_observed(const core::NodeId& id,
                                             const std::optional<std::vector<GpuObservation>>& gpus,
                                             const std::vector<core::GpuHealth>& readings,
                                             core::Time heartbeat_at) = 0;
  // The GPUs' conditions as last judged, by index (empty when never judged).
  virtual core::Result<std::vector<GpuObservation>> list_gpu_conditions(const core::NodeId& id) = 0;
  virtual core::Result<std::optional<ObservedNode>> get_observed(const core::NodeId& id) = 0;
  virtual core::Result<std::vector<ObservedNode>> list_observed() = 0;  // by node
  // The same without the readings (`readings` empty): the inventory and the judged
  // conditions, which are what a scheduling cycle needs of every node.
  virtual core::Result<std::vector<ObservedNode>> list_observed_without_readings() = 0;
};

}  // namespace corral::store
