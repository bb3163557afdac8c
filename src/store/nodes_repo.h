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

// What a node's agent last reported. Never overwrites NodeRow.
struct InventoryRow {
  core::NodeId node;
  std::string inventory_json;  // GPUs with health as observed
  core::Time heartbeat_at;
};

class NodeRepo {
 public:
  virtual ~NodeRepo() = default;

  // Desired: registration and admin state. Reads of a stored admin state the build does
  // not know are DataLoss.
  virtual core::Status upsert_node(const NodeRow& row) = 0;
  virtual core::Result<std::optional<NodeRow>> get_node(const core::NodeId& id) = 0;
  virtual core::Result<std::vector<NodeRow>> list_nodes() = 0;  // by name

  // Observed: the agent's last report.
  virtual core::Status upsert_inventory(const InventoryRow& row) = 0;
  virtual core::Result<std::optional<InventoryRow>> get_inventory(const core::NodeId& id) = 0;
  virtual core::Result<std::vector<InventoryRow>> list_inventory() = 0;  // by node
};

}  // namespace corral::store
