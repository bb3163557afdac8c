// Training runs (docs/runs.md) through real HTTP against corrald in the test's process,
// on both stores, with a scripted agent: each attempt recorded as placed and restoring
// from the previous attempt's checkpoint, the manifest (dataset digests, code, image,
// config hash), idempotent metric and artifact reports and their bounds, lineage from a
// dataset version to its runs, reproduction, and tenant isolation over every run endpoint.
#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "run_fixture.h"

namespace corral::testing {
namespace {

using namespace std::chrono_literals;

template <typename Factory>
using RunApiTest = RunFixture<Factory>;

TYPED_TEST_SUITE(RunApiTest, Stores, StoreNames);

TYPED_TEST(RunApiTest, EachAttemptIsRecordedAsPlacedAndRestoresFromTheLastCheckpoint) {
  FakeAgent n1 = this->agent("n1");
  const std::int64_t id = this->submit_run();
  ASSERT_TRUE(this->wait_phase(id, "launching"));
  n1.round();
  ASSERT_EQ(this->phase(id), "running");
  const json ckpt = {{"epoch", n1.epoch}, {"job", id},          {"attempt", 1},
                     {"rank", 0},         {"step", 50},         {"path", "/ckpt/pretrain/step-50"},
                     {"bytes", 4096},     {"checksum", kDigest}};
  ASSERT_EQ(n1.client().post("/v1/agents/n1/checkpoints", ckpt.dump()).status, 201);
  // The first attempt fails; the second, after its 10 s backoff, restores from step 50.
  n1.exit_all(id, 1);
  n1.heartbeat();
  ASSERT_TRUE(this->wait_phase(id, "pending"));
  this->clock_.advance(11s);
  ASSERT_TRUE(this->wait_phase(id, "launching"));
  n1.round();

  const json r = this->run(id);
  EXPECT_EQ(r["status"], "running");
  EXPECT_EQ(r["attempts"], 2);
  ASSERT_EQ(r["attemptHistory"].size(), 2u) << r.dump();
  const json& first = r["attemptHistory"][0];
  EXPECT_EQ(first["gpus"].size(), 2u);
  EXPECT_EQ(first["gpuType"], "H100");
  EXPECT_EQ(first["nodes"], json::array({"n1"}));
  EXPECT_EQ(first["packed"], "nvlink");  // two GPUs of one NVLink domain
  EXPECT_TRUE(first["restoredFrom"].is_null());
  EXPECT_EQ(r["attemptHistory"][1]["restoredFrom"],
            (json{{"uri", "/ckpt/pretrain/step-50"}, {"step", 50}}));
  // The manifest: what it trained on, pinned.
  const json& m = r["manifest"];
  ASSERT_EQ(m["datasets"].size(), 1u);
  EXPECT_EQ(m["datasets"][0]["ref"], "webtext@v1");
  EXPECT_EQ(m["datasets"][0]["digest"], kDigest);
  EXPECT_EQ(m["code"]["commit"], std::string(40, 'f'));
  EXPECT_EQ(m["image"], kImage);
  EXPECT_EQ(m["configHash"].get<std::string>().rfind("sha256:", 0), 0u);
  // Its checkpoint is one of its artifacts.
  ASSERT_EQ(r["artifacts"].size(), 1u) << r.dump();
  EXPECT_EQ(r["artifacts"][0]["kind"], "checkpoint");
  EXPECT_EQ(r["artifacts"][0]["uri"], "/ckpt/pretrain/step-50");
  // The first attempt is over: its reports are stale now.
  const auto stale = this->report(n1, id, 1, {{"metrics", points(1, 1, 0.5)}});
  EXPECT_EQ(stale.status, 409) << stale.body;
  EXPECT_EQ(body(stale)["error"]["code"], "stale");
}

TYPED_TEST(RunApiTest, ReportsAreIdempotentBoundedAndValidated) {
  FakeAgent n1 = this->agent("n1");
  const std::int64_t id = this->submit_run();
  ASSERT_TRUE(this->wait_phase(id, "launching"));
  n1.round();
  const json model = {{"name", "model"},
                      {"uri", "s3://nlp-private/runs/pretrain/model.pt"},
                      {"digest", kDigest},
                      {"bytes", 1'500'000'000}};
  const json batch = {{"metrics", points(1, 3, 2.5)}, {"artifacts", {model}}};
  auto r = this->report(n1, id, 1, batch);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(body(r)["points"], 3);
  EXPECT_EQ(body(r)["artifacts"], 1);
  // The agent's retry of the same report adds nothing.
  r = this->report(n1, id, 1, batch);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(body(r)["points"], 0);
  EXPECT_EQ(body(r)["artifacts"], 0);
  // A step reported again replaces its value; one new step adds one point.
  r = this->report(n1, id, 1, {{"metrics", points(3, 4, 1.5)}});
  EXPECT_EQ(body(r)["points"], 1) << r.body;
  const json listed = body(this->as(this->nlp_).get("/v1/runs/" + std::to_string(id) + "/metrics"));
  ASSERT_EQ(listed["points"].size(), 4u) << listed.dump();
  EXPECT_EQ(listed["points"][2]["value"], 1.5);
  // Paged by NAME@STEP: limit 3, then the rest.
  json page = body(this->admin().get("/v1/runs/" + std::to_string(id) + "/metrics?limit=3"));
  ASSERT_EQ(page["points"].size(), 3u);
  ASSERT_EQ(page["nextCursor"], "loss@3");
  page =
      body(this->admin().get("/v1/runs/" + std::to_string(id) + "/metrics?limit=3&cursor=loss@3"));
  ASSERT_EQ(page["points"].size(), 1u);
  EXPECT_EQ(page["points"][0]["step"], 4);
  EXPECT_TRUE(page["nextCursor"].is_null());
  const json summary = this->run(id)["metrics"];
  EXPECT_EQ(
      summary,
      (json::array({{{"name", "loss"}, {"points", 4}, {"lastStep", 4}, {"lastValue", 1.5}}})));
  // An artifact never changes: the same uri with another digest is refused.
  json changed = model;
  changed["digest"] = "sha256:" + std::string(64, 'e');
  r = this->report(n1, id, 1, {{"artifacts", {changed}}});
  EXPECT_EQ(r.status, 409) << r.body;
  // The new artifact is one event of the job, however often it was reported.
  const std::string events =
      body(this->admin().get("/v1/jobs/" + std::to_string(id) + "/events")).dump();
  EXPECT_NE(events.find("produced model at s3://nlp-private/runs/pretrain/model.pt (1.4 GiB"),
            std::string::npos)
      << events;
  EXPECT_EQ(events.find("produced model"), events.rfind("produced model")) << events;

  // Bad reports, each refused naming its field.
  struct Bad {
    json body;
    const char* field;
  };
  const auto with_point = [](json p) { return json{{"metrics", {p}}}; };
  const auto with_artifact = [&](const char* key, json value) {
    json a = model;
    a[key] = value;
    return json{{"artifacts", {a}}};
  };
  const std::vector<Bad> bad = {
      {json::object(), "metrics"},
      {with_point({{"name", "loss"}, {"step", 1}}), "metrics[0].value"},
      {with_point({{"name", "loss"}, {"value", 1}}), "metrics[0].step"},
      {with_point({{"step", 1}, {"value", 1}}), "metrics[0].name"},
      {with_point({{"name", ""}, {"step", 1}, {"value", 1}}), "metrics[0].name"},
      {with_point({{"name", "lo ss"}, {"step", 1}, {"value", 1}}), "metrics[0].name"},
      {with_point({{"name", std::string(129, 'a')}, {"step", 1}, {"value", 1}}), "metrics[0].name"},
      {with_point({{"name", "loss"}, {"step", -1}, {"value", 1}}), "metrics[0].step"},
      {with_point({{"name", "loss"}, {"step", 1.5}, {"value", 1}}), "metrics[0].step"},
      {with_point({{"name", "loss"}, {"step", 1}, {"value", "1"}}), "metrics[0].value"},
      {with_point({{"name", "loss"}, {"step", 1}, {"value", 1}, {"unit", "nats"}}),
       "metrics[0].unit"},
      {{{"metrics", points(1, 1001, 1)}}, "metrics"},
      {{{"metrics", "loss"}}, "metrics"},
      {with_artifact("uri", "model.pt"), "artifacts[0].uri"},
      {with_artifact("digest", "md5:abc"), "artifacts[0].digest"},
      {with_artifact("digest", "sha256:" + std::string(64, 'A')), "artifacts[0].digest"},
      {with_artifact("bytes", -1), "artifacts[0].bytes"},
      {with_artifact("name", "my model"), "artifacts[0].name"},
      {{{"metrics", points(1, 1, 1)}, {"extra", 1}}, "extra"},
  };
  for (const Bad& b : bad) {
    SCOPED_TRACE(b.body.dump().substr(0, 200));
    r = this->report(n1, id, 1, b.body);
    EXPECT_EQ(r.status, 400) << r.body;
    EXPECT_EQ(body(r)["error"].value("field", ""), b.field) << r.body;
  }
  // An old epoch is fenced; another node's agent may not report for this job.
  json fenced = {
      {"epoch", n1.epoch + 5}, {"job", id}, {"attempt", 1}, {"metrics", points(9, 9, 1)}};
  r = n1.client().post("/v1/agents/n1/runs", fenced.dump());
  EXPECT_EQ(r.status, 409) << r.body;
  EXPECT_EQ(body(r)["error"]["code"], "fenced");
  FakeAgent n2 = this->agent("n2");
  r = this->report(n2, id, 1, {{"metrics", points(9, 9, 1)}});
  EXPECT_EQ(r.status, 403) << r.body;
  EXPECT_EQ(this->run(id)["metrics"][0]["points"], 4);
}

TYPED_TEST(RunApiTest, ADatasetVersionFindsItsRunsAndARunReproducesPinned) {
  FakeAgent n1 = this->agent("n1");
  const std::int64_t id = this->submit_run();
  ASSERT_TRUE(this->wait_phase(id, "launching"));
  n1.round();
  // From the version: its runs; from the list: filters and pages.
  const json runs = body(this->as(this->nlp_).get("/v1/runs?dataset=webtext@v1"));
  ASSERT_EQ(runs["runs"].size(), 1u) << runs.dump();
  EXPECT_EQ(runs["runs"][0]["id"], id);
  EXPECT_EQ(body(this->as(this->nlp_).get("/v1/runs?dataset=webtext@v2"))["runs"].size(), 0u);
  EXPECT_EQ(body(this->as(this->nlp_).get("/v1/runs?status=succeeded"))["runs"].size(), 0u);
  auto r = this->as(this->nlp_).get("/v1/runs?status=flying");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(body(r)["error"]["field"], "status");
  r = this->as(this->nlp_).get("/v1/runs?dataset=webtext");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(body(r)["error"]["field"], "dataset");

  // Reproduce: a new job, the same manifest and config hash, pointing at its source.
  r = this->as(this->nlp_).post("/v1/runs/" + std::to_string(id) + "/reproduce", "{}");
  ASSERT_EQ(r.status, 201) << r.body;
  const std::int64_t copy = body(r)["id"];
  EXPECT_NE(copy, id);
  const json original = this->run(id), reproduced = this->run(copy);
  EXPECT_EQ(reproduced["reproduces"], id);
  EXPECT_EQ(reproduced["manifest"], original["manifest"]);
  EXPECT_EQ(reproduced["name"], original["name"]);
  const auto copy_events = this->events(copy);
  EXPECT_NE(std::find(copy_events.begin(), copy_events.end(), "reproduces"), copy_events.end());
  // Two runs of the version now, paged one at a time.
  json page = body(this->as(this->nlp_).get("/v1/runs?dataset=webtext@v1&limit=1"));
  ASSERT_EQ(page["runs"].size(), 1u);
  page = body(this->as(this->nlp_)
                  .get("/v1/runs?dataset=webtext@v1&limit=1&cursor=" +
                       page["nextCursor"].get<std::string>()));
  ASSERT_EQ(page["runs"].size(), 1u);
  EXPECT_EQ(page["runs"][0]["id"], copy);
  // A reproduction goes through the gate again: a version quarantined since holds it.
  ASSERT_EQ(this->as(this->nlp_)
                .post("/v1/datasets/webtext/versions/v1/status",
                      json{{"status", "quarantined"}, {"reason", "PII found"}}.dump())
                .status,
            200);
  r = this->as(this->nlp_).post("/v1/runs/" + std::to_string(id) + "/reproduce", "{}");
  ASSERT_EQ(r.status, 201) << r.body;
  const json held = this->job(body(r)["id"]);
  EXPECT_EQ(held["pendingKind"], "held") << held.dump();
  // The audit log has each reproduction.
  EXPECT_NE(body(this->admin().get("/v1/audit")).dump().find("run.reproduce"), std::string::npos);
}

// role x endpoint x another tenant's run: every answer 403 or 404, and none names the
// run's metric names, artifact URIs or dataset URI.
TYPED_TEST(RunApiTest, NoEndpointShowsAnotherTenantsRun) {
  FakeAgent n1 = this->agent("n1");
  const std::int64_t id = this->submit_run();
  ASSERT_TRUE(this->wait_phase(id, "launching"));
  n1.round();
  const json secret_point = {{"name", "secret/medical_recall"}, {"step", 1}, {"value", 0.9}};
  const json artifact = {{"name", "model"},
                         {"uri", "s3://nlp-private/medical-model.pt"},
                         {"digest", kDigest},
                         {"bytes", 10}};
  ASSERT_EQ(
      this->report(n1, id, 1, {{"metrics", {secret_point}}, {"artifacts", {artifact}}}).status,
      200);
  const auto metrics_token =
      body(this->admin().post("/v1/tokens", json{{"role", "metrics"}}.dump())).value("token", "");
  const std::string run = "/v1/runs/" + std::to_string(id);
  struct Call {
    const char* method;
    std::string path;
  };
  const std::vector<Call> calls = {{"GET", run},
                                   {"GET", run + "/metrics"},
                                   {"GET", run + "/metrics?name=secret/medical_recall"},
                                   {"GET", run + "/artifacts"},
                                   {"POST", run + "/reproduce"}};
  for (const std::string& token : {this->vision_, n1.token, metrics_token}) {
    for (const Call& c : calls) {
      SCOPED_TRACE(std::string(c.method) + " " + c.path);
      const auto r = this->as(token).send(c.method, c.path, "{}", {}, "application/json");
      EXPECT_TRUE(r.status == 403 || r.status == 404) << r.status << " " << r.body;
      EXPECT_EQ(r.body.find("medical"), std::string::npos) << r.body;
      EXPECT_EQ(r.body.find("nlp-private"), std::string::npos) << r.body;
    }
    const auto list = this->as(token).get("/v1/runs");
    EXPECT_EQ(list.body.find("pretrain"), std::string::npos) << list.body;
    EXPECT_EQ(this->as(token).get("/v1/runs?tenant=nlp").status == 200, false);
  }
  // The owner sees all of it.
  const std::string own = this->as(this->nlp_).get(run).body;
  EXPECT_NE(own.find("secret/medical_recall"), std::string::npos);
  EXPECT_NE(own.find("s3://nlp-private/medical-model.pt"), std::string::npos);
}

}  // namespace
}  // namespace corral::testing
