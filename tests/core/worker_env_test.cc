// The environment of a worker (core/worker_env.h): here, what a share of a GPU adds,
// NVIDIA MPS's client limits; corrald's side of the rest is in
// tests/server/controllers/assignments_test.cc.
#include "core/worker_env.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace corral::core {
namespace {

WorkerSpec worker(std::vector<std::int32_t> gpus, std::string visible_devices) {
  return WorkerSpec{.key = {.job = 7, .attempt = 1, .rank = 0},
                    .gpus = std::move(gpus),
                    .visible_devices = std::move(visible_devices),
                    .command = {"/bin/true"}};
}

// The variables of `env` a share adds: NVIDIA MPS's (CUDA_MPS_*) and CORRAL_GPU_SHARE.
std::map<std::string, std::string> share_vars(const std::map<std::string, std::string>& env) {
  std::map<std::string, std::string> out;
  for (const auto& [name, value] : env) {
    if (name.starts_with(kMpsEnvPrefix) || name == "CORRAL_GPU_SHARE") out[name] = value;
  }
  return out;
}

TEST(WorkerEnv, ShareSetsMpsLimitsOnEachOfItsGpus) {
  // perNode, a quarter of GPUs 3 and 5 with 20 GiB pinned on each: the devices are the
  // worker's own ordinals after CUDA_VISIBLE_DEVICES, not the node's indices.
  WorkerSpec spec = worker({3, 5}, "3,5");
  spec.per_node = true;
  spec.gpu_share_milli = 250;
  spec.gpu_memory_mib = 20480;
  const auto env = worker_env(spec, "http://10.0.0.2:7070", "tok", "/run/nvidia-mps");
  EXPECT_EQ(share_vars(env), (std::map<std::string, std::string>{
                                 {"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "25"},
                                 {"CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", "0=20480M,1=20480M"},
                                 {"CUDA_MPS_PIPE_DIRECTORY", "/run/nvidia-mps"},
                                 {"CORRAL_GPU_SHARE", "0.25"},
                             }));
  EXPECT_EQ(env.at("CUDA_VISIBLE_DEVICES"), "3,5");
}

TEST(WorkerEnv, ShareWithoutMemoryOrPipeDirSetsOnlyWhatItKnows) {
  // No memory stated: no limit (the daemon's own, if any, applies); no pipe directory:
  // MPS's default, /tmp/nvidia-mps.
  WorkerSpec spec = worker({1}, "1");
  spec.gpu_share_milli = 500;
  EXPECT_EQ(share_vars(worker_env(spec, "http://10.0.0.2:7070", "tok")),
            (std::map<std::string, std::string>{
                {"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "50"},
                {"CORRAL_GPU_SHARE", "0.5"},
            }));
}

TEST(WorkerEnv, ThreadPercentageRoundsUpAndIsNeverZero) {
  const struct {
    std::int32_t milli;
    const char* percent;
    const char* fraction;
  } cases[] = {{1, "1", "0.001"},    {5, "1", "0.005"},    {10, "1", "0.01"},
               {11, "2", "0.011"},   {125, "13", "0.125"}, {250, "25", "0.25"},
               {333, "34", "0.333"}, {990, "99", "0.99"},  {999, "100", "0.999"}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.milli);
    WorkerSpec spec = worker({0}, "0");
    spec.gpu_share_milli = c.milli;
    const auto env = worker_env(spec, "http://10.0.0.2:7070", "tok");
    EXPECT_EQ(env.at("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"), c.percent);
    EXPECT_EQ(env.at("CORRAL_GPU_SHARE"), c.fraction);
  }
}

TEST(WorkerEnv, WholeGpusSetNoMpsVariables) {
  // A worker with whole GPUs owns them: it must not join the node's MPS daemon, even when
  // corrald sent a memory figure and the agent has a pipe directory.
  WorkerSpec spec = worker({0, 1}, "0,1");
  spec.gpu_memory_mib = 20480;
  const auto env = worker_env(spec, "http://10.0.0.2:7070", "tok", "/run/nvidia-mps");
  EXPECT_EQ(share_vars(env), (std::map<std::string, std::string>{}));
  EXPECT_EQ(env.at("CUDA_VISIBLE_DEVICES"), "0,1");
}

}  // namespace
}  // namespace corral::core
