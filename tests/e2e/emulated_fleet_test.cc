// The fleet emulator against a real corrald (issue 41): `corral-agent --emulate 6` joins
// six nodes through the real agent's client; a mix of one-GPU jobs, whole-node jobs and a
// 16-GPU gang with checkpoints runs on them; one emulated node goes down under the gang.
// Every job must finish, no GPU may be held by two jobs at any moment the test looks,
// and the lost node must be handled as a real one: fenced, its gang requeued and resumed
// from its checkpoint on the others.
#include <fstream>

#include "e2e/cluster_fixture.h"

namespace corral::testing {
namespace {

class EmulatedFleetTest : public ClusterTest {
 protected:
  std::vector<std::string> node_labels() const override { return {}; }  // no real agents

  void start_emulator(int nodes) {
    auto emulator = std::make_unique<AgentProcess>("e", dir_.path() / "emulator");
    ASSERT_TRUE(emulator
                    ->start(server_->addr(), dir_.path() / "join.token", "dgx-h100", "region=local",
                            {"--emulate", std::to_string(nodes)})
                    .ok());
    agents_.push_back(std::move(emulator));
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

}  // namespace
}  // namespace corral::testing
