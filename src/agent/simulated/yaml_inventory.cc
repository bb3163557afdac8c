// `--inventory FILE`: a node described in YAML (format in docs/agent.md). Every
// rejection names the field and the reason, e.g. `gpus[2].nvlinkPeers[0]: must be the
// index of another GPU of this node (0..7), got 9`.
#include <fstream>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "agent/simulated/simulated_inventory.h"
#include "agent/topology.h"
#include "core/yaml_fields.h"

namespace corral::agent {
namespace {

core::Result<GpuInfo> parse_gpu(const YAML::Node& g, std::int32_t position,
                                const std::string& node) {
  const std::string path = "gpus[" + std::to_string(position) + "]";
  if (!g.IsMap()) return core::invalid_argument(path, "must be a map");
  core::YamlFields f(g, path);
  CORRAL_RETURN_IF_ERROR(f.only({"index", "uuid", "model", "type", "memoryMib", "powerLimitW",
                                 "pciBusId", "numaNode", "nvlinkPeers"}));
  GpuInfo gpu{.index = position};
  CORRAL_RETURN_IF_ERROR(f.read_int("index", 0, 1023, gpu.index));
  CORRAL_RETURN_IF_ERROR(f.read_string("uuid", gpu.uuid));
  if (gpu.uuid.empty()) gpu.uuid = simulated_gpu_uuid(node, gpu.index);
  CORRAL_RETURN_IF_ERROR(f.read_string("model", gpu.model));
  if (gpu.model.empty()) return core::invalid_argument(path + ".model", "is required");
  CORRAL_RETURN_IF_ERROR(f.read_int("memoryMib", 1, 16LL * 1024 * 1024, gpu.memory_mib));
  CORRAL_RETURN_IF_ERROR(f.read_string("type", gpu.type));
  if (gpu.type.empty()) {
    auto type = gpu_type_for_model(gpu.model, gpu.memory_mib);
    if (!type.ok()) return core::invalid_argument(path + ".model", type.status().message());
    gpu.type = *type;
  }
  CORRAL_RETURN_IF_ERROR(f.read_int("powerLimitW", 1, 10000, gpu.power_limit_w));
  CORRAL_RETURN_IF_ERROR(f.read_string("pciBusId", gpu.pci_bus_id));
  CORRAL_RETURN_IF_ERROR(f.read_int("numaNode", 0, 1024, gpu.numa_node));
  if (const YAML::Node peers = g["nvlinkPeers"]) {
    if (!peers.IsSequence()) {
      return core::invalid_argument(path + ".nvlinkPeers", "must be a list of GPU indices");
    }
    for (std::size_t p = 0; p < peers.size(); ++p) {
      const std::string ppath = path + ".nvlinkPeers[" + std::to_string(p) + "]";
      try {
        gpu.nvlink_peers.push_back(peers[p].as<std::int32_t>());
      } catch (const YAML::Exception&) {
        return core::invalid_argument(ppath, "must be a GPU index");
      }
    }
  }
  return gpu;
}

}  // namespace

core::Result<NodeInventory> parse_inventory_yaml(const std::string& text, const std::string& source,
                                                 const std::string& node) {
  YAML::Node doc;
  try {
    doc = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return core::invalid_argument(
        "", "not valid YAML: " + e.msg + " at line " + std::to_string(e.mark.line + 1));
  }
  if (!doc.IsMap()) return core::invalid_argument("", "must be a map with `gpus`");
  NodeInventory inv{.source = source, .cpus = 1, .memory_mib = 1024};
  try {
    core::YamlFields f(doc, "");
    CORRAL_RETURN_IF_ERROR(f.only({"cpus", "memoryMib", "rackNvlinkDomain", "gpus"}));
    CORRAL_RETURN_IF_ERROR(f.read_int("cpus", 1, 1 << 20, inv.cpus));
    CORRAL_RETURN_IF_ERROR(f.read_int("memoryMib", 1, 1LL << 40, inv.memory_mib));
    if (const YAML::Node r = doc["rackNvlinkDomain"]) {
      if (!r.IsScalar() || (r.Scalar() != "true" && r.Scalar() != "false")) {
        return core::invalid_argument("rackNvlinkDomain", "must be true or false");
      }
      inv.rack_nvlink_domain = r.Scalar() == "true";
    }
    const YAML::Node gpus = doc["gpus"];
    if (!gpus || !gpus.IsSequence() || gpus.size() == 0) {
      return core::invalid_argument("gpus", "must be a non-empty list");
    }
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      CORRAL_ASSIGN_OR_RETURN(GpuInfo gpu, parse_gpu(gpus[i], static_cast<std::int32_t>(i), node));
      inv.gpus.push_back(std::move(gpu));
    }
  } catch (const YAML::Exception& e) {
    return core::invalid_argument("", "not a valid inventory: " + e.msg);
  }
  CORRAL_RETURN_IF_ERROR(validate_inventory(inv));
  return inv;
}

core::Result<std::unique_ptr<Inventory>> open_file_inventory(const std::string& path,
                                                             const std::string& node) {
  std::ifstream in(path);
  if (!in) return core::invalid_argument("--inventory", "cannot read '" + path + "'");
  std::stringstream text;
  text << in.rdbuf();
  auto inv = parse_inventory_yaml(text.str(), "file:" + path, node);
  if (!inv.ok()) {
    const core::Status& s = inv.status();
    return core::invalid_argument(
        "--inventory", path + ": " + (s.field().empty() ? "" : s.field() + ": ") + s.message());
  }
  return std::unique_ptr<Inventory>(std::make_unique<SimulatedInventory>(std::move(*inv)));
}

}  // namespace corral::agent
