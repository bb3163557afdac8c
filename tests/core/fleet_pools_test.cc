#include "core/fleet_pools.h"

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace corral::core {
namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

const std::string kSource = CORRAL_SOURCE_DIR;

std::vector<std::int32_t> domains_of(const Node& node) {
  std::vector<std::int32_t> out;
  for (const Gpu& g : node.gpus) out.push_back(g.nvlink_domain);
  return out;
}

TEST(FleetPools, ExpandsPoolsIntoNodesWithTheirTopology) {
  auto f = parse_fleet_pools(read_text(kSource + "/tests/testdata/mixed-fleet.yaml"), "mixed");
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  EXPECT_EQ(f->region, "us-test");
  std::vector<std::string> ids, types;
  for (const Node& n : f->nodes) ids.push_back(n.id.value);
  for (const GpuType& t : f->gpu_types) types.push_back(t.id.value);
  EXPECT_EQ(ids, (std::vector<std::string>{"gb200-00000", "gb200-00001", "h100-00000", "h100-00001",
                                           "h100-00002", "l40s-00000"}));
  EXPECT_EQ(types, (std::vector<std::string>{"GB200", "H100", "L40S"}));

  struct Want {
    std::string type;
    std::size_t gpus;
    TopologyLabels labels;
    std::vector<std::int32_t> domains;
    std::int32_t cpus;
    std::int64_t memory_mib;
  };
  const TopologyLabels gb200{.region = "us-test",
                             .cluster = "c1",
                             .spine = "spine-001",
                             .leaf = "leaf-0002",
                             .rack = "gb200-r0000",
                             .nvlink_rack = "gb200-r0000"};
  const auto placed = [](std::string spine, std::string leaf, std::string rack) {
    return TopologyLabels{.region = "us-test",
                          .cluster = "c1",
                          .spine = std::move(spine),
                          .leaf = std::move(leaf),
                          .rack = std::move(rack)};
  };
  const std::vector<std::int32_t> one_domain8(8, 0);
  const std::vector<Want> want = {
      {"GB200", 4, gb200, {0, 0, 0, 0}, 144, 960 * 1024},
      {"GB200", 4, gb200, {0, 0, 0, 0}, 144, 960 * 1024},
      {"H100", 8, placed("spine-000", "leaf-0000", "h100-r0000"), one_domain8, 224, 2048 * 1024},
      {"H100", 8, placed("spine-000", "leaf-0000", "h100-r0000"), one_domain8, 224, 2048 * 1024},
      {"H100", 8, placed("spine-000", "leaf-0001", "h100-r0001"), one_domain8, 224, 2048 * 1024},
      {"L40S", 4, placed("spine-001", "leaf-0003", "l40s-r0000"), {0, 0, 1, 1}, 64, 512 * 1024},
  };
  ASSERT_EQ(f->nodes.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    const Node& n = f->nodes[i];
    SCOPED_TRACE(n.id.value);
    ASSERT_EQ(n.gpus.size(), want[i].gpus);
    for (std::size_t g = 0; g < n.gpus.size(); ++g) {
      EXPECT_EQ(n.gpus[g].index, static_cast<std::int32_t>(g));
      EXPECT_EQ(n.gpus[g].type.value, want[i].type);
      // Half the GPUs on each socket.
      EXPECT_EQ(n.gpus[g].numa_node, g < n.gpus.size() / 2 ? 0 : 1);
    }
    EXPECT_EQ(n.labels, want[i].labels);
    EXPECT_EQ(domains_of(n), want[i].domains);
    EXPECT_EQ(n.cpus, want[i].cpus);
    EXPECT_EQ(n.memory_mib, want[i].memory_mib);
  }
  // One power rack per nodes_per_rack nodes of a pool, the NVLink rack one of them.
  std::map<std::string, std::int64_t> racks;
  for (const Rack& r : f->racks) racks[r.name] = r.power_cap_watts;
  EXPECT_EQ(
      racks,
      (std::map<std::string, std::int64_t>{
          {"gb200-r0000", 0}, {"h100-r0000", 40000}, {"h100-r0001", 40000}, {"l40s-r0000", 0}}));
}

TEST(FleetPools, CountsTheTenThousandGpuFleetByPool) {
  auto f = parse_fleet_pools(read_text(kSource + "/examples/fleets/fleet-10k.yaml"), "10k");
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  std::map<std::string, std::int64_t> nodes, gpus;
  std::map<std::string, std::int64_t> nvlink_rack_gpus;
  for (const Node& n : f->nodes) {
    const std::string type = n.gpus.front().type.value;
    ++nodes[type];
    gpus[type] += static_cast<std::int64_t>(n.gpus.size());
    if (!n.labels.nvlink_rack.empty()) {
      nvlink_rack_gpus[n.labels.nvlink_rack] += static_cast<std::int64_t>(n.gpus.size());
    }
  }
  EXPECT_EQ(nodes,
            (std::map<std::string, std::int64_t>{{"GB200", 216}, {"H100", 1100}, {"L40S", 42}}));
  EXPECT_EQ(gpus,
            (std::map<std::string, std::int64_t>{{"GB200", 864}, {"H100", 8800}, {"L40S", 336}}));
  ASSERT_EQ(nvlink_rack_gpus.size(), 12u);  // NVL72 racks
  for (const auto& [rack, n] : nvlink_rack_gpus) EXPECT_EQ(n, 72) << rack;
  // 32 nodes to a leaf, 8 leaves to a spine; each pool starts a new leaf.
  std::map<std::string, std::int64_t> per_leaf;
  for (const Node& n : f->nodes) ++per_leaf[n.labels.leaf];
  EXPECT_EQ(per_leaf.size(), 35u + 7u + 2u);  // ceil(1100/32), ceil(216/32), ceil(42/32)
  EXPECT_EQ(per_leaf["leaf-0000"], 32);
}

TEST(FleetPools, TheSimulatorsSectionsAreAllowedAndNotRead) {
  const std::string pool = "pools:\n  - {name: p, gpu_type: H100, nodes: 2, gpus_per_node: 8}\n";
  auto f = parse_fleet_pools(pool +
                                 "name: x\nprices: {per_gpu_hour_usd: {H100: 3}}\n"
                                 "failures: {repair_hours: 2}\ntenants: [{name: a}]\n"
                                 "trace_tenants: {weight: 1}\njob_regions: {fraction: 0}\n",
                             "f.yaml");
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  EXPECT_EQ(f->nodes.size(), 2u);
}

TEST(FleetPools, BadInputNamesTheField) {
  const std::string pool = "pools:\n  - {name: p, gpu_type: H100, nodes: 2, gpus_per_node: 8}\n";
  const auto one = [](const std::string& fields) {
    return "pools:\n  - {name: p, gpu_type: H100, nodes: 1, gpus_per_node: 8, " + fields + "}\n";
  };
  struct Case {
    std::string name, yaml, field, message;
  };
  const std::vector<Case> cases = {
      {"no pools", "name: x\n", "pools", "is required"},
      {"empty pools", "pools: []\n", "pools", "must be a non-empty list"},
      {"zero gpus", "pools:\n  - {name: p, gpu_type: H100, nodes: 1, gpus_per_node: 0}\n",
       "pools[0].gpus_per_node", "must be between 1 and 64, got 0"},
      {"unknown type", "pools:\n  - {name: p, gpu_type: K9000, nodes: 1, gpus_per_node: 8}\n",
       "pools[0].gpu_type", "unknown GPU type 'K9000'"},
      {"domain does not divide", one("nvlink_domain_gpus: 3"), "pools[0].nvlink_domain_gpus",
       "must divide gpus_per_node (8), got 3"},
      {"rack is not the nvl rack", one("nvl_rack_trays: 18, nodes_per_rack: 4"),
       "pools[0].nodes_per_rack", "must equal nvl_rack_trays"},
      {"pool typo", one("cpu: 8"), "pools[0].cpu", "unknown field"},
      {"pool name with a slash",
       "pools:\n  - {name: a/b, gpu_type: H100, nodes: 1, "
       "gpus_per_node: 8}\n",
       "pools[0].name", "must be non-empty without spaces or '/'"},
      {"duplicate pool", pool + "  - {name: p, gpu_type: L40S, nodes: 1, gpus_per_node: 4}\n",
       "pools[1].name", "duplicate pool 'p'"},
      {"network typo", pool + "network: {nodes_per_leave: 4}\n", "network.nodes_per_leave",
       "unknown field"},
      {"type without an id", pool + "gpu_types: [{memory_gib: 8}]\n", "gpu_types[0].id",
       "is required"},
      {"region not a dns label", one("region: EU_West"), "pools[0].region", "must be a DNS label"},
      {"unknown section", pool + "colour: blue\n", "colour", "unknown field"},
      {"yaml syntax", "pools: [\n", "(yaml)", "line"},
      {"root not a map", "- 1\n", "(root)", "must be a map"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto f = parse_fleet_pools(c.yaml, "f.yaml");
    ASSERT_FALSE(f.ok());
    EXPECT_EQ(f.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(f.status().field(), c.field);
    EXPECT_NE(f.status().message().find(c.message), std::string::npos) << f.status().to_string();
    EXPECT_TRUE(f.status().message().starts_with("f.yaml: ")) << f.status().to_string();
  }
}

}  // namespace
}  // namespace corral::core
