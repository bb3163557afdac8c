// Shares of a GPU end to end: a real corrald and a real agent with a simulated 8-GPU node.
// Two tenants' shares land on the one GPU a whole-GPU job leaves free; each worker gets
// that GPU and MPS's limits for its share; a third share that does not fit waits with
// the reason; the node and fleet views show both shares, and the room a cancelled share
// leaves takes the waiting one. (How the ledger bills shares: AccrualControllerTest.)
#include "cluster_fixture.h"

namespace corral::testing {
namespace {

class SharesTest : public ClusterTest {
 protected:
  std::vector<std::string> node_labels() const override { return {"spine=s1,leaf=l1,rack=r1"}; }
  std::vector<std::string> agent_args() const override {
    return {"--mps-pipe-dir", (dir_.path() / "mps").string()};
  }

  // A job that prints its GPU environment and then waits to be cancelled.
  json share_job(const std::string& name, const std::string& tenant, double share,
                 std::optional<int> memory_gib) {
    json spec = {
        {"name", name},
        {"tenant", tenant},
        {"resources", {{"gpuShare", share}, {"gpuTypes", {"H100"}}}},
        {"command", {"sh", "-c", "env | grep -E '^(CUDA_|CORRAL_GPU)' | sort; exec sleep 600"}}};
    if (memory_gib) spec["resources"]["gpuMemoryGiB"] = *memory_gib;
    return spec;
  }

  // KEY=VALUE lines of a worker's log.
  std::map<std::string, std::string> env_of(std::int64_t id) {
    std::map<std::string, std::string> out;
    std::istringstream in(logs(id, 0));
    std::string line;
    while (std::getline(in, line)) {
      const auto eq = line.find('=');
      if (eq != std::string::npos) out[line.substr(0, eq)] = line.substr(eq + 1);
    }
    return out;
  }
};

TEST_F(SharesTest, TwoTenantsShareOneGpuEachWithItsOwnLimits) {
  for (const char* t : {"vision", "speech"}) {
    const auto r = admin_->put(std::string("/v1/tenants/") + t, "{}");
    ASSERT_LT(r.status, 300) << r.body;
  }
  // Seven whole GPUs, so the shares have one GPU to go to.
  json whole = {{"name", "whole"},
                {"tenant", "vision"},
                {"resources", {{"gpus", 7}, {"gpuTypes", {"H100"}}}},
                {"command", {"sleep", "600"}}};
  const std::int64_t big = submit(whole);
  ASSERT_TRUE(wait_phase(big, "running")) << job(big).dump();
  const json placed = job(big);
  std::set<int> taken;
  for (const auto& g : placed["allocation"]["gpus"]) taken.insert(g.value("index", -1));
  int free_gpu = 0;
  while (taken.contains(free_gpu)) ++free_gpu;

  const std::int64_t a = submit(share_job("quarter", "vision", 0.25, 20));
  const std::int64_t b = submit(share_job("half", "speech", 0.5, 30));
  ASSERT_TRUE(wait_phase(a, "running")) << job(a).dump();
  ASSERT_TRUE(wait_phase(b, "running")) << job(b).dump();
  for (const std::int64_t id : {a, b}) {
    const json alloc = job(id)["allocation"];
    ASSERT_EQ(alloc["gpus"].size(), 1u) << alloc.dump();
    EXPECT_EQ(alloc["gpus"][0].value("index", -1), free_gpu) << alloc.dump();
  }
  EXPECT_EQ(job(a)["allocation"].value("shareMilli", 0), 250);
  EXPECT_EQ(job(b)["allocation"].value("shareMilli", 0), 500);
  const auto placed_a = event_messages(a, "placed");
  ASSERT_EQ(placed_a.size(), 1u);
  EXPECT_EQ(placed_a[0], "placed a 0.25 share on one H100: n1[" + std::to_string(free_gpu) + "]");

  // Each worker sees the shared GPU, and MPS holds it to its share of the SMs and memory.
  std::map<std::string, std::string> env;
  ASSERT_TRUE(eventually([&] { return !(env = env_of(a)).empty(); })) << logs(a, 0);
  EXPECT_EQ(env["CUDA_VISIBLE_DEVICES"], std::to_string(free_gpu));
  EXPECT_EQ(env["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"], "25");
  EXPECT_EQ(env["CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"], "0=20480M");
  EXPECT_EQ(env["CUDA_MPS_PIPE_DIRECTORY"], (dir_.path() / "mps").string());
  EXPECT_EQ(env["CORRAL_GPU_SHARE"], "0.25");
  ASSERT_TRUE(eventually([&] { return !(env = env_of(b)).empty(); })) << logs(b, 0);
  EXPECT_EQ(env["CUDA_VISIBLE_DEVICES"], std::to_string(free_gpu));
  EXPECT_EQ(env["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"], "50");
  EXPECT_EQ(env["CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"], "0=30720M");

  // Half a GPU more does not fit beside three quarters: it waits, saying why.
  const std::int64_t c = submit(share_job("another-half", "speech", 0.5, std::nullopt));
  ASSERT_TRUE(eventually([&] { return job(c).value("reason", "").find("capacity") == 0; }))
      << job(c).dump();
  EXPECT_NE(job(c).value("reason", "").find("0.5 of a GPU"), std::string::npos) << job(c).dump();

  // The node and the fleet show both shares on the one GPU.
  const json node = body(admin_->get("/v1/nodes/n1"));
  int shares_on_gpu = 0;
  for (const auto& g : node.value("allocated", json::array())) {
    if (g.value("index", -1) == free_gpu && g.value("shareMilli", 0) > 0) ++shares_on_gpu;
  }
  EXPECT_EQ(shares_on_gpu, 2) << node.dump();
  const json fleet = body(admin_->get("/v1/fleet"));
  const json gpu = fleet["nodes"][0]["gpus"][free_gpu];
  EXPECT_EQ(gpu.value("heldMilli", 0), 750) << gpu.dump();
  EXPECT_EQ(gpu["shares"].size(), 2u) << gpu.dump();

  // Cancelling the quarter makes room: the waiting half starts on the same GPU.
  ASSERT_EQ(admin_->post("/v1/jobs/" + std::to_string(a) + "/cancel", "{}").status, 200);
  ASSERT_TRUE(wait_phase(c, "running")) << job(c).dump();
  EXPECT_EQ(job(c)["allocation"]["gpus"][0].value("index", -1), free_gpu);
  for (const std::int64_t id : {big, b, c}) {
    admin_->post("/v1/jobs/" + std::to_string(id) + "/cancel", "{}");
  }
}

}  // namespace
}  // namespace corral::testing
