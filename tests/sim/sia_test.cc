// The Sia workload plug-in on a hand-made profile set: per-type run times computed by
// hand, the per-type speeds decide() is told, and one engine run in which Corral places a
// job on the type that pays and the heterogeneity-blind baseline does not.
#include <filesystem>
#include <fstream>
#include <map>
#include <unistd.h>

#include "sim_fixtures.h"
#include <gtest/gtest.h>

#include "sim/engine.h"
#include "sim/fleet.h"
#include "sim/policies.h"
#include "sim/profile_facts.h"
#include "sim/traces/pollux.h"

namespace corral::sim {
namespace {

namespace fs = std::filesystem;

// One step at per-GPU batch 32 on one GPU, by cluster: the A100s ("dgx-ext") 0.1 s, the
// T4s ("aws") 0.4 s, the rest in between. Every epoch is 10 steps at either validated
// batch (32, 64). The rtx files list their columns in another order, as the artifact's do.
const std::map<std::string, double> kStep = {
    {"aws", 0.4}, {"azure", 0.3}, {"dgx-ext", 0.1}, {"quad", 0.5}, {"rtx", 0.2}};

class SiaProfiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("corral-sia-" + std::to_string(::getpid()));
    for (const char* app : testing::kPolluxApps) {
      const fs::path d = dir_ / "traces" / app;
      fs::create_directories(d);
      for (const SiaGpuType& t : sia_gpu_types()) {
        const double step = kStep.at(t.cluster);
        const std::string c = t.cluster;
        std::ofstream p(d / ("placements-" + c + ".csv"));
        if (c == "rtx") {
          p << "local_bsz,step_time,sync_time,placement\n"
            << "32," << step << ",0.01,1\n64," << 2 * step << ",0.02,1\n";
        } else {
          p << "placement,local_bsz,step_time,sync_time\n"
            << "1,32," << step << ",0.01\n1,64," << 2 * step << ",0.02\n";
        }
        std::ofstream(d / ("scalability-" + c + ".csv"))
            << "local_bsz,step_time,sync_time,num_nodes,num_replicas\n";
      }
      testing::write_flat_validation(d);
    }
    fs::create_directories(dir_ / "workloads" / "saturn");
    const fs::path w = dir_ / "workloads" / "saturn" / "w.csv";
    // Sia writes arrival times with a decimal point.
    std::ofstream(w) << "name,time,application,num_replicas,batch_size\n"
                        "cifar10-0,0.0,cifar10,1,32\n";
    workload_ = w.string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
  std::string workload_;
};

Fleet t4_and_a100() {
  auto fleet = parse_fleet(R"(
name: two-types
pools:
  - {name: t4, gpu_type: T4, nodes: 1, gpus_per_node: 4}
  - {name: a100, gpu_type: A100-40GB, nodes: 1, gpus_per_node: 8}
trace_tenants: {weight: 1, guarantee: none, borrow_limit: unlimited}
)",
                           "two-types.yaml");
  EXPECT_TRUE(fleet.ok()) << fleet.status().to_string();
  return *fleet;
}

// cifar10 trains 100 epochs of 10 steps: 1,000 steps, 400 s on a T4 and 100 s on an
// A100; the job's duration is its time on the fastest type, found beside workloads/.
TEST_F(SiaProfiles, RunTimeDependsOnTheGpuType) {
  auto w = load_sia_workload(workload_);
  ASSERT_TRUE(w.ok()) << w.status().to_string();
  ASSERT_EQ(w->jobs.size(), 1u);
  const TraceJob& j = w->jobs[0];
  EXPECT_EQ(j.duration_ms, 100'000);
  const std::int32_t one[] = {1};
  EXPECT_NEAR(j.profile->seconds(core::GpuTypeId("T4"), one), 400, 1e-9);
  EXPECT_NEAR(j.profile->seconds(core::GpuTypeId("A100-40GB"), one), 100, 1e-9);
  EXPECT_NEAR(j.profile->seconds(core::GpuTypeId("RTX2080Ti"), one), 200, 1e-9);
  EXPECT_EQ(j.profile->gpu_types().size(), sia_gpu_types().size());
  EXPECT_EQ(j.elastic_profile->gpu_types().size(), sia_gpu_types().size());
}

TEST_F(SiaProfiles, SpeedsAreRelativeToTheFastestFleetType) {
  auto w = load_sia_workload(workload_);
  ASSERT_TRUE(w.ok()) << w.status().to_string();
  const auto speed = gpu_speed(*w->jobs[0].profile, t4_and_a100(), 1);
  EXPECT_EQ(speed, (std::map<core::GpuTypeId, double>{{core::GpuTypeId("A100-40GB"), 1.0},
                                                      {core::GpuTypeId("T4"), 0.25}}));
  auto fleet = parse_fleet(R"(
name: h
pools: [{name: h, gpu_type: H100, nodes: 1, gpus_per_node: 8}]
trace_tenants: {weight: 1, guarantee: none, borrow_limit: unlimited}
)",
                           "h.yaml");
  ASSERT_TRUE(fleet.ok());
  const core::Status refused = check_profile_types(*w->jobs[0].profile, *fleet, "cifar10-0");
  EXPECT_NE(refused.to_string().find("job cifar10-0: its profiles have no figures for the "
                                     "fleet's GPU type H100"),
            std::string::npos)
      << refused.to_string();
}

// The simulator's side of JobRequest::scaling_by_type: a curve on each fleet type, from
// that type's own figures (a step takes 0.4 s on a T4 and 0.1 s on an A100, so the
// A100's curve is four times the T4's at one GPU), as corrald learns one per type.
TEST_F(SiaProfiles, EachFleetTypeGetsItsOwnScalingCurve) {
  auto w = load_sia_workload(workload_);
  ASSERT_TRUE(w.ok()) << w.status().to_string();
  const auto curves = scaling_curves_by_type(*w->jobs[0].elastic_profile, t4_and_a100(), 1, 4);
  ASSERT_EQ(curves.size(), 2u);
  const auto& t4 = curves.at(core::GpuTypeId("T4"));
  const auto& a100 = curves.at(core::GpuTypeId("A100-40GB"));
  ASSERT_FALSE(t4.empty());
  ASSERT_FALSE(a100.empty());
  EXPECT_EQ(t4.front().gpus, 1);
  EXPECT_EQ(a100.front().gpus, 1);
  EXPECT_NEAR(a100.front().throughput / t4.front().throughput, 4.0, 1e-9);
}

// Corral is told the job runs 4x faster on an A100; at the default price weight 0.5
// that is worth the A100's price (1 / 0.9^0.5 = 1.05 against 0.25 / 0.15^0.5 = 0.65),
// so it runs 100 s there. Tiresias is not told, takes the cheapest type and runs 400 s.
// Every start costs 30 s.
TEST_F(SiaProfiles, CorralPlacesTheJobWhereItPays) {
  auto w = load_sia_workload(workload_);
  ASSERT_TRUE(w.ok()) << w.status().to_string();
  EngineOptions o;
  o.runtime.start_time = core::seconds(30);
  for (const auto& [name, type, seconds] :
       {std::tuple{"corral", "A100-40GB", 130}, std::tuple{"tiresias", "T4", 430}}) {
    auto policy = policy_by_name(name);
    ASSERT_TRUE(policy.ok());
    auto r = simulate(t4_and_a100(), *w, *policy, o);
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    EXPECT_EQ(r->jobs[0].gpu_type, type) << name;
    EXPECT_EQ(r->jobs[0].finish_ms - r->jobs[0].submit_ms, seconds * 1000) << name;
  }
}

// The real profiles: every Saturn job loads, knows the three types of the artifact's
// cluster (examples/fleets/sia-64.yaml), and runs fastest on the A100 for the
// applications that need the most compute (imagenet).
TEST(SiaWorkloads, SaturnLoadsOnTheArtifactsCluster) {
  const std::string dir = testing::shared_dir() + "/traces/sia-workloads";
  if (!fs::exists(dir)) GTEST_SKIP() << "no " << dir << " (set CORRAL_SHARED)";
  auto w = load_sia_workload(dir + "/workloads/saturn/workload-1.csv");
  ASSERT_TRUE(w.ok()) << w.status().to_string();
  EXPECT_EQ(w->jobs.size(), 160u);
  auto fleet = load_fleet(std::string(CORRAL_SOURCE_DIR) + "/examples/fleets/sia-64.yaml");
  ASSERT_TRUE(fleet.ok()) << fleet.status().to_string();
  EXPECT_EQ(fleet->total_gpus(), 64);
  bool saw_imagenet = false;
  for (const TraceJob& j : w->jobs) {
    ASSERT_TRUE(check_profile_types(*j.profile, *fleet, j.name).ok()) << j.name;
    const auto speed = gpu_speed(*j.profile, *fleet, j.gpus);
    ASSERT_EQ(speed.size(), 3u) << j.name;
    if (j.name.starts_with("imagenet")) {
      saw_imagenet = true;
      EXPECT_DOUBLE_EQ(speed.at(core::GpuTypeId("A100-40GB")), 1.0) << j.name;
      EXPECT_LT(speed.at(core::GpuTypeId("T4")), 0.5) << j.name;
    }
  }
  EXPECT_TRUE(saw_imagenet);
}

}  // namespace
}  // namespace corral::sim
