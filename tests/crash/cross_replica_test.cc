// What must hold across replicas on one PostgreSQL (issue 38, docs/scale-out.md), each
// checked with two corrald replicas, a and b:
//   - a tenant's submit rate is one bucket in the database: sent to both replicas, a
//     tenant gets its burst once, not once per replica;
//   - a placement that another shard's concurrent placement takes past the tenant's
//     guarantee is marked borrowed at commit;
//   - a submission to tenant T and a write making T a parent never both succeed, so no
//     parent tenant ever holds a job (only a leaf runs jobs).
// The races are made, not hoped for: the test holds a row lock in its own transaction,
// as a slow third replica would, so that both sides have read before either commits.
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "testing/corrald_process.h"
#include "testing/store_fixture.h"

namespace corral::testing {
namespace {

using nlohmann::json;
using testing::body;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

std::string job(const std::string& tenant, int gpus, const std::string& region = "") {
  json resources = {{"gpus", gpus}, {"gpuTypes", {"H100"}}};
  if (!region.empty()) resources["region"] = region;
  return json{{"name", "j"}, {"tenant", tenant}, {"resources", resources}, {"command", {"true"}}}
      .dump();
}

// A transaction of the test's own that holds what `lock` takes until release() (or the
// object dies): the slow third party that lines a race up.
class HeldLock {
 public:
  HeldLock(store::Store& store, std::function<core::Status(store::Tx&)> lock)
      : thread_([this, &store, lock = std::move(lock)] {
          status_ = store.transact([&](store::Tx& tx) {
            CORRAL_RETURN_IF_ERROR(lock(tx));
            std::unique_lock l(mu_);
            held_ = true;
            cv_.notify_all();
            // PostgreSQL ends a session idle in a transaction for 5 s: a read each
            // second keeps it busy, for at most a minute.
            for (int s = 0; s < 60 && !released_; ++s) {
              if (cv_.wait_for(l, 1s, [&] { return released_; })) break;
              CORRAL_RETURN_IF_ERROR(tx.tenants().list_tenants().status());
            }
            return core::Status();
          });
          std::lock_guard l(mu_);
          held_ = true;  // (a failed lock wakes the waiter too)
          cv_.notify_all();
        }) {
    std::unique_lock l(mu_);
    cv_.wait(l, [&] { return held_; });
  }
  ~HeldLock() { release(); }
  void release() {
    {
      std::lock_guard l(mu_);
      released_ = true;
      cv_.notify_all();
    }
    if (thread_.joinable()) thread_.join();
  }
  const core::Status& status() const { return status_; }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool held_ = false, released_ = false;
  core::Status status_;
  std::thread thread_;
};

class CrossReplica : public ::testing::Test {
 protected:
  void SetUp() override {
    store_url_or_skip<PostgresFactory>(url_);  // PostgreSQL only: replicas share one
  }
  void TearDown() override {
    for (auto& r : replicas_) r->stop();
  }

  // Replicas a and b (and c when `three`) on the test's database, with one config (and
  // a's key file).
  void start_replicas(const std::string& extra, bool three = false) {
    const fs::path config = dir_.path() / "corrald.yaml";
    // Long leases: a commit that waits on the test's lock (for up to 5 s) holds up its
    // replica's lease renewals, and must not lose its shard meanwhile.
    std::ofstream(config) << "scheduler: {minRuntimeMs: 0, tickMs: 100}\n"
                             "replica: {leaseMs: 9000}\n"
                          << extra;
    for (const std::string name : {"a", "b", "c"}) {
      if (name == "c" && !three) break;
      replicas_.push_back(std::make_unique<CorraldProcess>(dir_.path() / name, url_));
      replicas_.back()->set_extra_args({"--config", config.string(), "--replica", name});
      if (name != "a") {
        fs::create_directories(dir_.path() / name);
        fs::copy_file(dir_.path() / "a" / "corrald.key", dir_.path() / name / "corrald.key");
      }
      const auto s = replicas_.back()->start();
      ASSERT_TRUE(s.ok()) << s.to_string();
    }
    token_ = replicas_[0]->admin_token();
  }
  CorraldProcess& a() { return *replicas_[0]; }
  CorraldProcess& b() { return *replicas_[1]; }
  void put_tenant(const std::string& name, const std::string& config) {
    const auto r = a().client(token_).put("/v1/tenants/" + name, config);
    ASSERT_TRUE(r.status == 200 || r.status == 201) << r.body;
  }
  // The test's own connection to the replicas' database.
  std::unique_ptr<store::Store> own_store() {
    auto s = store::open_postgres_store(url_);
    EXPECT_TRUE(s.ok()) << s.status().to_string();
    return s.ok() ? std::move(*s) : nullptr;
  }

  // How many sessions on the test's database wait on another's lock; -1 when unknown.
  int waiting_sessions() const {
    const auto n = query_sql(url_,
                             "SELECT count(*) FROM pg_stat_activity WHERE datname = "
                             "current_database() AND cardinality(pg_blocking_pids(pid)) > 0");
    return n.ok() ? std::stoi(*n) : -1;
  }

  TempDir dir_;
  std::string url_;
  std::string token_;
  std::vector<std::unique_ptr<CorraldProcess>> replicas_;
};

// The bucket holds 4 and refills one token per 100 s: 4 submissions in all are admitted,
// whichever replica they reach. (With a bucket per replica, 8 were: 4 through each.)
TEST_F(CrossReplica, ATenantsSubmitRateHoldsAcrossReplicas) {
  start_replicas("");
  put_tenant("tiny", R"({"submitRatePerSecond": 0.01, "submitBurst": 4})");
  auto via_a = a().client(token_), via_b = b().client(token_);
  int admitted = 0;
  for (int i = 0; i < 12; ++i) {
    const auto r = (i % 2 == 0 ? via_a : via_b).post("/v1/jobs", job("tiny", 1));
    if (r.status == 201) {
      ++admitted;
    } else {
      EXPECT_EQ(r.status, 429) << r.body;
    }
  }
  EXPECT_EQ(admitted, 4);
}

// Two shards (one region each, on two replicas' loops) place 8 H100 each for a tenant
// guaranteed 8: both cycles read the tenant holding nothing, so both decide "within the
// guarantee". The test holds the tenant's row as a recount does, so both commits wait,
// having read; released, the second to commit recounts, sees the first's 8, and marks
// its own placement borrowed. The invariant: a tenant's GPUs in placements marked
// guaranteed never pass its guarantee.
TEST_F(CrossReplica, APlacementThatAnotherShardTakesPastTheGuaranteeIsMarkedBorrowed) {
  // Three replicas for three leases (east, west, @controllers): one each once settled, so
  // east's and west's commits wait on two replicas' connections, where PostgreSQL shows
  // them. (With two, one replica held both and queued the second commit behind the first,
  // unseen.)
  start_replicas(
      "shards:\n"
      "  - {name: east, region: us-east}\n"
      "  - {name: west, region: eu-west}\n",
      /*three=*/true);
  put_tenant("t", R"({"quotas": {"H100": {"guaranteed": 8, "borrowLimit": 8}}})");
  auto admin = a().client(token_);
  for (const auto& [id, region] : {std::pair{"e1", "us-east"}, std::pair{"w1", "eu-west"}}) {
    const auto r = admin.post(
        "/v1/nodes",
        json{{"id", id}, {"gpuType", "H100"}, {"gpuCount", 8}, {"labels", {{"region", region}}}}
            .dump());
    ASSERT_TRUE(r.status == 200 || r.status == 201) << r.body;
  }
  // Until every replica holds one lease, live: a lease handed over during the race would
  // leave a shard without a loop.
  ASSERT_TRUE(eventually(
      [&] {
        std::map<std::string, std::string> holder;
        for (const auto& l : body(admin.get("/v1/shards")).value("shards", json::array())) {
          if (!l.value("live", false)) return false;
          holder[l.value("name", "")] = l.value("holder", "");
        }
        return holder.size() == 3 && holder["east"] != holder["west"] &&
               holder["east"] != holder["@controllers"] && holder["west"] != holder["@controllers"];
      },
      30s))
      << admin.get("/v1/shards").body;
  auto store = own_store();
  ASSERT_NE(store, nullptr);
  std::vector<std::int64_t> ids;
  {
    HeldLock held(*store, [](store::Tx& tx) {
      return tx.tenants().lock_tenants({core::TenantId("t")}, store::TenantLock::kRecount);
    });
    for (const auto& [via, region] : {std::pair{&a(), "us-east"}, std::pair{&b(), "eu-west"}}) {
      const auto r = via->client(token_).post("/v1/jobs", job("t", 8, region));
      ASSERT_EQ(r.status, 201) << r.body;
      ids.push_back(body(r).value("id", std::int64_t{0}));
    }
    // Both shards' cycles have read and decided once both commits wait on the tenant's
    // row (a cycle locks it only at commit). A sleep stood here and was once too short.
    ASSERT_TRUE(eventually([&] { return waiting_sessions() == 2; }, 5s));
    held.release();
    ASSERT_TRUE(held.status().ok()) << held.status().to_string();
  }
  int borrowed = 0;
  for (const auto id : ids) {
    const std::string path = "/v1/jobs/" + std::to_string(id);
    ASSERT_TRUE(eventually([&] { return body(admin.get(path))["allocation"].is_object(); }, 10s))
        << admin.get(path).body;
    borrowed += body(admin.get(path))["allocation"].value("borrowed", false) ? 1 : 0;
  }
  EXPECT_EQ(borrowed, 1) << "8 of the tenant's 16 GPUs are beyond its guarantee of 8";
  // And the race was run: the recount, not the decision, marked it.
  int total = 0;
  for (auto& r : replicas_) {
    auto c = r->client(token_);
    total += scrape_metric(c, "corral_sched_borrowed_at_commit_total");
  }
  EXPECT_EQ(total, 1);
}

// A submission to `t` through a, and a write through b making `t` the parent of `c`. The
// test holds t's submit bucket, so the submission waits inside its transaction, its leaf
// check done; the write comes meanwhile. The invariant: not both succeed (a parent tenant
// never holds a job: only leaves run jobs, and a cycle with a parent's job fails). Here
// the submission locked t first, so the write waits for it, sees its job and is refused.
TEST_F(CrossReplica, ASubmitAndAWriteMakingItsTenantAParentNeverBothSucceed) {
  start_replicas("");
  put_tenant("t", "{}");
  auto store = own_store();
  ASSERT_NE(store, nullptr);
  HttpReply submitted, parented;
  {
    HeldLock held(*store, [](store::Tx& tx) {
      return tx.tenants()
          .lock_submit_bucket(
              {.tenant = core::TenantId("t"), .tokens = 100, .as_of = core::time_from_ms(0)})
          .status();
    });
    std::thread submit([&] { submitted = a().client(token_).post("/v1/jobs", job("t", 1)); });
    // It has read t (a leaf) and waits on the bucket.
    const bool submit_waits = eventually([&] { return waiting_sessions() == 1; }, 10s);
    std::thread parent(
        [&] { parented = b().client(token_).put("/v1/tenants/c", R"({"parent": "t"})"); });
    // The write waits on t's row, which the submission holds.
    const bool write_waits = eventually([&] { return waiting_sessions() == 2; }, 10s);
    held.release();
    submit.join();
    parent.join();
    ASSERT_TRUE(held.status().ok()) << held.status().to_string();
    ASSERT_TRUE(submit_waits && write_waits) << "the race was not lined up";
  }
  EXPECT_FALSE(submitted.status == 201 && (parented.status == 200 || parented.status == 201))
      << "both succeeded: tenant t is a parent and holds a job";
  EXPECT_EQ(submitted.status, 201) << submitted.body;
  EXPECT_EQ(parented.status, 400) << parented.body;
  EXPECT_NE(parented.body.find("tenant t has unfinished jobs"), std::string::npos) << parented.body;
}

}  // namespace
}  // namespace corral::testing
