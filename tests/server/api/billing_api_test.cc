// The ledger in a whole corrald (InProcessCorrald on a manual clock, a scripted agent):
// one-minute accrual periods are billed as the clock crosses them, GET /v1/chargeback adds
// up to the ledger with attribution beside it, a price change applies from its date on,
// a job's view carries its cost so far, members see only their own tenant, and bad
// parameters answer 400 naming the parameter.
#include <chrono>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

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
  virtual const char* config() const { return kBillingConfig; }

  void SetUp() override {
    auto started = InProcessCorrald::start(dir_.path(), clock_, config());
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

// $1 an H100-hour: a GPU-minute is $0.016667 and 0.0167 GPU-hours, so three tenants'
// minutes shown row by row would read 3 x 0.02 beside a total of 0.05.
constexpr const char* kOddPriceConfig =
    R"(scheduler: {tickMs: 20, batchWindowMs: 2, minRuntimeMs: 0}
tenants:
  nlp: {quotas: {H100: {guaranteed: 1}}}
  speech: {quotas: {H100: {guaranteed: 1}}}
  vision: {quotas: {H100: {guaranteed: 1}}}
billing:
  currency: EUR
  periodSeconds: 60
  graceSeconds: 0
  attribution: proportional
  prices:
    - {gpuType: H100, perGpuHour: 1}
)";

class OddPriceBillingApiTest : public BillingApiTest {
 protected:
  const char* config() const override { return kOddPriceConfig; }
};

std::vector<std::string> split(const std::string& line, char sep) {
  std::vector<std::string> out;
  std::string cell;
  std::istringstream in(line);
  while (std::getline(in, cell, sep)) out.push_back(cell);
  if (!line.empty() && line.back() == sep) out.push_back("");
  return out;
}

// "12.34" as 1234 (hundredths).
std::int64_t hundredths(const std::string& cell) {
  const bool negative = !cell.empty() && cell[0] == '-';
  const std::string digits = negative ? cell.substr(1) : cell;
  const auto dot = digits.find('.');
  EXPECT_NE(dot, std::string::npos) << cell;
  if (dot == std::string::npos) return 0;
  const std::int64_t n =
      std::stoll(digits.substr(0, dot)) * 100 + std::stoll(digits.substr(dot + 1));
  return negative ? -n : n;
}

// Issue 38, item 11: the bill's CSV (what `corral cost -o csv` prints and the dashboard
// exports) says its currency and window, is the JSON answer's statement cell for cell,
// and every column's rows add up to its TOTAL row, attributed GPU-hours included.
TEST_F(OddPriceBillingApiTest, TheBillsRowsAddUpToItsTotalInOneSchema) {
  FakeAgent n1 = agent("n1");
  std::vector<std::int64_t> jobs;
  for (const char* t : {"nlp", "speech", "vision"}) {
    jobs.push_back(submit({{"tenant", t}, {"resources", {{"gpus", 1}}}}));
  }
  for (const auto id : jobs) ASSERT_TRUE(wait_phase(id, "launching"));
  n1.round();
  const std::int64_t end = kBillingStartMs + 2 * kMinuteMs;
  run_until(n1, end);
  const std::string window =
      "from=" + std::to_string(kBillingStartMs) + "&to=" + std::to_string(end);
  const auto csv = admin().get("/v1/chargeback?format=csv&" + window);
  ASSERT_EQ(csv.status, 200) << csv.body;
  const auto type = csv.headers.find("Content-Type");
  ASSERT_NE(type, csv.headers.end());
  EXPECT_NE(type->second.find("text/csv"), std::string::npos) << type->second;
  std::vector<std::vector<std::string>> lines;
  std::istringstream in(csv.body);
  for (std::string line; std::getline(in, line);) {
    ASSERT_FALSE(line.empty());
    ASSERT_EQ(line.back(), '\r') << "CRLF lines";
    line.pop_back();
    lines.push_back(lines.empty() ? std::vector<std::string>{line} : split(line, ','));
  }
  ASSERT_GE(lines.size(), 6u) << csv.body;  // preamble, header, 3 tenants, unattributed, TOTAL
  EXPECT_EQ(
      lines[0][0].rfind(
          "# currency=EUR,from=2026-05-28T20:26:00Z,to=2026-05-28T20:28:00Z,accruedUntil=", 0),
      0u)
      << lines[0][0];
  const std::vector<std::string>& header = lines[1];
  EXPECT_EQ(header[0], "tenant");
  EXPECT_EQ(header[1], "gpu_hours");
  EXPECT_EQ(header.back(), "total_EUR");
  const json report = body(admin().get("/v1/chargeback?" + window));
  const json& statement = report["statement"];
  EXPECT_EQ(statement["preamble"], lines[0][0]);
  ASSERT_EQ(statement["rows"].size() + 2, lines.size());
  for (std::size_t r = 0; r < statement["rows"].size(); ++r) {
    EXPECT_EQ(statement["rows"][r].get<std::vector<std::string>>(), lines[r + 2]) << "row " << r;
  }
  const std::vector<std::string>& total = lines.back();
  EXPECT_EQ(total[0], "TOTAL");
  std::map<std::string, std::size_t> column;
  for (std::size_t c = 0; c < header.size(); ++c) column[header[c]] = c;
  for (std::size_t c = 1; c < header.size(); ++c) {
    std::int64_t sum = 0;
    for (std::size_t r = 2; r + 1 < lines.size(); ++r) sum += hundredths(lines[r][c]);
    EXPECT_EQ(sum, hundredths(total[c])) << header[c] << " in\n" << csv.body;
  }
  // The total is the ledger's, rounded once: 8 GPUs for 2 minutes, a GPU-minute at
  // 16,667 micro-euros.
  EXPECT_EQ(hundredths(total[column.at("gpu_hours")]), (8 * 2 * kMinuteMs + 18'000) / 36'000);
  EXPECT_EQ(report["total"]["amountMicros"], 8 * 2 * 16'667);
  EXPECT_EQ(hundredths(total[column.at("total_EUR")]), (8 * 2 * 16'667 + 5'000) / 10'000);
  // Attributed idle time shows in GPU-hours beside its money, on the tenants that pay it
  // and off the unattributed row.
  for (std::size_t r = 2; r + 2 < lines.size(); ++r) {
    EXPECT_GT(hundredths(lines[r][column.at("attributed_gpu_hours")]), 0) << lines[r][0];
    EXPECT_GT(hundredths(lines[r][column.at("attributed_EUR")]), 0) << lines[r][0];
  }
  const std::vector<std::string>& unattributed = lines[lines.size() - 2];
  EXPECT_EQ(unattributed[0], "(unattributed)");
  EXPECT_LT(hundredths(unattributed[column.at("attributed_gpu_hours")]), 0);
  EXPECT_EQ(hundredths(total[column.at("attributed_gpu_hours")]), 0);
  // A bad format is refused, naming the parameter.
  const auto bad = admin().get("/v1/chargeback?format=xlsx");
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(body(bad)["error"]["field"], "format");
}

}  // namespace
}  // namespace corral::testing
