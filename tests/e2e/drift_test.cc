// Drift end to end (docs/drift.md): real corral-agents run corral-trainer, whose model
// is registered as two models; shifted data on the first submits its retraining
// template, which runs on the agents; shifted data on the second submits its template
// too, which the tenant's retraining budget (8 GPUs at once) holds back with its reason
// although 24 GPUs are free, and which runs once the first retraining is done.
#include "cluster_fixture.h"

namespace corral::testing {
namespace {

// ((i * mul) % mod) / div + shift: a sample, and the same shifted.
json sample(int n, long mul, long mod, double div, double shift) {
  json out = json::array();
  for (long i = 0; i < n; ++i) out.push_back(static_cast<double>((i * mul) % mod) / div + shift);
  return out;
}

TEST_F(ClusterTest, ShiftedDataTriggersRetrainingThatTheGpuBudgetHoldsBack) {
  const std::string name = "drift-" + std::to_string(getpid());
  const auto trained = submit(trainer_job(name, 8, 20, 5));
  ASSERT_TRUE(wait_phase(trained, "succeeded")) << job(trained).dump() << "\n" << logs(trained, 0);
  json model;
  ASSERT_TRUE(eventually([&] {
    const json run = body(admin_->get("/v1/runs/" + std::to_string(trained)));
    for (const auto& a : run.value("artifacts", json::array())) {
      if (a.value("kind", "") == "artifact") model = a;
    }
    return model.is_object();
  }));
  for (const std::string id : {"toy", "toy-ranker"}) {
    const json v = {{"version", "v1"},
                    {"run", trained},
                    {"artifactUri", model["uri"]},
                    {"digest", model["digest"]}};
    const auto r = admin_->post("/v1/models/" + id + "/versions", v.dump());
    ASSERT_EQ(r.status, 201) << r.body;
  }
  auto r = admin_->put("/v1/tenants/default", json{{"retraining", {{"maxGpus", 8}}}}.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  // toy's retraining runs long enough to be running when ranker's drift comes.
  r = admin_->put("/v1/models/toy/retraining",
                  json{{"job", trainer_job(name + "-retrain", 8, 2000, 20)}}.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  r = admin_->put("/v1/models/toy-ranker/retraining",
                  json{{"job", trainer_job(name + "-ranker", 8, 20, 5)}}.dump());
  ASSERT_EQ(r.status, 200) << r.body;

  const json reference = {{"features", {{"score", sample(200, 7919, 1000, 100.0, 0.0)}}}};
  const json shifted = {{"features", {{"score", sample(150, 104729, 997, 90.0, 1.5)}}}};
  for (const std::string id : {"toy", "toy-ranker"}) {
    r = admin_->post("/v1/models/" + id + "/versions/v1/drift/reference", reference.dump());
    ASSERT_EQ(r.status, 200) << r.body;
  }
  r = admin_->post("/v1/models/toy/versions/v1/drift", shifted.dump());
  ASSERT_EQ(r.status, 201) << r.body;
  ASSERT_EQ(body(r)["drifted"], true);
  ASSERT_EQ(body(r)["retraining"]["outcome"], "submitted") << r.body;
  const std::int64_t first = body(r)["retraining"]["job"];
  ASSERT_TRUE(wait_phase(first, "running")) << job(first).dump();

  r = admin_->post("/v1/models/toy-ranker/versions/v1/drift", shifted.dump());
  ASSERT_EQ(body(r)["retraining"]["outcome"], "submitted") << r.body;
  const std::int64_t second = body(r)["retraining"]["job"];
  json held;
  ASSERT_TRUE(eventually([&] {
    held = job(second);
    return held.value("pendingKind", "") == "held";
  })) << held.dump();
  EXPECT_EQ(held["phase"], "pending");
  EXPECT_EQ(held["reason"],
            "held: retraining budget: tenant default's retraining jobs running or ahead in the "
            "queue take 8 of the 8 GPUs its retraining budget allows at once (retraining.maxGpus); "
            "this one needs 8");
  EXPECT_EQ(phase(first), "running") << "the budget never stops a running retraining";

  // The first retraining cancelled: the second runs to the end on the agents.
  ASSERT_EQ(admin_->post("/v1/jobs/" + std::to_string(first) + "/cancel", "{}").status, 200);
  ASSERT_TRUE(wait_phase(second, "succeeded")) << job(second).dump() << "\n" << logs(second, 0);
  EXPECT_TRUE(has_event(second, "retraining"));
  const json status = body(admin_->get("/v1/models/toy-ranker/retraining"));
  ASSERT_EQ(status["jobs"].size(), 1u) << status.dump();
  EXPECT_EQ(status["jobs"][0]["phase"], "succeeded");
  expect_no_double_allocation();
}

}  // namespace
}  // namespace corral::testing
