// A training job's own point-in-time lookups (docs/features.md, "From a training job")
// through real HTTP against corrald in the test's process, on both stores, with a scripted
// agent posting /v1/agents/NODE/features/lookup for a placed job: the same answer as the
// member endpoint, the run's manifest adding up its lookups, and the checks of a run
// report (fenced, stale, another node's job) plus tenant isolation and bad rows by field.
#include <cstdint>
#include <string>
#include <vector>

#include "run_fixture.h"

namespace corral::testing {
namespace {

using namespace std::chrono_literals;

// `a` with `b`'s keys set over it.
json merged(json a, const json& b) {
  a.update(b);
  return a;
}

template <typename Factory>
class FeatureRunTest : public RunFixture<Factory> {
 protected:
  void SetUp() override {
    RunFixture<Factory>::SetUp();
    if (this->IsSkipped() || this->HasFatalFailure()) return;
    // nlp's set, with values for two users and a watermark; vision's set, with none.
    const json set = {{"version", "v1"},
                      {"schema", {{"clicks", "int"}, {"ctr", "float"}}},
                      {"source", "kafka://events/clicks"}};
    auto r = this->as(this->nlp_).post("/v1/features/user-stats/versions", set.dump());
    ASSERT_EQ(r.status, 201) << r.body;
    const json values = {
        {"values",
         {{{"entity", "u1"}, {"eventTimeMs", 1000}, {"values", {{"clicks", 1}, {"ctr", 0.1}}}},
          {{"entity", "u1"}, {"eventTimeMs", 3000}, {"values", {{"clicks", 3}, {"ctr", 0.3}}}},
          {{"entity", "u2"}, {"eventTimeMs", 2000}, {"values", {{"clicks", 7}}}}}},
        {"watermarks", {{"kafka://events/clicks", 3500}}}};
    r = this->as(this->nlp_).post("/v1/features/user-stats/versions/v1/values", values.dump());
    ASSERT_EQ(r.status, 201) << r.body;
    r = this->as(this->vision_).post("/v1/features/image-stats/versions", set.dump());
    ASSERT_EQ(r.status, 201) << r.body;
  }

  // A placed and running job of nlp, on n1.
  std::int64_t running_job(FakeAgent& n1) {
    const std::int64_t id = this->submit_run();
    EXPECT_TRUE(this->wait_phase(id, "launching"));
    n1.round();
    return id;
  }

  // POST /v1/agents/NODE/features/lookup for attempt 1 rank 0 of `job`, `extra` merged in.
  HttpReply lookup(FakeAgent& a, std::int64_t job, const json& extra) {
    json b = {{"epoch", a.epoch}, {"job", job}, {"attempt", 1}, {"rank", 0}};
    b.update(extra);
    return a.client().post("/v1/agents/" + a.node + "/features/lookup", b.dump());
  }

  json features(std::int64_t job) { return this->run(job)["manifest"]["features"]; }
};

TYPED_TEST_SUITE(FeatureRunTest, Stores, StoreNames);

TYPED_TEST(FeatureRunTest, AJobsLookupAnswersAsAMembersAndJoinsItsManifest) {
  FakeAgent n1 = this->agent("n1");
  const std::int64_t id = this->running_job(n1);
  const json first = {{"rows",
                       {{{"entity", "u1"}, {"atMs", 2500}},
                        {{"entity", "u2"}, {"atMs", 1500}},
                        {{"entity", "u1"}, {"atMs", 3000}}}},
                      {"ttlMs", 10000}};
  const std::int64_t t0 = core::to_ms(this->clock_.now());
  auto r = this->lookup(n1, id, merged({{"set", "user-stats@v1"}}, first));
  ASSERT_EQ(r.status, 200) << r.body;
  // The member endpoint's answer, value for value.
  const auto member =
      this->as(this->nlp_).post("/v1/features/user-stats/versions/v1/lookup", first.dump());
  ASSERT_EQ(member.status, 200) << member.body;
  EXPECT_EQ(body(r), body(member));
  EXPECT_EQ(body(r)["results"][0]["values"]["clicks"], 1);
  EXPECT_TRUE(body(r)["results"][1]["values"].is_null());  // u2's value is from after 1500
  EXPECT_EQ(body(r)["results"][2]["eventTimeMs"], 3000);
  EXPECT_EQ(body(r)["watermarks"]["kafka://events/clicks"], 3500);

  // A second lookup later, with an earlier instant and a raised watermark: the counts add
  // up, the latest instant stays the greatest, the watermarks are the last lookup's.
  this->clock_.advance(5s);
  const auto raised =
      this->as(this->nlp_)
          .post("/v1/features/user-stats/versions/v1/values",
                json{{"values", json::array()}, {"watermarks", {{"kafka://events/clicks", 4000}}}}
                    .dump());
  ASSERT_EQ(raised.status, 201) << raised.body;
  r = this->lookup(
      n1, id,
      {{"set", "user-stats@v1"},
       {"rows", {{{"entity", "u2"}, {"atMs", 2000}}, {{"entity", "u9"}, {"atMs", 10}}}},
       {"ttlMs", 0}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(body(r)["results"][0]["values"]["clicks"], 7);  // the TTL's edge is included
  const json expected = json::array({{{"set", "user-stats@v1"},
                                      {"lookups", 2},
                                      {"rows", 5},
                                      {"latestAtMs", 3000},
                                      {"firstLookupAtMs", t0},
                                      {"lastLookupAtMs", t0 + 5000},
                                      {"watermarks", {{"kafka://events/clicks", 4000}}}}});
  EXPECT_EQ(this->features(id), expected);
  // The member endpoint reads for no run: the manifest is unchanged by it.
  EXPECT_EQ(
      this->as(this->nlp_).post("/v1/features/user-stats/versions/v1/lookup", first.dump()).status,
      200);
  EXPECT_EQ(this->features(id), expected);

  // A reproduction is submitted as before: the same datasets and config; the features are
  // what it looks up itself (none yet).
  r = this->as(this->nlp_).post("/v1/runs/" + std::to_string(id) + "/reproduce", "{}");
  ASSERT_EQ(r.status, 201) << r.body;
  const std::int64_t copy_id = body(r)["id"];
  const json copy = this->run(copy_id);
  EXPECT_EQ(copy["manifest"]["datasets"], this->run(id)["manifest"]["datasets"]);
  EXPECT_EQ(copy["manifest"]["configHash"], this->run(id)["manifest"]["configHash"]);
  EXPECT_EQ(copy["manifest"]["features"], json::array());
}

TYPED_TEST(FeatureRunTest, RefusalsAreARunReportsAndBadRowsNameTheirField) {
  FakeAgent n1 = this->agent("n1");
  const std::int64_t id = this->running_job(n1);
  const json ok = {
      {"set", "user-stats@v1"}, {"rows", {{{"entity", "u1"}, {"atMs", 2500}}}}, {"ttlMs", 10000}};
  // An old epoch is fenced; an attempt that is not the current one is stale.
  json fenced = ok;
  fenced["epoch"] = n1.epoch + 5;
  auto r = this->lookup(n1, id, fenced);
  EXPECT_EQ(r.status, 409) << r.body;
  EXPECT_EQ(body(r)["error"]["code"], "fenced");
  json stale = ok;
  stale["attempt"] = 2;
  r = this->lookup(n1, id, stale);
  EXPECT_EQ(r.status, 409) << r.body;
  EXPECT_EQ(body(r)["error"]["code"], "stale");
  // Another node's agent may not look up for this job, nor call n1's route.
  FakeAgent n2 = this->agent("n2");
  r = this->lookup(n2, id, ok);
  EXPECT_EQ(r.status, 403) << r.body;
  r = n2.client().post("/v1/agents/n1/features/lookup",
                       merged({{"epoch", n2.epoch}, {"job", id}, {"attempt", 1}}, ok).dump());
  EXPECT_EQ(r.status, 403) << r.body;
  // A member may not call the agents' route.
  r = this->as(this->nlp_)
          .post("/v1/agents/n1/features/lookup",
                merged({{"epoch", n1.epoch}, {"job", id}, {"attempt", 1}}, ok).dump());
  EXPECT_EQ(r.status, 403) << r.body;
  // Another tenant's set answers as one that does not exist.
  for (const char* set : {"image-stats@v1", "user-stats@v2", "nope@v1", "User Stats@v1"}) {
    SCOPED_TRACE(set);
    json other = ok;
    other["set"] = set;
    r = this->lookup(n1, id, other);
    EXPECT_EQ(r.status, 404) << r.body;
  }

  // Bad lookups, each refused naming its field.
  struct Bad {
    json body;
    const char* field;
  };
  const std::vector<Bad> bad = {
      {{{"rows", ok["rows"]}, {"ttlMs", 1}}, "set"},
      {{{"set", "user-stats"}, {"rows", ok["rows"]}, {"ttlMs", 1}}, "set"},
      {{{"set", "user-stats@v1"}, {"rows", ok["rows"]}}, "ttlMs"},
      {{{"set", "user-stats@v1"}, {"rows", ok["rows"]}, {"ttlMs", -1}}, "ttlMs"},
      {{{"set", "user-stats@v1"}, {"rows", "u1"}, {"ttlMs", 1}}, "rows"},
      {{{"set", "user-stats@v1"}, {"rows", {{{"entity", "u1"}}}}, {"ttlMs", 1}}, "rows[0].atMs"},
      {{{"set", "user-stats@v1"},
        {"rows", {{{"entity", "u1"}, {"atMs", 1}}, {{"atMs", 1}}}},
        {"ttlMs", 1}},
       "rows[1].entity"},
      {{{"set", "user-stats@v1"}, {"rows", ok["rows"]}, {"ttlMs", 1}, {"limit", 5}}, "limit"},
  };
  for (const Bad& b : bad) {
    SCOPED_TRACE(b.body.dump());
    r = this->lookup(n1, id, b.body);
    EXPECT_EQ(r.status, 400) << r.body;
    EXPECT_EQ(body(r)["error"].value("field", ""), b.field) << r.body;
  }
  // Nothing refused joined the manifest; the one lookup that is answered does.
  EXPECT_EQ(this->features(id), json::array());
  r = this->lookup(n1, id, ok);
  ASSERT_EQ(r.status, 200) << r.body;
  ASSERT_EQ(this->features(id).size(), 1u);
  EXPECT_EQ(this->features(id)[0]["lookups"], 1);
}

}  // namespace
}  // namespace corral::testing
