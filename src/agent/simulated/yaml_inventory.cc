// `--inventory FILE`: a node described in YAML (format in docs/agent.md). Every
// rejection names the field and the reason, e.g. `gpus[2].nvlinkPeers[0]: must be the
// index of another GPU of this node (0..7), got 9`.
#include <fstream>
#include <set>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "agent/simulated/simulated_inventory.h"
#include "agent/topology.h"

namespace corral::agent {
namespace {

core::Status only_keys(const YAML::Node& map, const std::string& path,
                       const std::set<std::string>& allowed) {
  for (const auto& kv : map) {
    const std::string key = kv.first.as<std::string>();
    if (!allowed.count(key)) {
      return core::invalid_argument(path.empty() ? key : path + "." + key, "unknown field");
    }
  }
  return core::ok_status();
}

template <typename T>
core::Status read_int(const YAML::Node& map, const std::string& path, const char* key, T min, T max,
                      T& out) {
  const YAML::Node v = map[key];
  if (!v) return core::ok_status();
  const std::string field = path.empty() ? key : path + "." + key;
  long long value = 0;
  try {
    if (!v.IsScalar()) throw YAML::Exception(YAML::Mark(), "not a scalar");
    value = v.as<long long>();
  } catch (const YAML::Exception&) {
    return core::invalid_argument(
        field, "must be an integer, got '" + (v.IsScalar() ? v.Scalar() : std::string("?")) + "'");
  }
  if (value < min || value > max) {
    return core::invalid_argument(field, "must be between " + std::to_string(min) + " and " +
                                             std::to_string(max) + ", got " +
                                             std::to_string(value));
  }
  out = static_cast<T>(value);
  return core::ok_status();
}

core::Status read_string(const YAML::Node& map, const std::string& path, const char* key,
                         std::string& out) {
  const YAML::Node v = map[key];
  if (!v) return core::ok_status();
  if (!v.IsScalar()) {
    return core::invalid_argument(path.empty() ? key : path + "." + key, "must be a string");
  }
  out = v.Scalar();
  return core::ok_status();
}

core::Result<GpuInfo> parse_gpu(const YAML::Node& g, std::int32_t position,
                                const std::string& node) {
  const std::string path = "gpus[" + std::to_string(position) + "]";
  if (!g.IsMap()) return core::invalid_argument(path, "must be a map");
  CORRAL_RETURN_IF_ERROR(only_keys(g, path,
                                   {"index", "uuid", "model", "type", "memoryMib", "powerLimitW",
                                    "pciBusId", "numaNode", "nvlinkPeers"}));
  GpuInfo gpu{.index = position};
  CORRAL_RETURN_IF_ERROR(read_int<std::int32_t>(g, path, "index", 0, 1023, gpu.index));
  CORRAL_RETURN_IF_ERROR(read_string(g, path, "uuid", gpu.uuid));
  if (gpu.uuid.empty()) gpu.uuid = simulated_gpu_uuid(node, gpu.index);
  CORRAL_RETURN_IF_ERROR(read_string(g, path, "model", gpu.model));
  if (gpu.model.empty()) return core::invalid_argument(path + ".model", "is required");
  CORRAL_RETURN_IF_ERROR(
      read_int<std::int64_t>(g, path, "memoryMib", 1, 16LL * 1024 * 1024, gpu.memory_mib));
  CORRAL_RETURN_IF_ERROR(read_string(g, path, "type", gpu.type));
  if (gpu.type.empty()) {
    auto type = gpu_type_for_model(gpu.model, gpu.memory_mib);
    if (!type.ok()) return core::invalid_argument(path + ".model", type.status().message());
    gpu.type = *type;
  }
  CORRAL_RETURN_IF_ERROR(
      read_int<std::int32_t>(g, path, "powerLimitW", 1, 10000, gpu.power_limit_w));
  CORRAL_RETURN_IF_ERROR(read_string(g, path, "pciBusId", gpu.pci_bus_id));
  CORRAL_RETURN_IF_ERROR(read_int<std::int32_t>(g, path, "numaNode", 0, 1024, gpu.numa_node));
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
    CORRAL_RETURN_IF_ERROR(only_keys(doc, "", {"cpus", "memoryMib", "rackNvlinkDomain", "gpus"}));
    CORRAL_RETURN_IF_ERROR(read_int<std::int32_t>(doc, "", "cpus", 1, 1 << 20, inv.cpus));
    CORRAL_RETURN_IF_ERROR(
        read_int<std::int64_t>(doc, "", "memoryMib", 1, 1LL << 40, inv.memory_mib));
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
