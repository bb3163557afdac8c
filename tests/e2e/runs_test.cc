// A training run end to end (docs/runs.md): real corral-agents run corral-trainer, whose
// rank 0 reports its loss at every step and, when done, its model file as an artifact;
// the run's manifest, metrics and artifacts read back, the model's digest is the file's,
// and a reproduction runs the same manifest to the same final value.
#include <fstream>
#include <sstream>

#include "cluster_fixture.h"
#include <openssl/evp.h>

namespace corral::testing {
namespace {

std::string file_sha256(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  const std::string data = bytes.str();
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), digest, &len, EVP_sha256(), nullptr);
  std::string out = "sha256:";
  char hex[3];
  for (unsigned int i = 0; i < len; ++i) {
    std::snprintf(hex, sizeof(hex), "%02x", digest[i]);
    out += hex;
  }
  return out;
}

TEST_F(ClusterTest, TheTrainerReportsMetricsAndItsModelAndTheRunReproduces) {
  const json version = {{"version", "v1"},
                        {"uri", "file:///data/toy/v1"},
                        {"digest", "sha256:" + std::string(64, 'd')},
                        {"schemaHash", "sha256:" + std::string(64, 'e')},
                        {"sizeBytes", 4096},
                        {"status", "passed"}};
  ASSERT_EQ(admin_->post("/v1/datasets/toy/versions", version.dump()).status, 201);
  const std::string name = "run-" + std::to_string(getpid());
  json spec = trainer_job(name, 8, 60, 5);
  spec["command"].push_back("--metrics-every");
  spec["command"].push_back("10");
  spec["lineage"] = {{"datasets", {"toy@v1"}},
                     {"code", {{"repo", "github.com/acme/toy"}, {"commit", std::string(40, 'a')}}}};
  const auto id = submit(spec);
  ASSERT_TRUE(wait_phase(id, "succeeded")) << job(id).dump() << "\n" << logs(id, 0);

  // The model is reported after the last metrics; both go through the agent's queue.
  json run;
  ASSERT_TRUE(eventually([&] {
    run = body(admin_->get("/v1/runs/" + std::to_string(id)));
    for (const auto& a : run.value("artifacts", json::array())) {
      if (a.value("kind", "") == "artifact") return true;
    }
    return false;
  })) << run.dump();
  EXPECT_EQ(run["status"], "succeeded");
  EXPECT_EQ(run["manifest"]["datasets"][0]["digest"], version["digest"]);
  EXPECT_EQ(run["manifest"]["code"]["commit"], std::string(40, 'a'));
  ASSERT_EQ(run["attemptHistory"].size(), 1u) << run.dump();
  EXPECT_EQ(run["attemptHistory"][0]["gpus"].size(), 8u);
  EXPECT_EQ(run["attemptHistory"][0]["packed"], "nvlink");

  // Every step's loss, and the evaluation once at the end.
  const json metrics = run["metrics"];
  ASSERT_EQ(metrics.size(), 2u) << metrics.dump();
  EXPECT_EQ(metrics[0]["name"], "eval/weight_error");
  EXPECT_EQ(metrics[0]["points"], 1);
  EXPECT_EQ(metrics[1]["name"], "loss");
  EXPECT_EQ(metrics[1]["points"], 60);
  EXPECT_EQ(metrics[1]["lastStep"], 60);
  const json loss =
      body(admin_->get("/v1/runs/" + std::to_string(id) + "/metrics?name=loss"))["points"];
  ASSERT_EQ(loss.size(), 60u);
  EXPECT_LT(loss[59]["value"].get<double>(), loss[0]["value"].get<double>())
      << "the loss falls as it trains";

  // The model artifact is the file it wrote, digest and size; its checkpoints are there.
  const std::string model_path = ckpt_dir(name) + "/model";
  std::size_t checkpoints = 0;
  for (const auto& a : run["artifacts"]) {
    if (a["kind"] == "checkpoint") {
      ++checkpoints;
      continue;
    }
    EXPECT_EQ(a["name"], "model");
    EXPECT_EQ(a["uri"], model_path);
    EXPECT_EQ(a["digest"], file_sha256(model_path));
    EXPECT_EQ(a["bytes"], std::filesystem::file_size(model_path));
  }
  EXPECT_EQ(checkpoints, 2u) << "steps 20 and 40: " << run["artifacts"].dump();

  // A reproduction: the same manifest, a new job, the same result.
  const auto r = admin_->post("/v1/runs/" + std::to_string(id) + "/reproduce", "{}");
  ASSERT_EQ(r.status, 201) << r.body;
  const std::int64_t copy = body(r)["id"];
  ASSERT_TRUE(wait_phase(copy, "succeeded")) << job(copy).dump() << "\n" << logs(copy, 0);
  const json again = body(admin_->get("/v1/runs/" + std::to_string(copy)));
  EXPECT_EQ(again["manifest"], run["manifest"]);
  EXPECT_EQ(again["reproduces"], id);
  const std::string expected = uninterrupted_final(60);
  EXPECT_NE(logs(copy, 0).find(expected), std::string::npos) << logs(copy, 0);
  EXPECT_NE(logs(id, 0).find(expected), std::string::npos);
}

}  // namespace
}  // namespace corral::testing
