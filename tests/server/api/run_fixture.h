// The fixture of the tests of training runs and the model registry (run_api_test.cc,
// model_api_test.cc): corrald in the test's process on a manual clock over either store,
// tenants nlp and vision with a member token each, webtext@v1 registered and passed, and
// helpers that submit a run and report for it as its node's scripted agent.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/clock.h"
#include "testing/fake_agent.h"
#include "testing/in_process_corrald.h"
#include "testing/store_fixture.h"

namespace corral::testing {

inline constexpr const char* kRunConfig =
    "scheduler:\n  tickMs: 20\n  batchWindowMs: 2\n  minRuntimeMs: 0\n";
inline const std::string kDigest = "sha256:" + std::string(64, 'a');
inline const std::string kImage = "registry.example/train@sha256:" + std::string(64, 'c');

template <typename Factory>
class RunFixture : public ::testing::Test, public ClusterCalls {
 protected:
  void SetUp() override {
    std::string url;
    store_url_or_skip<Factory>(url);
    if (this->IsSkipped() || this->HasFatalFailure()) return;
    auto started = InProcessCorrald::start(dir_.path(), clock_, kRunConfig, url);
    ASSERT_TRUE(started.ok()) << started.status().to_string();
    corrald_ = std::move(*started);
    connect(*corrald_);
    for (const char* t : {"nlp", "vision"}) {
      const auto r = admin().put(std::string("/v1/tenants/") + t, "{}");
      ASSERT_TRUE(r.status == 200 || r.status == 201) << r.body;
    }
    nlp_ = member("nlp");
    vision_ = member("vision");
    json v = {{"version", "v1"},   {"uri", "s3://nlp-private/webtext/v1/"},
              {"digest", kDigest}, {"schemaHash", kDigest},
              {"sizeBytes", 1024}, {"status", "passed"}};
    const auto r = as(nlp_).post("/v1/datasets/webtext/versions", v.dump());
    ASSERT_EQ(r.status, 201) << r.body;
  }

  std::string member(const std::string& tenant) {
    const auto r = admin().post("/v1/tokens", json{{"role", "member"}, {"tenant", tenant}}.dump());
    EXPECT_EQ(r.status, 201) << r.body;
    return body(r).value("token", "");
  }
  TestClient as(const std::string& token) const { return corrald_->client(token); }

  // A job of nlp on webtext@v1 with pinned code and image.
  std::int64_t submit_run(int max_restarts = 1) {
    const json spec = {
        {"name", "pretrain"},
        {"tenant", "nlp"},
        {"resources", {{"gpus", 2}, {"gpuTypes", {"H100"}}}},
        {"command", {"/bin/true"}},
        {"maxRestarts", max_restarts},
        {"lineage",
         {{"datasets", {"webtext@v1"}},
          {"code", {{"repo", "github.com/acme/llm"}, {"commit", std::string(40, 'f')}}},
          {"image", kImage}}}};
    const auto r = as(nlp_).post("/v1/jobs", spec.dump());
    EXPECT_EQ(r.status, 201) << r.body;
    return body(r).value("id", std::int64_t{0});
  }

  json run(std::int64_t id) { return body(admin().get("/v1/runs/" + std::to_string(id))); }

  // POST /v1/agents/NODE/runs for attempt `attempt` of `job`, with `extra` merged in.
  HttpReply report(FakeAgent& a, std::int64_t job, std::int64_t attempt, const json& extra) {
    json b = {{"epoch", a.epoch}, {"job", job}, {"attempt", attempt}, {"rank", 0}};
    b.update(extra);
    return a.client().post("/v1/agents/" + a.node + "/runs", b.dump());
  }

  TempDir dir_;
  core::ManualClock clock_{core::time_from_ms(1'780'000'000'000)};
  std::unique_ptr<InProcessCorrald> corrald_;
  std::string nlp_, vision_;
};

// Points `from` to `to` of metric `name`, all at `value`.
inline json points(std::int64_t from, std::int64_t to, double value,
                   const std::string& name = "loss") {
  json out = json::array();
  for (std::int64_t s = from; s <= to; ++s)
    out.push_back({{"name", name}, {"step", s}, {"value", value}});
  return out;
}

}  // namespace corral::testing
