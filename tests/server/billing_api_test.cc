// The ledger in a whole corrald (InProcessCorrald on a manual clock, a scripted agent):
// one-minute accrual periods are billed as the clock crosses them, GET /v1/chargeback adds
// up to the ledger with attribution beside it, a price change applies from its date on,
// a job's view carries its cost so far, members see only their own tenant, and bad
// parameters answer 400 naming the parameter.
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
namespace {

using namespace std::chrono_literals;

constexpr std::int64_t kBillingStartMs = 1'779'999'960'000;  // 2026-05-28 20:26:00 UTC
constexpr std::int64_t kMinuteMs = 60'000;

// $3.60 an H100-hour (a micro-dollar a millisecond) until 20:28, then twice that.
constexpr const char* kBillingConfig = R"(scheduler: {tickMs: 20, batchWindowMs: 2, minRuntimeMs: 0}
tenants:
  nlp: {quotas: {H100: {guaranteed: 4, borrowLimit: 4}}}
  vision: {quotas: {H100: {guaranteed: 4, borrowLimit: 4}}}
billing:
  periodSeconds: 60
  graceSeconds: 0
  attribution: guarantee
  prices:
    - {gpuType: H100, perGpuHour: 3.6}
    - {gpuType: H100, perGpuHour: 7.2, from: "2026-05-28T20:28:00Z"}
)";

class BillingApiTest : public ::testing::Test, public ClusterCalls {
 protected:
  void SetUp() override {
    auto started = InProcessCorrald::start(dir_.path(), clock_, kBillingConfig);
    ASSERT_TRUE(started.ok()) << started.status().to_string();
    corrald_ = std::move(*started);
    connect(*corrald_);
  }

  std::string member(const std::string& tenant) {
    auto r = admin().post("/v1/tokens", json{{"role", "member"}, {"tenant", tenant}}.dump());
    EXPECT_EQ(r.status, 201) << r.body;
    return body(r).value("token", "");
  }

  // Advances the clock minute by minute to `until_ms`, the agent reporting every 20 s so
  // it is never lost, then waits until the ledger has accrued that far.
  void run_until(FakeAgent& agent, std::int64_t until_ms) {
    while (core::to_ms(clock_.now()) < until_ms) {
      clock_.advance(20s);
      agent.round();
    }
    ASSERT_TRUE(eventually([&] {
      return body(admin().get("/v1/chargeback")).value("accruedUntilMs", std::int64_t{0}) >=
             until_ms;
    }));
  }

  TempDir dir_;
  core::ManualClock clock_{core::time_from_ms(kBillingStartMs)};
  std::unique_ptr<InProcessCorrald> corrald_;
};

TEST_F(BillingApiTest, ChargebackIsTheLedgerAndPricesApplyFromTheirDate) {
  FakeAgent n1 = agent("n1");
  const auto nlp = submit({{"tenant", "nlp"}, {"resources", {{"gpus", 4}}}});
  const auto vision = submit({{"tenant", "vision"}, {"resources", {{"gpus", 2}}}});
  ASSERT_TRUE(wait_phase(nlp, "launching"));
  ASSERT_TRUE(wait_phase(vision, "launching"));
  n1.round();
  ASSERT_EQ(phase(nlp), "running");
  const std::int64_t end = kBillingStartMs + 4 * kMinuteMs;
  run_until(n1, end);

  const json report = body(admin().get("/v1/chargeback?from=" + std::to_string(kBillingStartMs) +
                                       "&to=" + std::to_string(end)));
  ASSERT_EQ(report["rows"].size(), 2u) << report.dump();
  // 8 GPUs for 4 minutes; the first two at 1 micro-dollar a ms, the last two at 2.
  const std::int64_t gpu_ms = 8 * 4 * kMinuteMs;
  EXPECT_EQ(report["total"]["gpuMs"], gpu_ms);
  EXPECT_EQ(report["total"]["amountMicros"], gpu_ms / 2 + gpu_ms);
  const json& nlp_row = report["rows"][0];
  const json& vision_row = report["rows"][1];
  EXPECT_EQ(nlp_row["tenant"], "nlp");
  EXPECT_EQ(nlp_row["charged"]["gpuMs"], 4 * 4 * kMinuteMs);
  EXPECT_EQ(nlp_row["charged"]["amountMicros"], 4 * 2 * kMinuteMs * 3);
  EXPECT_EQ(vision_row["charged"]["gpuMs"], 2 * 4 * kMinuteMs);
  // Guarantee attribution: nlp used its 4 guaranteed GPUs, vision left 2 of its 4 idle
  // and pays for 2 GPUs of the idle 2: all of the unattributed time.
  EXPECT_EQ(nlp_row["attributed"]["gpuMs"], 0);
  EXPECT_EQ(vision_row["attributed"]["gpuMs"], 2 * 4 * kMinuteMs);
  EXPECT_EQ(report["unattributed"]["gpuMs"], 0);
  // Charged, attributed and unattributed add up to the total.
  EXPECT_EQ(nlp_row["totalAmountMicros"].get<std::int64_t>() +
                vision_row["totalAmountMicros"].get<std::int64_t>() +
                report["unattributed"]["amountMicros"].get<std::int64_t>(),
            report["total"]["amountMicros"].get<std::int64_t>());
  // Without attribution, the idle GPUs stay with the operator.
  const json plain =
      body(admin().get("/v1/chargeback?attribution=none&from=" + std::to_string(kBillingStartMs) +
                       "&to=" + std::to_string(end)));
  EXPECT_EQ(plain["unattributed"]["gpuMs"], 2 * 4 * kMinuteMs);
  EXPECT_EQ(plain["rows"][1]["attributed"]["gpuMs"], 0);
  // By bucket: the agent reported no utilization, so held time is used.
  const json buckets =
      body(admin().get("/v1/chargeback?groupBy=bucket&attribution=none&from=" +
                       std::to_string(kBillingStartMs) + "&to=" + std::to_string(end)));
  for (const auto& row : buckets["rows"]) {
    const std::string b = row["bucket"];
    EXPECT_TRUE(b == "used" || b == "unallocated") << b;
  }
  // The job's view: its cost so far, ledger and the open minute together.
  clock_.advance(30s);
  const json cost = job(nlp)["cost"];
  EXPECT_EQ(cost["ledger"]["gpuMs"], 4 * 4 * kMinuteMs);
  EXPECT_EQ(cost["gpuMs"], 4 * 4 * kMinuteMs + 4 * 30'000);
  EXPECT_EQ(cost["currency"], "USD");
}

TEST_F(BillingApiTest, MembersSeeTheirOwnTenantOnly) {
  FakeAgent n1 = agent("n1");
  const auto nlp = submit({{"tenant", "nlp"}, {"resources", {{"gpus", 4}}}});
  const auto vision = submit({{"tenant", "vision"}, {"resources", {{"gpus", 2}}}});
  ASSERT_TRUE(wait_phase(vision, "launching"));
  n1.round();
  run_until(n1, kBillingStartMs + 2 * kMinuteMs);
  TestClient as_nlp(addr_, member("nlp"));
  for (const char* by : {"tenant", "job", "bucket", "day", "gpuType"}) {
    const json r = body(as_nlp.get(std::string("/v1/chargeback?groupBy=") + by));
    EXPECT_FALSE(r.contains("total")) << by;
    EXPECT_FALSE(r.contains("unattributed")) << by;
    std::int64_t ms = 0;
    for (const auto& row : r["rows"]) ms += row["charged"]["gpuMs"].get<std::int64_t>();
    EXPECT_EQ(ms, 4 * 2 * kMinuteMs) << by << ": only nlp's own GPU-time";
  }
  EXPECT_EQ(as_nlp.get("/v1/chargeback?tenant=vision").status, 403);
  EXPECT_EQ(as_nlp.get("/v1/jobs/" + std::to_string(vision)).status, 404);
  EXPECT_TRUE(body(as_nlp.get("/v1/jobs/" + std::to_string(nlp))).contains("cost"));
  EXPECT_EQ(body(admin().get("/v1/chargeback?tenant=vision"))["rows"].size(), 1u);
}

TEST_F(BillingApiTest, BadParametersAnswer400NamingTheParameter) {
  for (const auto& [query, field] : std::vector<std::pair<std::string, std::string>>{
           {"from=yesterday", "from"},
           {"to=2026-02-30", "to"},
           {"groupBy=rack", "groupBy"},
           {"attribution=fair", "attribution"},
           {"tenant=no%20such", "tenant"},
           {"from=2026-05-02&to=2026-05-01", "to"},
           {"from=2020-01-01&to=2026-05-01", "from"},
           {"limit=10", "limit"},
       }) {
    const auto r = admin().get("/v1/chargeback?" + query);
    EXPECT_EQ(r.status, 400) << query << ": " << r.body;
    EXPECT_EQ(body(r)["error"]["field"], field) << query << ": " << r.body;
  }
}

}  // namespace
}  // namespace corral::testing
