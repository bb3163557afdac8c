// Drift of a model version (docs/drift.md) through real HTTP, on both stores: reports
// judged against the version's reference (SciPy's figures through the API), a reference
// taken from a window of earlier reports and logged predictions, delayed labels linked
// to their predictions and judged by the predictions' error, and drift that submits the
// model's retraining template, which the tenant's retraining budget then holds back
// (concurrent GPUs, then GPU-hours until the next period) with its reason.
#include <cmath>
#include <string>
#include <thread>
#include <vector>

#include "model_fixture.h"

#include "core/units.h"

namespace corral::testing {
namespace {

template <typename Factory>
class DriftApiTest : public ModelFixture<Factory> {
 protected:
  std::string drift_path(const std::string& model = "llm") const {
    return "/v1/models/" + model + "/versions/v1/drift";
  }
  HttpReply post(const std::string& path, const json& b) {
    return this->as(this->nlp_).post(path, b.dump());
  }
  // The field a 400 names.
  static std::string field(const HttpReply& r) { return body(r)["error"].value("field", ""); }
};

TYPED_TEST_SUITE(DriftApiTest, Stores, StoreNames);

TYPED_TEST(DriftApiTest, DriftReportsJudgeEachFeatureAgainstTheVersionsReference) {
  FakeAgent n1 = this->agent("n1", 16);
  const std::int64_t run = this->trained(n1, "a", 0.9);
  ASSERT_EQ(this->reg(this->version("v1", run, "a")).status, 201);
  const std::string drift = "/v1/models/llm/versions/v1/drift";
  auto r = this->as(this->nlp_).post(drift, json{{"features", {{"age", {1, 2}}}}}.dump());
  EXPECT_EQ(r.status, 409) << "no reference yet: " << r.body;
  for (const auto& [b, field] : std::vector<std::pair<json, std::string>>{
           {{{"features", {{"age", {1, "x"}}}}}, "features.age[1]"},
           {{{"features", {{"age", json::array()}}}}, "features.age"},
           {{{"features", json::object()}}, "features"},
           {{{"features", {{"age", {1}}}}, {"thresholds", {{"psi", 0.2}}}}, "thresholds.psi"},
           {{{"features", {{"age", {1}}}}, {"thresholds", {{"ksP", -1}}}}, "thresholds.ksP"}}) {
    r = this->as(this->nlp_).post(drift + "/reference", b.dump());
    EXPECT_EQ(r.status, 400) << r.body;
    EXPECT_EQ(body(r)["error"].value("field", ""), field) << r.body;
  }
  // A small reference (200 values: KS) and a large one (2,000: normed Wasserstein).
  const json reference = {{"features",
                           {{"age", sample(200, 7919, 1000, 100.0, 0.0)},
                            {"income", sample(2000, 7919, 1000, 100.0, 0.0)}}}};
  ASSERT_EQ(this->as(this->nlp_).post(drift + "/reference", reference.dump()).status, 200);
  r = this->as(this->nlp_)
          .post(drift, json{{"features", {{"age", sample(300, 6841, 1000, 100.0, 0.0)}}},
                            {"segment", "eu"}}
                           .dump());
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(body(r)["drifted"], false);
  r = this->as(this->nlp_)
          .post(drift, json{{"features",
                             {{"age", sample(150, 104729, 997, 90.0, 1.5)},
                              {"income", sample(2000, 104729, 997, 90.0, 1.5)}}}}
                           .dump());
  ASSERT_EQ(r.status, 201) << r.body;
  const json shifted = body(r);
  EXPECT_EQ(shifted["drifted"], true);
  EXPECT_EQ(shifted["features"]["age"]["method"], "ks");
  EXPECT_NEAR(shifted["features"]["age"]["ksP"].get<double>(), 0.000639725188310025,
              1e-9);  // SciPy
  EXPECT_NEAR(shifted["features"]["age"]["psi"].get<double>(), 2.515797468222362, 1e-9);
  EXPECT_EQ(shifted["features"]["income"]["method"], "wasserstein");
  EXPECT_EQ(shifted["features"]["income"]["drifted"], true);
  r = this->as(this->nlp_).post(drift, json{{"features", {{"height", {1.0}}}}}.dump());
  EXPECT_EQ(body(r)["error"]["field"], "features.height");
  const json reports = body(this->as(this->nlp_).get(drift))["reports"];
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_EQ(reports[0]["drifted"], true);  // newest first
  EXPECT_EQ(reports[1]["segment"], "eu");
  for (const std::string& token : {this->vision_, n1.token}) {
    EXPECT_TRUE(this->as(token).get(drift).status == 404 ||
                this->as(token).get(drift).status == 403);
    const auto other = this->as(token).post(drift, json{{"features", {{"age", {1.0}}}}}.dump());
    EXPECT_TRUE(other.status == 404 || other.status == 403) << other.body;
  }
}

TYPED_TEST(DriftApiTest, HistogramsStandInForSamplesTooLargeToSend) {
  FakeAgent n1 = this->agent("n1", 16);
  ASSERT_EQ(this->reg(this->version("v1", this->trained(n1, "a", 0.9), "a")).status, 201);
  const std::string drift = this->drift_path();
  json edges = json::array();
  for (int e = 0; e <= 12; ++e) edges.push_back(e);
  // tests/registry/drift_stats_test.cc's histograms, whose figures SciPy computed with weights.
  const json ref = {{"edges", edges}, {"counts", {22, 20, 19, 20, 20, 19, 20, 21, 19, 20, 0, 0}}};
  const json cur = {{"edges", edges}, {"counts", {0, 8, 16, 14, 14, 14, 14, 14, 12, 14, 12, 12}}};
  auto r = this->post(drift + "/reference",
                      {{"features", {{"age", ref}, {"raw", sample(200, 7919, 1000, 100.0, 0.0)}}}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(body(r)["features"], (json{{"age", 200}, {"raw", 200}}));
  r = this->post(drift, {{"features", {{"age", cur}}}});
  ASSERT_EQ(r.status, 201) << r.body;
  const json age = body(r)["features"]["age"];
  EXPECT_EQ(age["method"], "ks");
  EXPECT_NEAR(age["ks"].get<double>(), 0.16666666666666663, 1e-12);
  EXPECT_NEAR(age["ksP"].get<double>(), 0.019100963861381794, 1e-9);  // SciPy
  EXPECT_NEAR(age["psi"].get<double>(), 1.9203367880847484, 1e-9);
  EXPECT_EQ(age["drifted"], true);
  EXPECT_EQ(age["currentValues"], 144);
  // A raw reference is counted into a histogram's bins; a histogram against a raw one too.
  r = this->post(drift, {{"features", {{"raw", cur}}}});
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(body(r)["features"]["raw"]["referenceValues"], 200);
  r = this->post(drift, {{"features", {{"age", sample(150, 104729, 997, 90.0, 1.5)}}}});
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(body(r)["features"]["age"]["currentValues"], 150);
  for (const auto& [h, path] : std::vector<std::pair<json, std::string>>{
           {{{"edges", {0, 1, 2}}, {"counts", {1, 1}}}, "features.age.edges"},
           {{{"edges", {0, 2, 1}}, {"counts", {1, 1}}}, "features.age.edges[2]"},
           {{{"edges", {0}}, {"counts", json::array()}}, "features.age.edges"},
           {{{"edges", edges}, {"counts", {1, 2}}}, "features.age.counts"},
           {{{"edges", {0, 1, 2}}, {"counts", {1, -1}}}, "features.age.counts[1]"},
           {{{"edges", {0, 1, 2}}, {"counts", {0, 0}}}, "features.age.counts"},
           {{{"edges", {0, 1, 2}}, {"counts", {1, 1}}, {"bins", 2}}, "features.age.bins"}}) {
    r = this->post(drift, {{"features", {{"age", h}}}});
    EXPECT_EQ(r.status, 400) << h.dump() << " " << r.body;
    EXPECT_EQ(this->field(r), path) << h.dump() << " " << r.body;
  }
}

TYPED_TEST(DriftApiTest, AReferenceComesFromAWindowOfEarlierReportsAndPredictions) {
  FakeAgent n1 = this->agent("n1", 16);
  ASSERT_EQ(this->reg(this->version("v1", this->trained(n1, "a", 0.9), "a")).status, 201);
  const std::string drift = this->drift_path();
  ASSERT_EQ(
      this->post(drift + "/reference", {{"features", {{"age", sample(50, 7, 100, 1, 0)}}}}).status,
      200);
  const std::int64_t t0 = core::to_ms(this->clock_.now());
  ASSERT_EQ(this->post(drift, {{"features", {{"age", sample(30, 7, 100, 1, 0)}}}}).status, 201);
  ASSERT_EQ(
      this->post(drift, {{"features", {{"age", sample(40, 7, 100, 1, 0)}}}, {"segment", "eu"}})
          .status,
      201);
  ASSERT_EQ(this->post(drift + "/predictions",
                       {{"predictions",
                         {{{"id", "p1"}, {"value", 0.25}}, {{"id", "p2"}, {"value", 0.75}}}}})
                .status,
            201);
  ASSERT_EQ(this->post(drift + "/labels", {{"labels", {{{"id", "p1"}, {"value", 0}}}}}).status,
            200);
  this->clock_.advance(std::chrono::hours(1));
  ASSERT_EQ(this->post(drift, {{"features", {{"age", sample(25, 7, 100, 1, 0)}}}}).status, 201);
  const std::int64_t t1 = core::to_ms(this->clock_.now());

  // [t0, t1): the two reports before the hour, the two predictions and the one label.
  auto r = this->post(drift + "/reference", {{"window", {{"fromMs", t0}, {"toMs", t1}}},
                                             {"thresholds", {{"ksP", 0.01}}}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(body(r)["features"], (json{{"age", 70}, {"prediction", 2}, {"label", 1}}));
  EXPECT_EQ(body(r)["thresholds"]["ksP"], 0.01);
  r = this->post(drift + "/reference",
                 {{"window", {{"fromMs", t0}, {"toMs", t1 + 1}, {"segment", "eu"}}}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(body(r)["features"], (json{{"age", 40}}));
  r = this->post(drift + "/reference", {{"window", {{"fromMs", t1 + 1}, {"toMs", t1 + 2}}}});
  EXPECT_EQ(r.status, 409) << "nothing in the window: " << r.body;
  for (const auto& [b, path] : std::vector<std::pair<json, std::string>>{
           {{{"window", {{"fromMs", t1}, {"toMs", t0}}}}, "window.toMs"},
           {{{"window", {{"fromMs", "x"}, {"toMs", t1}}}}, "window.fromMs"},
           {{{"window", {{"fromMs", t0}, {"toMs", t1}, {"segment", "EU!"}}}}, "window.segment"},
           {{{"window", {{"fromMs", t0}, {"toMs", t1}, {"size", 1}}}}, "window.size"},
           {{{"window", {{"fromMs", t0}, {"toMs", t1}}}, {"features", {{"age", {1}}}}},
            "features"}}) {
    r = this->post(drift + "/reference", b);
    EXPECT_EQ(r.status, 400) << b.dump() << " " << r.body;
    EXPECT_EQ(this->field(r), path) << r.body;
  }
}

TYPED_TEST(DriftApiTest, LabelsArriveLaterAndJudgeThePredictionsTheyLabel) {
  FakeAgent n1 = this->agent("n1", 16);
  ASSERT_EQ(this->reg(this->version("v1", this->trained(n1, "a", 0.9), "a")).status, 201);
  const std::string drift = this->drift_path();
  // The reference: labels half 0, half 1; the predictions must be right 90% of the time.
  json ref_labels = json::array();
  for (int i = 0; i < 100; ++i) ref_labels.push_back(i % 2);
  ASSERT_EQ(this->post(drift + "/reference",
                       {{"features", {{"label", ref_labels}}}, {"thresholds", {{"accuracy", 0.9}}}})
                .status,
            200);
  // 10 predictions in eu, 10 in us: eu's are all right, us's are wrong 4 times in 10.
  json eu = json::array(), us = json::array(), labels = json::array();
  for (int i = 0; i < 10; ++i) {
    const int label = i % 2;
    eu.push_back({{"id", "eu-" + std::to_string(i)}, {"value", label == 1 ? 0.9 : 0.1}});
    const double p = (i < 4) ? (label == 1 ? 0.2 : 0.8) : (label == 1 ? 0.7 : 0.3);
    us.push_back({{"id", "us-" + std::to_string(i)}, {"value", p}});
    labels.push_back({{"id", "eu-" + std::to_string(i)}, {"value", label}});
    labels.push_back({{"id", "us-" + std::to_string(i)}, {"value", label}});
  }
  auto r = this->post(drift + "/predictions", {{"segment", "eu"}, {"predictions", eu}});
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(body(r)["logged"], 10);
  r = this->post(drift + "/predictions", {{"segment", "eu"}, {"predictions", eu}});
  EXPECT_EQ(body(r)["logged"], 0) << "a retry logs nothing twice";
  EXPECT_EQ(body(r)["alreadyLogged"], 10);
  ASSERT_EQ(this->post(drift + "/predictions", {{"segment", "us"}, {"predictions", us}}).status,
            201);
  r = this->post(drift + "/predictions",
                 {{"segment", "eu"}, {"predictions", {{{"id", "eu-0"}, {"value", 0.5}}}}});
  EXPECT_EQ(r.status, 409) << "another value under a logged id: " << r.body;

  labels.push_back({{"id", "never-logged"}, {"value", 1}});
  r = this->post(drift + "/labels", {{"labels", labels}});
  ASSERT_EQ(r.status, 200) << r.body;
  const json answer = body(r);
  EXPECT_EQ(answer["labeled"], 20);
  EXPECT_EQ(answer["unknown"], 1);
  EXPECT_EQ(answer["unknownIds"], json::array({"never-logged"}));
  ASSERT_EQ(answer["reports"].size(), 2u) << answer.dump();
  const json& eu_report = answer["reports"][0];
  const json& us_report = answer["reports"][1];
  EXPECT_EQ(eu_report["segment"], "eu");
  EXPECT_EQ(eu_report["kind"], "labels");
  EXPECT_EQ(eu_report["performance"]["accuracy"], 1.0);
  EXPECT_NEAR(eu_report["performance"]["mae"].get<double>(), 0.1, 1e-12);
  EXPECT_NEAR(eu_report["performance"]["rmse"].get<double>(), 0.1, 1e-12);
  EXPECT_EQ(eu_report["drifted"], false) << eu_report.dump();
  EXPECT_EQ(eu_report["features"]["label"]["method"], "ks");
  EXPECT_EQ(us_report["segment"], "us");
  EXPECT_NEAR(us_report["performance"]["accuracy"].get<double>(), 0.6, 1e-12);
  // |error|: 0.8 four times, 0.3 six times.
  EXPECT_NEAR(us_report["performance"]["mae"].get<double>(), (4 * 0.8 + 6 * 0.3) / 10, 1e-12);
  EXPECT_NEAR(us_report["performance"]["rmse"].get<double>(), std::sqrt((4 * 0.64 + 6 * 0.09) / 10),
              1e-12);
  EXPECT_EQ(us_report["drifted"], true) << "accuracy 0.6 is under 0.9";
  EXPECT_EQ(us_report["retraining"]["outcome"], "no template");

  r = this->post(drift + "/labels", {{"labels", labels}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(body(r)["labeled"], 0) << "a retry labels nothing twice";
  EXPECT_EQ(body(r)["alreadyLabeled"], 20);
  EXPECT_EQ(body(r)["reports"].size(), 0u);
  r = this->post(drift + "/labels", {{"labels", {{{"id", "eu-0"}, {"value", 1}}}}});
  EXPECT_EQ(r.status, 409) << "another label for a labelled prediction: " << r.body;
  for (const auto& [b, path] : std::vector<std::pair<json, std::string>>{
           {{{"labels", json::array()}}, "labels"},
           {{{"labels", {{{"id", ""}, {"value", 1}}}}}, "labels[0].id"},
           {{{"labels", {{{"id", "a b"}, {"value", 1}}}}}, "labels[0].id"},
           {{{"labels", {{{"id", "a"}, {"value", "1"}}}}}, "labels[0].value"},
           {{{"labels", {{{"id", "a"}, {"value", 1}}, {{"id", "a"}, {"value", 1}}}}},
            "labels[1].id"},
           {{{"labels", {{{"id", "a"}, {"value", 1}, {"weight", 2}}}}}, "labels[0].weight"}}) {
    r = this->post(drift + "/labels", b);
    EXPECT_EQ(r.status, 400) << b.dump() << " " << r.body;
    EXPECT_EQ(this->field(r), path) << r.body;
  }
  r = this->post(drift + "/predictions", {{"predictions", {{{"id", "x"}, {"value", nullptr}}}}});
  EXPECT_EQ(this->field(r), "predictions[0].value") << r.body;
  r = this->post(drift + "/reference",
                 {{"features", {{"label", {1}}}}, {"thresholds", {{"accuracy", 1.5}}}});
  EXPECT_EQ(this->field(r), "thresholds.accuracy") << r.body;
  // Another tenant sees none of it.
  for (const std::string& token : {this->vision_, n1.token}) {
    const auto other = this->as(token).post(drift + "/labels", json{{"labels", labels}}.dump());
    EXPECT_TRUE(other.status == 404 || other.status == 403) << other.body;
  }
}

TYPED_TEST(DriftApiTest, DriftSubmitsTheRetrainingTemplateAndTheBudgetHoldsItBack) {
  FakeAgent n1 = this->agent("n1", 16);
  const std::int64_t run = this->trained(n1, "a", 0.9);
  ASSERT_EQ(this->reg(this->version("v1", run, "a")).status, 201);
  ASSERT_EQ(this->as(this->nlp_)
                .post("/v1/models/ranker/versions", this->version("v1", run, "a").dump())
                .status,
            201);
  // The budget: 2 GPUs at once, 1 GPU-hour a day.
  for (const auto& [b, path] : std::vector<std::pair<json, std::string>>{
           {{{"retraining", {{"maxGpus", -1}}}}, "retraining.maxGpus"},
           {{{"retraining", {{"gpuHours", "1"}}}}, "retraining.gpuHours"},
           {{{"retraining", {{"period", "5m"}}}}, "retraining.period"},
           {{{"retraining", {{"gpus", 1}}}}, "retraining.gpus"}}) {
    const auto r = this->admin().put("/v1/tenants/nlp", b.dump());
    EXPECT_EQ(r.status, 400) << r.body;
    EXPECT_EQ(this->field(r), path) << r.body;
  }
  auto r = this->admin().put(
      "/v1/tenants/nlp",
      json{{"retraining", {{"maxGpus", 2}, {"gpuHours", 1}, {"period", "24h"}}}}.dump());
  ASSERT_TRUE(r.status == 200 || r.status == 201) << r.body;

  const auto retrain_spec = [](const std::string& name, int gpus) {
    return json{{"name", name},
                {"tenant", "nlp"},
                {"resources", {{"gpus", gpus}, {"gpuTypes", {"H100"}}}},
                {"command", {"/bin/true"}}};
  };
  json vision_spec = retrain_spec("r", 1);
  vision_spec["tenant"] = "vision";
  const std::string llm = "/v1/models/llm/retraining";
  for (const auto& [b, path] : std::vector<std::pair<json, std::string>>{
           {{{"job", retrain_spec("r", 4)}}, "job.resources.gpus"},
           {{{"job", vision_spec}}, "job.tenant"},
           {{{"job", "train.py"}}, "job"},
           {{{"template", retrain_spec("r", 1)}}, "template"}}) {
    r = this->as(this->nlp_).put(llm, b.dump());
    EXPECT_EQ(r.status, 400) << b.dump() << " " << r.body;
    EXPECT_EQ(this->field(r), path) << r.body;
  }
  EXPECT_NE(this->as(this->nlp_)
                .put(llm, json{{"job", retrain_spec("r", 4)}}.dump())
                .body.find("maxGpus"),
            std::string::npos);
  ASSERT_EQ(
      this->as(this->nlp_).put(llm, json{{"job", retrain_spec("retrain-llm", 2)}}.dump()).status,
      200);
  ASSERT_EQ(this->as(this->nlp_)
                .put("/v1/models/ranker/retraining",
                     json{{"job", retrain_spec("retrain-ranker", 2)}}.dump())
                .status,
            200);
  EXPECT_EQ(this->as(this->vision_).get(llm).status, 404);
  EXPECT_EQ(this->as(this->vision_).put(llm, json{{"job", retrain_spec("x", 1)}}.dump()).status,
            404);

  const json reference = {{"features", {{"age", sample(200, 7919, 1000, 100.0, 0.0)}}}};
  const json shifted = {{"features", {{"age", sample(150, 104729, 997, 90.0, 1.5)}}}};
  for (const std::string model : {"llm", "ranker"}) {
    ASSERT_EQ(this->post(this->drift_path(model) + "/reference", reference).status, 200);
  }
  // Shifted data on llm: its template is submitted and runs.
  r = this->post(this->drift_path("llm"), shifted);
  ASSERT_EQ(r.status, 201) << r.body;
  ASSERT_EQ(body(r)["retraining"]["outcome"], "submitted") << r.body;
  const std::int64_t first = body(r)["retraining"]["job"];
  const std::int64_t first_report = body(r)["id"];
  ASSERT_TRUE(this->wait_phase(first, "launching")) << this->job(first).dump();
  n1.round();
  ASSERT_TRUE(this->wait_phase(first, "running"));
  const json first_job = this->job(first);
  EXPECT_EQ(first_job["spec"]["labels"]["retrain-model"], "llm") << first_job.dump();
  EXPECT_EQ(first_job["spec"]["labels"]["retrain-version"], "v1");
  const auto kinds = this->events(first);
  EXPECT_NE(std::find(kinds.begin(), kinds.end(), "retraining"), kinds.end());
  // More drift on llm while its retraining is open submits nothing more.
  r = this->post(this->drift_path("llm"), shifted);
  EXPECT_EQ(body(r)["retraining"]["outcome"], "skipped") << r.body;
  EXPECT_EQ(body(r)["retraining"]["job"], first);

  // Shifted data on ranker: submitted, then held by the budget (2 of 2 GPUs in use),
  // though 12 GPUs are free.
  r = this->post(this->drift_path("ranker"), shifted);
  ASSERT_EQ(body(r)["retraining"]["outcome"], "submitted") << r.body;
  const std::int64_t second = body(r)["retraining"]["job"];
  json held;
  ASSERT_TRUE(eventually([&] {
    held = this->job(second);
    return held.value("pendingKind", "") == "held";
  })) << held.dump();
  EXPECT_EQ(held["phase"], "pending");
  EXPECT_EQ(held["reason"],
            "held: retraining budget: tenant nlp's retraining jobs running or ahead in the "
            "queue take 2 of the 2 GPUs its retraining budget allows at once (retraining.maxGpus); "
            "this one needs 2");
  json status = body(this->as(this->nlp_).get("/v1/models/ranker/retraining"));
  EXPECT_EQ(status["budget"]["maxGpus"], 2);
  EXPECT_EQ(status["budget"]["inUse"]["gpus"], 2);
  ASSERT_EQ(status["jobs"].size(), 1u) << status.dump();
  EXPECT_EQ(status["jobs"][0]["job"], second);
  EXPECT_EQ(status["jobs"][0]["phase"], "pending");
  EXPECT_EQ(status["job"]["name"], "retrain-ranker");
  json llm_status = body(this->as(this->nlp_).get(llm));
  EXPECT_EQ(llm_status["jobs"][0]["reportId"], first_report);

  // An hour on: the first one ends having used 2 GPU-hours, past the day's 1; the second
  // now waits for the next period.
  // The agent heartbeats every 10 s of it, so its node is never taken for lost.
  for (int i = 0; i < 360; ++i) {
    this->clock_.advance(std::chrono::seconds(10));
    ASSERT_EQ(n1.heartbeat().status, 200);
  }
  n1.exit_all(first, 0);
  n1.round();
  ASSERT_TRUE(this->wait_phase(first, "succeeded"));
  ASSERT_TRUE(eventually([&] {
    held = this->job(second);
    return held.value("reason", "").find("GPU-hours") != std::string::npos;
  })) << held.dump();
  const std::string reason = held["reason"];
  EXPECT_NE(reason.find("used 2.0 of its 1 GPU-hours for the period (retraining.gpuHours); the "
                        "next period starts "),
            std::string::npos)
      << reason;
  status = body(this->as(this->nlp_).get("/v1/models/ranker/retraining"));
  EXPECT_NEAR(status["budget"]["inUse"]["gpuHours"].get<double>(), 2.0, 1e-9);
  EXPECT_EQ(status["budget"]["inUse"]["gpus"], 0);
  const std::int64_t next_period = status["budget"]["inUse"]["periodEndMs"];
  EXPECT_NE(reason.find(core::format_utc(core::time_from_ms(next_period))), std::string::npos);
  EXPECT_EQ(next_period % (24 * 3600 * 1000), 0) << "a day's period ends at midnight UTC";

  // The next period: it runs.
  // Hours later the node may have been taken for lost: its agent joins again, as one would.
  this->clock_.set(core::time_from_ms(next_period + 60'000));
  FakeAgent again = this->agent("n1", 16);
  ASSERT_TRUE(this->wait_phase(second, "launching")) << this->job(second).dump();
}

TYPED_TEST(DriftApiTest, ConcurrentDriftOfOneModelSubmitsOneRetraining) {
  FakeAgent n1 = this->agent("n1", 16);
  ASSERT_EQ(this->reg(this->version("v1", this->trained(n1, "a", 0.9), "a")).status, 201);
  const json job = {{"name", "retrain"},
                    {"tenant", "nlp"},
                    {"resources", {{"gpus", 1}, {"gpuTypes", {"H100"}}}},
                    {"command", {"/bin/true"}}};
  ASSERT_EQ(this->as(this->nlp_).put("/v1/models/llm/retraining", json{{"job", job}}.dump()).status,
            200);
  ASSERT_EQ(this->post(this->drift_path() + "/reference",
                       {{"features", {{"age", sample(200, 7919, 1000, 100.0, 0.0)}}}})
                .status,
            200);
  const json shifted = {{"features", {{"age", sample(150, 104729, 997, 90.0, 1.5)}}}};
  constexpr int kThreads = 4, kEach = 5;
  std::vector<std::vector<std::string>> outcomes(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        const auto r = this->as(this->nlp_).post(this->drift_path(), shifted.dump());
        outcomes[t].push_back(r.status == 201 ? body(r)["retraining"].value("outcome", "")
                                              : "status " + std::to_string(r.status));
      }
    });
  }
  for (auto& th : threads) th.join();
  int submitted = 0, skipped = 0;
  for (const auto& each : outcomes) {
    for (const auto& o : each) {
      submitted += o == "submitted" ? 1 : 0;
      skipped += o == "skipped" ? 1 : 0;
    }
  }
  EXPECT_EQ(submitted, 1);
  EXPECT_EQ(skipped, kThreads * kEach - 1);
  const json status = body(this->as(this->nlp_).get("/v1/models/llm/retraining"));
  EXPECT_EQ(status["jobs"].size(), 1u) << status.dump();
}

}  // namespace
}  // namespace corral::testing
