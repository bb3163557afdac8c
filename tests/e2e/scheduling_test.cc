// The scheduler's policy acting in production, end to end: a real corrald and real agents
// running corral-trainer, checked against what decide() promises and what corral-sim does
// on the same scenario (tests/sim/engine_test.cc):
//   - a production arrival preempts the preemptible job that loses the least work since
//     its last checkpoint;
//   - a job preempted max_preemptions_per_job times is no longer chosen;
//   - a job that would push a rack past its power cap (declared by the agents) waits with
//     a power reason;
//   - on a corrald with its default config, a production job on a node full of
//     preemptible work starts within the grace period and the victim resumes from its
//     checkpoint.
#include "cluster_fixture.h"

#include "cycle/capture.h"
#include "cycle/replay.h"

namespace corral::testing {
namespace {

// Every cycle captured (DATA_DIR/cycles), for replay.
class CapturingClusterTest : public ClusterTest {
 protected:
  std::vector<std::string> corrald_args() const override { return {"--capture-every", "1"}; }
};

TEST_F(CapturingClusterTest, ProductionArrivalPreemptsThePreemptibleJobThatLosesTheLeastWork) {
  // Four preemptible 8-GPU jobs fill the four nodes; `often` checkpoints every 20 steps of
  // 10 ms, the others never.
  const std::string tag = std::to_string(getpid());
  std::vector<std::int64_t> ids;
  for (const char* name : {"never-1", "often", "never-2", "never-3"}) {
    const bool often = std::string(name) == "often";
    ids.push_back(submit(trainer_job(std::string(name) + "-" + tag, 8, 100000, 10, "preemptible",
                                     often ? 20 : 1000000)));
  }
  for (const auto id : ids) ASSERT_TRUE(wait_phase(id, "running")) << job(id).dump();
  const std::int64_t often = ids[1];
  ASSERT_TRUE(eventually([&] { return !job(often)["lastCheckpoint"].is_null(); }))
      << job(often).dump();

  const auto urgent = submit(trainer_job("urgent-" + tag, 8, 20, 5, "production"));
  ASSERT_TRUE(wait_phase(urgent, "succeeded", 60s)) << job(urgent).dump();
  EXPECT_TRUE(has_event(often, "preempted")) << job(often).dump();
  EXPECT_EQ(job(often).value("preemptions", 0), 1) << job(often).dump();
  for (const auto id : {ids[0], ids[2], ids[3]}) {
    EXPECT_FALSE(has_event(id, "preempted")) << job(id).dump();
    EXPECT_EQ(phase(id), "running") << job(id).dump();
  }
  // The victim comes back once the production job is done, from its checkpoint.
  ASSERT_TRUE(wait_phase(often, "running", 60s)) << job(often).dump();
  EXPECT_GE(job(often).value("attempt", 0), 2);
  expect_no_double_allocation();

  // Every captured cycle replays to byte-identical decisions, the preemption's included.
  const json captures = body(admin_->get("/v1/scheduler/captures"));
  ASSERT_GT(captures.value("captures", json::array()).size(), 2u) << captures.dump();
  int replayed = 0, with_preemption = 0;
  const std::string victim = "\"victim\":" + std::to_string(often) + ",";
  for (const auto& f : captures["captures"]) {
    const auto text = admin_->get("/v1/scheduler/captures/" + f.value("file", ""));
    ASSERT_EQ(text.status, 200) << text.body;
    auto cycle = cycle::parse_captured_cycle(text.body);
    ASSERT_TRUE(cycle.ok()) << cycle.status().to_string();
    auto again = cycle::replay_decisions(*cycle, cycle->config);
    ASSERT_TRUE(again.ok()) << again.status().to_string();
    EXPECT_EQ(*again, cycle->decisions_json) << f.value("file", "");
    ++replayed;
    if (cycle->decisions_json.find(victim) != std::string::npos) ++with_preemption;
  }
  EXPECT_EQ(with_preemption, 1) << "the cycle that preempted job " << often;
  std::printf("replayed %d captured cycles to identical decisions\n", replayed);
  // An admin may ask for the next cycle; nobody else may see any.
  const auto asked = admin_->post("/v1/scheduler/captures", "{}");
  EXPECT_EQ(asked.status, 201) << asked.body;
  EXPECT_EQ(admin_->get("/v1/scheduler/captures/..%2Fcorral.db").status, 404);
}

// A job may be preempted once (maxPreemptionsPerJob: 1).
class PreemptionCapTest : public ClusterTest {
 protected:
  std::string cluster_config() const override {
    return "scheduler: {minRuntimeMs: 0, tickMs: 200, maxPreemptionsPerJob: 1}\n"
           "agents: {nodeLostAfterMs: 4000, stopGraceMs: 5000,"
           " restartBackoffMs: 100, restartBackoffMaxMs: 1000}\n";
  }
};

TEST_F(PreemptionCapTest, AJobPreemptedAsOftenAsAllowedIsNoLongerChosen) {
  const std::string tag = std::to_string(getpid());
  const auto victim = submit(trainer_job("victim-" + tag, 32, 100000, 10, "preemptible"));
  ASSERT_TRUE(wait_phase(victim, "running")) << job(victim).dump();
  // The first production job takes the whole fleet from it: preemption 1 of 1.
  const auto first = submit(trainer_job("first-" + tag, 32, 20, 5, "production"));
  ASSERT_TRUE(wait_phase(first, "succeeded", 60s)) << job(first).dump();
  ASSERT_TRUE(wait_phase(victim, "running", 60s)) << job(victim).dump();
  EXPECT_EQ(job(victim).value("preemptions", 0), 1) << job(victim).dump();

  // The second waits: the victim is at its cap and runs on.
  const auto second = submit(trainer_job("second-" + tag, 32, 20, 5, "production"));
  ASSERT_TRUE(eventually([&] { return job(second).value("queuePosition", 0) == 1; }))
      << job(second).dump();
  const auto deadline = std::chrono::steady_clock::now() + 3s;
  while (std::chrono::steady_clock::now() < deadline) {
    ASSERT_EQ(phase(victim), "running") << job(victim).dump();
    ASSERT_EQ(phase(second), "pending") << job(second).dump();
  }
  EXPECT_EQ(job(victim).value("preemptions", 0), 1);
  // Nothing is promised to it (no EASY backfill, and it is far from starved): it waits for
  // capacity like any job.
  EXPECT_EQ(job(second).value("pendingKind", ""), "capacity") << job(second).dump();
  // Once the victim is gone, the second production job runs.
  ASSERT_EQ(admin_->post("/v1/jobs/" + std::to_string(victim) + "/cancel", "{}").status, 200);
  ASSERT_TRUE(wait_phase(second, "succeeded", 60s)) << job(second).dump();
  expect_no_double_allocation();
}

// n1, n2 in rack r1 and n3, n4 in rack r2; each agent declares its rack's cap as 6,000 W,
// which holds one 8-GPU H100 job (8 x 700 W) but not two.
class PowerCapTest : public ClusterTest {
 protected:
  std::vector<std::string> node_labels() const override {
    std::vector<std::string> out;
    for (int i = 1; i <= 4; ++i) {
      out.push_back("spine=s1,leaf=l" + std::to_string((i + 1) / 2) + ",rack=r" +
                    std::to_string((i + 1) / 2) + ",rackPowerCapW=6000");
    }
    return out;
  }
};

TEST_F(PowerCapTest, AJobThatWouldPassARackCapStaysPendingWithAPowerReason) {
  const std::string tag = std::to_string(getpid());
  const auto first = submit(trainer_job("first-" + tag, 8, 100000, 10));
  const auto second = submit(trainer_job("second-" + tag, 8, 100000, 10));
  ASSERT_TRUE(wait_phase(first, "running")) << job(first).dump();
  ASSERT_TRUE(wait_phase(second, "running")) << job(second).dump();
  // One per rack, though both would fit one rack's two nodes by GPUs.
  const auto rack_of = [](const std::set<std::string>& nodes) {
    const std::string n = *nodes.begin();
    return n == "n1" || n == "n2" ? "r1" : "r2";
  };
  EXPECT_NE(rack_of(nodes_of(job(first)["allocation"])),
            rack_of(nodes_of(job(second)["allocation"])));

  // The third is first in line (kind `waiting`, with a planned start) and says that power,
  // not GPUs, is what it waits for.
  const auto third = submit(trainer_job("third-" + tag, 8, 100, 10));
  ASSERT_TRUE(eventually([&] {
    return job(third).value("reason", "").find("power: rack r") != std::string::npos;
  })) << job(third).dump();
  const std::string reason = job(third).value("reason", "");
  EXPECT_NE(reason.find("5600 of 6000 W in use"), std::string::npos) << reason;
  EXPECT_EQ(phase(third), "pending");
  // It runs once a rack has room again.
  ASSERT_EQ(admin_->post("/v1/jobs/" + std::to_string(first) + "/cancel", "{}").status, 200);
  ASSERT_TRUE(wait_phase(third, "succeeded", 60s)) << job(third).dump();
}

// The same racks, with r1's cap raised to 12,000 W by the admin config, which wins over
// the 6,000 W its agents declare: r1 holds two 8-GPU jobs, r2 still one.
class ConfigRackCapTest : public PowerCapTest {
 protected:
  std::string cluster_config() const override {
    return ClusterTest::cluster_config() + "racks: {r1: {powerCapWatts: 12000}}\n";
  }
};

TEST_F(ConfigRackCapTest, TheAdminConfigsCapWinsOverTheAgents) {
  const std::string tag = std::to_string(getpid());
  std::vector<std::int64_t> ids;
  for (int i = 0; i < 3; ++i) {
    ids.push_back(submit(trainer_job("job" + std::to_string(i) + "-" + tag, 8, 100000, 10)));
  }
  int on_r1 = 0;
  for (const auto id : ids) {
    ASSERT_TRUE(wait_phase(id, "running")) << job(id).dump();
    const std::string node = *nodes_of(job(id)["allocation"]).begin();
    on_r1 += node == "n1" || node == "n2" ? 1 : 0;
  }
  EXPECT_EQ(on_r1, 2);
  const auto fourth = submit(trainer_job("fourth-" + tag, 8, 100, 10));
  ASSERT_TRUE(eventually([&] {
    return job(fourth).value("reason", "").find("power: rack r") != std::string::npos;
  })) << job(fourth).dump();
  EXPECT_EQ(phase(fourth), "pending");
}

// A corrald started with no config at all, and one node.
class DefaultConfigTest : public ClusterTest {
 protected:
  std::string cluster_config() const override { return ""; }
  std::vector<std::string> node_labels() const override { return {"spine=s1,leaf=l1,rack=r1"}; }
};

TEST_F(DefaultConfigTest, ProductionJobOnANodeFullOfPreemptibleWorkStartsWithinTheGrace) {
  const std::string tag = std::to_string(getpid());
  const int steps = 400;
  const auto victim = submit(trainer_job("victim-" + tag, 8, steps, 10, "preemptible"));
  ASSERT_TRUE(wait_phase(victim, "running")) << job(victim).dump();
  ASSERT_TRUE(eventually([&] { return !job(victim)["lastCheckpoint"].is_null(); }))
      << job(victim).dump();

  // The preemptible tier has no min-runtime protection by default: the production job
  // takes the node at once, within the default grace (120 s) plus the checkpoint.
  const auto t0 = std::chrono::steady_clock::now();
  const auto urgent = submit(trainer_job("urgent-" + tag, 8, 20, 5, "production"));
  ASSERT_TRUE(eventually(
      [&] {
        const std::string p = phase(urgent);
        return p == "running" || p == "succeeded";
      },
      125s))
      << job(urgent).dump() << job(victim).dump();
  const auto waited = std::chrono::steady_clock::now() - t0;
  EXPECT_LT(waited, 125s);
  std::printf("production job started %.1f s after submission\n",
              std::chrono::duration<double>(waited).count());
  ASSERT_TRUE(wait_phase(urgent, "succeeded", 60s)) << job(urgent).dump();

  // The victim resumes from its checkpoint and ends with the uninterrupted run's value.
  ASSERT_TRUE(wait_phase(victim, "succeeded", 60s)) << job(victim).dump();
  EXPECT_TRUE(has_event(victim, "preempted"));
  const std::string last = logs(victim, 0);
  EXPECT_NE(last.find("resumed from"), std::string::npos) << last;
  EXPECT_NE(last.find(uninterrupted_final(steps)), std::string::npos) << last;
  expect_no_double_allocation();
}

}  // namespace
}  // namespace corral::testing
