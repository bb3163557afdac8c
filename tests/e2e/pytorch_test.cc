// PyTorch end to end (issue 38, item 5; docs/pytorch.md): a real torch.distributed job
// (tests/e2e/torch_allreduce.py, gloo on CPU) as a 2-node gang of 4 ranks on simulated
// nodes, once per process mode, is preempted by a production job and resumes:
//   - perGpu: the agent starts one python per GPU with torch.distributed's env://
//     variables (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_*);
//   - perNode: the agent starts torchrun (python3 -m torch.distributed.run) once per node
//     with no rendezvous flag, only the PET_* settings it gives; both must form one world.
// The script checks the world it joined, checkpoints without reporting (a plain PyTorch
// script), and its final all-reduced total must be the uninterrupted run's, started from
// the step the first attempt saved, not from 0.
//
// Both tests bind rank 0's MASTER_PORT (29500 + its lowest GPU) on this machine, so ctest
// runs them one at a time (RESOURCE_LOCK in tests/CMakeLists.txt).
#include <cstdlib>
#include <filesystem>

#include "cluster_fixture.h"

namespace corral::testing {
namespace {

// An interpreter that can import torch ("": none). PATH's python3 first (the one a job
// names bare), then Debian's, where python3-torch installs (a pyenv or venv python3 on
// PATH may not see it).
std::string torch_python() {
  for (const std::string py : {"python3", "/usr/bin/python3"}) {
    if (std::system((py + " -c 'import torch' >/dev/null 2>&1").c_str()) == 0) return py;
  }
  return "";
}

class PyTorchTest : public ClusterTest {
 protected:
  std::vector<std::string> node_labels() const override {
    return {"spine=s1,leaf=l1,rack=r1", "spine=s1,leaf=l1,rack=r2"};
  }

  void preempt_and_resume(const std::string& processes) {
    const std::string py = torch_python();
    if (py.empty()) {
      GTEST_SKIP() << "python3-torch is not installed: neither python3 nor /usr/bin/python3 "
                      "can `import torch` (scripts/setup.sh installs it from deps/debian.txt)";
    }
    constexpr int kSteps = 40, kRanks = 4, kPerNode = 2, kPreemptAfter = 5;
    const std::string name =
        std::string(processes == "perNode" ? "torch-pernode-" : "torch-pergpu-") +
        std::to_string(getpid());
    const std::string result = (dir_.path() / (name + "-result.json")).string();
    std::vector<std::string> command = {py};
    if (processes == "perNode") command.insert(command.end(), {"-m", "torch.distributed.run"});
    command.insert(command.end(), {CORRAL_TORCH_ALLREDUCE, "--steps", std::to_string(kSteps),
                                   "--step-s", "0.25", "--world", std::to_string(kRanks),
                                   "--local-world", std::to_string(kPerNode), "--result", result});
    const json spec = {
        {"name", name},
        {"priorityClass", "preemptible"},
        {"resources", {{"gpus", kRanks}, {"gpusPerNode", kPerNode}, {"gpuTypes", {"H100"}}}},
        {"processes", processes},
        {"maxRestarts", 0},  // a rank that finds the wrong world fails the job at once
        {"command", command},
        // Loopback for gloo (the simulated nodes share this host); one thread per rank on
        // two cores; torchrun: Debian's 1.13 on Python 3.11 cannot parse its default
        // --redirects/--tee of 0 (docs/pytorch.md), and a 1 s check of its workers.
        {"env",
         {{"GLOO_SOCKET_IFNAME", "lo"},
          {"OMP_NUM_THREADS", "1"},
          {"PET_REDIRECTS", "2"},
          {"PET_TEE", "2"},
          {"PET_MONITOR_INTERVAL", "1"}}},
        {"checkpoint", {{"dir", ckpt_dir(name)}, {"intervalSeconds", 1}}}};
    const auto id = submit(spec);
    ASSERT_GT(id, 0);
    const auto saved = std::filesystem::path(ckpt_dir(name)) / "step-000005.pt";
    // A rank that found the wrong world ends the job: no need to wait the whole deadline.
    eventually([&] { return std::filesystem::exists(saved) || phase(id) == "failed"; }, 120s);
    ASSERT_TRUE(std::filesystem::exists(saved)) << job(id).dump() << "\n" << logs(id, 0);

    // A production job wanting a whole node: each node has 6 free, so it preempts.
    json urgent_spec = trainer_job("urgent-" + name, 8, 20, 5, "production");
    urgent_spec["resources"]["gpusPerNode"] = 8;  // split 6 + 2, it would fit beside
    const auto urgent = submit(urgent_spec);
    ASSERT_TRUE(wait_phase(urgent, "succeeded", 120s)) << job(urgent).dump();
    ASSERT_TRUE(wait_phase(id, "succeeded", 180s)) << job(id).dump() << "\nrank 0:\n"
                                                   << logs(id, 0) << "\nrank 1:\n"
                                                   << logs(id, 1);
    EXPECT_EQ(job(id).value("preemptions", 0), 1) << job(id).dump();

    // The uninterrupted total: each step s adds s * (1 + 2 + ... + ranks).
    const std::int64_t expected =
        std::int64_t{kRanks} * (kRanks + 1) / 2 * kSteps * (kSteps + 1) / 2;
    std::ifstream in(result);
    ASSERT_TRUE(in) << "no result file " << result << "\n" << logs(id, 0);
    const json got = json::parse(in);
    EXPECT_EQ(got.value("total", std::int64_t{-1}), expected) << got.dump();
    EXPECT_EQ(got.value("world", 0), kRanks) << got.dump();
    // It resumed where the first attempt's unreported checkpoints left off, not at 0.
    EXPECT_GE(got.value("start_step", 0), kPreemptAfter) << got.dump() << "\n" << logs(id, 0, 2);
    EXPECT_LT(got.value("start_step", kSteps), kSteps) << got.dump();
    EXPECT_NE(
        logs(id, 0, 2).find("no checkpoint was reported; CORRAL_RESTORE_FROM=" + ckpt_dir(name)),
        std::string::npos)
        << logs(id, 0, 2);
  }
};

TEST_F(PyTorchTest, PerGpuAllReduceFormsOneWorldAndResumesAfterPreemption) {
  preempt_and_resume("perGpu");
}

TEST_F(PyTorchTest, PerNodeTorchrunFormsOneWorldAndResumesAfterPreemption) {
  preempt_and_resume("perNode");
}

}  // namespace
}  // namespace corral::testing
