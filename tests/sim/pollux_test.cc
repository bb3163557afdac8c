// The Pollux workload plug-in on a tiny hand-made profile set whose run times can be
// computed by hand, and one engine run that charges a spread placement.
#include "sim/traces/pollux.h"

#include <filesystem>
#include <fstream>
#include <unistd.h>
#include <vector>

#include "sim_fixtures.h"
#include <gtest/gtest.h>

#include "sim/engine.h"
#include "sim/fleet.h"
#include "sim/policies.h"

namespace corral::sim {
namespace {

// A Pollux profile has one set of figures for every GPU type.
const core::GpuTypeId kAnyType;

namespace fs = std::filesystem;

// Every application gets the same profile: one step takes 0.1 s on 1 GPU and 0.15 s on
// 2 GPUs of one node, 0.3 s on 1+1 GPUs of two nodes (sync 0.01 / 0.05 / 0.1 s), all at
// per-GPU batch 32 (0.2 s at 64 on one GPU); every epoch is 10 steps of progress at
// either validated batch (32, 64) with grad_sqr = grad_var = 1.
class PolluxProfiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("corral-pollux-" + std::to_string(::getpid()));
    for (const char* app : testing::kPolluxApps) {
      const fs::path d = dir_ / "traces" / app;
      fs::create_directories(d);
      std::ofstream(d / "placements.csv") << "placement,local_bsz,step_time,sync_time\n"
                                             "1,32,0.1,0.01\n1,64,0.2,0.02\n"
                                             "2,32,0.15,0.05\n2,64,0.3,0.1\n"
                                             "11,32,0.3,0.1\n11,64,0.6,0.2\n";
      std::ofstream(d / "scalability.csv")
          << "num_nodes,num_replicas,local_bsz,step_time,sync_time\n";
      testing::write_flat_validation(d);
    }
    fs::create_directories(dir_ / "workloads");
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string profiles() const { return (dir_ / "traces").string(); }
  std::string workload(const std::string& rows) const {
    const fs::path p = dir_ / "workloads" / "w.csv";
    std::ofstream(p) << "name,time,application,num_replicas,batch_size\n" << rows;
    return p.string();
  }

  fs::path dir_;
};

TEST_F(PolluxProfiles, RunTimeByHand) {
  // cifar10 trains 100 epochs: progress 1,000 steps. One GPU at batch 32 (the smallest
  // validated batch, so gain 1): 1,000 x 0.1 s.
  const std::int32_t one[] = {1};
  auto m = pollux_job_model(profiles(), "cifar10", 1, 32, one);
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  EXPECT_EQ(m->atomic_bsz, 32);
  EXPECT_EQ(m->accum_steps, 0);
  EXPECT_DOUBLE_EQ(m->work_steps, 1000);
  EXPECT_DOUBLE_EQ(m->step_seconds, 0.1);
  // Two GPUs at batch 64: 32 per GPU, scale 2, gain (1+1)/(1/2+1) = 4/3, so W = 750;
  // a step is 0.15 s on one node and 0.3 s across two.
  const std::int32_t packed[] = {2}, spread[] = {1, 1};
  m = pollux_job_model(profiles(), "cifar10", 2, 64, packed);
  ASSERT_TRUE(m.ok());
  EXPECT_DOUBLE_EQ(m->work_steps, 750);
  EXPECT_DOUBLE_EQ(m->step_seconds, 0.15);
  m = pollux_job_model(profiles(), "cifar10", 2, 64, spread);
  EXPECT_DOUBLE_EQ(m->step_seconds, 0.3);
  // ncf trains 10 epochs (100 steps). One GPU at batch 64 > the smallest batch: the
  // artifact forces one accumulation step, 2 x 32; a step is 0.1 + (0.1 - 0.01) s.
  m = pollux_job_model(profiles(), "ncf", 1, 64, one);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->atomic_bsz, 32);
  EXPECT_EQ(m->accum_steps, 1);
  EXPECT_NEAR(m->work_steps, 75, 1e-9);
  EXPECT_NEAR(m->step_seconds, 0.19, 1e-12);
}

TEST_F(PolluxProfiles, LoaderGivesTheTightestRunTimeAndRefusesBadRows) {
  auto w = load_pollux_workload(workload("a,5,cifar10,1,32\nb,0,cifar10,2,64\n"));
  ASSERT_TRUE(w.ok()) << w.status().to_string();
  ASSERT_EQ(w->jobs.size(), 2u);
  EXPECT_EQ(w->jobs[0].name, "b");             // sorted by submit time
  EXPECT_EQ(w->jobs[0].duration_ms, 112'500);  // 750 x 0.15 s, two GPUs on one node
  EXPECT_EQ(w->jobs[1].duration_ms, 100'000);
  const std::int32_t spread[] = {1, 1};
  EXPECT_DOUBLE_EQ(w->jobs[0].profile->seconds(kAnyType, spread), 225);

  auto bad = load_pollux_workload(workload("a,5,mnist,1,32\n"));
  EXPECT_NE(bad.status().to_string().find("w.csv:2: column 3: unknown application 'mnist'"),
            std::string::npos)
      << bad.status().to_string();
  bad = load_pollux_workload(workload("a,5,ncf,0,32\n"));
  EXPECT_NE(bad.status().to_string().find("column 4"), std::string::npos);
}

// The elastic profile picks, per epoch, the batch split that takes least time at the
// placement. cifar10 on 1 GPU may run batch 32 (0.1-s steps, gain 1: 10 steps an epoch)
// or 64 (two accumulated 32s, 0.19-s steps, gain 4/3: 7.5 steps): 1 s against 1.425 s an
// epoch, so batch 32, 100 s in all, where the rigid batch-64 job takes 142.5 s.
TEST_F(PolluxProfiles, ElasticProfileChoosesTheBatchByHand) {
  auto w = load_pollux_workload(workload("a,0,cifar10,1,64\nb,0,ncf,1,32\n"));
  ASSERT_TRUE(w.ok()) << w.status().to_string();
  const TraceJob& a = w->jobs[0];
  ASSERT_NE(a.elastic_profile, nullptr);
  const std::int32_t one[] = {1}, two[] = {2}, spread[] = {1, 1};
  EXPECT_NEAR(a.profile->seconds(kAnyType, one), 142.5, 1e-9);
  EXPECT_NEAR(a.elastic_profile->seconds(kAnyType, one), 100, 1e-9);
  // Two GPUs: only batch 64 (32 a GPU) is within limits: 7.5 steps of 0.15 s (0.3 s
  // across two nodes) an epoch.
  EXPECT_NEAR(a.elastic_profile->seconds(kAnyType, two), 112.5, 1e-9);
  EXPECT_NEAR(a.elastic_profile->seconds(kAnyType, spread), 225, 1e-9);
  // Replicas: at most max batch / smallest per-GPU batch = 64 / 32; ncf stays rigid.
  EXPECT_EQ(a.elastic_min_gpus, 1);
  EXPECT_EQ(a.elastic_max_gpus, 2);
  EXPECT_EQ(w->jobs[1].elastic_profile, nullptr);
  EXPECT_EQ(w->jobs[1].elastic_max_gpus, 0);

  // bert (2 epochs) with a noisy second epoch (grad_var 99): batch 64's gain there is
  // 100 / (99 / 2 + 1), so 5.05 steps of 0.19 s beat 10 of 0.1 s. Epoch 1 runs batch 32
  // (1 s), epoch 2 batch 64 (0.9595 s): faster than either batch held throughout.
  for (int batch : {32, 64}) {
    std::ofstream(dir_ / "traces" / "bert" / ("validation-" + std::to_string(batch) + ".csv"))
        << "progress,iteration,metric,grad_sqr,grad_var\n10,10,0.5,1,1\n20,20,0.5,1,99\n";
  }
  w = load_pollux_workload(workload("c,0,bert,1,32\nd,0,bert,1,64\n"));
  ASSERT_TRUE(w.ok()) << w.status().to_string();
  EXPECT_NEAR(w->jobs[0].elastic_profile->seconds(kAnyType, one), 1.9595, 1e-9);
  EXPECT_NEAR(w->jobs[0].profile->seconds(kAnyType, one), 2.0, 1e-9);
  EXPECT_NEAR(w->jobs[1].profile->seconds(kAnyType, one), 2.3845, 1e-9);
}

// Never slower than the rigid job where the rigid job runs, on the real profiles.
TEST(PolluxElastic, NeverSlowerThanRigidAtItsOwnPlacement) {
  const std::string dir = testing::shared_dir() + "/traces/pollux-workloads";
  if (!fs::exists(dir)) GTEST_SKIP() << "no " << dir << " (set CORRAL_SHARED)";
  auto w = load_pollux_workload(dir + "/workloads/workload-1.csv");
  ASSERT_TRUE(w.ok()) << w.status().to_string();
  for (const TraceJob& j : w->jobs) {
    if (!j.elastic_profile) continue;
    std::vector<std::int32_t> tight;
    for (std::int32_t left = j.gpus; left > 0; left -= 4) tight.push_back(std::min(left, 4));
    const std::vector<std::int32_t> spread(static_cast<std::size_t>(j.gpus), 1);
    for (const auto& p : {tight, spread}) {
      EXPECT_LE(j.elastic_profile->seconds(kAnyType, p),
                j.profile->seconds(kAnyType, p) * (1 + 1e-12))
          << j.name;
    }
  }
}

// Two 1-GPU nodes: the 2-GPU job must spread over both and runs 225 s, plus the 30-s
// start every (re)start pays, so it finishes at 255 s after its first cycle.
TEST_F(PolluxProfiles, EngineChargesTheSpreadPlacement) {
  auto w = load_pollux_workload(workload("b,0,cifar10,2,64\n"));
  ASSERT_TRUE(w.ok());
  auto fleet = parse_fleet(R"(
name: two
pools: [{name: n, gpu_type: T4, nodes: 2, gpus_per_node: 1}]
trace_tenants: {weight: 1, guarantee: none, borrow_limit: unlimited}
)",
                           "two.yaml");
  ASSERT_TRUE(fleet.ok()) << fleet.status().to_string();
  auto policy = policy_by_name("tiresias");
  ASSERT_TRUE(policy.ok());
  EngineOptions o;
  o.runtime.start_time = core::seconds(30);
  o.runtime.checkpoint_on_stop = true;
  auto r = simulate(*fleet, *w, *policy, o);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->jobs[0].finish_ms - r->jobs[0].submit_ms, 255'000);
  EXPECT_DOUBLE_EQ(r->jobs[0].slowdown, 2.0);
}

}  // namespace
}  // namespace corral::sim
