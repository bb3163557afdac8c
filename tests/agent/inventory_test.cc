// Inventory adapters: NVML (the real dlopen code against tests/agent/fake_nvml.cc),
// presets and YAML files; NVLink domains from peers; model names to GPU types; faults.
#include "agent/inventory.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "agent/faults.h"
#include "agent/topology.h"
#include "core/gpu_type.h"

namespace corral::agent {
namespace {

std::vector<std::int32_t> domains_of(const NodeInventory& inv) { return nvlink_domains(inv.gpus); }

// One conformance check over every adapter: dense indices, unique UUIDs, known types,
// health for every GPU in index order.
void expect_conforms(Inventory& inventory) {
  auto inv = inventory.discover();
  ASSERT_TRUE(inv.ok()) << inv.status().to_string();
  EXPECT_TRUE(validate_inventory(*inv).ok());
  EXPECT_GT(inv->cpus, 0);
  auto health = inventory.read_health();
  ASSERT_TRUE(health.ok()) << health.status().to_string();
  ASSERT_EQ(health->size(), inv->gpus.size());
  for (std::size_t i = 0; i < health->size(); ++i) {
    EXPECT_EQ((*health)[i].index, static_cast<std::int32_t>(i));
    EXPECT_EQ((*health)[i].uuid, inv->gpus[i].uuid);
  }
}

TEST(NvmlInventory, ReadsTheFakeLibraryThroughDlopen) {
  setenv("CORRAL_NVML_LIBRARY", CORRAL_FAKE_NVML_PATH, 1);
  auto opened = open_nvml_inventory();
  unsetenv("CORRAL_NVML_LIBRARY");
  ASSERT_TRUE(opened.ok()) << opened.status().to_string();
  Inventory& nvml = **opened;
  EXPECT_FALSE(nvml.simulated());
  expect_conforms(nvml);

  auto inv = nvml.discover();
  ASSERT_TRUE(inv.ok());
  EXPECT_EQ(inv->source, "nvml");
  ASSERT_EQ(inv->gpus.size(), 8u);
  const GpuInfo& g0 = inv->gpus[0];
  EXPECT_EQ(g0.uuid, "GPU-fa4e0000-0000-0000-0000-000000000000");
  EXPECT_EQ(g0.model, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(g0.type, "H100");
  EXPECT_EQ(g0.memory_mib, 81559);
  EXPECT_EQ(g0.power_limit_w, 700);
  EXPECT_EQ(g0.pci_bus_id, "0000:18:00.0");
  // Every GPU reaches the others through the 4 NVSwitch chips: one domain.
  EXPECT_EQ(g0.nvlink_peers, (std::vector<std::int32_t>{1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(domains_of(*inv), std::vector<std::int32_t>(8, 0));

  auto health = nvml.read_health();
  ASSERT_TRUE(health.ok());
  const auto& h = *health;
  EXPECT_EQ(h[0].temperature_c, 60);
  EXPECT_DOUBLE_EQ(h[0].power_w, 412.5);
  EXPECT_EQ(h[0].memory_used_mib, 1000);
  EXPECT_TRUE(h[0].throttle.empty());  // GpuIdle is not a problem worth reporting
  EXPECT_EQ(h[1].nvlink_errors, 32);
  EXPECT_EQ(h[3].sm_percent, 30);
  EXPECT_EQ(h[2].ecc_uncorrectable, 3);
  EXPECT_EQ(h[4].xid_errors, std::vector<std::int32_t>{79});
  EXPECT_EQ(h[5].temperature_c, 91);
  EXPECT_EQ(h[5].throttle, (std::vector<std::string>{"sw_power_cap", "hw_thermal_slowdown"}));
  EXPECT_TRUE(h[6].remap_failed);
  EXPECT_FALSE(h[7].present);
  EXPECT_TRUE(h[0].present);
  // XIDs are remembered after the event was drained.
  auto again = nvml.read_health();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)[4].xid_errors, std::vector<std::int32_t>{79});
}

// Telemetry through the same library: one sample per GPU that answers (GPU 7 is lost),
// stamped with the time asked, with the corrected ECC count read besides the rest.
TEST(NvmlInventory, SamplesTelemetryFromTheFakeLibrary) {
  setenv("CORRAL_NVML_LIBRARY", CORRAL_FAKE_NVML_PATH, 1);
  auto opened = open_nvml_inventory();
  unsetenv("CORRAL_NVML_LIBRARY");
  ASSERT_TRUE(opened.ok()) << opened.status().to_string();
  auto samples = (*opened)->sample(123'000, {});
  ASSERT_TRUE(samples.ok()) << samples.status().to_string();
  ASSERT_EQ(samples->size(), 7u);
  const auto& s = *samples;
  for (std::size_t i = 0; i < s.size(); ++i) {
    EXPECT_EQ(s[i].gpu, static_cast<std::int32_t>(i));
    EXPECT_EQ(s[i].time_ms, 123'000);
  }
  EXPECT_DOUBLE_EQ(s[3].utilization, 0.3);
  EXPECT_DOUBLE_EQ(s[0].power_w, 412.5);
  EXPECT_EQ(s[1].memory_used_mib, 1001);
  EXPECT_EQ(s[5].temperature_c, 91);
  EXPECT_EQ(s[5].throttle, (std::vector<std::string>{"sw_power_cap", "hw_thermal_slowdown"}));
  EXPECT_TRUE(s[0].throttle.empty());
  EXPECT_EQ(s[3].ecc_corrected, 12);
  EXPECT_EQ(s[2].ecc_uncorrected, 3);
  EXPECT_EQ(s[0].ecc_corrected, 0);
}

// A simulated GPU a worker runs on reads busy, warm and power-hungry; an idle one idle.
// The health readings that follow say the same, and a second run reads the same values.
TEST(SimulatedInventory, TelemetryFollowsTheWorkersLoad) {
  auto opened = open_preset_inventory("dgx-h100", "n1");
  ASSERT_TRUE(opened.ok());
  Inventory& inv = **opened;
  std::vector<core::TelemetrySample> first;
  for (int round = 0; round < 20; ++round) {
    auto samples = inv.sample(1000 * round, {1, 4});
    ASSERT_TRUE(samples.ok());
    ASSERT_EQ(samples->size(), 8u);
    if (round == 0) first = *samples;
    for (const auto& s : *samples) {
      SCOPED_TRACE(s.gpu);
      EXPECT_EQ(s.time_ms, 1000 * round);
      if (s.gpu == 1 || s.gpu == 4) {
        EXPECT_GE(s.utilization, 0.85);
        EXPECT_LT(s.utilization, 0.98);
        EXPECT_GT(s.power_w, 0.8 * 700 * 0.97);
        EXPECT_LE(s.power_w, 700);
        EXPECT_GE(s.temperature_c, 65);
        EXPECT_LE(s.temperature_c, 80);
        EXPECT_GT(s.memory_used_mib, 0);
      } else {
        EXPECT_LT(s.utilization, 0.01);
        EXPECT_LT(s.power_w, 0.13 * 700);
        EXPECT_LE(s.temperature_c, 38);
        EXPECT_EQ(s.memory_used_mib, 0);
      }
      EXPECT_TRUE(s.throttle.empty());
    }
  }
  auto health = inv.read_health();
  ASSERT_TRUE(health.ok());
  EXPECT_GE((*health)[1].sm_percent, 85);
  EXPECT_GE((*health)[1].temperature_c, 65);
  EXPECT_LE((*health)[0].sm_percent, 1);
  auto again = open_preset_inventory("dgx-h100", "n1");
  ASSERT_TRUE(again.ok());
  auto replay = (*again)->sample(0, {1, 4});
  ASSERT_TRUE(replay.ok());
  EXPECT_EQ(*replay, first);
  // Samples vary between draws (not one constant).
  auto next = inv.sample(0, {1, 4});
  ASSERT_TRUE(next.ok());
  EXPECT_NE((*next)[1].utilization, first[1].utilization);
}

TEST(NvmlInventory, MissingLibraryIsUnavailableWithTheReason) {
  setenv("CORRAL_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
  auto opened = open_nvml_inventory();
  unsetenv("CORRAL_NVML_LIBRARY");
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.status().code(), core::StatusCode::kUnavailable);
  EXPECT_NE(opened.status().message().find("/nonexistent/libnvidia-ml.so.1"), std::string::npos);
}

TEST(Presets, EveryPresetConformsAndHasItsTopology) {
  struct Case {
    std::string name;
    std::size_t gpus;
    std::string type;
    std::vector<std::int32_t> domains;
    bool rack;
  };
  const std::vector<Case> cases = {
      {"dgx-h100", 8, "H100", std::vector<std::int32_t>(8, 0), false},
      {"dgx-a100", 8, "A100-80GB", std::vector<std::int32_t>(8, 0), false},
      {"pcie-8gpu", 8, "A100-80GB", {0, 0, 1, 1, 2, 2, 3, 3}, false},
      {"gb200-nvl72-tray", 4, "GB200", {0, 0, 0, 0}, true},
  };
  ASSERT_EQ(preset_names().size(), cases.size());
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto opened = open_preset_inventory(c.name, "n1");
    ASSERT_TRUE(opened.ok()) << opened.status().to_string();
    expect_conforms(**opened);
    auto inv = (*opened)->discover();
    ASSERT_TRUE(inv.ok());
    EXPECT_EQ(inv->source, "simulated:" + c.name);
    ASSERT_EQ(inv->gpus.size(), c.gpus);
    EXPECT_EQ(inv->gpus[0].type, c.type);
    EXPECT_EQ(domains_of(*inv), c.domains);
    EXPECT_EQ(inv->rack_nvlink_domain, c.rack);
  }
}

TEST(Presets, UuidsDifferAcrossNodesAndUnknownNamesAreRefused) {
  auto a = open_preset_inventory("dgx-h100", "n1");
  auto b = open_preset_inventory("dgx-h100", "n2");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE((*a)->discover()->gpus[0].uuid, (*b)->discover()->gpus[0].uuid);
  EXPECT_EQ((*a)->discover()->gpus[0].uuid, (*a)->discover()->gpus[0].uuid);
  auto bad = open_preset_inventory("dgx-z9", "n1");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().field(), "--simulate");
  EXPECT_NE(bad.status().message().find("dgx-h100"), std::string::npos);
}

TEST(YamlInventory, ParsesAGoodFile) {
  const std::string text = R"(
cpus: 64
memoryMib: 524288
gpus:
  - model: NVIDIA L40S
    memoryMib: 46068
    powerLimitW: 350
    pciBusId: "0000:17:00.0"
  - model: NVIDIA L40S
    memoryMib: 46068
    numaNode: 1
  - model: Tesla V100-SXM2-16GB
    type: V100-16GB
    uuid: GPU-custom
    nvlinkPeers: [3]
  - model: Tesla V100-SXM2-16GB
    nvlinkPeers: [2]
)";
  auto inv = parse_inventory_yaml(text, "file:x.yaml", "n1");
  ASSERT_TRUE(inv.ok()) << inv.status().to_string();
  EXPECT_EQ(inv->cpus, 64);
  ASSERT_EQ(inv->gpus.size(), 4u);
  EXPECT_EQ(inv->gpus[0].type, "L40S");
  EXPECT_EQ(inv->gpus[1].numa_node, 1);
  EXPECT_EQ(inv->gpus[2].uuid, "GPU-custom");
  EXPECT_EQ(inv->gpus[3].type, "V100-16GB");
  EXPECT_EQ(domains_of(*inv), (std::vector<std::int32_t>{0, 1, 2, 2}));
}

TEST(YamlInventory, BadFilesNameTheFieldAndReason) {
  struct Case {
    std::string name, text, field, message_part;
  };
  const std::vector<Case> cases = {
      {"not yaml", "gpus: [", "", "not valid YAML"},
      {"no gpus", "cpus: 4\n", "gpus", "non-empty list"},
      {"unknown top field", "gpuz: []\ngpus: [{model: NVIDIA H100}]\n", "gpuz", "unknown field"},
      {"unknown gpu field", "gpus: [{model: NVIDIA H100, colour: red}]\n", "gpus[0].colour",
       "unknown field"},
      {"no model", "gpus: [{memoryMib: 1}]\n", "gpus[0].model", "required"},
      {"unknown model", "gpus: [{model: Voodoo 5}]\n", "gpus[0].model", "Voodoo 5"},
      {"bad type", "gpus: [{model: NVIDIA H100, type: H9000}]\n", "gpus[0].type", "H9000"},
      {"bad memory", "gpus: [{model: NVIDIA H100, memoryMib: lots}]\n", "gpus[0].memoryMib",
       "integer"},
      {"negative power", "gpus: [{model: NVIDIA H100, powerLimitW: -5}]\n", "gpus[0].powerLimitW",
       "between"},
      {"peer out of range",
       "gpus: [{model: NVIDIA H100, nvlinkPeers: [9]}, {model: NVIDIA H100}]\n",
       "gpus[0].nvlinkPeers[0]", "got 9"},
      {"self peer", "gpus: [{model: NVIDIA H100, nvlinkPeers: [0]}]\n", "gpus[0].nvlinkPeers[0]",
       "another GPU"},
      {"gap in indices", "gpus: [{model: NVIDIA H100, index: 1}]\n", "gpus[0].index", "dense"},
      {"duplicate uuid", "gpus: [{model: NVIDIA H100, uuid: a}, {model: NVIDIA H100, uuid: a}]\n",
       "gpus[1].uuid", "duplicate"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto inv = parse_inventory_yaml(c.text, "file:x", "n1");
    ASSERT_FALSE(inv.ok());
    EXPECT_EQ(inv.status().code(), core::StatusCode::kInvalidArgument);
    EXPECT_EQ(inv.status().field(), c.field);
    EXPECT_NE(inv.status().message().find(c.message_part), std::string::npos)
        << inv.status().message();
  }
  auto missing = open_file_inventory("/nonexistent/inv.yaml", "n1");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().field(), "--inventory");
}

TEST(Topology, DomainsAreConnectedComponentsOfThePeerGraph) {
  // 0-1 linked, 1-2 linked (so 0,1,2 share a domain through 1), 3 alone, 4-5 one-sided.
  std::vector<GpuInfo> gpus(6);
  for (int i = 0; i < 6; ++i) gpus[static_cast<std::size_t>(i)].index = i;
  gpus[0].nvlink_peers = {1};
  gpus[2].nvlink_peers = {1};
  gpus[5].nvlink_peers = {4};
  EXPECT_EQ(nvlink_domains(gpus), (std::vector<std::int32_t>{0, 0, 0, 1, 2, 2}));
  // Randomized: a domain never joins GPUs without a path, and peers always share one.
  std::uint64_t seed = 12345;
  for (int round = 0; round < 200; ++round) {
    std::vector<GpuInfo> g(8);
    for (int i = 0; i < 8; ++i) g[static_cast<std::size_t>(i)].index = i;
    for (int e = 0; e < 5; ++e) {
      seed = seed * 6364136223846793005ULL + 1;
      const int a = static_cast<int>((seed >> 33) % 8), b = static_cast<int>((seed >> 45) % 8);
      if (a != b) g[static_cast<std::size_t>(a)].nvlink_peers.push_back(b);
    }
    const auto d = nvlink_domains(g);
    for (const GpuInfo& x : g) {
      for (std::int32_t p : x.nvlink_peers) {
        EXPECT_EQ(d[static_cast<std::size_t>(x.index)], d[static_cast<std::size_t>(p)]);
      }
    }
    EXPECT_EQ(d[0], 0);  // numbered by lowest index
  }
}

TEST(Topology, ModelNamesMapToCorralTypes) {
  const std::vector<std::tuple<std::string, std::int64_t, std::string>> cases = {
      {"NVIDIA H100 80GB HBM3", 81559, "H100"},
      {"NVIDIA H100 PCIe", 81559, "H100"},
      {"NVIDIA H200", 143771, "H200"},
      {"NVIDIA A100-SXM4-80GB", 81920, "A100-80GB"},
      {"NVIDIA A100-SXM4-40GB", 40960, "A100-40GB"},
      {"NVIDIA A100-PCIE-40GB", 0, "A100-40GB"},
      {"NVIDIA A10", 23028, "A10"},
      {"NVIDIA L4", 23034, "L4"},
      {"NVIDIA L40S", 46068, "L40S"},
      {"Tesla T4", 15360, "T4"},
      {"Tesla V100-SXM2-32GB", 32768, "V100"},
      {"Tesla V100-SXM2-16GB", 16384, "V100-16GB"},
      {"NVIDIA GB200", 189471, "GB200"},
      {"NVIDIA B200", 183359, "B200"},
  };
  for (const auto& [model, mem, type] : cases) {
    SCOPED_TRACE(model);
    auto t = gpu_type_for_model(model, mem);
    ASSERT_TRUE(t.ok());
    EXPECT_EQ(*t, type);
  }
  EXPECT_FALSE(gpu_type_for_model("Radeon Instinct MI300X", 0).ok());
}

TEST(Faults, ParseAndApply) {
  auto faults = parse_faults(
      R"({"gpus": {"3": {"xid": 79}, "5": {"temperatureC": 95}, "6": {"present": false},
                   "2": {"eccUncorrectable": 1}}})");
  ASSERT_TRUE(faults.ok()) << faults.status().to_string();
  auto inv = open_preset_inventory("dgx-h100", "n1");
  ASSERT_TRUE(inv.ok());
  auto health = (*inv)->read_health();
  ASSERT_TRUE(health.ok());
  apply_faults(*faults, *health);
  EXPECT_EQ((*health)[3].xid_errors, std::vector<std::int32_t>{79});
  EXPECT_EQ((*health)[5].temperature_c, 95);
  EXPECT_FALSE((*health)[6].present);
  EXPECT_EQ((*health)[2].ecc_uncorrectable, 1);
  EXPECT_TRUE((*health)[0].present);
  EXPECT_TRUE((*health)[0].xid_errors.empty());

  EXPECT_EQ(parse_faults(R"({"gpus": {"x": {}}})").status().field(), "gpus.x");
  EXPECT_EQ(parse_faults(R"({"gpus": {"1": {"xid": "79"}}})").status().field(), "gpus.1.xid");
  EXPECT_EQ(parse_faults(R"({"gpus": {"1": {"melt": true}}})").status().field(), "gpus.1.melt");
  EXPECT_FALSE(parse_faults("{").ok());
  auto none = read_faults_file("/nonexistent/faults.json");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(JoinRequest, CarriesDomainsTypesAndObservedInventory) {
  auto inv = open_preset_inventory("pcie-8gpu", "n7");
  ASSERT_TRUE(inv.ok());
  core::TopologyLabels labels{.leaf = "l1", .rack = "r1"};
  const core::JoinRequest request =
      join_request("n7", "http://127.0.0.1:5", labels, 12000, *(*inv)->discover());
  EXPECT_EQ(request.node.gpus[3].nvlink_domain, 1);
  EXPECT_EQ(request.inventory.gpus[3].nvlink_peers, std::vector<std::int32_t>{2});
  // On the wire, as docs/agent-protocol.md §1 shows it.
  const auto body = nlohmann::json::parse(core::encode_join_request(request));
  EXPECT_EQ(body["agentUrl"], "http://127.0.0.1:5");
  EXPECT_EQ(body["node"]["id"], "n7");
  EXPECT_EQ(body["rackPowerCapW"], 12000);
  EXPECT_EQ(body["node"]["labels"]["rack"], "r1");
  EXPECT_EQ(body["node"]["gpus"][3]["nvlinkDomain"], 1);
  EXPECT_EQ(body["node"]["gpus"][3]["type"], "A100-80GB");
  EXPECT_EQ(body["inventory"]["source"], "simulated:pcie-8gpu");
  EXPECT_EQ(body["inventory"]["gpus"][3]["nvlinkPeers"], nlohmann::json::array({2}));
}

TEST(Topology, EveryCatalogTypeHasAModelNameThatMapsBack) {
  for (const core::GpuType& type : core::builtin_gpu_types()) {
    SCOPED_TRACE(type.id.value);
    auto model = model_for_gpu_type(type.id.value);
    ASSERT_TRUE(model.ok()) << model.status().to_string();
    auto back = gpu_type_for_model(*model, type.memory_mib);
    ASSERT_TRUE(back.ok()) << back.status().to_string();
    EXPECT_EQ(*back, type.id.value);
  }
  EXPECT_EQ(model_for_gpu_type("P100").status().code(), core::StatusCode::kNotFound);
}

const std::string kMixedFleet = std::string(CORRAL_SOURCE_DIR) + "/tests/testdata/mixed-fleet.yaml";

// What an emulated node of a fleet file joins with is the fleet's node: the join's node
// (types, NVLink domains as the agent derives them from peers, NUMA, cpus, memory and
// labels) equals the expansion's, and the inventory says what a real agent would.
TEST(FleetInventory, EachNodeJoinsAsTheFleetsNode) {
  auto fleet = load_fleet_pools(kMixedFleet);
  ASSERT_TRUE(fleet.ok()) << fleet.status().to_string();
  ASSERT_EQ(fleet->nodes.size(), 6u);
  for (std::size_t i = 0; i < fleet->nodes.size(); ++i) {
    const core::Node& shape = fleet->nodes[i];
    SCOPED_TRACE(shape.id.value);
    const std::string name = "e" + std::to_string(i + 1);
    auto opened = open_fleet_node_inventory(*fleet, shape, name, kMixedFleet);
    ASSERT_TRUE(opened.ok()) << opened.status().to_string();
    expect_conforms(**opened);
    auto inv = (*opened)->discover();
    ASSERT_TRUE(inv.ok());
    EXPECT_EQ(inv->source, "fleet:mixed-fleet.yaml:" + shape.id.value);
    EXPECT_EQ(inv->rack_nvlink_domain, shape.id.value.starts_with("gb200"));
    const core::JoinRequest join = join_request(name, "http://127.0.0.1:9", shape.labels, 0, *inv);
    core::Node want = shape;
    want.id = core::NodeId(name);
    for (auto& g : want.gpus) g.uuid = simulated_gpu_uuid(name, g.index);
    EXPECT_EQ(join.node, want);
    const auto type = core::find_builtin_gpu_type(shape.gpus[0].type.value);
    ASSERT_TRUE(type.has_value());
    for (const core::ObservedGpu& g : join.inventory.gpus) {
      EXPECT_EQ(g.model, *model_for_gpu_type(type->id.value));
      EXPECT_EQ(g.memory_mib, type->memory_mib);
      EXPECT_EQ(g.power_limit_w, type->tdp_watts);
    }
  }
  // The L40S server's NVLink pairs, as peers.
  auto l40s = fleet_node_inventory(*fleet, fleet->nodes[5], "e6", "t");
  ASSERT_TRUE(l40s.ok());
  EXPECT_EQ(l40s->gpus[0].nvlink_peers, std::vector<std::int32_t>{1});
  EXPECT_EQ(l40s->gpus[3].nvlink_peers, std::vector<std::int32_t>{2});
}

TEST(FleetInventory, BadFleetFilesNameTheFlagTheFileAndTheField) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("corral-fleet-inv-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto write = [&](const std::string& name, const std::string& text) {
    const std::string path = (dir / name).string();
    std::ofstream(path) << text;
    return path;
  };
  const std::string own_type =
      write("p100.yaml",
            "gpu_types: [{id: P100, memory_gib: 16}]\n"
            "pools: [{name: p, gpu_type: P100, nodes: 2, gpus_per_node: 8}]\n");
  const std::string bad_field =
      write("bad.yaml", "pools: [{name: p, gpu_type: H100, nodes: 2, gpus_per_node: 0}]\n");
  struct Case {
    std::string name, path, message;
  };
  const std::vector<Case> cases = {
      {"a type corrald lacks", own_type, own_type + ": GPU type 'P100' is not in Corral's catalog"},
      {"a bad field", bad_field,
       bad_field + ": pools[0].gpus_per_node: must be between 1 and 64, got 0"},
      {"no file", (dir / "none.yaml").string(), "cannot read"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto fleet = load_fleet_pools(c.path);
    ASSERT_FALSE(fleet.ok());
    EXPECT_EQ(fleet.status().code(), core::StatusCode::kInvalidArgument);
    EXPECT_EQ(fleet.status().field(), "--fleet");
    EXPECT_NE(fleet.status().message().find(c.message), std::string::npos)
        << fleet.status().to_string();
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace corral::agent
