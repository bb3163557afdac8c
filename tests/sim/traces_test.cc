#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "sim_fixtures.h"
#include <gtest/gtest.h>

#include "sim/traces/normalized.h"
#include "sim/traces/synthetic.h"

namespace corral::sim {
namespace {

constexpr const char* kHeader = "job_id,tenant,submit_time_s,gpus,duration_s,gpu_type,status\n";

TEST(NormalizedCsv, ParsesRowsAndSortsBySubmitTime) {
  const std::string text = std::string(kHeader) +
                           "b,t2,10.5,4,100,,Pass\r\n"
                           "a,t1,0,1,0.25,V100,\n"
                           "\n";
  auto w = parse_normalized_csv(text, "x.csv");
  ASSERT_TRUE(w.ok()) << w.status().to_string();
  ASSERT_EQ(w->jobs.size(), 2u);
  EXPECT_EQ(w->jobs[0].name, "a");
  EXPECT_EQ(w->jobs[0].duration_ms, 250);
  EXPECT_EQ(w->jobs[0].gpu_type, "V100");
  EXPECT_EQ(w->jobs[1].submit_ms, 10'500);
  EXPECT_EQ(w->jobs[1].gpus, 4);
  EXPECT_EQ(w->jobs[1].status, "Pass");
}

TEST(NormalizedCsv, BadRowsNameFileLineAndColumn) {
  struct Case {
    std::string name, body, field, message;
  };
  const std::vector<Case> cases = {
      {"zero gpus", "a,t,0,0,10,,\n", "x.csv:2: column gpus", "must be an integer >= 1, got '0'"},
      {"text gpus", "a,t,0,two,10,,\n", "x.csv:2: column gpus", "got 'two'"},
      {"negative submit", "a,t,1,1,1,,\nb,t,-5,1,10,,\n", "x.csv:3: column submit_time_s",
       "must be a number of seconds >= 0, got '-5'"},
      {"bad duration", "a,t,0,1,1h,,\n", "x.csv:2: column duration_s", "got '1h'"},
      {"no id", ",t,0,1,10,,\n", "x.csv:2: column job_id", "must not be empty"},
      {"short row", "a,t,0,1\n", "x.csv:2", "expected 7 columns, got 4"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto w = parse_normalized_csv(std::string(kHeader) + c.body, "x.csv");
    ASSERT_FALSE(w.ok());
    EXPECT_EQ(w.status().field(), c.field);
    EXPECT_NE(w.status().message().find(c.message), std::string::npos) << w.status().to_string();
  }
  auto header = parse_normalized_csv("id,tenant\n", "x.csv");
  ASSERT_FALSE(header.ok());
  EXPECT_EQ(header.status().field(), "x.csv:1");
  EXPECT_FALSE(parse_normalized_csv("", "x.csv").ok());
  EXPECT_EQ(load_normalized_csv("/nonexistent.csv").status().code(), core::StatusCode::kNotFound);
}

TEST(NormalizedCsv, LoadsTheSharedTiresiasSample) {
  const std::string path = testing::shared_dir() + "/traces/tiresias-sample/normalized.csv";
  auto w = load_normalized_csv(path);
  if (!w.ok() && w.status().code() == core::StatusCode::kNotFound) {
    GTEST_SKIP() << "shared traces not present: no " << path << " (set CORRAL_SHARED)";
  }
  ASSERT_TRUE(w.ok()) << w.status().to_string();
  EXPECT_EQ(w->jobs.size(), 60u);
  EXPECT_EQ(w->jobs[0].tenant.value, "default");  // the sample has no tenants
}

TEST(Synthetic, SameSeedSameJobsAndOfferedLoadMatches) {
  SyntheticSpec spec{.jobs = 20'000, .tenants = 5, .seed = 11, .load_factor = 0.5};
  const Workload a = generate_synthetic(spec, 256);
  const Workload b = generate_synthetic(spec, 256);
  ASSERT_EQ(a.jobs.size(), 20'000u);
  double gpu_s = 0;
  std::map<std::int32_t, int> sizes;
  for (std::size_t i = 0; i < a.jobs.size(); ++i) {
    EXPECT_EQ(a.jobs[i].submit_ms, b.jobs[i].submit_ms);
    EXPECT_EQ(a.jobs[i].duration_ms, b.jobs[i].duration_ms);
    EXPECT_EQ(a.jobs[i].tenant, b.jobs[i].tenant);
    ASSERT_GE(a.jobs[i].duration_ms, 60'000);
    if (i > 0) {
      ASSERT_GE(a.jobs[i].submit_ms, a.jobs[i - 1].submit_ms);
    }
    gpu_s += a.jobs[i].gpus * static_cast<double>(a.jobs[i].duration_ms) / 1000.0;
    sizes[a.jobs[i].gpus]++;
  }
  // Offered load = GPU-seconds / span / GPUs, within Poisson noise of the target.
  const double span_s = static_cast<double>(a.jobs.back().submit_ms) / 1000.0;
  EXPECT_NEAR(gpu_s / span_s / 256, 0.5, 0.03);
  EXPECT_NEAR(sizes[1] / 20'000.0, 0.70, 0.02);
  EXPECT_NE(generate_synthetic({.jobs = 10, .seed = 12}, 8).jobs[0].duration_ms,
            generate_synthetic({.jobs = 10, .seed = 11}, 8).jobs[0].duration_ms);
}

TEST(Synthetic, SpecErrorsNameTheField) {
  auto ok = parse_synthetic_spec("jobs: 5\nsizes: {1: 1, 8: 0.5}\n", "s.yaml");
  ASSERT_TRUE(ok.ok()) << ok.status().to_string();
  EXPECT_EQ(ok->jobs, 5);
  EXPECT_EQ(ok->sizes.size(), 2u);
  auto bad = parse_synthetic_spec("load_factor: -1\n", "s.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().field(), "load_factor");
  EXPECT_EQ(parse_synthetic_spec("jobz: 5\n", "s.yaml").status().field(), "jobz");
  EXPECT_EQ(parse_synthetic_spec("sizes: {0: 1}\n", "s.yaml").status().field(), "sizes.0");
}

// Groups: one heavy tenant with a third of the jobs and long gangs beside six light ones
// with short 1-GPU jobs. Each group's tenants are numbered on from the last group's, its
// sizes and durations are its own, and the rest comes from the top level.
TEST(Synthetic, GroupsGiveEachTenantItsOwnMix) {
  auto spec = parse_synthetic_spec(
      "jobs: 30000\nseed: 4\nduration_sigma: 0.5\ngroups:\n"
      "  - {tenants: 1, jobs_share: 1, sizes: {8: 1}, duration_median_s: 36000}\n"
      "  - {tenants: 6, jobs_share: 2, sizes: {1: 1}, duration_median_s: 600}\n",
      "g.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status().to_string();
  ASSERT_EQ(spec->groups.size(), 2u);
  EXPECT_DOUBLE_EQ(spec->groups[1].duration_sigma, 0.5);  // from the top level
  const Workload w = generate_synthetic(*spec, 128);
  std::map<std::string, int> jobs;
  std::map<std::string, double> gpu_s;
  for (const TraceJob& j : w.jobs) {
    ++jobs[j.tenant.value];
    gpu_s[j.tenant.value] += j.gpus * static_cast<double>(j.duration_ms) / 1000.0;
    EXPECT_EQ(j.gpus, j.tenant.value == "t00" ? 8 : 1) << j.tenant.value;
  }
  ASSERT_EQ(jobs.size(), 7u);  // t00 .. t06
  EXPECT_NEAR(jobs["t00"] / 30'000.0, 1.0 / 3, 0.02);
  double light = 0;
  for (const auto& [tenant, s] : gpu_s) light += tenant == "t00" ? 0 : s;
  EXPECT_GT(gpu_s["t00"], 20 * light);  // the heavy tenant has nearly all the demand
}

TEST(Synthetic, GroupErrorsNameTheirPath) {
  EXPECT_EQ(parse_synthetic_spec("groups: []\n", "s.yaml").status().field(), "groups");
  EXPECT_EQ(parse_synthetic_spec("groups: [{tenants: 0}]\n", "s.yaml").status().field(),
            "groups[0].tenants");
  EXPECT_EQ(parse_synthetic_spec("groups: [{jobs: 1}]\n", "s.yaml").status().field(),
            "groups[0].jobs");
  EXPECT_EQ(parse_synthetic_spec("groups: [{}, {sizes: {1: -1}}]\n", "s.yaml").status().field(),
            "groups[1].sizes.1");
}

}  // namespace
}  // namespace corral::sim
