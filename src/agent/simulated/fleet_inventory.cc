// `--emulate N --fleet FILE`: the nodes of a simulator fleet file (core/fleet_pools.h)
// as simulated inventories, each what a real agent on a node of that shape discovers:
// the type's vendor model name, its memory and power limit from the fleet's GPU type,
// the NVLink peers of each GPU (the other GPUs of its NVLink domain, so the agent's own
// nvlink_domains() gives the fleet's domains back), the NUMA placement, cpus and memory,
// and a rack-wide NVLink domain for the trays of an NVLink rack. A fleet file names no
// PCI bus ids, so none are reported.
#include <filesystem>
#include <optional>

#include "agent/atomic_file.h"
#include "agent/simulated/simulated_inventory.h"
#include "agent/topology.h"

namespace corral::agent {

core::Result<core::FleetPools> load_fleet_pools(const std::string& path) {
  const std::optional<std::string> text = read_file(path);
  if (!text) return core::invalid_argument("--fleet", "cannot read '" + path + "'");
  auto fleet = core::parse_fleet_pools(*text, path);
  if (!fleet.ok()) {
    const core::Status& s = fleet.status();
    std::string message = s.message();  // "FILE: must be ...": the path said once
    if (message.starts_with(path + ": ")) message.erase(0, path.size() + 2);
    return core::invalid_argument("--fleet", path + ": " + s.field() + ": " + message);
  }
  // corrald registers only the catalog's types (a fleet file may define its own for the
  // simulator); refuse here, not join by join.
  for (const core::GpuType& type : fleet->gpu_types) {
    if (!core::find_builtin_gpu_type(type.id.value) || !model_for_gpu_type(type.id.value).ok()) {
      return core::invalid_argument(
          "--fleet", path + ": GPU type '" + type.id.value +
                         "' is not in Corral's catalog (core/gpu_type.cc), so corrald would "
                         "refuse its nodes: emulate only fleets of built-in types");
    }
  }
  return fleet;
}

core::Result<NodeInventory> fleet_node_inventory(const core::FleetPools& fleet,
                                                 const core::Node& shape, const std::string& node,
                                                 const std::string& source) {
  NodeInventory inv{.source = source,
                    .cpus = shape.cpus,
                    .memory_mib = shape.memory_mib,
                    .rack_nvlink_domain = !shape.labels.nvlink_rack.empty()};
  for (const core::Gpu& g : shape.gpus) {
    const auto type = fleet.types.find(g.type);
    if (type == fleet.types.end()) {
      return core::invalid_argument(
          "--fleet", "node " + shape.id.value + ": unknown GPU type '" + g.type.value + "'");
    }
    CORRAL_ASSIGN_OR_RETURN(const std::string model, model_for_gpu_type(g.type.value));
    GpuInfo gpu{.index = g.index,
                .uuid = simulated_gpu_uuid(node, g.index),
                .model = model,
                .type = g.type.value,
                .memory_mib = type->second.memory_mib,
                .power_limit_w = type->second.tdp_watts,
                .numa_node = g.numa_node};
    for (const core::Gpu& peer : shape.gpus) {
      if (peer.index != g.index && peer.nvlink_domain == g.nvlink_domain) {
        gpu.nvlink_peers.push_back(peer.index);
      }
    }
    inv.gpus.push_back(std::move(gpu));
  }
  CORRAL_RETURN_IF_ERROR(validate_inventory(inv));
  return inv;
}

core::Result<std::unique_ptr<Inventory>> open_fleet_node_inventory(const core::FleetPools& fleet,
                                                                   const core::Node& shape,
                                                                   const std::string& node,
                                                                   const std::string& path) {
  CORRAL_ASSIGN_OR_RETURN(
      NodeInventory inv,
      fleet_node_inventory(
          fleet, shape, node,
          "fleet:" + std::filesystem::path(path).filename().string() + ":" + shape.id.value));
  return std::unique_ptr<Inventory>(std::make_unique<SimulatedInventory>(std::move(inv)));
}

}  // namespace corral::agent
