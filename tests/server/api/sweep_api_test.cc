// Sweeps (docs/jobspec.md#sweeps) through real HTTP against corrald in the test's process,
// on both stores, with a scripted agent: trials get their parameters, ASHA stops the
// trials its rule says to stop (checked by hand below), a stopped trial's GPU goes to the
// sweep's next trial, a retried report is judged once, and the sweep names its best trial
// with its run.
#include <algorithm>
#include <string>
#include <vector>

#include "run_fixture.h"

namespace corral::testing {
namespace {

template <typename Factory>
using SweepApiTest = RunFixture<Factory>;

TYPED_TEST_SUITE(SweepApiTest, Stores, StoreNames);

// The job ids of the sweep's trials, by index.
std::vector<std::int64_t> trial_ids(const json& sweep) {
  std::vector<std::int64_t> out;
  for (const json& t : sweep["trialList"]) out.push_back(t["job"].get<std::int64_t>());
  return out;
}

TYPED_TEST(SweepApiTest, AshaStopsTrialsBelowTheCutAndNamesTheBestTrial) {
  FakeAgent n1 = this->agent("n1");
  // Four trials over a grid of one parameter (trial i has lr = 0.1 (i + 1)), three at a
  // time; rungs at steps 10 and 20 (40 is the end), the best half going on.
  const json spec = {
      {"name", "lr-sweep"},
      {"tenant", "nlp"},
      {"resources", {{"gpus", 1}, {"gpuTypes", {"H100"}}}},
      {"command", {"/bin/true"}},
      {"lineage",
       {{"datasets", {"webtext@v1"}},
        {"code", {{"repo", "github.com/acme/llm"}, {"commit", std::string(40, 'f')}}},
        {"image", kImage}}},
      {"sweep",
       {{"method", "grid"},
        {"parameters", {{"lr", {{"values", {0.1, 0.2, 0.3, 0.4}}}}}},
        {"maxRunning", 3},
        {"metric", {{"name", "loss"}, {"goal", "minimize"}}},
        {"earlyStopping",
         {{"rule", "asha"}, {"minStep", 10}, {"maxStep", 40}, {"reductionFactor", 2}}}}}};
  auto r = this->as(this->nlp_).post("/v1/jobs", spec.dump());
  ASSERT_EQ(r.status, 201) << r.body;
  const std::int64_t id = body(r)["id"];
  const std::string sweep_path = "/v1/sweeps/" + std::to_string(id);
  json sweep = body(this->as(this->nlp_).get(sweep_path));
  ASSERT_EQ(sweep["trials"], 4) << sweep.dump();
  EXPECT_EQ(sweep["earlyStopping"]["rungSteps"], json::array({10, 20}));
  const std::vector<std::int64_t> t = trial_ids(sweep);
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(sweep["trialList"][3]["parameters"], (json{{"lr", 0.4}}));
  ASSERT_TRUE(this->wait_phase(t[2], "launching"));
  n1.round();
  ASSERT_EQ(this->phase(t[3]), "pending");  // maxRunning 3
  // Each trial's worker is told its parameters.
  for (const json& w : n1.assignments) {
    const auto i = std::find(t.begin(), t.end(), w["job"].get<std::int64_t>()) - t.begin();
    EXPECT_EQ(w["sweepParams"], (json{{"lr", "0." + std::to_string(i + 1)}})) << w.dump();
  }
  const auto loss = [&](std::int64_t job, std::int64_t step, double value) {
    const auto reply = this->report(n1, job, 1, {{"metrics", points(step, step, value)}});
    EXPECT_EQ(reply.status, 200) << reply.body;
  };

  // Rung 0 (step 10): 1.0 goes on (the first); 0.5 goes on (best of 2, 1 kept); 2.0 is
  // third of 3 with 2 kept: stopped.
  loss(t[0], 10, 1.0);
  loss(t[0], 10, 1.0);  // the agent's retry: judged once
  // Trial 1 reports rungs 0 and 1 at once: judged at both, in order (first at rung 1).
  const json two_rungs = {{"metrics",
                           {{{"name", "loss"}, {"step", 10}, {"value", 0.5}},
                            {{"name", "loss"}, {"step", 20}, {"value", 0.3}}}}};
  ASSERT_EQ(this->report(n1, t[1], 1, two_rungs).status, 200);
  loss(t[2], 10, 2.0);
  EXPECT_EQ(this->phase(t[2]), "cancelled");
  const std::string events =
      body(this->admin().get("/v1/jobs/" + std::to_string(t[2]) + "/events")).dump();
  EXPECT_NE(events.find("early_stopped"), std::string::npos) << events;
  EXPECT_NE(events.find("rung 0 (step 10): loss 2 at step 10 ranks 3 of the 3 trials here; the "
                        "best 2 go on (cut 1): stopped"),
            std::string::npos)
      << events;
  // A late report of the stopped trial, before its worker stops, is judged no more.
  this->report(n1, t[2], 1, {{"metrics", points(20, 20, 0.01)}});
  // Its worker stops, its GPU is freed, and the sweep's fourth trial takes a GPU.
  n1.round();
  n1.obey_stops();
  n1.round();
  ASSERT_TRUE(this->wait_phase(t[3], "launching"));
  n1.round();
  // 0.8, first reported at step 12: second of 4, 2 kept: goes on.
  loss(t[3], 12, 0.8);
  // Rung 1 (step 20): trial 1's 0.3 went on; 0.9 is second of 2, 1 kept: stopped; 0.2
  // (at step 25) is the best of 3: goes on.
  loss(t[0], 20, 0.9);
  loss(t[3], 25, 0.2);
  EXPECT_EQ(this->phase(t[0]), "cancelled");
  EXPECT_EQ(this->phase(t[1]), "running");
  EXPECT_EQ(this->phase(t[3]), "running");
  // The two left run to the end; the better final loss is trial 3's.
  loss(t[1], 40, 0.25);
  loss(t[3], 40, 0.1);
  n1.obey_stops();
  n1.exit_all(t[1], 0);
  n1.exit_all(t[3], 0);
  n1.round();
  ASSERT_TRUE(this->wait_phase(t[3], "succeeded"));
  ASSERT_TRUE(this->wait_phase(t[1], "succeeded"));

  sweep = body(this->as(this->nlp_).get(sweep_path));
  EXPECT_EQ(sweep["stoppedEarly"], 2);
  EXPECT_EQ(sweep["phases"], (json{{"cancelled", 2}, {"succeeded", 2}}));
  const json& trials = sweep["trialList"];
  EXPECT_EQ(trials[0]["stoppedAtRung"], 1);
  EXPECT_EQ(trials[0]["rungsPassed"], 1);
  EXPECT_EQ(trials[2]["stoppedAtRung"], 0);
  EXPECT_EQ(trials[1]["rungsPassed"], 2);
  EXPECT_TRUE(trials[1]["stoppedAtRung"].is_null());
  EXPECT_EQ(trials[3]["lastStep"], 40);
  const json& best = sweep["best"];
  ASSERT_TRUE(best.is_object()) << sweep.dump();
  EXPECT_EQ(best["index"], 3);
  EXPECT_EQ(best["job"], t[3]);
  EXPECT_EQ(best["value"], 0.1);
  EXPECT_EQ(best["parameters"], (json{{"lr", 0.4}}));
  // Its run, in the same answer: what it trained on.
  EXPECT_EQ(best["run"]["manifest"]["datasets"][0]["ref"], "webtext@v1");
  EXPECT_EQ(best["run"]["manifest"]["code"]["commit"], std::string(40, 'f'));
  // Another tenant sees no sweep.
  EXPECT_EQ(this->as(this->vision_).get(sweep_path).status, 404);
}

TYPED_TEST(SweepApiTest, AnArrayThatIsNotASweepIsNotFoundAsOne) {
  const json spec = {{"name", "shards"},
                     {"tenant", "nlp"},
                     {"resources", {{"gpus", 1}}},
                     {"command", {"/bin/true"}},
                     {"array", {{"count", 2}}}};
  const auto r = this->as(this->nlp_).post("/v1/jobs", spec.dump());
  ASSERT_EQ(r.status, 201) << r.body;
  const std::int64_t id = body(r)["id"];
  const auto s = this->as(this->nlp_).get("/v1/sweeps/" + std::to_string(id));
  EXPECT_EQ(s.status, 404) << s.body;
  EXPECT_NE(s.body.find("is not a sweep"), std::string::npos) << s.body;
}

}  // namespace
}  // namespace corral::testing
