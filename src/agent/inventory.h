// Inventory: what the agent knows about its node's GPUs, from NVML or a simulation.
//
// One narrow interface (STYLE.md rule 2) with three adapters: NVML loaded at run time
// (nvml/nvml_inventory.cc), a named preset and a YAML file (simulated/). The agent lists
// the GPUs once at join time, reads health before every heartbeat and samples telemetry
// every few seconds; the tests run
// the same assertions over every adapter, the NVML one against a fake libnvidia-ml.
//
// Thread safety: an Inventory needs external synchronization (the agent's heartbeat and
// telemetry threads take one mutex around it).
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/agent_protocol.h"
#include "core/fleet_pools.h"
#include "core/result.h"

namespace corral::agent {

// A GPU as discovered: identity and topology. Fixed while the agent runs.
struct GpuInfo {
  std::int32_t index = 0;
  std::string uuid;   // "GPU-…", stable across reboots
  std::string model;  // the vendor's name, e.g. "NVIDIA H100 80GB HBM3"
  std::string type;   // the Corral GPU type id (core/gpu_type.h), e.g. "H100"
  std::int64_t memory_mib = 0;
  std::int32_t power_limit_w = 0;
  std::string pci_bus_id;                  // "0000:18:00.0"
  std::int32_t numa_node = 0;              // the CPU socket its PCIe root hangs off
  std::vector<std::int32_t> nvlink_peers;  // GPUs reachable over NVLink (direct or via NVSwitch)
};

// The whole node as discovered.
struct NodeInventory {
  std::string source;  // "nvml", "simulated:dgx-h100", "file:/path"
  std::int32_t cpus = 0;
  std::int64_t memory_mib = 0;
  // The node is a tray of a rack-wide NVLink domain (GB200 NVL72): the agent sets the
  // nvlinkRack label (to --labels nvlinkRack, else the rack label, else the node name).
  bool rack_nvlink_domain = false;
  std::vector<GpuInfo> gpus;  // sorted by index, indices dense from 0
};

class Inventory {
 public:
  virtual ~Inventory() = default;
  // The node's GPUs and their topology.
  virtual core::Result<NodeInventory> discover() = 0;
  // Health and utilization of every GPU, in index order.
  virtual core::Result<std::vector<core::GpuHealth>> read_health() = 0;
  // One telemetry sample of every GPU (docs/telemetry.md), in index order, stamped
  // `now_ms`. `busy`: the GPUs a worker runs on now. NVML measures; a simulated inventory
  // makes plausible readings from `busy` (and its later read_health() follows them).
  virtual core::Result<std::vector<core::TelemetrySample>> sample(
      std::int64_t now_ms, const std::set<std::int32_t>& busy) = 0;
  // True for presets and files: only these take injected faults (protocol §7).
  virtual bool simulated() const = 0;
};

// NVML through dlopen: CORRAL_NVML_LIBRARY when set (tests), else "libnvidia-ml.so.1".
// Unavailable when the library cannot be loaded or initialized.
core::Result<std::unique_ptr<Inventory>> open_nvml_inventory();

// A named preset (simulated/presets.cc). `node` seeds the GPUs' UUIDs, so two nodes of
// the same preset never share one. InvalidArgument("--simulate") for an unknown name.
core::Result<std::unique_ptr<Inventory>> open_preset_inventory(const std::string& preset,
                                                               const std::string& node);
// The preset names, sorted.
std::vector<std::string> preset_names();

// A YAML inventory file (simulated/yaml_inventory.cc; format in docs/agent.md).
core::Result<std::unique_ptr<Inventory>> open_file_inventory(const std::string& path,
                                                             const std::string& node);
// The same, from text (tests); `source` names it in the inventory.
core::Result<NodeInventory> parse_inventory_yaml(const std::string& text, const std::string& source,
                                                 const std::string& node);

// `--fleet FILE` (simulated/fleet_inventory.cc): a simulator fleet file's pools expanded
// into nodes (core/fleet_pools.h). InvalidArgument("--fleet") names the file, the field
// and the reason, or a GPU type outside Corral's catalog (a fleet file may define its
// own types for the simulator; corrald registers none of them).
core::Result<core::FleetPools> load_fleet_pools(const std::string& path);
// Node `shape` of `fleet` as the simulated inventory of node `node` (which seeds the GPU
// UUIDs): its GPUs' type, the type's vendor model name, memory and power limit (the
// fleet's GPU type), NUMA node, and as NVLink peers the other GPUs of its NVLink domain;
// its cpus and memory; a rack-wide NVLink domain when it is a tray of an NVLink rack.
// `source` is the inventory's source as reported.
core::Result<NodeInventory> fleet_node_inventory(const core::FleetPools& fleet,
                                                 const core::Node& shape, const std::string& node,
                                                 const std::string& source);
// The same as an Inventory, with source "fleet:FILENAME:FLEET_NODE_ID" (`path` is the
// fleet file's).
core::Result<std::unique_ptr<Inventory>> open_fleet_node_inventory(const core::FleetPools& fleet,
                                                                   const core::Node& shape,
                                                                   const std::string& node,
                                                                   const std::string& path);

}  // namespace corral::agent
