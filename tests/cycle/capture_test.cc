// The cycle file: every field survives a round trip exactly (seeded random snapshot
// inputs and configs, doubles by their bits), decide() on the decoded cycle gives the
// same bytes as on the original, errors name the JSON path, the committed sample still
// reads, and the YAML scheduler section sets every knob within its range.
//
// Each random case prints its seed on failure; CORRAL_SEED=<seed> replays that one.
#include "cycle/capture.h"

#include <bit>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "cycle/field_count.h"
#include "cycle/replay.h"
#include "cycle/scheduler_config.h"
#include "sched/decide.h"
#include "testing/field_diff.h"
#include "testing/fleet_builder.h"
#include "testing/random_fleet.h"

namespace corral::cycle {
namespace {

using nlohmann::json;
using testing::field_diff;
using testing::Rng;

std::vector<std::uint64_t> seeds(std::uint64_t base, int count) {
  if (const char* one = std::getenv("CORRAL_SEED")) return {std::strtoull(one, nullptr, 10)};
  std::vector<std::uint64_t> out;
  for (int i = 0; i < count; ++i) out.push_back(base + static_cast<std::uint64_t>(i));
  return out;
}

// Any double at all: subnormals, -0.0, infinities, NaN (one NaN: the file keeps that a
// value is NaN, not its payload bits).
double any_double(Rng& rng) {
  const double v = std::bit_cast<double>(rng.next());
  return std::isnan(v) ? std::numeric_limits<double>::quiet_NaN() : v;
}

// A double that is valid where the scheduler wants a positive number, with a full
// mantissa (0.1-like values that have no short decimal form).
double positive_double(Rng& rng, double lo, double hi) {
  const double unit = static_cast<double>(rng.next() >> 11) * 0x1.0p-53;
  return lo + unit * (hi - lo);
}

// Every decide() knob away from its default, within the ranges the reader accepts.
sched::SchedulerConfig random_config(Rng& rng) {
  sched::SchedulerConfig c;
  c.order = static_cast<sched::QueueOrder>(rng.uniform(0, 2));
  c.usage_half_life = core::Duration(rng.uniform(1'000, 30LL * 86'400'000));
  c.topology_scoring = rng.chance(0.5);
  c.preemption.enabled = rng.chance(0.7);
  c.preemption.min_runtime = core::Duration(rng.uniform(0, 3'600'000));
  c.preemption.max_preemptions_per_job = static_cast<std::int32_t>(rng.uniform(0, 5));
  c.preemption.grace = core::Duration(rng.uniform(0, 600'000));
  c.preemption.max_searches_per_cycle = static_cast<std::int32_t>(rng.uniform(0, 100));
  c.preemption.min_runtime_by_tier.clear();
  for (std::int32_t tier = 0; tier <= 2; ++tier) {
    if (rng.chance(0.5))
      c.preemption.min_runtime_by_tier[tier] = core::Duration(rng.uniform(0, 3'600'000));
  }
  c.backfill = rng.chance(0.5);
  c.starvation_age = core::Duration(rng.uniform(0, 86'400'000));
  c.elastic_growth = rng.chance(0.5);
  c.share_placement = static_cast<sched::SharePlacement>(rng.uniform(0, 3));
  c.las_thresholds_gpu_seconds.clear();
  for (auto n = rng.uniform(0, 4); n > 0; --n) {
    c.las_thresholds_gpu_seconds.push_back(positive_double(rng, 0, 1e6));
  }
  return c;
}

// A random fleet and workload (tests/testing/random_fleet.h) with the fields the
// generator leaves at their defaults filled too, so every field is exercised.
sched::SnapshotInput random_input(Rng& rng) {
  const auto nodes = static_cast<std::int32_t>(rng.uniform(4, 40));
  const auto leaves = static_cast<std::int32_t>(rng.uniform(1, std::min<std::int64_t>(nodes, 6)));
  testing::FleetShape shape{.nodes = nodes,
                            .gpu_types = static_cast<std::int32_t>(rng.uniform(1, 6)),
                            .leaves = leaves,
                            .spines = static_cast<std::int32_t>(rng.uniform(1, leaves)),
                            .tenants = static_cast<std::int32_t>(rng.uniform(1, 6)),
                            .org_tenants = static_cast<std::int32_t>(rng.uniform(0, 2)),
                            .nvl_rack_fraction = rng.chance(0.3) ? 0.25 : 0.0,
                            .reservations = static_cast<std::int32_t>(rng.uniform(0, 3)),
                            .regions = static_cast<std::int32_t>(rng.uniform(1, 3))};
  testing::WorkloadShape work{.pending = static_cast<std::int32_t>(rng.uniform(0, 50)),
                              .running = static_cast<std::int32_t>(rng.uniform(0, 30)),
                              .reservation_fraction = 0.2,
                              .stopping_fraction = 0.1,
                              .speed_fraction = 0.3,
                              .region_fraction = 0.3};
  sched::SnapshotInput in = testing::random_workload(rng, testing::random_fleet(rng, shape), work);
  for (core::GpuType& t : in.gpu_types) t.usage_factor = positive_double(rng, 0.1, 4);
  for (core::Tenant& t : in.tenants) {
    t.weight = positive_double(rng, 0.01, 8);
    if (rng.chance(0.5)) t.default_quota = {.guaranteed_milli = rng.uniform(0, 16'000)};
  }
  for (auto& [tenant, usage] : in.usage) usage = positive_double(rng, 0, 1e9);
  // Run-time estimates, of every basis.
  const auto estimate = [&](sched::JobRequest& r) {
    const auto basis = static_cast<sched::EstimateBasis>(rng.uniform(0, 2));
    if (basis == sched::EstimateBasis::kMaxRuntime) return;
    r.estimate = {.runtime = core::Duration(rng.uniform(60'000, 86'400'000)),
                  .basis = basis,
                  .runs = basis == sched::EstimateBasis::kHistory
                              ? static_cast<std::int32_t>(rng.uniform(1, 20))
                              : 0};
  };
  for (sched::RunningJob& r : in.running) {
    r.attained_gpu_seconds = positive_double(rng, 0, 1e7);
    estimate(r.request);
  }
  for (sched::PendingJob& p : in.pending) estimate(p.request);
  for (sched::PendingJob& p : in.pending) {
    p.attempt = static_cast<std::int32_t>(rng.uniform(0, 4));
    p.preemptions = static_cast<std::int32_t>(rng.uniform(0, p.attempt));
    p.attained_gpu_seconds = p.attempt > 0 ? positive_double(rng, 0, 1e7) : 0;
    if (p.request.elastic && rng.chance(0.5)) {
      p.request.elastic->step = core::ElasticStep::kPowerOfTwo;
    }
    // Requeued by a resize, at its largest size (corrald caps the range at the target).
    if (p.request.elastic && p.attempt > 0 && rng.chance(0.5)) {
      p.resize_target = p.request.elastic->max_gpus;
    }
    // A share of one GPU.
    if (!p.request.elastic && rng.chance(0.2)) {
      p.request.gpus = static_cast<std::int32_t>(rng.uniform(1, 2));
      p.request.gpus_per_node = 0;
      p.request.topology = {};
      p.request.gpu_milli = static_cast<std::int32_t>(rng.uniform(1, 999));
      p.request.gpu_memory_mib = rng.uniform(0, 40'960);
    }
  }
  return in;
}

// With `decide`, the capture's decisions are decide()'s on it (empty when the random
// input is not a valid snapshot); without, an arbitrary string with escapes in it.
CapturedCycle random_cycle(Rng& rng, bool decide) {
  CapturedCycle c{.input = random_input(rng),
                  .config = random_config(rng),
                  .now = core::time_from_ms(rng.uniform(0, 4 * 3'600'000)),
                  .source = "corrald shard \"default\" epoch " + std::to_string(rng.uniform(1, 9)) +
                            " cycle " + std::to_string(rng.uniform(1, 99'999)) + " \xc3\xa9\n"};
  if (!decide) {
    c.decisions_json = "{\"pending\":[{\"reason\":\"a \\\"quoted\\\" reason\\n\"}]}";
    return c;
  }
  auto snapshot = sched::build_snapshot(c.input);
  if (snapshot.ok()) c.decisions_json = sched::to_json(sched::decide(*snapshot, c.config, c.now));
  return c;
}

CapturedCycle round_trip(const CapturedCycle& c) {
  auto parsed = parse_captured_cycle(to_json(c));
  EXPECT_TRUE(parsed.ok()) << parsed.status().to_string();
  return parsed.ok() ? std::move(*parsed) : CapturedCycle{};
}

TEST(FieldCount, CountsOwnFieldsNotTheirFields) {
  struct Inner {
    int a = 0;
    int b = 0;
  };
  struct Outer {
    Inner inner;
    std::optional<std::string> name;
    std::vector<Inner> items;
    std::map<std::string, double> m;
    core::TenantId id;
    core::Duration d{0};
  };
  static_assert(field_count<Inner>() == 2);
  static_assert(field_count<Outer>() == 6);
  static_assert(field_count<sched::RunningJob>() == 9);
}

TEST(CaptureRoundTrip, EveryFieldOfRandomCyclesSurvivesExactly) {
  for (std::uint64_t seed : seeds(1, 100)) {
    SCOPED_TRACE("CORRAL_SEED=" + std::to_string(seed));
    Rng rng(seed);
    const CapturedCycle original = random_cycle(rng, /*decide=*/false);
    const CapturedCycle decoded = round_trip(original);
    const auto diff = field_diff(original, decoded);
    ASSERT_FALSE(diff) << *diff;
    EXPECT_EQ(to_json(decoded), to_json(original));
  }
}

TEST(CaptureRoundTrip, DoublesKeepTheirBits) {
  Rng rng(7);
  CapturedCycle c;
  const std::vector<double> special = {0.1,
                                       1.0 / 3.0,
                                       -0.0,
                                       5e-324,
                                       2.2250738585072009e-308,
                                       std::numeric_limits<double>::max(),
                                       std::numeric_limits<double>::lowest(),
                                       9007199254740993.0,
                                       std::numeric_limits<double>::quiet_NaN(),
                                       std::numeric_limits<double>::infinity(),
                                       -std::numeric_limits<double>::infinity()};
  std::vector<double> values = special;
  for (int i = 0; i < 2000; ++i) values.push_back(any_double(rng));
  for (std::size_t i = 0; i < values.size(); ++i) {
    c.input.usage[core::TenantId("t" + std::to_string(i))] = values[i];
    c.input.running.push_back({.request = {.id = core::JobId(static_cast<std::int64_t>(i))},
                               .attained_gpu_seconds = values[i]});
  }
  c.input.gpu_types.push_back({.id = core::GpuTypeId("X"), .usage_factor = 0.1 + 0.2});
  c.input.tenants.push_back({.id = core::TenantId("t"), .weight = 1e-300});
  const auto diff = field_diff(c, round_trip(c));
  EXPECT_FALSE(diff) << *diff;
}

TEST(CaptureRoundTrip, DecideOnTheDecodedCycleGivesTheSameBytes) {
  int decided = 0;
  for (std::uint64_t seed : seeds(10'000, 60)) {
    SCOPED_TRACE("CORRAL_SEED=" + std::to_string(seed));
    Rng rng(seed);
    const CapturedCycle original = random_cycle(rng, /*decide=*/true);
    if (original.decisions_json.empty()) continue;  // the generator made an invalid fleet
    ++decided;
    const CapturedCycle decoded = round_trip(original);
    auto replayed = replay_decisions(decoded, decoded.config);
    ASSERT_TRUE(replayed.ok()) << replayed.status().to_string();
    const auto at = first_difference(original.decisions_json, *replayed);
    ASSERT_FALSE(at) << "first difference at byte " << *at << "\n" << original.decisions_json;
  }
  if (std::getenv("CORRAL_SEED") == nullptr) {
    EXPECT_GT(decided, 55);
  }
}

// A region-bound job's region is in the file, and the replayed cycle keeps it there: on
// the fleet's second region, though the first has room too.
TEST(CaptureRoundTrip, ARegionBoundJobReplaysInItsRegion) {
  const sched::SnapshotInput in = testing::FleetBuilder()
                                      .dgx("n1", "H100", {.region = "us-east"})
                                      .dgx("n2", "H100", {.region = "eu-west"})
                                      .pending(testing::JobBuilder(1).gpus(8).region("eu-west"))
                                      .input();
  CapturedCycle c{.input = in, .now = core::time_from_ms(1000)};
  auto snapshot = sched::build_snapshot(c.input);
  ASSERT_TRUE(snapshot.ok());
  c.decisions_json = sched::to_json(sched::decide(*snapshot, c.config, c.now));
  EXPECT_EQ(json::parse(to_json(c))["input"]["pending"][0]["request"]["region"], "eu-west");
  const CapturedCycle decoded = round_trip(c);
  EXPECT_EQ(decoded.input.pending[0].request.region, "eu-west");
  auto replayed = replay_decisions(decoded, decoded.config);
  ASSERT_TRUE(replayed.ok()) << replayed.status().to_string();
  EXPECT_EQ(*replayed, c.decisions_json);
  EXPECT_NE(replayed->find("\"n2\""), std::string::npos) << *replayed;
  EXPECT_EQ(replayed->find("\"n1\""), std::string::npos) << *replayed;
}

// A cycle with one of everything, as the error tests' starting point.
json small_cycle_json() {
  const sched::SnapshotInput in =
      testing::FleetBuilder()
          .dgx("n1", "H100", {.rack = "r1"})
          .dgx("n2", "H100", {.rack = "r2"})
          .rack_cap("r1", 8000)
          .tenant("nlp", 2)
          .usage("nlp", 10)
          .reservation("res", "nlp", "H100", 2, 0, 3'600'000)
          .running(testing::JobBuilder(1).tenant("nlp").gpus(2), {{"n1", 0}, {"n1", 1}})
          .pending(testing::JobBuilder(2).tenant("nlp").gpus(4))
          .input();
  return json::parse(to_json(CapturedCycle{.input = in, .now = core::time_from_ms(1000)}));
}

std::string parse_error(const json& j) {
  auto parsed = parse_captured_cycle(j.dump());
  return parsed.ok() ? "ok" : parsed.status().to_string();
}

TEST(CaptureParse, ErrorsNameTheJsonPath) {
  struct Case {
    std::string name;
    void (*mutate)(json&);
    std::string want;
  };
  const std::vector<Case> cases = {
      {"gpu index not an integer",
       [](json& j) { j["input"]["running"][0]["gpus"][1]["index"] = "x"; },
       "input.running[0].gpus[1].index: must be an integer, got \"x\""},
      {"gpu index a fraction", [](json& j) { j["input"]["running"][0]["gpus"][0]["index"] = 1.5; },
       "input.running[0].gpus[0].index: must be an integer, got 1.5"},
      {"tier beyond 32 bits",
       [](json& j) { j["input"]["pending"][0]["request"]["tier"] = 1LL << 40; },
       "input.pending[0].request.tier: must be between -2147483648 and 2147483647, got "
       "1099511627776"},
      {"unknown admin state", [](json& j) { j["input"]["nodes"][1]["admin"] = "asleep"; },
       "input.nodes[1].admin: must be one of active, cordoned or draining, got \"asleep\""},
      {"unknown field", [](json& j) { j["input"]["pending"][0]["request"]["colour"] = "red"; },
       "input.pending[0].request.colour: unknown field"},
      {"usage not a number", [](json& j) { j["input"]["usage"]["nlp"] = "lots"; },
       "input.usage.nlp: must be a number, got \"lots\""},
      {"an object where a string goes",
       [](json& j) {
         j["input"]["nodes"][0]["id"] = {{"a", 1}};
       },
       "input.nodes[0].id: must be a string, got an object"},
      {"quota not an object", [](json& j) { j["input"]["tenants"][0]["defaultQuota"] = 3; },
       "input.tenants[0].defaultQuota: must be an object"},
      {"nodes not an array", [](json& j) { j["input"]["nodes"] = json::object(); },
       "input.nodes: must be an array"},
      {"time not an integer", [](json& j) { j["nowMs"] = "now"; },
       "nowMs: must be an integer (milliseconds since the epoch), got \"now\""},
      {"knob out of range", [](json& j) { j["config"]["graceMs"] = -1; },
       "config.graceMs: must be between 0 and 86400000, got -1"},
      {"unknown knob", [](json& j) { j["config"]["minRuntime"] = 5; },
       "config.minRuntime: unknown field"},
      {"negative las threshold",
       [](json& j) {
         j["config"]["lasThresholdsGpuSeconds"] = {1.0, -2.0};
       },
       "config.lasThresholdsGpuSeconds[1]: must be a GPU-second count >= 0, got -2"},
      {"unknown version", [](json& j) { j["version"] = 3; },
       "version: this build reads version 2 only, the file is version 3"},
      {"no version", [](json& j) { j.erase("version"); },
       "version: must be an integer, got nothing"},
      {"not a cycle file", [](json& j) { j.erase("format"); },
       "format: must be \"corral-cycle\" (not a captured cycle?), got nothing"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    json j = small_cycle_json();
    c.mutate(j);
    EXPECT_EQ(parse_error(j), c.want);
  }
  EXPECT_EQ(parse_error(small_cycle_json()), "ok");
  EXPECT_EQ(parse_captured_cycle("[1, 2]").status().to_string(),
            "must be a JSON object (a corral-cycle file)");
  EXPECT_NE(parse_captured_cycle("{\"format\": ").status().message().find("not valid JSON"),
            std::string::npos);
  // A number past a double's range is refused, not thrown (found by captured_cycle_fuzz).
  EXPECT_NE(parse_captured_cycle("{\"nowMs\": 8e920}").status().message().find("not valid JSON"),
            std::string::npos);
}

TEST(CaptureParse, AMissingKeyReadsAsTheDefaultSoOlderFilesStillRead) {
  json j = small_cycle_json();
  j["input"]["running"][0].erase("stopping");
  j["input"]["running"][0]["request"].erase("maxRuntimeMs");
  j["input"]["running"][0].erase("lastCheckpointAtMs");
  j["input"]["pending"][0]["request"].erase("region");  // files from before regions
  j.erase("config");
  auto parsed = parse_captured_cycle(j.dump());
  ASSERT_TRUE(parsed.ok()) << parsed.status().to_string();
  EXPECT_EQ(parsed->input.pending[0].request.region, "");
  const sched::RunningJob& r = parsed->input.running[0];
  EXPECT_FALSE(r.stopping);
  EXPECT_EQ(r.request.max_runtime, sched::JobRequest{}.max_runtime);
  EXPECT_FALSE(r.last_checkpoint_at);
  EXPECT_FALSE(field_diff(parsed->config, sched::SchedulerConfig{}));
}

TEST(CaptureFormat, WritesVersionAndEnumNames) {
  const json j = small_cycle_json();
  EXPECT_EQ(j["format"], "corral-cycle");
  EXPECT_EQ(j["version"], kCaptureFormatVersion);
  EXPECT_EQ(j["config"]["order"], "fairShare");
  EXPECT_EQ(j["config"]["minRuntimeMs"], 600'000);
  EXPECT_EQ(j["input"]["nodes"][0]["admin"], "active");
  EXPECT_EQ(j["input"]["pending"][0]["request"]["topology"]["pack"], "none");
  EXPECT_EQ(j["input"]["reservations"][0]["endMs"], 3'600'000);
  EXPECT_TRUE(j["input"]["running"][0]["lastCheckpointAtMs"].is_null());
}

// The sample file the corral-sim cli test replays (tests/cycle/testdata): the cycle
// below. It must keep reading as this cycle as the structs grow; a field added later
// reads as its default from it.
CapturedCycle sample_cycle() {
  using testing::FleetBuilder;
  using testing::JobBuilder;
  const core::Duration kHour = core::seconds(3600);
  sched::SnapshotInput in =
      FleetBuilder()
          .dgx("n1", "H100", {.leaf = "l1", .rack = "r1"})
          .dgx("n2", "H100", {.leaf = "l1", .rack = "r2"})
          .rack_cap("r1", 8 * 700)
          .rack_cap("r2", 8 * 700)
          .tenant("nlp", 2)
          .tenant("vision", 1)
          .quota("vision", "H100", 8, 8)
          .usage("nlp", 3.5e6)
          .usage("vision", 1.25e6)
          .reservation("launch", "vision", "H100", 4, 10 * 3'600'000, 12 * 3'600'000)
          .running(JobBuilder(1).tenant("vision").gpus(8).tier(0).preemptible().checkpoint(
                       core::seconds(600), core::seconds(30)),
                   {{"n1", 0},
                    {"n1", 1},
                    {"n1", 2},
                    {"n1", 3},
                    {"n1", 4},
                    {"n1", 5},
                    {"n1", 6},
                    {"n1", 7}})
          .run_state(1, {.started_ms = 0, .checkpoint_ms = 3'590'000})
          .running(JobBuilder(2).tenant("vision").gpus(8).tier(0).preemptible().checkpoint(
                       core::seconds(3600), core::seconds(30)),
                   {{"n2", 0},
                    {"n2", 1},
                    {"n2", 2},
                    {"n2", 3},
                    {"n2", 4},
                    {"n2", 5},
                    {"n2", 6},
                    {"n2", 7}})
          .run_state(2, {.started_ms = 0, .checkpoint_ms = 0, .preemptions = 1})
          .pending(JobBuilder(3).tenant("nlp").gpus(8).tier(2).queued_at(3'500'000))
          .pending(JobBuilder(4).tenant("nlp").gpus(4).elastic(2, 8, 2).queued_at(3'550'000))
          .input();
  in.running[0].attained_gpu_seconds = 8 * 3600;
  in.running[1].attained_gpu_seconds = 8 * 3600 + 0.5;
  in.pending[0].request.max_runtime = 24 * kHour;
  return {.input = std::move(in),
          .now = core::time_from_ms(3'600'000),
          .source = "tests/cycle/capture_test.cc sample_cycle()"};
}

TEST(CaptureSample, TheCommittedFileStillReadsAsTheSampleCycle) {
  const std::string path = std::string(CORRAL_SOURCE_DIR) + "/tests/cycle/testdata/sample.json";
  std::ifstream in(path);
  ASSERT_TRUE(in) << "cannot read " << path;
  std::stringstream text;
  text << in.rdbuf();
  auto parsed = parse_captured_cycle(text.str());
  ASSERT_TRUE(parsed.ok()) << parsed.status().to_string()
                           << "\nthe sample as this build writes it:\n"
                           << to_json(sample_cycle());
  const auto diff = field_diff(*parsed, sample_cycle());
  EXPECT_FALSE(diff) << *diff << "\nthe sample as this build writes it:\n"
                     << to_json(sample_cycle());
  // Replayed, the production job takes GPUs from preemptible work.
  auto replayed = replay_decisions(*parsed, parsed->config);
  ASSERT_TRUE(replayed.ok()) << replayed.status().to_string();
  EXPECT_NE(replayed->find("\"forJob\":3"), std::string::npos) << *replayed;
}

TEST(Replay, InvalidInputNamesTheInputField) {
  CapturedCycle c = sample_cycle();
  c.input.running[1].gpus[0] = c.input.running[0].gpus[0];  // one GPU held twice
  auto replayed = replay_decisions(c, c.config);
  ASSERT_FALSE(replayed.ok());
  EXPECT_EQ(replayed.status().field().rfind("input.running", 0), 0u) << replayed.status().field();
  EXPECT_NE(replayed.status().message().find("held by two jobs"), std::string::npos);
}

TEST(Replay, FirstDifference) {
  EXPECT_EQ(first_difference("abc", "abc"), std::nullopt);
  EXPECT_EQ(first_difference("abc", "abd"), 2u);
  EXPECT_EQ(first_difference("ab", "abc"), 2u);
  EXPECT_EQ(first_difference("", "x"), 0u);
}

core::Result<sched::SchedulerConfig> section(const std::string& yaml,
                                             sched::SchedulerConfig base = {}) {
  return apply_scheduler_section(YAML::Load(yaml)["scheduler"], std::move(base));
}

TEST(SchedulerSection, SetsEveryKnob) {
  auto c = section(R"(scheduler:
  order: attainedService
  usageHalfLifeMs: 3600000
  topologyScoring: false
  preemptionEnabled: false
  minRuntimeMs: 2000
  maxPreemptionsPerJob: 7
  graceMs: 30000
  maxPreemptionSearchesPerCycle: 5
  backfill: false
  starvationAgeMs: 0
  elasticGrowth: false
  lasThresholdsGpuSeconds: [100, 1000.5]
  batchWindowMs: 20
  tickMs: 500
)");
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  const sched::SchedulerConfig want{.order = sched::QueueOrder::kAttainedService,
                                    .usage_half_life = core::seconds(3600),
                                    .topology_scoring = false,
                                    .preemption = {.enabled = false,
                                                   .min_runtime = core::Duration(2000),
                                                   .max_preemptions_per_job = 7,
                                                   .grace = core::seconds(30),
                                                   .max_searches_per_cycle = 5},
                                    .backfill = false,
                                    .starvation_age = core::Duration(0),
                                    .elastic_growth = false,
                                    .las_thresholds_gpu_seconds = {100, 1000.5}};
  const auto diff = field_diff(*c, want);
  EXPECT_FALSE(diff) << *diff;
}

TEST(SchedulerSection, KeysLeftOutKeepTheBase) {
  sched::SchedulerConfig base;
  base.preemption.grace = core::seconds(5);
  base.backfill = false;
  auto c = section("scheduler: {order: fifo}", base);
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  base.order = sched::QueueOrder::kFifo;
  EXPECT_FALSE(field_diff(*c, base));
}

TEST(SchedulerSection, ErrorsNameTheKey) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"scheduler: {order: lottery}",
       "scheduler.order: must be one of fairShare, fifo or attainedService, got \"lottery\""},
      {"scheduler: {graceMs: -1}", "scheduler.graceMs: must be between 0 and 86400000, got -1"},
      {"scheduler: {graceMs: soon}",
       "scheduler.graceMs: must be an integer (milliseconds), got \"soon\""},
      {"scheduler: {minRuntimeMs: 1.5}",
       "scheduler.minRuntimeMs: must be an integer (milliseconds), got 1.5"},
      {"scheduler: {backfill: maybe}", "scheduler.backfill: must be true or false, got \"maybe\""},
      {"scheduler: {usageHalfLifeMs: 0}",
       "scheduler.usageHalfLifeMs: must be between 1000 and 315360000000, got 0"},
      {"scheduler: {maxPreemptionsPerJob: -3}",
       "scheduler.maxPreemptionsPerJob: must be between 0 and 1000000, got -3"},
      {"scheduler: {lasThresholdsGpuSeconds: 5}",
       "scheduler.lasThresholdsGpuSeconds: must be an array"},
      {"scheduler: {minRuntime: 5}", "scheduler.minRuntime: unknown field"},
      {"scheduler: [order]", "scheduler: must be a map"},
  };
  for (const auto& [yaml, want] : cases) {
    SCOPED_TRACE(yaml);
    auto c = section(yaml);
    EXPECT_EQ(c.ok() ? "ok" : c.status().to_string(), want);
  }
}

TEST(SchedulerSection, ReadsCorraldsConfigFile) {
  // The local cluster's config (tenants, a scheduler section) is a valid --config.
  auto c = load_scheduler_config(std::string(CORRAL_SOURCE_DIR) + "/examples/config/local.yaml",
                                 sched::SchedulerConfig{});
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(c->preemption.min_runtime, core::Duration(2000));

  const std::string dir = ::testing::TempDir();
  std::ofstream(dir + "/no_scheduler.yaml") << "tenants: {}\n";
  auto none = load_scheduler_config(dir + "/no_scheduler.yaml", {});
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().field(), "--config");
  EXPECT_NE(none.status().message().find("has no scheduler: section"), std::string::npos);
  EXPECT_EQ(load_scheduler_config(dir + "/missing.yaml", {}).status().field(), "--config");
}

}  // namespace
}  // namespace corral::cycle
