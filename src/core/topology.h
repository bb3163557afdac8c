// The physical fleet: nodes, their GPUs, and where they sit in the network.
//
//   region > cluster > spine > leaf switch > node > NVLink/NVSwitch domain > GPU
//                        rack (power budget; may be one multi-node NVLink domain)
//
// Inside a node, GPUs that share an NVLink/NVSwitch fabric have the same
// `nvlink_domain` (a DGX H100 has one domain of 8; a PCIe server with NVLink bridges has
// pairs). A multi-node NVLink rack (GB200 NVL72) sets `labels.nvlink_rack`: every GPU on
// every node with that label is one NVLink domain.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/gpu_type.h"
#include "core/ids.h"

namespace corral::core {

struct TopologyLabels {
  std::string region;
  std::string cluster;
  std::string spine;
  std::string leaf;         // the InfiniBand/Ethernet leaf switch the node hangs off
  std::string rack;         // the power (and physical) rack
  std::string nvlink_rack;  // non-empty: a multi-node NVLink domain spanning the rack
  friend bool operator==(const TopologyLabels&, const TopologyLabels&) = default;
};

// Admin state is desired state set by people or the health controller.
enum class NodeAdminState {
  kActive,    // schedulable
  kCordoned,  // no new work; running work stays
  kDraining,  // no new work; running work is asked to checkpoint and leave
};
std::string_view to_string(NodeAdminState state);

// A GPU's condition as corrald judged its agent's last readings (server/controllers/node_health.h):
// observed state, which only the agent's reports change.
enum class GpuCondition {
  kOk,
  kHot,        // over its temperature or power limit: no new placements, work keeps running
  kUnhealthy,  // a fault: excluded at once, and its node drained
};
std::string_view to_string(GpuCondition condition);

struct Gpu {
  std::int32_t index = 0;  // the device index on its node
  std::string uuid;        // stable across reboots (NVML's GPU-… string)
  GpuTypeId type;
  std::int32_t nvlink_domain = 0;  // GPUs on a node with the same value share NVLink
  std::int32_t numa_node = 0;      // the CPU socket the GPU's PCIe root hangs off
  bool healthy = true;
  // The board power limit its agent reports (NVML's enforced limit); 0: none reported,
  // and the GPU type's catalog TDP counts instead (node_gpu_watts).
  std::int32_t power_limit_watts = 0;
  friend bool operator==(const Gpu&, const Gpu&) = default;
};

struct Node {
  NodeId id;
  TopologyLabels labels;
  std::vector<Gpu> gpus;  // sorted by index
  std::int32_t cpus = 0;
  std::int64_t memory_mib = 0;
  NodeAdminState admin = NodeAdminState::kActive;
  // Its agent stopped answering (corrald's session view): no placements until it joins
  // again. Apart from unhealthy GPUs, so a reason says which it is.
  bool lost = false;
  friend bool operator==(const Node&, const Node&) = default;
};

// A rack's power budget: the sum of its allocated GPUs' watts (node_gpu_watts) must stay
// within it.
struct Rack {
  std::string name;
  std::int64_t power_cap_watts = 0;  // 0: no cap
  friend bool operator==(const Rack&, const Rack&) = default;
};

// What each GPU of `node` (all of type `type`) counts against its rack's power cap: the
// power limit its GPUs report, the catalog TDP for a GPU that reports none. A node whose
// GPUs report different limits counts each at the highest, so that a check made before
// the GPUs are picked holds for whichever are. The scheduler (sched/snapshot.cc), the
// commit-time recount and GET /v1/racks all use this one figure.
std::int64_t node_gpu_watts(const Node& node, const GpuType& type);

}  // namespace corral::core
