// Dataset versions and the dataset gate (docs/datasets.md) through real HTTP against a
// real corrald, on both stores: registration errors with their field paths, immutable
// content, idempotent registration, the gate at submission (unknown, cross-tenant,
// pending, quarantined), a quarantine while a version is in use, and tenant isolation
// over every dataset endpoint.
#include <string>
#include <vector>

#include "api_fixture.h"
#include "run_fixture.h"
#include <gtest/gtest.h>

namespace corral::testing {
namespace {

const std::string kOtherDigest = "sha256:" + std::string(64, 'b');

json version_body(const std::string& version) {
  return {{"version", version},
          {"uri", "s3://corpus/webtext/" + version + "/"},
          {"digest", kDigest},
          {"schemaHash", kOtherDigest},
          {"sizeBytes", 1'099'511'627'776}};
}

template <typename Factory>
class DatasetApiTest : public TwoTenantApiTest<Factory> {
 protected:
  // Registers `body` as a member of nlp, expecting `status`.
  json registered(const std::string& dataset, const json& body, int status = 201) {
    const auto r = this->as(this->nlp_).post("/v1/datasets/" + dataset + "/versions", body.dump());
    EXPECT_EQ(r.status, status) << r.body;
    return ::corral::testing::body(r);
  }

  HttpReply move(const std::string& ref_path, const std::string& status,
                 const std::string& reason = "") {
    return this->as(this->nlp_)
        .post("/v1/datasets/" + ref_path + "/status",
              json{{"status", status}, {"reason", reason}}.dump());
  }

  // A job of nlp on `datasets`.
  HttpReply submit(const std::vector<std::string>& datasets, const std::string& token = "") {
    json spec = json::parse(job_for("nlp"));
    spec["lineage"] = {{"datasets", datasets}};
    return this->as(token.empty() ? this->nlp_ : token).post("/v1/jobs", spec.dump());
  }

  json job(std::int64_t id) { return body(this->admin().get("/v1/jobs/" + std::to_string(id))); }
};

TYPED_TEST_SUITE(DatasetApiTest, Stores, StoreNames);

struct BadVersion {
  const char* name;
  json body;
  const char* field;
  const char* words;
};

TYPED_TEST(DatasetApiTest, RegistrationErrorsNameTheirField) {
  this->registered("base", version_body("v1"));
  const auto with = [](const char* key, json value) {
    json b = version_body("v9");
    b[key] = std::move(value);
    return b;
  };
  const auto without = [](const char* key) {
    json b = version_body("v9");
    b.erase(key);
    return b;
  };
  const std::vector<BadVersion> cases = {
      {"no version", without("version"), "version", "must be 1 to 63"},
      {"version with a space", with("version", "v 1"), "version", "must be 1 to 63"},
      {"version not a string", with("version", 3), "version", "must be 1 to 63"},
      {"version too long", with("version", std::string(64, 'v')), "version", "must be 1 to 63"},
      {"no uri", without("uri"), "uri", "is required"},
      {"uri not a string", with("uri", 5), "uri", "must be a string"},
      {"uri without scheme", with("uri", "/data/webtext"), "uri", "must be an s3://"},
      {"uri of ftp", with("uri", "ftp://host/x"), "uri", "must be an s3://"},
      {"uri scheme only", with("uri", "s3://"), "uri", "must be an s3://"},
      {"uri too long", with("uri", "s3://" + std::string(3000, 'x')), "uri", "at most 2048"},
      {"no digest", without("digest"), "digest", "is required"},
      {"digest not sha256", with("digest", "md5:abc"), "digest", "64 lowercase hex"},
      {"digest short", with("digest", "sha256:abc"), "digest", "64 lowercase hex"},
      {"digest uppercase", with("digest", "sha256:" + std::string(64, 'A')), "digest",
       "64 lowercase hex"},
      {"schema hash bad", with("schemaHash", "v1"), "schemaHash", "64 lowercase hex"},
      {"no size", without("sizeBytes"), "sizeBytes", "is required"},
      {"size negative", with("sizeBytes", -1), "sizeBytes", "from 0 to 2^60"},
      {"size float", with("sizeBytes", 1.5), "sizeBytes", "from 0 to 2^60"},
      {"size string", with("sizeBytes", "1Gi"), "sizeBytes", "from 0 to 2^60"},
      {"parents not a list", with("parents", "base@v1"), "parents", "must be a list"},
      {"parent not a ref", with("parents", {"base"}), "parents[0]", "must be DATASET@VERSION"},
      {"parent unknown", with("parents", {"base@v1", "nosuch@v1"}), "parents[1]",
       "unknown dataset version nosuch@v1"},
      {"parent twice", with("parents", {"base@v1", "base@v1"}), "parents[1]", "twice"},
      {"parent is itself", with("parents", {"fresh@v9"}), "parents[0]", "its own parent"},
      {"privacy unknown", with("privacy", "public"), "privacy", "tenant-confidential"},
      {"privacy shared empty", with("privacy", {{"shared", json::array()}}), "privacy.shared",
       "must list 1 to"},
      {"privacy shared unknown tenant", with("privacy", {{"shared", {"vision", "nosuch"}}}),
       "privacy.shared[1]", "unknown tenant"},
      {"privacy shared with owner", with("privacy", {{"shared", {"nlp"}}}), "privacy.shared[0]",
       "is the owner"},
      {"privacy shared bad name", with("privacy", {{"shared", {"Bad Name"}}}), "privacy.shared[0]",
       "must be a tenant name"},
      {"status quarantined", with("status", "quarantined"), "status", "must be pending or passed"},
      {"status unknown", with("status", "ok"), "status", "must be pending or passed"},
      {"unknown field", with("rows", 10), "rows", "unknown field"},
      {"tenant of another", with("tenant", "vision"), "-", "registers only its own"},
  };
  ASSERT_GE(cases.size(), 20u);
  for (const BadVersion& c : cases) {
    SCOPED_TRACE(c.name);
    const auto r = this->as(this->nlp_).post("/v1/datasets/fresh/versions", c.body.dump());
    const json e = body(r)["error"];
    if (std::string(c.field) == "-") {
      EXPECT_EQ(r.status, 403) << r.body;
    } else {
      EXPECT_EQ(r.status, 400) << r.body;
      EXPECT_EQ(e.value("field", ""), c.field) << r.body;
    }
    EXPECT_NE(e.value("message", "").find(c.words), std::string::npos) << r.body;
  }
  // Nothing of them was stored.
  EXPECT_EQ(this->as(this->nlp_).get("/v1/datasets/fresh").status, 404);
  // The path's id is checked too.
  EXPECT_EQ(this->as(this->nlp_)
                .post("/v1/datasets/Not_A_Label/versions", version_body("v1").dump())
                .status,
            404);
}

TYPED_TEST(DatasetApiTest, AVersionIsImmutableAndRegistrationIsIdempotent) {
  const json first = this->registered("webtext", version_body("v12"));
  EXPECT_EQ(first.value("status", ""), "pending");
  EXPECT_EQ(first.value("privacy", json()), "tenant-confidential");
  EXPECT_EQ(first.value("createdBy", "").rfind("token:", 0), 0u) << first.dump();
  // The same content again answers the version as registered.
  const json again = this->registered("webtext", version_body("v12"), 200);
  EXPECT_EQ(again, first);
  // Every content field changed is refused, naming it.
  const std::vector<std::pair<const char*, json>> changes = {
      {"uri", "s3://corpus/elsewhere/"},
      {"digest", kOtherDigest},
      {"schemaHash", kDigest},
      {"sizeBytes", 1},
      {"parents", json::array({"webtext@v12"})},
      {"privacy", {{"shared", {"vision"}}}},
  };
  this->registered("webtext", version_body("v11"));
  for (const auto& [field, value] : changes) {
    SCOPED_TRACE(field);
    json b = version_body("v12");
    b[field] = value;
    if (std::string(field) == "parents") b[field] = json::array({"webtext@v11"});
    const auto r = this->as(this->nlp_).post("/v1/datasets/webtext/versions", b.dump());
    EXPECT_EQ(r.status, 400) << r.body;
    EXPECT_EQ(body(r)["error"].value("field", ""), field) << r.body;
    EXPECT_NE(r.body.find("immutable"), std::string::npos) << r.body;
  }
  for (const char* method : {"PUT"}) {
    const auto r = this->as(this->nlp_)
                       .send(method, "/v1/datasets/webtext/versions/v12",
                             version_body("v12").dump(), {}, "application/json");
    EXPECT_EQ(r.status, 409) << method << " " << r.body;
    EXPECT_NE(r.body.find("immutable"), std::string::npos) << r.body;
  }
  EXPECT_EQ(body(this->as(this->nlp_).get("/v1/datasets/webtext/versions/v12")), first);
  // A retry under one Idempotency-Key creates nothing new either.
  for (int i = 0; i < 2; ++i) {
    const auto r = this->as(this->nlp_)
                       .post("/v1/datasets/webtext/versions", version_body("v13").dump(),
                             {{"Idempotency-Key", "k1"}});
    EXPECT_EQ(r.status, 201) << r.body;
  }
  EXPECT_EQ(body(this->as(this->nlp_).get("/v1/datasets/webtext")).value("versions", 0), 3);
  // Another tenant cannot take the id, nor learn who holds it.
  const auto taken =
      this->as(this->vision_).post("/v1/datasets/webtext/versions", version_body("v1").dump());
  EXPECT_EQ(taken.status, 409) << taken.body;
  EXPECT_EQ(taken.body.find("nlp"), std::string::npos) << taken.body;
}

TYPED_TEST(DatasetApiTest, TheGateAdmitsOnlyVisibleVersionsAndHoldsUntilTheyPass) {
  this->add_node("n1", 8);
  this->registered("webtext", version_body("v12"));
  // Unknown, and another tenant's confidential version (read as unknown).
  auto r = this->submit({"nosuch@v1"});
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(body(r)["error"].value("field", ""), "lineage.datasets[0]");
  r = this->submit({"webtext@v12"}, "");
  ASSERT_EQ(r.status, 201) << r.body;
  const std::int64_t held = body(r)["id"].template get<std::int64_t>();
  json other = json::parse(job_for("vision"));
  other["lineage"] = {{"datasets", {"webtext@v12"}}};
  r = this->as(this->vision_).post("/v1/jobs", other.dump());
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(body(r)["error"].value("field", ""), "lineage.datasets[0]");
  EXPECT_NE(r.body.find("unknown dataset version webtext@v12"), std::string::npos) << r.body;
  // Pending: admitted, held with its reason, never placed while free GPUs wait.
  json j = this->job(held);
  EXPECT_EQ(j.value("phase", ""), "pending");
  EXPECT_EQ(j.value("pendingKind", ""), "held");
  EXPECT_NE(j.value("reason", "").find("held: dataset webtext@v12 is pending"), std::string::npos)
      << j.dump();
  auto admin = this->admin();
  ASSERT_TRUE(wait_cycles(admin, 5));  // five chances to place it
  EXPECT_EQ(this->job(held).value("phase", ""), "pending");
  // Passed: the scheduler places it.
  ASSERT_EQ(this->move("webtext/versions/v12", "passed").status, 200);
  ASSERT_TRUE(eventually([&] { return this->job(held).value("phase", "") == "launching"; }));
  // Quarantined: a new job is admitted and held, naming the reason.
  ASSERT_EQ(this->move("webtext/versions/v12", "quarantined", "pii found in shard 7").status, 200);
  r = this->submit({"webtext@v12"});
  ASSERT_EQ(r.status, 201) << r.body;
  j = this->job(body(r)["id"].template get<std::int64_t>());
  EXPECT_NE(j.value("reason", "").find("quarantined (pii found in shard 7)"), std::string::npos)
      << j.dump();
  // Shared with vision: its jobs are admitted on it too.
  this->registered("shared", [] {
    json b = version_body("v1");
    b["privacy"] = {{"shared", {"vision"}}};
    b["status"] = "passed";
    return b;
  }());
  other["lineage"] = {{"datasets", {"shared@v1"}}};
  r = this->as(this->vision_).post("/v1/jobs", other.dump());
  EXPECT_EQ(r.status, 201) << r.body;
}

TYPED_TEST(DatasetApiTest, AQuarantineReachesTheJobsThatUseTheVersion) {
  this->add_node("n1", 1);
  json b = version_body("v1");
  b["status"] = "passed";
  this->registered("webtext", b);
  auto r = this->submit({"webtext@v1"});
  const std::int64_t running = body(r)["id"].template get<std::int64_t>();
  ASSERT_TRUE(eventually([&] { return this->job(running).value("phase", "") == "launching"; }));
  r = this->submit({"webtext@v1"});  // waits for the one GPU
  const std::int64_t waiting = body(r)["id"].template get<std::int64_t>();
  // A reason is required both ways.
  r = this->move("webtext/versions/v1", "quarantined");
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(body(r)["error"].value("field", ""), "reason");
  ASSERT_EQ(this->move("webtext/versions/v1", "quarantined", "license revoked").status, 200);
  const auto events = [&](std::int64_t id) {
    return body(this->admin().get("/v1/jobs/" + std::to_string(id) + "/events")).dump();
  };
  EXPECT_NE(events(running).find("webtext@v1 quarantined (license revoked)"), std::string::npos)
      << events(running);
  // The move writes the hold at once, but a cycle that read the queue before it may write
  // its older reason over it once; the next cycle writes the hold again.
  json held;
  EXPECT_TRUE(eventually([&] {
    held = this->job(waiting);
    return held.value("reason", "").find("quarantined (license revoked)") != std::string::npos &&
           held.value("pendingKind", "") == "held";
  })) << held.dump();
  // Moving it again is a retry: nothing changes.
  ASSERT_EQ(this->move("webtext/versions/v1", "quarantined", "license revoked").status, 200);
  r = this->move("webtext/versions/v1", "passed");
  EXPECT_EQ(r.status, 400) << r.body;
  ASSERT_EQ(this->move("webtext/versions/v1", "passed", "license renewed").status, 200);
  EXPECT_NE(this->job(waiting).value("pendingKind", ""), "held");
  // Passed cannot go back to pending; the audit log has every move.
  EXPECT_EQ(this->move("webtext/versions/v1", "pending").status, 409);
  const std::string audit = body(this->admin().get("/v1/audit")).dump();
  EXPECT_NE(audit.find("dataset/webtext@v1"), std::string::npos);
  EXPECT_NE(audit.find("license revoked"), std::string::npos);
  // The lineage query: both jobs used it.
  const json jobs = body(this->as(this->nlp_).get("/v1/datasets/webtext/versions/v1/jobs"));
  EXPECT_EQ(jobs["jobs"].size(), 2u) << jobs.dump();
}

// A job that kept running on a quarantined version and comes back to the queue for
// another reason (here its node is drained) is held by the gate, and its reason says so.
TYPED_TEST(DatasetApiTest, AJobBackInTheQueueOnAQuarantinedVersionSaysWhatHoldsIt) {
  this->add_node("n1", 1);
  json b = version_body("v1");
  b["status"] = "passed";
  this->registered("webtext", b);
  const std::int64_t id = body(this->submit({"webtext@v1"}))["id"].template get<std::int64_t>();
  ASSERT_TRUE(eventually([&] { return this->job(id).value("phase", "") == "launching"; }));
  ASSERT_EQ(this->move("webtext/versions/v1", "quarantined", "license revoked").status, 200);
  EXPECT_EQ(this->job(id).value("phase", ""), "launching");  // flagged, not stopped
  ASSERT_EQ(this->admin().post("/v1/nodes/n1/drain", R"({"reason": "fan swap"})").status, 200);
  ASSERT_TRUE(eventually([&] { return this->job(id).value("pendingKind", "") == "held"; }))
      << this->job(id).dump();
  EXPECT_EQ(this->job(id).value("reason", ""),
            "held: dataset webtext@v1 is quarantined (license revoked)");
}

// A tenant's policy (datasets.allowPending, datasets.stopOnQuarantine): its jobs run on a
// pending version, and a quarantine stops them through a checkpoint and holds them.
TYPED_TEST(DatasetApiTest, ATenantsPolicyAdmitsPendingVersionsAndStopsRunningJobsOnQuarantine) {
  for (const auto& [policy, field] : std::vector<std::pair<std::string, std::string>>{
           {R"({"datasets": 1})", "datasets"},
           {R"({"datasets": {"allowPending": "yes"}})", "datasets.allowPending"},
           {R"({"datasets": {"stopOnQuarantine": 1}})", "datasets.stopOnQuarantine"},
           {R"({"datasets": {"stop": true}})", "datasets.stop"}}) {
    const auto r = this->admin().put("/v1/tenants/research", policy);
    EXPECT_EQ(r.status, 400) << policy << " " << r.body;
    EXPECT_EQ(body(r)["error"].value("field", ""), field) << r.body;
  }
  this->make_tenant("research",
                    R"({"datasets": {"allowPending": true, "stopOnQuarantine": true}})");
  const json shown = body(this->admin().get("/v1/tenants/research"));
  EXPECT_EQ(shown["datasets"], (json{{"allowPending", true}, {"stopOnQuarantine", true}}))
      << shown.dump();
  json v = version_body("v1");
  v["tenant"] = "research";
  ASSERT_EQ(this->admin().post("/v1/datasets/corpus/versions", v.dump()).status, 201);
  this->add_node("n1", 8);
  json spec = json::parse(job_for("research"));
  spec["lineage"] = {{"datasets", {"corpus@v1"}}};
  auto r = this->admin().post("/v1/jobs", spec.dump());
  ASSERT_EQ(r.status, 201) << r.body;
  const std::int64_t id = body(r)["id"];
  EXPECT_NE(body(r).value("pendingKind", ""), "held") << "pending is allowed: " << r.body;
  ASSERT_TRUE(eventually([&] { return this->job(id).value("phase", "") == "launching"; }))
      << this->job(id).dump();
  // Quarantined while it runs: stopped through a checkpoint (no agent runs it, so at
  // once), then held by the gate with the quarantine's reason.
  r = this->admin().post("/v1/datasets/corpus/versions/v1/status",
                         json{{"status", "quarantined"}, {"reason", "labels leaked"}}.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  const json stopped = this->job(id);
  EXPECT_EQ(stopped.value("phase", ""), "pending") << stopped.dump();
  EXPECT_EQ(stopped.value("pendingKind", ""), "held") << stopped.dump();
  EXPECT_NE(stopped.value("reason", "").find("corpus@v1 is quarantined (labels leaked)"),
            std::string::npos)
      << stopped.dump();
  const std::string events =
      body(this->admin().get("/v1/jobs/" + std::to_string(id) + "/events")).dump();
  EXPECT_NE(events.find("stopping through a checkpoint (tenant policy datasets.stopOnQuarantine)"),
            std::string::npos)
      << events;
  // It stays held over cycles, and runs again once the version passes.
  auto admin = this->admin();
  ASSERT_TRUE(wait_cycles(admin, 5));
  EXPECT_EQ(this->job(id).value("phase", ""), "pending");
  ASSERT_EQ(this->admin()
                .post("/v1/datasets/corpus/versions/v1/status",
                      json{{"status", "passed"}, {"reason", "labels removed"}}.dump())
                .status,
            200);
  EXPECT_TRUE(eventually([&] { return this->job(id).value("phase", "") == "launching"; }))
      << this->job(id).dump();
}

// role x endpoint x another tenant's object: every one 403 or 404, and no answer names
// the other tenant's URI or digest.
TYPED_TEST(DatasetApiTest, NoEndpointShowsAnotherTenantsDataset) {
  json secret = version_body("v1");
  secret["uri"] = "s3://nlp-private/medical/";
  this->registered("medical", secret);
  const std::string metrics = this->token({{"role", "metrics"}});
  this->add_node("n1", 8);
  const std::string agent_token = this->token({{"role", "agent"}, {"node", "n1"}});
  struct Call {
    const char* method;
    std::string path;
    std::string body;
  };
  const std::vector<Call> calls = {
      {"GET", "/v1/datasets/medical", ""},
      {"GET", "/v1/datasets/medical/versions", ""},
      {"GET", "/v1/datasets/medical/versions/v1", ""},
      {"GET", "/v1/datasets/medical/versions/v1/jobs", ""},
      {"POST", "/v1/datasets/medical/versions/v1/status", R"({"status":"passed"})"},
      {"PUT", "/v1/datasets/medical/versions/v1", "{}"},
      {"POST", "/v1/datasets/medical/versions", version_body("v2").dump()},
  };
  for (const std::string& token : {this->vision_, agent_token, metrics}) {
    for (const Call& c : calls) {
      SCOPED_TRACE(std::string(c.method) + " " + c.path);
      const auto r = this->as(token).send(c.method, c.path, c.body, {}, "application/json");
      EXPECT_TRUE(r.status == 403 || r.status == 404 || (r.status == 409 && token == this->vision_))
          << r.status << " " << r.body;
      EXPECT_EQ(r.body.find("nlp-private"), std::string::npos) << r.body;
      EXPECT_EQ(r.body.find(kDigest), std::string::npos) << r.body;
    }
    const auto list = this->as(token).get("/v1/datasets");
    EXPECT_EQ(list.body.find("medical"), std::string::npos) << list.body;
  }
  // The owner and an admin do see it.
  EXPECT_EQ(this->as(this->nlp_).get("/v1/datasets/medical/versions/v1").status, 200);
  EXPECT_NE(this->admin().get("/v1/datasets").body.find("medical"), std::string::npos);
}

}  // namespace
}  // namespace corral::testing
