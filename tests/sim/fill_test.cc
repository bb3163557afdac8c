// FGD's fill experiment (sim/fill.h) on a fleet small enough to work out by hand.
#include "sim/fill.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include <gtest/gtest.h>

namespace corral::sim {
namespace {

namespace fs = std::filesystem;

constexpr const char* kNodeHeader = "sn,cpu_milli,memory_mib,gpu,model\n";
constexpr const char* kPodHeader =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
    "deletion_time,scheduled_time\n";

class Fill : public ::testing::Test {
 public:
  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }

 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("corral-fill-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
};

// n0: two A GPUs, n1: one B GPU (3 GPUs). The pods, in creation order (rows out of order):
// two halves, a whole GPU, a CPU-only pod (left out), 0.3 of a B, and a 2-GPU pod that
// finds no node with two free GPUs.
FillTrace small_trace(Fill& f) {
  const std::string nodes = f.write("nodes.csv", std::string(kNodeHeader) +
                                                     "n0,16000,65536,2,A\n"
                                                     "n1,8000,32768,1,B\n"
                                                     "cpu,8000,32768,0,\n");
  const std::string pods = f.write("pods.csv", std::string(kPodHeader) +
                                                   "p1,1000,1024,1,500,,LS,Running,10,0,0\n"
                                                   "p0,1000,1024,1,500,,LS,Running,0,0,0\n"
                                                   "p2,4000,1024,1,1000,,LS,Running,20,0,0\n"
                                                   "p3,2000,1024,0,0,,BE,Running,30,0,0\n"
                                                   "p4,1500,1024,1,300,B,LS,Running,40,0,0\n"
                                                   "p5,2000,1024,2,1000,,LS,Running,50,0,0\n");
  auto trace = load_fill_trace(nodes, pods);
  EXPECT_TRUE(trace.ok()) << trace.status().to_string();
  return trace.ok() ? std::move(*trace) : FillTrace{};
}

TEST_F(Fill, PlacesPodsAsTheyArriveAndMeasuresWhatIsLeft) {
  const FillTrace trace = small_trace(*this);
  ASSERT_EQ(trace.nodes.size(), 2u);
  EXPECT_EQ(trace.capacity_milli(), 3000);
  ASSERT_EQ(trace.pods.size(), 5u);
  EXPECT_EQ(trace.pods.front().name, "p0");
  EXPECT_EQ(trace.cpu_only_pods, 1);
  EXPECT_EQ(trace.pods[3].gpu_types, std::vector<std::string>{"B"});

  // The halves share n0's GPU 0, the whole pod takes its GPU 1, the 0.3 goes on n1's B,
  // and the 2-GPU pod is dropped: 2.3 of 3 GPUs allocated, 0.7 left over on n1's GPU.
  const auto run = run_fill(trace, sched::SchedulerConfig{}, "fragmentation",
                            {.inflate = 1.3, .check_every = 1});
  ASSERT_TRUE(run.ok()) << run.status().to_string();
  EXPECT_EQ(run->placed, 4);
  EXPECT_EQ(run->dropped, 1);
  ASSERT_EQ(run->unallocated.size(), 144u);                 // 0..143%: 4.3 GPUs arrived of 3
  EXPECT_NEAR(run->unallocated[0], 2500.0 / 3000, 1e-12);   // after the first half
  EXPECT_NEAR(run->unallocated[60], 1000.0 / 3000, 1e-12);  // 2 of 3 arrived and placed
  EXPECT_NEAR(run->unallocated[100], 700.0 / 3000, 1e-12);
  EXPECT_NEAR(run->leftover_on_shared, 700.0 / 3000, 1e-12);
}

TEST_F(Fill, EveryRuleKeepsTheSchedulersInvariants) {
  const FillTrace trace = small_trace(*this);
  for (const sched::SharePlacement rule :
       {sched::SharePlacement::kBestFit, sched::SharePlacement::kPacking,
        sched::SharePlacement::kRandom}) {
    sched::SchedulerConfig config;
    config.share_placement = rule;
    for (bool shuffle : {false, true}) {
      const auto run = run_fill(trace, config, "rule", {.shuffle = shuffle, .check_every = 1});
      ASSERT_TRUE(run.ok()) << run.status().to_string();
      EXPECT_EQ(run->placed + run->dropped, 5);
      EXPECT_GE(run->unallocated.back(), 0.0);
    }
  }
}

TEST_F(Fill, BadRowsNameFileLineAndColumn) {
  const std::string nodes = write("nodes.csv", std::string(kNodeHeader) + "n0,16000,65536,2,A\n");
  const auto error = [&](const std::string& row) {
    return load_fill_trace(nodes, write("pods.csv", std::string(kPodHeader) + row)).status();
  };
  const core::Status text = error("p0,1000,1024,one,500,,LS,Running,0,0,0\n");
  EXPECT_EQ(text.field(), (dir_ / "pods.csv").string() + ":2: column num_gpu");
  EXPECT_NE(text.message().find("got 'one'"), std::string::npos) << text.to_string();
  EXPECT_EQ(error("p0,1000,1024,2,500,,LS,Running,0,0,0\n").field(),
            (dir_ / "pods.csv").string() + ":2: column gpu_milli");
  EXPECT_NE(error("p0,1000,1024,1,500,H100,LS,Running,0,0,0\n").message().find("model H100"),
            std::string::npos);
  EXPECT_EQ(load_fill_trace(nodes, (dir_ / "missing.csv").string()).status().field(),
            (dir_ / "missing.csv").string());
}

}  // namespace
}  // namespace corral::sim
