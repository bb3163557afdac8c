// Arrays and dependencies end to end: a real corrald and real agents run an array's tasks
// with their indices, never more than maxRunning at once; a chain of dependencies runs
// in order across a kill -9 of corrald, and a job whose dependency can never be met is
// cancelled with the reason.
#include <map>
#include <set>

#include "cluster_fixture.h"

namespace corral::testing {
namespace {

json shell_job(const std::string& name, const std::string& script) {
  return {{"name", name},
          {"resources", {{"gpus", 1}, {"gpuTypes", {"H100"}}}},
          {"command", {"sh", "-c", script}}};
}

json array_of(const std::string& path, TestClient& admin) { return body(admin.get(path)); }

TEST_F(ClusterTest, AnArrayRunsEveryTaskWithItsIndexAndAtMostMaxRunningAtOnce) {
  json spec = shell_job("sweep", "echo index=$CORRAL_ARRAY_INDEX of $CORRAL_ARRAY_COUNT; sleep 1");
  spec["array"] = {{"count", 6}, {"maxRunning", 2}};
  const std::int64_t id = submit(spec);
  ASSERT_GT(id, 0);
  const std::string path = "/v1/arrays/" + std::to_string(id);
  std::size_t most_running = 0;
  ASSERT_TRUE(eventually(
      [&] {
        const json a = array_of(path, *admin_);
        const json& phases = a.value("phases", json::object());
        most_running = std::max<std::size_t>(
            most_running, phases.value("running", 0) + phases.value("launching", 0));
        return phases.value("succeeded", 0) == 6;
      },
      90s))
      << admin_->get(path).body;
  EXPECT_LE(most_running, 2u);
  EXPECT_GE(most_running, 1u);
  const json a = array_of(path, *admin_);
  EXPECT_EQ(a.value("count", 0), 6);
  EXPECT_EQ(a.value("maxRunning", 0), 2);
  std::set<std::string> seen;
  for (const auto& t : a["tasks"]) {
    const std::int64_t job = t.value("job", std::int64_t{0});
    const std::string log = logs(job, 0);
    EXPECT_NE(log.find("index=" + std::to_string(t.value("index", -1)) + " of 6"),
              std::string::npos)
        << log;
    seen.insert(log.substr(0, log.find('\n')));
    EXPECT_EQ(this->job(job)["array"]["job"], id);
  }
  EXPECT_EQ(seen.size(), 6u);  // each task its own index
  expect_no_double_allocation();
  // A task cannot be reproduced alone: its spec would submit the whole array again.
  const auto again = admin_->post("/v1/runs/" + std::to_string(id + 1) + "/reproduce", "{}");
  EXPECT_EQ(again.status, 409) << again.body;
  EXPECT_NE(again.body.find("cannot be reproduced alone"), std::string::npos) << again.body;
  // The array's name names the array (its first task), not its latest task.
  json waits = shell_job("after-sweep", "true");
  waits["dependsOn"] = {{{"job", "sweep"}}};
  const std::int64_t waiter = submit(waits);
  EXPECT_EQ(job(waiter)["spec"]["dependsOn"][0]["job"], id);
  ASSERT_TRUE(wait_phase(waiter, "succeeded", 30s)) << job(waiter).dump();

  // A second array cancelled as one: every task that has not ended.
  json more = shell_job("more", "sleep 30");
  more["array"] = {{"count", 3}};
  const std::int64_t second = submit(more);
  ASSERT_TRUE(eventually([&] { return phase(second) == "running"; }, 30s));
  const auto r = admin_->post("/v1/arrays/" + std::to_string(second) + "/cancel", "{}");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(body(r).value("cancelled", 0), 3);
  const json after = array_of("/v1/arrays/" + std::to_string(second), *admin_);
  EXPECT_EQ(after["phases"].value("cancelled", 0), 3) << after.dump();
  // A task is not an array's id.
  EXPECT_EQ(admin_->get("/v1/arrays/" + std::to_string(second + 1)).status, 404);
}

TEST_F(ClusterTest, ADependencyChainRunsInOrderAcrossAKill9OfCorrald) {
  // Restarts where the agents know it.
  server_->set_listen(server_->addr());
  const std::int64_t a = submit(shell_job("prep", "sleep 3"));
  json train = shell_job("train", "sleep 1");
  train["dependsOn"] = {{{"job", "prep"}, {"on", "success"}}};
  const std::int64_t b = submit(train);
  json eval = shell_job("eval", "true");
  eval["dependsOn"] = {{{"job", b}, {"on", "success"}}};
  const std::int64_t c = submit(eval);
  json cleanup = shell_job("on-failure", "true");
  cleanup["dependsOn"] = {{{"job", a}, {"on", "failure"}}};
  const std::int64_t d = submit(cleanup);
  // The stored spec holds the id a name resolved to.
  EXPECT_EQ(job(b)["spec"]["dependsOn"][0]["job"], a);
  ASSERT_TRUE(eventually([&] { return job(b).value("pendingKind", "") == "dependency"; }, 30s));
  EXPECT_EQ(job(b).value("reason", ""), "waiting for job " + std::to_string(a) + " to succeed");

  server_->kill9();
  ASSERT_TRUE(server_->start().ok());
  admin_ = std::make_unique<TestClient>(server_->admin());

  ASSERT_TRUE(wait_phase(c, "succeeded", 90s)) << job(c).dump();
  EXPECT_EQ(phase(a), "succeeded");
  EXPECT_EQ(phase(b), "succeeded");
  // Each started after the one it waited for ended.
  const auto started = [&](std::int64_t id) {
    return job(id)["attempts"][0].value("createdAtMs", std::int64_t{0});
  };
  EXPECT_GE(started(b), job(a).value("updatedAtMs", std::int64_t{0}));
  EXPECT_GE(started(c), job(b).value("updatedAtMs", std::int64_t{0}));
  // prep succeeded, so the job that waited for it to fail never runs.
  ASSERT_TRUE(wait_phase(d, "cancelled", 30s)) << job(d).dump();
  EXPECT_EQ(job(d).value("reason", ""),
            "dependency never met: job " + std::to_string(a) + " succeeded (on: failure)");
  EXPECT_EQ(job(d).value("attempt", -1), 0);
}

TEST_F(ClusterTest, ADependencyThatCannotBeResolvedOrMetIsRefusedAtSubmission) {
  json missing = shell_job("x", "true");
  missing["dependsOn"] = {{{"job", "no-such-job"}}};
  auto r = admin_->post("/v1/jobs", missing.dump());
  ASSERT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(body(r)["error"]["field"], "dependsOn[0].job") << r.body;

  json failing = shell_job("fails", "exit 3");
  failing["maxRestarts"] = 0;
  const std::int64_t fails = submit(failing);
  json spec = shell_job("after-fails", "true");
  ASSERT_TRUE(eventually([&] { return phase(fails) == "failed"; }, 60s)) << job(fails).dump();
  spec["dependsOn"] = {{{"job", fails}, {"on", "success"}}};
  r = admin_->post("/v1/jobs", spec.dump());
  ASSERT_EQ(r.status, 400) << r.body;
  EXPECT_NE(r.body.find("ended without succeeding"), std::string::npos) << r.body;

  json elementwise = shell_job("pairs", "true");
  elementwise["array"] = {{"count", 2}};
  elementwise["dependsOn"] = {{{"job", fails}, {"elementwise", true}}};
  r = admin_->post("/v1/jobs", elementwise.dump());
  ASSERT_EQ(r.status, 400) << r.body;
  EXPECT_NE(r.body.find("is not an array"), std::string::npos) << r.body;
}

// A workflow's steps name one another: a name is the step of the same document, not an
// older job of that name (here a cancelled one, which would make `train` never runnable).
TEST_F(ClusterTest, AWorkflowRunsItsStepsInOrderAndItsNamesAreItsOwnSteps) {
  const std::int64_t older = submit(shell_job("prep", "sleep 30"));
  ASSERT_EQ(admin_->post("/v1/jobs/" + std::to_string(older) + "/cancel", "{}").status, 200);
  json train = shell_job("train", "sleep 1");
  train["dependsOn"] = {{{"job", "prep"}}};
  json eval = shell_job("eval", "true");
  eval["dependsOn"] = {{{"job", "train"}, {"on", "finish"}}};
  const json doc = {{"steps", {eval, train, shell_job("prep", "true")}}};
  const auto r = admin_->post("/v1/workflows", doc.dump());
  ASSERT_EQ(r.status, 201) << r.body;
  std::map<std::string, std::int64_t> id;
  const json answer = body(r);
  for (const auto& step : answer["steps"]) id[step.value("name", "")] = step.value("id", 0);
  ASSERT_EQ(id.size(), 3u) << r.body;
  EXPECT_LT(id["prep"], id["train"]);  // submitted in dependency order
  EXPECT_LT(id["train"], id["eval"]);
  EXPECT_EQ(job(id["train"])["spec"]["dependsOn"][0]["job"], id["prep"]);
  ASSERT_TRUE(wait_phase(id["eval"], "succeeded", 60s)) << job(id["eval"]).dump();
  EXPECT_EQ(phase(id["train"]), "succeeded");

  // A cycle is refused whole: nothing of it is submitted.
  const std::int64_t before = submit(shell_job("marker", "true"));
  json a = shell_job("a", "true");
  a["dependsOn"] = {{{"job", "b"}}};
  json b = shell_job("b", "true");
  b["dependsOn"] = {{{"job", "a"}}};
  const auto cycle = admin_->post("/v1/workflows", json{{"steps", {a, b}}}.dump());
  ASSERT_EQ(cycle.status, 400) << cycle.body;
  EXPECT_NE(cycle.body.find("a -> b -> a"), std::string::npos) << cycle.body;
  EXPECT_EQ(submit(shell_job("marker", "true")), before + 1);
}

}  // namespace
}  // namespace corral::testing
