#include "agent/topology.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <numeric>
#include <set>
#include <utility>

#include "core/gpu_type.h"

namespace corral::agent {
namespace {

int find_root(std::vector<int>& parent, int x) {
  while (parent[x] != x) x = parent[x] = parent[parent[x]];
  return x;
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// True when `token` occurs in `name` as a whole word: "A10" must not match "A100".
bool has_word(const std::string& name, const std::string& token) {
  for (std::size_t pos = name.find(token); pos != std::string::npos;
       pos = name.find(token, pos + 1)) {
    const bool left = pos == 0 || !std::isalnum(static_cast<unsigned char>(name[pos - 1]));
    const std::size_t end = pos + token.size();
    const bool right = end == name.size() || !std::isalnum(static_cast<unsigned char>(name[end]));
    if (left && right) return true;
  }
  return false;
}

std::uint64_t fnv1a(const std::string& s, std::uint64_t h) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

}  // namespace

std::vector<std::int32_t> nvlink_domains(const std::vector<GpuInfo>& gpus) {
  const int n = static_cast<int>(gpus.size());
  std::vector<int> parent(static_cast<std::size_t>(n));
  std::iota(parent.begin(), parent.end(), 0);
  for (int i = 0; i < n; ++i) {
    for (const std::int32_t peer : gpus[static_cast<std::size_t>(i)].nvlink_peers) {
      const auto it =
          std::find_if(gpus.begin(), gpus.end(), [&](const GpuInfo& g) { return g.index == peer; });
      if (it == gpus.end()) continue;
      const int a = find_root(parent, i);
      const int b = find_root(parent, static_cast<int>(it - gpus.begin()));
      if (a != b) parent[static_cast<std::size_t>(std::max(a, b))] = std::min(a, b);
    }
  }
  // Number components by first appearance; gpus are sorted by index, so that is the
  // order of each component's lowest index.
  std::vector<std::int32_t> domain(static_cast<std::size_t>(n), -1);
  std::vector<std::int32_t> root_domain(static_cast<std::size_t>(n), -1);
  std::int32_t next = 0;
  for (int i = 0; i < n; ++i) {
    const auto root = static_cast<std::size_t>(find_root(parent, i));
    if (root_domain[root] < 0) root_domain[root] = next++;
    domain[static_cast<std::size_t>(i)] = root_domain[root];
  }
  return domain;
}

core::Result<std::string> gpu_type_for_model(const std::string& model, std::int64_t memory_mib) {
  const std::string name = upper(model);
  const bool small = memory_mib > 0 && memory_mib < 50 * 1024;
  // Most specific first: "GB200" contains "B200"; short names must match whole words
  // ("A10" is not "A100", "L4" is not "L40S").
  struct Rule {
    const char* token;
    const char* type;
    bool whole_word;
  };
  static const Rule kRules[] = {
      {"GB200", "GB200", false}, {"B200", "B200", false}, {"H200", "H200", false},
      {"H100", "H100", false},   {"L40S", "L40S", false}, {"L4", "L4", true},
      {"T4", "T4", true},        {"A10", "A10", true},
  };
  if (name.find("A100") != std::string::npos) {
    return std::string(name.find("40GB") != std::string::npos || small ? "A100-40GB" : "A100-80GB");
  }
  if (name.find("V100") != std::string::npos) {
    const bool small16 =
        name.find("16GB") != std::string::npos || (memory_mib > 0 && memory_mib < 24 * 1024);
    return std::string(small16 ? "V100-16GB" : "V100");
  }
  for (const Rule& rule : kRules) {
    const bool match =
        rule.whole_word ? has_word(name, rule.token) : name.find(rule.token) != std::string::npos;
    if (match) return std::string(rule.type);
  }
  return core::not_found("no Corral GPU type for model '" + model +
                         "' (known: A10, A100-40GB, A100-80GB, B200, GB200, H100, H200, L4, L40S, "
                         "T4, V100, V100-16GB); give `type:` in an inventory file");
}

core::Result<std::string> model_for_gpu_type(const std::string& type) {
  // One name per catalog entry, as NVML reports the SXM part (the PCIe parts' names map
  // to the same types).
  static const std::pair<const char*, const char*> kModels[] = {
      {"A10", "NVIDIA A10"},
      {"A100-40GB", "NVIDIA A100-SXM4-40GB"},
      {"A100-80GB", "NVIDIA A100-SXM4-80GB"},
      {"B200", "NVIDIA B200"},
      {"GB200", "NVIDIA GB200"},
      {"H100", "NVIDIA H100 80GB HBM3"},
      {"H200", "NVIDIA H200"},
      {"L4", "NVIDIA L4"},
      {"L40S", "NVIDIA L40S"},
      {"T4", "Tesla T4"},
      {"V100", "Tesla V100-SXM2-32GB"},
      {"V100-16GB", "Tesla V100-SXM2-16GB"},
  };
  for (const auto& [id, model] : kModels) {
    if (type == id) return std::string(model);
  }
  return core::not_found("no model name for GPU type '" + type + "' (not in Corral's catalog)");
}

std::string simulated_gpu_uuid(const std::string& node, std::int32_t index) {
  const std::string key = node + "/" + std::to_string(index);
  const std::uint64_t a = fnv1a(key, 14695981039346656037ULL);
  const std::uint64_t b = fnv1a(key + "#", a ^ 0x9e3779b97f4a7c15ULL);
  char buf[64];
  std::snprintf(buf, sizeof(buf), "GPU-%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(a >> 32),
                static_cast<unsigned>((a >> 16) & 0xffff), static_cast<unsigned>(a & 0xffff),
                static_cast<unsigned>(b >> 48),
                static_cast<unsigned long long>(b & 0xffffffffffffULL));
  return buf;
}

core::Status validate_inventory(const NodeInventory& inventory) {
  std::set<std::string> uuids;
  const auto n = static_cast<std::int32_t>(inventory.gpus.size());
  for (std::int32_t i = 0; i < n; ++i) {
    const GpuInfo& g = inventory.gpus[static_cast<std::size_t>(i)];
    const std::string path = "gpus[" + std::to_string(i) + "]";
    if (g.index != i) {
      return core::invalid_argument(path + ".index", "must be " + std::to_string(i) +
                                                         " (indices dense from 0, in order), got " +
                                                         std::to_string(g.index));
    }
    if (g.uuid.empty()) return core::invalid_argument(path + ".uuid", "must not be empty");
    if (!uuids.insert(g.uuid).second) {
      return core::invalid_argument(path + ".uuid", "duplicate uuid '" + g.uuid + "'");
    }
    if (!core::find_builtin_gpu_type(g.type)) {
      return core::invalid_argument(path + ".type", "unknown GPU type '" + g.type + "'");
    }
    for (std::size_t p = 0; p < g.nvlink_peers.size(); ++p) {
      const std::int32_t peer = g.nvlink_peers[p];
      if (peer < 0 || peer >= n || peer == i) {
        return core::invalid_argument(path + ".nvlinkPeers[" + std::to_string(p) + "]",
                                      "must be the index of another GPU of this node (0.." +
                                          std::to_string(n - 1) + "), got " + std::to_string(peer));
      }
    }
  }
  return core::ok_status();
}

core::JoinRequest join_request(const std::string& node, const std::string& agent_url,
                               const core::TopologyLabels& labels, std::int64_t rack_power_cap_w,
                               const NodeInventory& inventory) {
  core::JoinRequest r{.agent_url = agent_url,
                      .rack_power_cap_w = rack_power_cap_w,
                      .node = {.id = core::NodeId(node),
                               .labels = labels,
                               .cpus = inventory.cpus,
                               .memory_mib = inventory.memory_mib},
                      .inventory = {.source = inventory.source}};
  const std::vector<std::int32_t> domains = nvlink_domains(inventory.gpus);
  for (std::size_t i = 0; i < inventory.gpus.size(); ++i) {
    const GpuInfo& g = inventory.gpus[i];
    r.node.gpus.push_back({.index = g.index,
                           .uuid = g.uuid,
                           .type = core::GpuTypeId(g.type),
                           .nvlink_domain = domains[i],
                           .numa_node = g.numa_node});
    r.inventory.gpus.push_back({.index = g.index,
                                .uuid = g.uuid,
                                .model = g.model,
                                .memory_mib = g.memory_mib,
                                .power_limit_w = g.power_limit_w,
                                .pci_bus_id = g.pci_bus_id,
                                .numa_node = g.numa_node,
                                .nvlink_peers = g.nvlink_peers});
  }
  return r;
}

}  // namespace corral::agent
