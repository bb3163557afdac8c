// The fleet emulator against a real corrald (issue 41): `corral-agent --emulate 6` joins
// six nodes through the real agent's client; a mix of one-GPU jobs, whole-node jobs and a
// 16-GPU gang with checkpoints runs on them; one emulated node goes down under the gang.
// Every job must finish, no GPU may be held by two jobs at any moment the test looks,
// and the lost node must be handled as a real one: fenced, its gang requeued and resumed
// from its checkpoint on the others. And `--fleet FILE`: a mixed fleet's nodes register
// with their types, GPU counts, NVLink domains, topology labels and rack power caps.
#include <fstream>

#include "e2e/cluster_fixture.h"

namespace corral::testing {
namespace {

class EmulatedFleetTest : public ClusterTest {
 protected:
  std::vector<std::string> node_labels() const override { return {}; }  // no real agents

  // `nodes` emulated nodes of `preset`, or with a fleet file (preset ""), of its shapes
  // (0: all of them).
  void start_emulator(int nodes, const std::string& preset = "dgx-h100",
                      const std::string& fleet = "") {
    auto emulator = std::make_unique<AgentProcess>("e", dir_.path() / "emulator");
    std::vector<std::string> args = {"--emulate", std::to_string(nodes)};
    if (!fleet.empty()) args.insert(args.end(), {"--fleet", fleet});
    ASSERT_TRUE(emulator
                    ->start(server_->addr(), dir_.path() / "join.token", preset,
                            fleet.empty() ? "region=local" : "", args)
                    .ok());
    agents_.push_back(std::move(emulator));
    if (nodes == 0) nodes = 6;  // the fleet file's (tests/testdata/mixed-fleet.yaml)
    ASSERT_TRUE(eventually(
        [&] { return node_states().count("active") == 1 && node_states()["active"] == nodes; },
        30s))
        << admin_->get("/v1/nodes").body;
  }
  std::map<std::string, int> node_states() {
    std::map<std::string, int> out;
    for (const auto& n : body(admin_->get("/v1/nodes")).value("nodes", json::array())) {
      ++out[n.value("state", "")];
    }
    return out;
  }
  std::string state_of_node(const std::string& name) {
    for (const auto& n : body(admin_->get("/v1/nodes")).value("nodes", json::array())) {
      if (n.value("id", "") == name) return n.value("state", "");
    }
    return "";
  }
  // The nodes the job's current allocation holds.
  std::set<std::string> nodes_of_job(std::int64_t id) {
    const auto all = body(admin_->get("/v1/allocations"));
    for (const auto& a : all.value("allocations", json::array())) {
      if (a.value("job", std::int64_t{0}) == id) return nodes_of(a);
    }
    return {};
  }
};

TEST_F(EmulatedFleetTest, EveryJobFinishesNoGpuTwiceAndALostNodeIsHandled) {
  start_emulator(6);
  std::vector<std::int64_t> jobs;
  const std::int64_t gang = submit(trainer_job("gang", 16, 1200, 25, "standard", 40));
  for (int i = 0; i < 24; ++i) {
    json spec = {{"name", "small-" + std::to_string(i)},
                 {"resources", {{"gpus", i % 6 == 0 ? 8 : 1}}},
                 {"env", {{"EMULATE_SECONDS", std::to_string(1 + i % 3)}}},
                 {"command", {"python3", "train.py"}}};
    jobs.push_back(submit(spec));
  }
  // The gang runs and has checkpointed; then the node under its rank 0 goes down.
  ASSERT_TRUE(eventually(
      [&] {
        return job(gang).contains("lastCheckpoint") && !job(gang)["lastCheckpoint"].is_null();
      },
      30s))
      << job(gang).dump();
  const std::set<std::string> under = nodes_of_job(gang);
  ASSERT_EQ(under.size(), 2u);
  const std::string victim = *under.begin();
  std::filesystem::create_directories(dir_.path() / "emulator" / "down");
  std::ofstream(dir_.path() / "emulator" / "down" / victim).put('\n');

  jobs.push_back(gang);
  ASSERT_TRUE(eventually(
      [&] {
        expect_no_double_allocation();
        for (const std::int64_t id : jobs) {
          if (phase(id) != "succeeded") return false;
        }
        return true;
      },
      90s))
      << job(gang).dump() << "\n"
      << admin_->get("/v1/jobs").body;
  EXPECT_EQ(state_of_node(victim), "lost");
  EXPECT_EQ(node_states()["active"], 5);
  // The gang lost its first attempt with the node and resumed from its checkpoint.
  EXPECT_GE(job(gang).value("attempt", 0), 2);
  const auto placed = event_messages(gang, "placed");
  ASSERT_GE(placed.size(), 2u);
  EXPECT_EQ(placed.back().find(victim + "["), std::string::npos) << placed.back();
  const auto checkpoints = event_messages(gang, "checkpointed");
  ASSERT_FALSE(checkpoints.empty());
  EXPECT_NE(checkpoints.back().find("step 1200"), std::string::npos) << checkpoints.back();
}

// `--emulate 0 --fleet FILE`: every node of a small mixed fleet joins, node i shaped as
// the fleet's i-th node in id order, and corrald registers what the fleet file says.
TEST_F(EmulatedFleetTest, FleetFileShapesEveryNodeAndItsTopology) {
  start_emulator(0, "", std::string(CORRAL_SOURCE_DIR) + "/tests/testdata/mixed-fleet.yaml");
  struct Want {
    std::string type;
    std::size_t gpus;
    std::string spine, leaf, rack, nvlink_rack;
    std::set<std::int64_t> domains;
    std::string fleet_node;  // the fleet's node id, in the inventory's source
  };
  const std::map<std::string, Want> want = {
      {"e1",
       {"GB200", 4, "spine-001", "leaf-0002", "gb200-r0000", "gb200-r0000", {0}, "gb200-00000"}},
      {"e2",
       {"GB200", 4, "spine-001", "leaf-0002", "gb200-r0000", "gb200-r0000", {0}, "gb200-00001"}},
      {"e3", {"H100", 8, "spine-000", "leaf-0000", "h100-r0000", "", {0}, "h100-00000"}},
      {"e4", {"H100", 8, "spine-000", "leaf-0000", "h100-r0000", "", {0}, "h100-00001"}},
      {"e5", {"H100", 8, "spine-000", "leaf-0001", "h100-r0001", "", {0}, "h100-00002"}},
      {"e6", {"L40S", 4, "spine-001", "leaf-0003", "l40s-r0000", "", {0, 1}, "l40s-00000"}},
  };
  const json nodes = body(admin_->get("/v1/nodes")).value("nodes", json::array());
  ASSERT_EQ(nodes.size(), want.size()) << nodes.dump();
  for (const json& n : nodes) {
    const std::string id = n.value("id", "");
    SCOPED_TRACE(id);
    ASSERT_EQ(want.count(id), 1u);
    const Want& w = want.at(id);
    const json& gpus = n["gpus"];
    ASSERT_EQ(gpus.size(), w.gpus);
    std::set<std::int64_t> domains;
    for (const json& g : gpus) {
      EXPECT_EQ(g.value("type", ""), w.type);
      domains.insert(g.value("nvlinkDomain", std::int64_t{-1}));
    }
    EXPECT_EQ(domains, w.domains);
    const json& labels = n["labels"];
    EXPECT_EQ(labels.value("region", ""), "us-test");
    EXPECT_EQ(labels.value("cluster", ""), "c1");
    EXPECT_EQ(labels.value("spine", ""), w.spine);
    EXPECT_EQ(labels.value("leaf", ""), w.leaf);
    EXPECT_EQ(labels.value("rack", ""), w.rack);
    EXPECT_EQ(labels.value("nvlinkRack", ""), w.nvlink_rack);
    EXPECT_EQ(n["observed"]["inventory"].value("source", ""),
              "fleet:mixed-fleet.yaml:" + w.fleet_node);
  }
  // The H100 racks carry the pool's 40 kW cap, as a real agent's rackPowerCapW.
  std::map<std::string, json> racks;
  for (const json& r : body(admin_->get("/v1/racks")).value("racks", json::array())) {
    racks[r.value("name", "")] = r;
  }
  ASSERT_EQ(racks.count("h100-r0000"), 1u) << racks.size();
  EXPECT_EQ(racks["h100-r0000"]["capWatts"], 40000);
  EXPECT_EQ(racks["h100-r0000"]["nodes"], 2);
  EXPECT_EQ(racks["h100-r0001"]["capWatts"], 40000);

  // The types are schedulable as such: a job asking L40S runs on the L40S server.
  const std::int64_t gang =
      submit({{"name", "whole-h100"},
              {"resources", {{"gpus", 8}, {"gpuTypes", json::array({"H100"})}}},
              {"env", {{"EMULATE_SECONDS", "1"}}},
              {"command", {"python3", "train.py"}}});
  const std::int64_t l40s =
      submit({{"name", "l40s"},
              {"resources", {{"gpus", 2}, {"gpuTypes", json::array({"L40S"})}}},
              {"env", {{"EMULATE_SECONDS", "1"}}},
              {"command", {"python3", "train.py"}}});
  ASSERT_TRUE(
      eventually([&] { return phase(gang) == "succeeded" && phase(l40s) == "succeeded"; }, 60s))
      << job(gang).dump() << "\n"
      << job(l40s).dump();
  const auto placed = event_messages(l40s, "placed");
  ASSERT_FALSE(placed.empty());
  EXPECT_NE(placed.back().find("e6["), std::string::npos) << placed.back();
}

}  // namespace
}  // namespace corral::testing
