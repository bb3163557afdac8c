// The operator's surface (issue 20) through real HTTP against a real corrald, on both
// stores: named tokens, reservations and tenant deletes validated with field paths,
// secrets sealed at rest with private file modes, and the anchored audit log.
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include "api_fixture.h"
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>

namespace corral::testing {
namespace {

constexpr std::int64_t kFarMs = 4'000'000'000'000;  // 2096: a window open far ahead

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

template <typename Factory>
class AdminApiTest : public ApiTest<Factory> {
 protected:
  // A 400 naming `field`, whose message contains `words`.
  static void refused(const HttpReply& r, const std::string& field, const std::string& words) {
    EXPECT_EQ(r.status, 400) << r.body;
    EXPECT_EQ(body(r)["error"].value("field", ""), field) << r.body;
    EXPECT_NE(body(r)["error"].value("message", "").find(words), std::string::npos) << r.body;
  }
  HttpReply reserve(json fields) {
    if (!fields.contains("tenant")) fields["tenant"] = "nlp";
    if (!fields.contains("startMs")) fields["startMs"] = kFarMs;
    if (!fields.contains("endMs")) fields["endMs"] = kFarMs + 3'600'000;
    return this->admin().post("/v1/reservations", fields.dump());
  }
  json verify() { return body(this->admin().get("/v1/audit/verify")); }
  // Waits until the anchor file names the chain's newest entry.
  void wait_anchored() {
    ASSERT_TRUE(eventually([&] {
      const json v = verify();
      const auto entries = body(this->admin().get("/v1/audit?limit=10000"))["entries"];
      if (!v.value("ok", false) || v.value("anchors", 0) == 0 || entries.empty()) return false;
      std::ifstream in(this->dir_.path() / "audit.anchor");
      std::string line, last;
      while (std::getline(in, line)) last = line;
      return last.starts_with("v1 " + std::to_string(entries.back()["seq"].template get<int>()) +
                              " ");
    })) << verify().dump();
  }
};

TYPED_TEST_SUITE(AdminApiTest, Stores, StoreNames);

TYPED_TEST(AdminApiTest, TokensAreNamedExpireAndCanBeRevoked) {
  this->make_tenant("nlp");
  const auto mint = [&](json fields) { return this->admin().post("/v1/tokens", fields.dump()); };
  this->refused(mint({{"role", "member"}, {"tenant", "nlp"}, {"name", "Not_A_Label"}}), "name",
                "DNS label");
  this->refused(mint({{"role", "member"}, {"tenant", "nlp"}, {"expiresInSeconds", 0}}),
                "expiresInSeconds", "whole number");
  this->refused(mint({{"role", "member"}, {"tenant", "nlp"}, {"expiresInSeconds", "1d"}}),
                "expiresInSeconds", "whole number");
  this->refused(mint({{"role", "member"}, {"tenant", "nlp"}, {"owner", std::string(201, 'x')}}),
                "owner", "at most 200");
  this->refused(mint({{"role", "member"}, {"tenant", "nlp"}, {"colour", "red"}}), "colour",
                "unknown field");
  this->refused(mint({{"role", "agent"}, {"node", "ghost"}}), "node", "unknown node \"ghost\"");
  this->refused(mint({{"role", "member"}, {"tenant", "nope"}}), "tenant", "unknown tenant");

  auto r = mint({{"role", "member"}, {"tenant", "nlp"}, {"name", "ci-bot"}, {"owner", "alice@x"}});
  ASSERT_EQ(r.status, 201) << r.body;
  const std::string token = body(r).value("token", "");
  EXPECT_EQ(body(r)["id"], "token:ci-bot");
  EXPECT_TRUE(body(r)["expiresAtMs"].is_null());
  EXPECT_EQ(mint({{"role", "member"}, {"tenant", "nlp"}, {"name", "ci-bot"}}).status, 409);

  auto member = this->server_->client(token);
  ASSERT_EQ(member.post("/v1/jobs", job_for("nlp")).status, 201);
  // The audit log names the token and its owner, not a hash.
  const auto entries = body(this->admin().get("/v1/audit"))["entries"];
  EXPECT_EQ(entries.back()["actor"], "token:ci-bot(member:nlp, owner alice@x)") << entries.dump();
  const json listed = body(this->admin().get("/v1/tokens/ci-bot"));
  EXPECT_EQ(listed["owner"], "alice@x");
  EXPECT_TRUE(listed["lastUsedAtMs"].is_number()) << listed.dump();
  EXPECT_EQ(body(this->admin().get("/v1/tokens"))["tokens"].size(), 3u);  // and the bootstraps
  EXPECT_EQ(this->admin().get("/v1/tokens/nope").status, 404);
  EXPECT_EQ(member.get("/v1/tokens").status, 403);

  // Revoked: refused at once by this replica, and the second revoke answers the first.
  auto revoked = this->admin().del("/v1/tokens/ci-bot");
  ASSERT_EQ(revoked.status, 200) << revoked.body;
  const auto at = body(revoked)["revokedAtMs"];
  EXPECT_TRUE(at.is_number());
  EXPECT_EQ(member.get("/v1/jobs").status, 401);
  EXPECT_NE(member.get("/v1/jobs").body.find("revoked"), std::string::npos);
  EXPECT_EQ(body(this->admin().del("/v1/tokens/token:ci-bot"))["revokedAtMs"], at);

  // Expiry: a token that lives one second stops working after it.
  r = mint({{"role", "admin"}, {"name", "brief"}, {"expiresInSeconds", 1}});
  ASSERT_EQ(r.status, 201) << r.body;
  auto brief = this->server_->client(body(r).value("token", ""));
  EXPECT_EQ(brief.get("/v1/tokens").status, 200);
  EXPECT_TRUE(
      eventually([&] { return brief.get("/v1/tokens").status == 401; }, std::chrono::seconds(5)));
  EXPECT_NE(brief.get("/v1/tokens").body.find("expired"), std::string::npos);
}

TYPED_TEST(AdminApiTest, ReservationsAreCheckedAsAWholeWithTheirField) {
  this->make_tenant("nlp");
  this->add_node("n1");  // 8 H100
  this->add_node("n2");  // 8 H100
  this->refused(
      this->reserve(
          {{"id", "past"}, {"gpuType", "H100"}, {"count", 1}, {"startMs", 1}, {"endMs", 5}}),
      "endMs", "the window ended 1970-01-01");
  this->refused(this->reserve({{"id", "big"}, {"gpuType", "H100"}, {"count", 400}}), "count",
                "asks for 400 H100 but the fleet has 16");
  this->refused(this->reserve({{"id", "elsewhere"}, {"gpuType", "A100-80GB"}, {"count", 1}}),
                "count", "the fleet has 0");
  this->refused(this->reserve({{"id", "ghost"}, {"nodes", {"n1", "nosuch"}}}), "nodes[1]",
                "unknown node \"nosuch\"");
  this->refused(this->reserve({{"id", "twice"}, {"nodes", {"n1", "n1"}}}), "nodes[1]", "twice");
  this->refused(this->reserve({{"id", "Bad_Id"}, {"gpuType", "H100"}, {"count", 1}}), "id",
                "DNS label");
  this->refused(this->reserve({{"id", "who"}, {"tenant", "zz"}, {"gpuType", "H100"}, {"count", 1}}),
                "tenant", "unknown tenant");
  this->refused(
      this->reserve({{"id", "oc"}, {"gpuType", "H100"}, {"count", 1}, {"overcommit", "yes"}}),
      "overcommit", "true or false");
  EXPECT_EQ(this->count("/v1/reservations", "reservations"), 0);

  // Open now (started an hour ago) is fine; so is a window ahead.
  auto open = this->reserve({{"id", "open"},
                             {"gpuType", "H100"},
                             {"count", 4},
                             {"startMs", now_ms() - 3'600'000},
                             {"endMs", kFarMs + 3'600'000}});
  ASSERT_EQ(open.status, 201) << open.body;
  EXPECT_EQ(body(open)["state"], "active");
  ASSERT_EQ(this->reserve({{"id", "node"}, {"nodes", {"n1"}}}).status, 201);
  // 4 + 8 of 16 are promised in the far window: 5 more is too many, 4 fit.
  this->refused(this->reserve({{"id", "more"}, {"gpuType", "H100"}, {"count", 5}}), "count",
                "would promise 17 H100");
  this->refused(this->reserve({{"id", "again"}, {"nodes", {"n1"}}}), "nodes[0]",
                "held by reservation node");
  ASSERT_EQ(this->reserve({{"id", "four"}, {"gpuType", "H100"}, {"count", 4}}).status, 201);
  // A window that overlaps none of them is free again; overcommit lets one through.
  ASSERT_EQ(this->reserve({{"id", "later"},
                           {"gpuType", "H100"},
                           {"count", 16},
                           {"startMs", kFarMs + 7'200'000},
                           {"endMs", kFarMs + 9'000'000}})
                .status,
            201);
  ASSERT_EQ(
      this->reserve({{"id", "oc"}, {"gpuType", "H100"}, {"count", 8}, {"overcommit", true}}).status,
      201);
  EXPECT_EQ(this->reserve({{"id", "oc"}, {"gpuType", "H100"}, {"count", 1}}).status, 409);

  const json one = body(this->admin().get("/v1/reservations/four"));
  EXPECT_EQ(one["count"], 4);
  EXPECT_EQ(one["state"], "upcoming");
  // A member sees its tenant's reservations only; deleting is an admin's.
  this->make_tenant("vision");
  auto vision = this->server_->client(this->token({{"role", "member"}, {"tenant", "vision"}}));
  EXPECT_EQ(vision.get("/v1/reservations/four").status, 404);
  EXPECT_EQ(vision.del("/v1/reservations/four").status, 403);
  ASSERT_EQ(this->admin().del("/v1/reservations/four").status, 200);
  EXPECT_EQ(this->admin().get("/v1/reservations/four").status, 404);
  EXPECT_EQ(this->admin().del("/v1/reservations/four").status, 404);
  const auto audit = body(this->admin().get("/v1/audit?limit=10000"))["entries"];
  EXPECT_EQ(audit.back()["action"], "reservation.delete");
}

TYPED_TEST(AdminApiTest, OnlyAnUnusedTenantCanBeDeleted) {
  this->make_tenant("org");
  this->make_tenant("team", R"({"parent": "org"})");
  this->add_node("n1");
  EXPECT_EQ(this->admin().del("/v1/tenants/nosuch").status, 404);
  // Issue 38 item 13: default was deletable, and then every spec without a tenant failed.
  auto r = this->admin().del("/v1/tenants/default");
  EXPECT_EQ(r.status, 409) << r.body;
  EXPECT_NE(r.body.find("takes every job that names no tenant"), std::string::npos) << r.body;
  r = this->admin().del("/v1/tenants/org");
  EXPECT_EQ(r.status, 409) << r.body;
  EXPECT_NE(r.body.find("parent of team"), std::string::npos) << r.body;
  // A pending job holds its tenant.
  json job = json::parse(job_for("team", 64));  // more than the fleet: it stays pending
  ASSERT_EQ(this->admin().post("/v1/jobs", job.dump()).status, 201);
  r = this->admin().del("/v1/tenants/team");
  EXPECT_EQ(r.status, 409) << r.body;
  EXPECT_NE(r.body.find("unfinished jobs"), std::string::npos) << r.body;
  ASSERT_EQ(this->admin().post("/v1/jobs/1/cancel", "").status, 200);
  ASSERT_EQ(
      this->reserve({{"id", "r1"}, {"tenant", "team"}, {"gpuType", "H100"}, {"count", 1}}).status,
      201);
  r = this->admin().del("/v1/tenants/team");
  EXPECT_EQ(r.status, 409) << r.body;
  EXPECT_NE(r.body.find("reservation r1"), std::string::npos) << r.body;
  ASSERT_EQ(this->admin().del("/v1/reservations/r1").status, 200);
  r = this->admin().del("/v1/tenants/team");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(body(r)["deleted"], true);
  EXPECT_EQ(this->admin().get("/v1/tenants/team").status, 404);
  EXPECT_EQ(this->admin().del("/v1/tenants/org").status, 200);  // no child left
  // The finished job keeps its tenant's name.
  EXPECT_EQ(body(this->admin().get("/v1/jobs/1"))["tenant"], "team");
}

// Issue 38 item 9: any member could submit priorityClass production. A tenant's
// priorityClasses say which classes it may use and how many GPUs at each; the scheduler
// holds the cap, and what could never pass it is refused at submit.
TYPED_TEST(AdminApiTest, PriorityClassesLimitWhatATenantMaySubmit) {
  auto r = this->admin().put("/v1/tenants/nlp", R"({"priorityClasses": {"gold": {}}})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(body(r)["error"]["field"], "priorityClasses.gold") << r.body;
  this->make_tenant("nlp",
                    R"({"priorityClasses": {"standard": {}, "production": {"maxGpus": 8}}})");
  const json tenant = body(this->admin().get("/v1/tenants/nlp"));
  EXPECT_EQ(tenant["priorityClasses"],
            json::parse(R"({"production": {"maxGpus": 8}, "standard": {"maxGpus": null}})"))
      << tenant.dump();
  this->add_node("n1", 16);
  auto member = this->server_->client(this->token({{"role", "member"}, {"tenant", "nlp"}}));
  const auto job = [](const char* cls, int gpus) {
    json j = json::parse(job_for("nlp", gpus));
    j["priorityClass"] = cls;
    return j.dump();
  };
  const auto refused = [&](const char* cls, int gpus, const char* field, const char* why) {
    const auto reply = member.post("/v1/jobs", job(cls, gpus));
    EXPECT_EQ(reply.status, 400);
    EXPECT_EQ(body(reply)["error"]["field"], field);
    EXPECT_NE(reply.body.find(why), std::string::npos) << reply.body;
  };
  refused("preemptible", 1, "priorityClass",
          "may not use priority class preemptible; it may use production, standard");
  refused("production", 16, "resources.gpus",
          "may hold at most 8 GPUs at once (priorityClasses.production.maxGpus)");
  // Two production jobs of 8: the second waits for the cap, not for capacity.
  ASSERT_EQ(member.post("/v1/jobs", job("production", 8)).status, 201);
  ASSERT_EQ(member.post("/v1/jobs", job("production", 8)).status, 201);
  ASSERT_EQ(member.post("/v1/jobs", job("standard", 8)).status, 201);
  EXPECT_TRUE(eventually([&] {
    const json queue = body(this->admin().get("/v1/queue"))["queue"];
    return queue.size() == 1 && queue[0].value("kind", "") == "quota";
  }));
  const json queue = body(this->admin().get("/v1/queue"))["queue"];
  ASSERT_EQ(queue.size(), 1u) << queue.dump();
  EXPECT_EQ(queue[0]["job"], 2);
  EXPECT_NE(queue[0]["reason"].get<std::string>().find(
                "tenant nlp's production jobs hold 8 of the 8 GPUs"),
            std::string::npos)
      << queue.dump();
}

// Interactive sessions (docs/sessions.md): one that could never start is refused at submit
// (past the per-user limit, or past its tenant's guarantee); the user is the token's
// owner, so two tokens made for alice share her limit, and her second session waits for it.
TYPED_TEST(AdminApiTest, SessionsAreHeldToTheGuaranteeAndTheirUsersLimit) {
  this->make_tenant("nlp", R"({"quotas": {"H100": {"guaranteed": 4, "borrowLimit": 0}}})");
  this->make_tenant("cv");
  this->add_node("n1", 8);
  const json alice_token = {{"role", "member"}, {"tenant", "nlp"}, {"owner", "alice@example.com"}};
  auto alice = this->server_->client(this->token(alice_token));
  auto alice_too = this->server_->client(this->token(alice_token));
  auto carol = this->server_->client(this->token({{"role", "member"}, {"tenant", "cv"}}));
  const auto session = [](const char* tenant, int gpus) {
    json j = json::parse(job_for(tenant, gpus));
    j["priorityClass"] = "interactive";
    return j.dump();
  };
  auto r = alice.post("/v1/jobs", session("nlp", 3));
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(body(r)["error"]["field"], "resources.gpus");
  EXPECT_NE(r.body.find("a user's sessions may hold at most 2 GPUs at once "
                        "(scheduler.sessionGpusPerUser); this one asks for 3"),
            std::string::npos)
      << r.body;
  r = carol.post("/v1/jobs", session("cv", 1));
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("a session starts only inside its tenant's guarantee, and tenant cv is "
                        "guaranteed at most 0 GPUs"),
            std::string::npos)
      << r.body;
  ASSERT_EQ(alice.post("/v1/jobs", session("nlp", 2)).status, 201);
  r = alice_too.post("/v1/jobs", session("nlp", 1));
  ASSERT_EQ(r.status, 201) << r.body;
  const std::string second = "/v1/jobs/" + std::to_string(body(r).value("id", std::int64_t{0}));
  EXPECT_TRUE(eventually(
      [&] { return body(this->admin().get(second)).value("pendingKind", "") == "sessionLimit"; }));
  EXPECT_NE(body(this->admin().get(second))
                .value("reason", std::string())
                .find("user alice@example.com's sessions hold 2 of the 2 GPUs"),
            std::string::npos);
}

// Random admin writes the API accepts (tenant puts and deletes, reservations made and
// removed, with jobs queued meanwhile), then scheduling cycles: none of them fails.
TYPED_TEST(AdminApiTest, NoAcceptedSequenceOfAdminWritesBreaksACycle) {
  std::mt19937 rng(11);
  this->add_node("n1");
  const std::vector<std::string> names = {"a", "b", "c", "d"};
  int accepted = 0, refused = 0;
  for (int i = 0; i < 200; ++i) {
    const std::string name = names[rng() % names.size()];
    HttpReply r;
    switch (rng() % 5) {
      case 0:
      case 1: {
        json t = {{"weight", 1 + static_cast<int>(rng() % 4)},
                  {"quotas", {{"H100", {{"guaranteed", rng() % 9}, {"borrowLimit", rng() % 9}}}}}};
        if (rng() % 3 != 0) t["parent"] = names[rng() % names.size()];
        r = this->admin().put("/v1/tenants/" + name, t.dump());
        break;
      }
      case 2:
        r = this->admin().del("/v1/tenants/" + name);
        break;
      case 3: {
        json res = {{"id", "r" + std::to_string(rng() % 4)}, {"tenant", name}};
        if (rng() % 2 == 0) {
          res["gpuType"] = "H100";
          res["count"] = 1 + static_cast<int>(rng() % 10);
        } else {
          res["nodes"] = {"n1"};
        }
        res["startMs"] = now_ms() + static_cast<std::int64_t>(rng() % 3) * 1'000 - 1'000;
        res["endMs"] = now_ms() + 60'000 + static_cast<std::int64_t>(rng() % 60'000);
        r = this->reserve(res);
        break;
      }
      default:
        r = rng() % 2 == 0 ? this->admin().del("/v1/reservations/r" + std::to_string(rng() % 4))
                           : this->admin().post("/v1/jobs", job_for(name, 1 + rng() % 4));
    }
    ASSERT_LT(r.status, 500) << r.body;
    (r.status >= 400 ? refused : accepted) += 1;
  }
  EXPECT_GT(accepted, 50);
  EXPECT_GT(refused, 10);
  auto admin = this->admin();
  EXPECT_TRUE(wait_cycles(admin, 3));
  EXPECT_EQ(scrape_metric(admin, "corral_sched_errors_total"), 0);
  const json health = body(this->admin().get("/healthz"));
  EXPECT_EQ(health.value("status", ""), "ok") << health.dump();
}

TYPED_TEST(AdminApiTest, NodeStatesTellDrainedFromDraining) {
  this->add_node("n1");
  EXPECT_EQ(body(this->admin().get("/v1/nodes/n1"))["state"], "active");
  ASSERT_EQ(this->admin().post("/v1/jobs", job_for("default")).status, 201);
  ASSERT_TRUE(eventually([&] { return this->count("/v1/allocations", "allocations") == 1; }));
  // No body at all is no reason, not a malformed request.
  auto r = this->admin().post("/v1/nodes/n1/drain", R"({"reason": "fan swap"})");
  ASSERT_EQ(r.status, 200) << r.body;
  // Draining while its job leaves; a job not started yet leaves at once.
  EXPECT_TRUE(body(r)["state"] == "draining" || body(r)["state"] == "drained") << r.body;
  ASSERT_EQ(this->admin().post("/v1/jobs/1/cancel", R"({"reason": "wrong data"})").status, 200);
  EXPECT_TRUE(
      eventually([&] { return body(this->admin().get("/v1/nodes/n1"))["state"] == "drained"; }));
  ASSERT_EQ(this->admin().post("/v1/nodes/n1/cordon", "").status, 200);
  EXPECT_EQ(body(this->admin().get("/v1/nodes/n1"))["state"], "cordoned");
  // Issue 38 item 13: the audit entries of a drain and a cancel carry the reason as a field.
  std::map<std::string, json> after;
  const json entries = body(this->admin().get("/v1/audit?limit=1000"))["entries"];
  for (const json& e : entries) {
    after[e["action"]] = json::parse(e["after"].get<std::string>(), nullptr, false);
  }
  EXPECT_EQ(after["node.drain"], json::parse(R"({"state": "draining", "reason": "fan swap"})"));
  EXPECT_EQ(after["job.cancel"], json::parse(R"({"phase": "cancelled", "reason": "wrong data"})"));
  EXPECT_EQ(after["node.cordon"], json::parse(R"({"state": "cordoned", "reason": ""})"));
}

// After a run with secrets (a job submitted, its assignment handed to its node's agent)
// no secret value is in any file under the data directory, and every file is 0600.
TYPED_TEST(AdminApiTest, SecretsAreSealedAtRestAndFilesArePrivate) {
  const std::string secret = "s3cr3t-" + std::to_string(now_ms());
  this->add_node("n1");
  json job = json::parse(job_for("default"));
  job["secretEnv"] = {{"HF_TOKEN", secret}};
  auto r = this->admin().post("/v1/jobs", job.dump());
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(r.body.find(secret), std::string::npos);
  auto agent = this->server_->client(this->token({{"role", "agent"}, {"node", "n1"}}));
  std::string assignments;
  ASSERT_TRUE(eventually([&] {
    assignments = agent.get("/v1/agents/n1/assignments").body;
    return assignments.find(secret) != std::string::npos;  // opened for its own workers only
  })) << assignments;
  for (const std::string path : {"/v1/jobs/1", "/v1/jobs", "/v1/audit", "/v1/jobs/1/events"}) {
    EXPECT_EQ(this->admin().get(path).body.find(secret), std::string::npos) << path;
  }
  this->server_->stop();
  int files = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(this->dir_.path())) {
    struct stat st {};
    ASSERT_EQ(::lstat(e.path().c_str(), &st), 0);
    if (e.is_directory()) {
      EXPECT_EQ(st.st_mode & 0777, 0700u) << e.path();
      continue;
    }
    ++files;
    EXPECT_EQ(st.st_mode & 0777, 0600u) << e.path();
    std::ifstream in(e.path(), std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_EQ(text.str().find(secret), std::string::npos) << e.path();
  }
  EXPECT_GE(files, 4);  // the store (or its log), the tokens, the key, the anchor
  EXPECT_TRUE(std::filesystem::exists(this->dir_.path() / "corrald.key"));
}

TYPED_TEST(AdminApiTest, AnchoredAuditDetectsEditsDeletionsReorderingAndTruncation) {
  for (int i = 0; i < 6; ++i)
    ASSERT_EQ(this->admin().post("/v1/jobs", job_for("default")).status, 201);
  this->wait_anchored();
  const std::string url = this->store_url_;
  const auto broken = [&](const std::string& words) {
    const json v = this->verify();
    EXPECT_FALSE(v.value("ok", true)) << v.dump();
    EXPECT_NE(v.value("problem", "").find(words), std::string::npos) << v.dump();
  };
  // Truncation with the head rewritten to the last entry left: the chain alone is whole,
  // the anchor names an entry the log no longer has.
  const auto entries = body(this->admin().get("/v1/audit?limit=10000"))["entries"];
  const int last = entries.back()["seq"].template get<int>();
  const std::string keep = std::to_string(last - 2);
  ASSERT_TRUE(exec_sql(url, "DELETE FROM audit_log WHERE seq > " + keep).ok());
  ASSERT_TRUE(exec_sql(url, "UPDATE audit_head SET seq = " + keep +
                                ", hash = (SELECT hash FROM audit_log WHERE seq = " + keep + ")")
                  .ok());
  broken("the newest entries were removed");
  EXPECT_EQ(this->verify()["firstBadSeq"], last - 1);
}

TYPED_TEST(AdminApiTest, AuditDetectsAGapAndReordering) {
  for (int i = 0; i < 4; ++i)
    ASSERT_EQ(this->admin().post("/v1/jobs", job_for("default")).status, 201);
  this->wait_anchored();
  // Two entries swapped: each still hashes, but no longer links to the one before.
  ASSERT_TRUE(exec_sql(this->store_url_, "UPDATE audit_log SET seq = -3 WHERE seq = 3").ok());
  ASSERT_TRUE(exec_sql(this->store_url_, "UPDATE audit_log SET seq = 3 WHERE seq = 4").ok());
  ASSERT_TRUE(exec_sql(this->store_url_, "UPDATE audit_log SET seq = 4 WHERE seq = -3").ok());
  json v = this->verify();
  EXPECT_FALSE(v.value("ok", true)) << v.dump();
  EXPECT_EQ(v["firstBadSeq"], 3) << v.dump();
  // A middle entry deleted.
  ASSERT_TRUE(exec_sql(this->store_url_, "DELETE FROM audit_log WHERE seq = 4").ok());
  v = this->verify();
  EXPECT_FALSE(v.value("ok", true)) << v.dump();
}

TYPED_TEST(AdminApiTest, AnEditedAnchorFileIsDetected) {
  ASSERT_EQ(this->admin().post("/v1/jobs", job_for("default")).status, 201);
  this->wait_anchored();
  const auto path = this->dir_.path() / "audit.anchor";
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::string lines = text.str();
  // One hex digit of the first line's hash changed, as someone covering an edit would.
  const auto at = lines.find(' ', 3) + 1;
  lines[at] = lines[at] == 'a' ? 'b' : 'a';
  in.close();
  std::ofstream(path, std::ios::trunc) << lines;
  const json v = this->verify();
  EXPECT_FALSE(v.value("ok", true)) << v.dump();
  EXPECT_NE(v.value("problem", "").find("MAC does not match"), std::string::npos) << v.dump();
}

// corrald's log says what happened where people look: with --log-format json each line is
// one JSON object, and placements, drains (with the jobs they stop) and audited actions (with the
// token's name) are there; a token's secret and a job's secretEnv value never are.
TYPED_TEST(AdminApiTest, TheLogHasPlacementsDrainsAndActionsAsJsonLines) {
  this->server_->stop();
  this->server_->set_extra_args({"--log-format", "json", "--config", this->config_path()});
  ASSERT_TRUE(this->server_->start().ok());
  this->add_node("n1", 8);
  json spec = json::parse(job_for("default", 2));
  spec["secretEnv"] = {{"WANDB_API_KEY", "s3cr3t-in-the-log?"}};
  const auto submitted = this->admin().post("/v1/jobs", spec.dump());
  ASSERT_EQ(submitted.status, 201) << submitted.body;
  const std::string job = std::to_string(body(submitted)["id"].template get<int>());
  ASSERT_TRUE(eventually([&] {
    return body(this->admin().get("/v1/jobs/" + job)).value("phase", "") == "launching";
  }));
  ASSERT_EQ(this->admin().post("/v1/nodes/n1/drain", R"({"reason":"xid 79"})").status, 200);
  const auto path = this->dir_.path() / "corrald.log";
  std::set<std::string> events;
  std::vector<json> lines;
  ASSERT_TRUE(eventually([&] {
    std::ifstream in(path);
    std::string line;
    events.clear();
    lines.clear();
    while (std::getline(in, line)) {
      if (!line.starts_with("{")) continue;  // the sanitizers' and libraries' own lines
      lines.push_back(json::parse(line));
      events.insert(lines.back().value("event", ""));
    }
    return events.contains("placement") && events.contains("drain") && events.contains("action");
  })) << "events seen: "
      << json(events).dump();
  bool drain_action = false;
  for (const json& l : lines) {
    EXPECT_TRUE(l.contains("ts") && l.contains("level")) << l.dump();
    if (l.value("event", "") == "placement" && l.value("job", std::int64_t{0}) == std::stoi(job)) {
      EXPECT_EQ(l.value("tenant", ""), "default") << l.dump();
    }
    if (l.value("event", "") == "drain") {
      EXPECT_EQ(l.value("node", ""), "n1") << l.dump();
      EXPECT_EQ(l.value("jobs", std::int64_t{-1}), 1) << "the drain stops the job it placed";
    }
    if (l.value("event", "") == "action" && l.value("action", "") == "node.drain") {
      drain_action = true;
      EXPECT_NE(l.value("actor", "").find("token:bootstrap-admin"), std::string::npos) << l.dump();
    }
  }
  EXPECT_TRUE(drain_action) << "no audited drain in the log";
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str().find("s3cr3t-in-the-log?"), std::string::npos);
  EXPECT_EQ(text.str().find(this->admin_token_), std::string::npos);
}

// `curl -X POST .../undrain` sends neither a body nor Content-Length. Such a message has no
// body (RFC 9112 section 6.3): it is answered at once, not read until the client closes a
// keep-alive connection it never closes (which timed out as 400 malformed request).
TYPED_TEST(AdminApiTest, APostWithoutContentLengthHasNoBody) {
  this->add_node("n1", 8);
  ASSERT_EQ(this->admin().post("/v1/nodes/n1/cordon", "").status, 200);
  const std::string& addr = this->server_->addr();
  const auto colon = addr.rfind(':');
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  timeval wait{.tv_sec = 30, .tv_usec = 0};  // a failure, not a hang, if it is never answered
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<std::uint16_t>(std::stoi(addr.substr(colon + 1))));
  ASSERT_EQ(::inet_pton(AF_INET, addr.substr(0, colon).c_str(), &to.sin_addr), 1);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to), 0);
  const std::string request =
      "POST /v1/nodes/n1/undrain HTTP/1.1\r\nHost: corrald\r\n"
      "Authorization: Bearer " +
      this->admin_token_ + "\r\nConnection: keep-alive\r\n\r\n";
  ASSERT_EQ(::send(fd, request.data(), request.size(), 0), static_cast<ssize_t>(request.size()));
  char buf[4096];
  const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
  ::close(fd);
  ASSERT_GT(n, 0);
  const std::string answer(buf, static_cast<std::size_t>(n));
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 200")) << answer;
  EXPECT_EQ(body(this->admin().get("/v1/nodes/n1")).value("admin", ""), "active");
}

}  // namespace
}  // namespace corral::testing
