// Simulated nodes shaped like real ones. Models, memory (as NVML reports it), power
// limits, PCI bus ids and NUMA placement follow the vendors' system guides; the NVLink
// peers give the topology the scheduler cares about.
#include <algorithm>
#include <functional>
#include <map>

#include "agent/simulated/simulated_inventory.h"
#include "agent/topology.h"

namespace corral::agent {
namespace {

struct Preset {
  std::int32_t cpus;
  std::int64_t memory_mib;
  const char* model;
  std::int64_t gpu_memory_mib;
  std::int32_t power_limit_w;
  std::vector<const char*> bus_ids;
  std::function<std::int32_t(std::int32_t)> numa;
  // Peers of GPU i among n: all others (NVSwitch), its pair, ...
  std::function<std::vector<std::int32_t>(std::int32_t, std::int32_t)> peers;
  bool rack_nvlink = false;  // the trays of a rack form one NVLink domain (GB200 NVL72)
};

std::vector<std::int32_t> all_others(std::int32_t i, std::int32_t n) {
  std::vector<std::int32_t> out;
  for (std::int32_t j = 0; j < n; ++j) {
    if (j != i) out.push_back(j);
  }
  return out;
}

std::vector<std::int32_t> pair_peer(std::int32_t i, std::int32_t /*n*/) { return {i ^ 1}; }

const std::map<std::string, Preset>& presets() {
  static const std::map<std::string, Preset> kPresets = {
      // DGX H100: 8 H100 SXM5 on four NVSwitch chips (one domain), 2 sockets.
      {"dgx-h100",
       {224,
        2048 * 1024,
        "NVIDIA H100 80GB HBM3",
        81559,
        700,
        {"0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0", "0000:5d:00.0", "0000:9a:00.0",
         "0000:ab:00.0", "0000:ba:00.0", "0000:db:00.0"},
        [](std::int32_t i) { return i / 4; },
        all_others}},
      // DGX A100 (640 GB): 8 A100 SXM4 80GB on six NVSwitch chips, 2 sockets.
      {"dgx-a100",
       {256,
        2048 * 1024,
        "NVIDIA A100-SXM4-80GB",
        81920,
        400,
        {"0000:07:00.0", "0000:0f:00.0", "0000:47:00.0", "0000:4e:00.0", "0000:87:00.0",
         "0000:90:00.0", "0000:b7:00.0", "0000:bd:00.0"},
        [](std::int32_t i) { return i / 4; },
        all_others}},
      // A PCIe server: 8 A100 80GB PCIe cards, NVLink bridges join pairs (0,1), (2,3), ...
      {"pcie-8gpu",
       {128,
        1024 * 1024,
        "NVIDIA A100 80GB PCIe",
        81920,
        300,
        {"0000:17:00.0", "0000:31:00.0", "0000:4b:00.0", "0000:65:00.0", "0000:98:00.0",
         "0000:b1:00.0", "0000:ca:00.0", "0000:e3:00.0"},
        [](std::int32_t i) { return i / 4; },
        pair_peer}},
      // One compute tray of a GB200 NVL72 rack: 2 Grace CPUs, 4 Blackwell GPUs; every GPU
      // of the rack shares the NVLink switch trays (the nvlinkRack label says which).
      {"gb200-nvl72-tray",
       {144,
        960 * 1024,
        "NVIDIA GB200",
        189471,
        1200,
        {"0008:01:00.0", "0009:01:00.0", "0018:01:00.0", "0019:01:00.0"},
        [](std::int32_t i) { return i / 2; },
        all_others,
        true}},
  };
  return kPresets;
}

}  // namespace

std::vector<std::string> preset_names() {
  std::vector<std::string> names;
  for (const auto& [name, preset] : presets()) names.push_back(name);
  return names;
}

core::Result<std::unique_ptr<Inventory>> open_preset_inventory(const std::string& preset,
                                                               const std::string& node) {
  const auto it = presets().find(preset);
  if (it == presets().end()) {
    std::string known;
    for (const std::string& name : preset_names()) known += (known.empty() ? "" : ", ") + name;
    return core::invalid_argument("--simulate",
                                  "unknown preset '" + preset + "' (known: " + known + ")");
  }
  const Preset& p = it->second;
  NodeInventory inv{.source = "simulated:" + preset, .cpus = p.cpus, .memory_mib = p.memory_mib};
  const auto n = static_cast<std::int32_t>(p.bus_ids.size());
  CORRAL_ASSIGN_OR_RETURN(const std::string type, gpu_type_for_model(p.model, p.gpu_memory_mib));
  for (std::int32_t i = 0; i < n; ++i) {
    inv.gpus.push_back(GpuInfo{.index = i,
                               .uuid = simulated_gpu_uuid(node, i),
                               .model = p.model,
                               .type = type,
                               .memory_mib = p.gpu_memory_mib,
                               .power_limit_w = p.power_limit_w,
                               .pci_bus_id = p.bus_ids[static_cast<std::size_t>(i)],
                               .numa_node = p.numa(i),
                               .nvlink_peers = p.peers(i, n)});
  }
  inv.rack_nvlink_domain = p.rack_nvlink;
  CORRAL_RETURN_IF_ERROR(validate_inventory(inv));
  return std::unique_ptr<Inventory>(std::make_unique<SimulatedInventory>(std::move(inv)));
}

}  // namespace corral::agent
