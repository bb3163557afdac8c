// The model registry (docs/models.md) through real HTTP, on both stores: versions
// registered from a run's artifact (a digest that is not the artifact's is refused),
// bad input named by field, every gate kind passing and failing with the failing gate
// named, canary weights, alias history and rollback (idempotent under retries, and a
// consistent history under concurrent moves), and tenant isolation.
#include <string>
#include <thread>
#include <vector>

#include "model_fixture.h"

namespace corral::testing {
namespace {

template <typename Factory>
class ModelApiTest : public ModelFixture<Factory> {};

TYPED_TEST_SUITE(ModelApiTest, Stores, StoreNames);

TYPED_TEST(ModelApiTest, AVersionComesFromItsRunsArtifactAndBadInputIsNamed) {
  FakeAgent n1 = this->agent("n1", 16);
  const std::int64_t run = this->trained(n1, "a", 0.9);
  struct Bad {
    json body;
    const char* field;
  };
  const auto with = [&](const char* key, json value) {
    json v = this->version("v1", run, "a");
    v[key] = std::move(value);
    return v;
  };
  const auto gate = [&](json gates) { return with("gates", std::move(gates)); };
  const std::vector<Bad> bad = {
      {with("digest", "sha256:" + std::string(64, 'f')), "digest"},
      {with("artifactUri", "s3://nlp/models/other"), "artifactUri"},
      {with("run", 999), "run"},
      {with("run", "1"), "run"},
      {with("version", "v 1"), "version"},
      {with("flavor", "mlflow"), "flavor"},
      {with("inputSchema", json::array()), "inputSchema"},
      {with("inputSchema", {{"tokens", 3}}), "inputSchema.tokens"},
      {gate({{"metrics", {{{"metric", "acc"}, {"min", 1}, {"max", 2}}}}}), "gates.metrics[0]"},
      {gate({{"metrics", {{{"metric", "a c c"}, {"min", 1}}}}}), "gates.metrics[0].metric"},
      {gate({{"improvement", {{{"metric", "acc"}, {"minDelta", -1}}}}}),
       "gates.improvement[0].minDelta"},
      {gate({{"improvement", {{{"metric", "acc"}, {"direction", "up"}}}}}),
       "gates.improvement[0].direction"},
      {gate({{"approvals", {"Legal Team"}}}), "gates.approvals[0]"},
      {gate({{"schemaCompatible", "yes"}}), "gates.schemaCompatible"},
      {gate({{"owners", {"x"}}}), "gates.owners"},
  };
  for (const Bad& b : bad) {
    SCOPED_TRACE(b.body.dump());
    const auto r = this->reg(b.body);
    EXPECT_EQ(r.status, 400) << r.body;
    EXPECT_EQ(body(r)["error"].value("field", ""), b.field) << r.body;
  }
  // Registered once; the same content again is a retry, other content is refused.
  auto r = this->reg(this->version("v1", run, "a"));
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(body(r)["tenant"], "nlp");
  EXPECT_EQ(this->reg(this->version("v1", run, "a")).status, 200);
  r = this->reg(this->version("v1", run, "a", {{"probs", "float32[]"}}));
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(body(r)["error"]["field"], "version");
}

// Issue 38 item 3: a member registered a version, approved it herself and promoted it.
TYPED_TEST(ModelApiTest, ApprovalsNeedAnAdminOrANamedApproverAndNeverTheRegistrant) {
  FakeAgent n1 = this->agent("n1", 16);
  const std::int64_t run = this->trained(n1, "a", 0.9);
  const auto mint = [&](const std::string& owner, const std::string& role = "member") {
    json req = {{"role", role}, {"owner", owner}};
    if (role == "member") req["tenant"] = "nlp";
    const auto r = this->admin().post("/v1/tokens", req.dump());
    EXPECT_EQ(r.status, 201) << r.body;
    return body(r).value("token", "");
  };
  const std::string ana = mint("ana@example.com"), ana2 = mint("ana@example.com"),
                    li = mint("li@example.com"), ops = mint("ops@example.com", "admin");
  const auto approve = [&](const std::string& token, const std::string& v,
                           const std::string& name) {
    return this->as(token).post("/v1/models/llm/versions/" + v + "/approvals",
                                json{{"name", name}, {"reason", "checked"}}.dump());
  };
  json v1 = this->version("v1", run, "a");
  v1["gates"]["approvals"] = {"safety", {{"name", "legal"}, {"approvers", {"li@example.com"}}}};
  ASSERT_EQ(this->reg(v1, ana).status, 201);

  // The registrant, by her token or another made for her, approves neither gate.
  for (const std::string& t : {ana, ana2}) {
    for (const char* gate : {"safety", "legal"}) {
      const auto r = approve(t, "v1", gate);
      EXPECT_EQ(r.status, 403) << r.body;
      EXPECT_NE(r.body.find("its registrant cannot approve it"), std::string::npos) << r.body;
    }
  }
  // A plain gate needs an admin; a gate with approvers needs one of them (not an admin).
  auto r = approve(li, "v1", "safety");
  EXPECT_EQ(r.status, 403);
  EXPECT_NE(r.body.find("needs an admin"), std::string::npos) << r.body;
  r = approve(ops, "v1", "legal");
  EXPECT_EQ(r.status, 403);
  EXPECT_NE(r.body.find(R"(only its named approvers may approve it: [\"li@example.com\"])"),
            std::string::npos)
      << r.body;
  EXPECT_EQ(approve(ops, "v1", "safety").status, 201);
  EXPECT_EQ(approve(li, "v1", "legal").status, 201);
  r = this->alias("staging", {{"version", "v1"}, {"gated", true}}, ana);
  ASSERT_EQ(r.status, 201) << r.body;

  // Each approval is audited with the approver's name, the gate and the reason.
  const json entries = body(this->admin().get("/v1/audit?limit=1000"))["entries"];
  std::vector<std::string> approvers;
  for (const json& e : entries) {
    if (e["action"] != "model.approve") continue;
    approvers.push_back(e["actor"]);
    EXPECT_NE(e["after"].get<std::string>().find(R"("reason":"checked")"), std::string::npos);
  }
  ASSERT_EQ(approvers.size(), 2u) << entries.dump();
  EXPECT_NE(approvers[0].find("owner ops@example.com"), std::string::npos) << approvers[0];
  EXPECT_NE(approvers[1].find("owner li@example.com"), std::string::npos) << approvers[1];

  // A gate with approvers must name at least one, each a token owner.
  json bad = this->version("v2", run, "a");
  bad["gates"]["approvals"] = {{{"name", "legal"}, {"approvers", json::array()}}};
  r = this->reg(bad, ana);
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(body(r)["error"]["field"], "gates.approvals[0].approvers") << r.body;
}

TYPED_TEST(ModelApiTest, PromotionPassesEveryGateOrIsRefusedNamingTheFailingOne) {
  FakeAgent n1 = this->agent("n1", 16);
  const std::int64_t r1 = this->trained(n1, "a", 0.90), r2 = this->trained(n1, "bb", 0.93),
                     r3 = this->trained(n1, "ccc", 0.935);
  ASSERT_EQ(this->reg(this->version("v1", r1, "a")).status, 201);
  ASSERT_EQ(this->reg(this->version("v2", r2, "bb")).status, 201);
  ASSERT_EQ(this->reg(this->version("v3", r3, "ccc")).status, 201);
  ASSERT_EQ(this->reg(this->version("v4", r3, "ccc", {{"probs", "float32[]"}})).status, 201);

  // The approval gate: refused until it is recorded.
  auto r = this->alias("production", {{"version", "v1"}, {"reason", "first release"}});
  EXPECT_EQ(r.status, 409) << r.body;
  EXPECT_NE(r.body.find("approval safety failed (not approved)"), std::string::npos) << r.body;
  EXPECT_EQ(this->approve("v1").status, 201);
  EXPECT_EQ(this->approve("v1").status, 200);  // a retry
  r = this->as(this->nlp_).post("/v1/models/llm/versions/v1/approvals", R"({"name": "legal"})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(body(r)["error"]["field"], "name");
  r = this->alias("production", {{"version", "v1"}, {"reason", "first release"}});
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(body(r)["version"], "v1");
  EXPECT_EQ(body(r)["gated"], true);
  EXPECT_EQ(body(r)["evaluation"].size(), 4u) << r.body;  // metric, improvement, schema, approval

  // v2 improves accuracy by 0.03: every gate passes.
  this->approve("v2");
  r = this->alias("production", {{"version", "v2"}, {"reason", "better"}});
  ASSERT_EQ(r.status, 200) << r.body;
  // v3 improves it by only 0.005, under the 0.01 it asks; v4 also drops an output.
  this->approve("v3");
  this->approve("v4");
  r = this->alias("production", {{"version", "v3"}});
  EXPECT_EQ(r.status, 409);
  EXPECT_NE(r.body.find("v3: improvement eval/accuracy by at least 0.01"), std::string::npos)
      << r.body;
  r = this->alias("production", {{"version", "v4"}});
  EXPECT_EQ(r.status, 409);
  EXPECT_NE(r.body.find("schema compatible failed (incompatible with v2: output logits)"),
            std::string::npos)
      << r.body;
  // The metric threshold gate, failing: a version whose run is under 0.85.
  const std::int64_t r5 = this->trained(n1, "dddd", 0.5);
  ASSERT_EQ(this->reg(this->version("v5", r5, "dddd")).status, 201);
  this->approve("v5");
  r = this->alias("production", {{"version", "v5"}});
  EXPECT_NE(r.body.find("metric eval/accuracy >= 0.85 failed (eval/accuracy is 0.5)"),
            std::string::npos)
      << r.body;
  EXPECT_EQ(body(this->as(this->nlp_).get("/v1/models/llm/aliases/production"))["version"], "v2")
      << "a refused move moves nothing";

  // An ungated alias takes any version, with a canary share checked for range.
  for (const double weight : {0.0, 1.0, 1.5, -0.1}) {
    r = this->alias("staging",
                    {{"version", "v2"}, {"canary", {{"version", "v3"}, {"weight", weight}}}});
    EXPECT_EQ(r.status, 400) << weight;
    EXPECT_EQ(body(r)["error"]["field"], "canary.weight");
  }
  r = this->alias("staging", {{"version", "v2"}, {"canary", {{"version", "v2"}, {"weight", 0.1}}}});
  EXPECT_EQ(body(r)["error"]["field"], "canary.version");
  r = this->alias("staging", {{"version", "v2"},
                              {"canary", {{"version", "v5"}, {"weight", 0.1}}},
                              {"endpoint", "https://serve.example/llm"}});
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(body(r)["canary"], (json{{"version", "v5"}, {"weight", 0.1}}));
  EXPECT_EQ(body(r)["endpoint"], "https://serve.example/llm");
  // On a gated alias the canary passes the gates too.
  r = this->alias("production",
                  {{"version", "v2"}, {"canary", {{"version", "v5"}, {"weight", 0.1}}}});
  EXPECT_EQ(r.status, 409) << r.body;
  EXPECT_NE(r.body.find("v5: metric"), std::string::npos) << r.body;
}

TYPED_TEST(ModelApiTest, RollbackIsIdempotentAndTheHistoryKeepsEveryMove) {
  FakeAgent n1 = this->agent("n1", 16);
  const std::int64_t r1 = this->trained(n1, "a", 0.90), r2 = this->trained(n1, "bb", 0.95);
  ASSERT_EQ(this->reg(this->version("v1", r1, "a")).status, 201);
  ASSERT_EQ(this->reg(this->version("v2", r2, "bb")).status, 201);
  this->approve("v1");
  this->approve("v2");
  ASSERT_EQ(this->alias("production", {{"version", "v1"}, {"reason", "first"}}).status, 201);
  ASSERT_EQ(this->alias("production", {{"version", "v2"}, {"reason", "second"}}).status, 200);
  // Moving it where it is already is a retry: no history entry.
  ASSERT_EQ(this->alias("production", {{"version", "v2"}, {"reason", "second"}}).status, 200);
  auto r = this->as(this->nlp_)
               .post("/v1/models/llm/aliases/production/rollback",
                     R"({"reason": "latency regression"})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(body(r)["version"], "v1");
  // A retried rollback changes nothing.
  r = this->as(this->nlp_).post("/v1/models/llm/aliases/production/rollback", "{}");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(body(r)["version"], "v1");
  const json moves = this->history("production");
  ASSERT_EQ(moves.size(), 3u) << moves.dump();
  EXPECT_TRUE(moves[0]["from"].is_null());
  EXPECT_EQ(moves[0]["to"], "v1");
  EXPECT_EQ(moves[1]["from"], "v1");
  EXPECT_EQ(moves[1]["to"], "v2");
  EXPECT_EQ(moves[1]["reason"], "second");
  EXPECT_EQ(moves[1]["evaluation"].size(), 4u);
  EXPECT_EQ(moves[2]["kind"], "rollback");
  EXPECT_EQ(moves[2]["to"], "v1");
  EXPECT_EQ(moves[2]["reason"], "latency regression");
  for (const json& m : moves) {
    EXPECT_FALSE(m.value("by", "").empty());
    EXPECT_GT(m.value("atMs", 0), 0);
  }
  // An alias with one move has nothing to roll back to.
  ASSERT_EQ(this->alias("staging", {{"version", "v1"}}).status, 201);
  EXPECT_EQ(this->as(this->nlp_).post("/v1/models/llm/aliases/staging/rollback", "{}").status, 409);

  // Concurrent moves: every one lands, and the history is one chain (each move's `from`
  // is the previous move's `to`).
  std::vector<std::thread> movers;
  for (int t = 0; t < 4; ++t) {
    movers.emplace_back([&, t] {
      for (int i = 0; i < 10; ++i) {
        const auto m = this->alias("staging", {{"version", (i + t) % 2 ? "v1" : "v2"}});
        EXPECT_TRUE(m.status == 200 || m.status == 201) << m.body;
      }
    });
  }
  for (auto& t : movers) t.join();
  const json chain = this->history("staging");
  ASSERT_GE(chain.size(), 2u);
  for (std::size_t i = 1; i < chain.size(); ++i) {
    EXPECT_EQ(chain[i]["from"], chain[i - 1]["to"]) << chain.dump();
  }
  EXPECT_EQ(body(this->as(this->nlp_).get("/v1/models/llm/aliases/staging"))["version"],
            chain.back()["to"]);
}

TYPED_TEST(ModelApiTest, NoEndpointShowsAnotherTenantsModel) {
  FakeAgent n1 = this->agent("n1", 16);
  const std::int64_t run = this->trained(n1, "a", 0.9);
  ASSERT_EQ(this->reg(this->version("v1", run, "a")).status, 201);
  ASSERT_EQ(this->alias("staging", {{"version", "v1"}}).status, 201);
  for (const std::string& token : {this->vision_, n1.token}) {
    for (const auto& [method, path, b] :
         std::vector<std::tuple<std::string, std::string, std::string>>{
             {"GET", "/v1/models/llm", ""},
             {"GET", "/v1/models/llm/versions/v1", ""},
             {"POST", "/v1/models/llm/versions/v1/approvals", R"({"name":"safety"})"},
             {"POST", "/v1/models/llm/aliases/staging", R"({"version":"v1"})"},
             {"POST", "/v1/models/llm/aliases/staging/rollback", "{}"},
             {"GET", "/v1/models/llm/aliases/staging/history", ""}}) {
      SCOPED_TRACE(method + " " + path);
      const auto r = this->as(token).send(method, path, b, {}, "application/json");
      EXPECT_TRUE(r.status == 403 || r.status == 404) << r.status << " " << r.body;
      EXPECT_EQ(r.body.find("s3://nlp"), std::string::npos) << r.body;
    }
    EXPECT_EQ(this->as(token).get("/v1/models").body.find("llm"), std::string::npos);
  }
  // A vision member cannot register from nlp's run: it reads as unknown.
  const auto r =
      this->as(this->vision_).post("/v1/models/vis/versions", this->version("v1", run, "a").dump());
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(body(r)["error"]["field"], "run");
  EXPECT_EQ(r.body.find("s3://nlp"), std::string::npos) << r.body;
}

}  // namespace
}  // namespace corral::testing
