// check(): each invariant, broken one way at a time on a hand-drawn cluster, gives
// exactly its violation (and nothing else); decisions that keep every rule give none.
#include "sched/check.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "testing/decide_helpers.h"
#include "testing/fleet_builder.h"

namespace corral::sched {
namespace {

using testing::FleetBuilder;
using testing::JobBuilder;
using testing::whole;
using Violations = std::vector<std::string>;

// Well past every minimum runtime (10 minutes by default) of jobs started at time 0.
const core::Time kOneHourIn = core::time_from_ms(3'600'000);

// Two DGX nodes on one leaf; tenant t1 is guaranteed 64 GPUs of any type and may borrow
// none, so nothing here is borrowed unless a case says so.
FleetBuilder two_nodes() { return FleetBuilder().dgx("n1").dgx("n2").default_quota("t1", 64, 0); }

std::vector<GpuRef> gpus(std::vector<std::pair<std::string, std::int32_t>> refs) {
  std::vector<GpuRef> out;
  for (auto& [node, index] : refs) out.push_back({.node = core::NodeId(node), .index = index});
  std::sort(out.begin(), out.end());
  return out;
}

Placement place(std::int64_t job, std::vector<std::pair<std::string, std::int32_t>> refs,
                const char* type = "H100") {
  return {.job = core::JobId(job), .gpu_type = core::GpuTypeId(type), .gpus = gpus(refs)};
}

Pending wait(std::int64_t job, std::int32_t position, std::string reason = "no room") {
  return {.job = core::JobId(job), .position = position, .reason = std::move(reason)};
}

Violations check_at(const ClusterSnapshot& s, const Decisions& d, const SchedulerConfig& c = {}) {
  return check(s, d, c, kOneHourIn);
}

TEST(Check, DecisionsThatKeepEveryRuleHaveNoViolations) {
  const auto s = two_nodes()
                     .running(JobBuilder(1).gpus(8).preemptible(), whole("n1"))
                     .pending(JobBuilder(2).gpus(8))
                     .pending(JobBuilder(3).gpus(8))
                     .pending(JobBuilder(4).gpus(4))
                     .build();
  const Decisions d{.placements = {place(2, whole("n2"))}, .pending = {wait(3, 1), wait(4, 2)}};
  EXPECT_EQ(check_at(s, d), Violations{});
  // decide()'s own answer passes too (decide_checked fails the test otherwise).
  testing::decide_checked(s, {}, kOneHourIn);
}

TEST(Check, EveryPendingJobIsDecidedExactlyOnce) {
  const auto s = two_nodes().pending(JobBuilder(1).gpus(1)).pending(JobBuilder(2).gpus(1)).build();
  EXPECT_EQ(check_at(s, {.placements = {place(1, {{"n1", 0}})}}),
            Violations{"job 2 got no decision"});
  EXPECT_EQ(
      check_at(s, {.placements = {place(1, {{"n1", 0}})}, .pending = {wait(1, 1), wait(2, 2)}}),
      Violations{"job 1 decided 2 times"});
  EXPECT_EQ(
      check_at(s, {.placements = {place(9, {{"n1", 0}})}, .pending = {wait(1, 1), wait(2, 2)}}),
      Violations{"job 9 is not pending"});
}

TEST(Check, PendingPositionsCountFromOneAndEveryOneHasAReason) {
  const auto s = two_nodes().pending(JobBuilder(1).gpus(1)).pending(JobBuilder(2).gpus(1)).build();
  EXPECT_EQ(
      check_at(s, {.pending = {wait(1, 1), wait(2, 3, "")}}),
      (Violations{"pending job 2 has position 3, expected 2", "pending job 2 has no reason"}));
}

TEST(Check, NoGpuIsGivenTwice) {
  const auto s = two_nodes()
                     .running(JobBuilder(1).gpus(1), {{"n1", 0}})
                     .pending(JobBuilder(2).gpus(1))
                     .pending(JobBuilder(3).gpus(1))
                     .build();
  // Held by a running job.
  EXPECT_EQ(check_at(s, {.placements = {place(2, {{"n1", 0}}), place(3, {{"n1", 1}})}}),
            Violations{"GPU n1/0 given twice"});
  // Given to two pending jobs.
  EXPECT_EQ(check_at(s, {.placements = {place(2, {{"n2", 5}}), place(3, {{"n2", 5}})}}),
            Violations{"GPU n2/5 given twice"});
}

TEST(Check, NoUnhealthyGpuOrNodeOutOfServiceIsGiven) {
  const auto s = two_nodes()
                     .unhealthy("n1", 3)
                     .admin("n2", core::NodeAdminState::kCordoned)
                     .pending(JobBuilder(1).gpus(1))
                     .pending(JobBuilder(2).gpus(1))
                     .build();
  EXPECT_EQ(check_at(s, {.placements = {place(1, {{"n1", 3}}), place(2, {{"n2", 0}})}}),
            (Violations{"job 1 placed on unhealthy GPU n1/3", "job 2 placed on cordoned node n2"}));
}

// A region-bound job gets GPUs in its region only, when placed and when it grows.
TEST(Check, ARegionBoundJobStaysInItsRegion) {
  const auto s =
      FleetBuilder()
          .dgx("n1", "H100", {.region = "us-east"})
          .dgx("n2", "H100", {.region = "eu-west"})
          .default_quota("t1", 64, 0)
          .running(JobBuilder(5).gpus(2).elastic(2, 4).region("eu-west"), {{"n2", 0}, {"n2", 1}})
          .pending(JobBuilder(1).gpus(2).region("eu-west"))
          .pending(JobBuilder(2).gpus(1))
          .build();
  const Resize grow{.job = core::JobId(5),
                    .from_gpus = 2,
                    .to_gpus = 4,
                    .gpus = gpus({{"n1", 6}, {"n1", 7}, {"n2", 0}, {"n2", 1}})};
  EXPECT_EQ(check_at(s, {.placements = {place(1, {{"n1", 0}, {"n2", 2}}), place(2, {{"n1", 1}})},
                         .resizes = {grow}}),
            (Violations{"job 5 of region eu-west placed on n1/6 in region us-east",
                        "job 5 of region eu-west placed on n1/7 in region us-east",
                        "job 1 of region eu-west placed on n1/0 in region us-east"}));
  EXPECT_EQ(check_at(s, {.placements = {place(1, {{"n2", 2}, {"n2", 3}}), place(2, {{"n1", 1}})}}),
            Violations{});
}

TEST(Check, AGangGetsExactlyItsGpusOfOneAcceptableType) {
  const auto s = FleetBuilder()
                     .dgx("n1")
                     .dgx("a1", "A100-80GB")
                     .default_quota("t1", 64, 0)
                     .pending(JobBuilder(1).gpus(4))
                     .pending(JobBuilder(2).gpus(1).types({"A100-80GB"}))
                     .pending(JobBuilder(3).gpus(1))
                     .build();
  EXPECT_EQ(
      check_at(s, {.placements = {place(1, {{"n1", 0}, {"n1", 1}, {"n1", 2}}),
                                  place(2, {{"n1", 4}}), place(3, {{"n1", 8}})}}),
      (Violations{"job 1 asked for 4 GPUs but got 3", "job 2 placed on unacceptable type H100",
                  "job 3 placed on unknown GPU n1/8"}));
  // The placement's type must be the type of its GPUs.
  EXPECT_EQ(
      check_at(s,
               {.placements = {place(1, {{"a1", 0}, {"a1", 1}, {"a1", 2}, {"a1", 3}}, "A100-80GB"),
                               place(2, {{"n1", 4}}, "A100-80GB"), place(3, {{"n1", 5}})}}),
      Violations{"job 2 GPU n1/4 is not of type A100-80GB"});
}

TEST(Check, GpusPerNodeAndARequiredPackHold) {
  const auto s = two_nodes()
                     .pending(JobBuilder(1).gpus(4).per_node(2))
                     .pending(JobBuilder(2).gpus(2).pack(core::PackLevel::kNode))
                     .build();
  EXPECT_EQ(check_at(s, {.placements = {place(1, {{"n1", 0}, {"n1", 1}, {"n1", 2}, {"n2", 0}}),
                                        place(2, {{"n1", 7}, {"n2", 7}})}}),
            (Violations{"job 1 has 3 GPUs on n1, asked for 2 per node",
                        "job 1 has 1 GPUs on n2, asked for 2 per node",
                        "job 2 requires pack node but is packed at leaf"}));
}

TEST(Check, QuotaAndBorrowingHold) {
  // Guaranteed 2, may borrow 2 more: 4 is the limit, and past 2 is borrowed.
  const auto s = FleetBuilder()
                     .dgx("n1")
                     .default_quota("t1", 2, 2)
                     .pending(JobBuilder(1).gpus(4))
                     .pending(JobBuilder(2).gpus(1))
                     .build();
  Placement four = place(1, {{"n1", 0}, {"n1", 1}, {"n1", 2}, {"n1", 3}});
  EXPECT_EQ(check_at(s, {.placements = {four}, .pending = {wait(2, 1)}}),
            Violations{"job 1 goes beyond its tenant's guarantee but is not marked borrowed"});
  four.borrowed = true;
  EXPECT_EQ(check_at(s, {.placements = {four}, .pending = {wait(2, 1)}}), Violations{});
  Placement fifth = place(2, {{"n1", 4}});
  fifth.borrowed = true;
  EXPECT_EQ(check_at(s, {.placements = {four, fifth}}),
            Violations{"tenant t1 holds 5 H100, past its limit of 4"});
}

// A rack counts each GPU at the power limit its node reports, not at its type's catalog
// TDP: four A100s capped at 300 W fit a 1,500 W rack (issue 38, item 6), a fifth does not.
TEST(Check, RackPowerCountsTheReportedPowerLimit) {
  const auto s = FleetBuilder()
                     .node("n1", "A100-80GB", 8, 8, {.rack = "r1"})
                     .power_limit("n1", 300)
                     .rack_cap("r1", 1'500)
                     .default_quota("t1", 64, 0)
                     .pending(JobBuilder(1).gpus(4))
                     .pending(JobBuilder(2).gpus(2))
                     .build();
  const Placement four = place(1, {{"n1", 0}, {"n1", 1}, {"n1", 2}, {"n1", 3}}, "A100-80GB");
  EXPECT_EQ(check_at(s, {.placements = {four}, .pending = {wait(2, 1)}}), Violations{});
  EXPECT_EQ(check_at(s, {.placements = {four, place(2, {{"n1", 4}, {"n1", 5}}, "A100-80GB")}}),
            Violations{"rack r1 power 1800 W past its cap 1500 W"});
}

TEST(Check, NodeCpusAndRackPowerHold) {
  const auto s = FleetBuilder()
                     .dgx("n1", "H100", {.rack = "r1"})
                     .dgx("n2", "H100", {.rack = "r2"})
                     .default_quota("t1", 64, 0)
                     .cpus("n1", 8, 1024)
                     .rack_cap("r2", 1000)
                     .pending(JobBuilder(1).gpus(4).cpus_per_gpu(4).memory_per_gpu_mib(512))
                     .pending(JobBuilder(2).gpus(2))
                     .build();
  EXPECT_EQ(check_at(s, {.placements = {place(1, {{"n1", 0}, {"n1", 1}, {"n1", 2}, {"n1", 3}}),
                                        place(2, {{"n2", 0}, {"n2", 1}})}}),
            (Violations{"node n1 CPUs overcommitted: 16 of 8",
                        "node n1 memory overcommitted: 2048 of 1024 MiB",
                        "rack r2 power 1400 W past its cap 1000 W"}));
}

// A preemption must free GPUs that the job it was made for uses in the same decision.
TEST(Check, PreemptionIsNeverUseless) {
  const auto s = two_nodes()
                     .running(JobBuilder(1).gpus(8).preemptible(), whole("n1"))
                     .running(JobBuilder(3).gpus(8), whole("n2"))
                     .pending(JobBuilder(2).gpus(8).tier(2))
                     .build();
  const Preemption pre{.victim = core::JobId(1), .for_job = core::JobId(2), .reason = "r"};
  EXPECT_EQ(check_at(s, {.preemptions = {pre}, .pending = {wait(2, 1)}}),
            Violations{"preemption of job 1 for job 2, which was not placed (useless)"});
  Placement on_n1 = place(2, whole("n1"));
  EXPECT_EQ(check_at(s, {.placements = {on_n1}, .preemptions = {pre}}),
            Violations{"job 2 does not wait for job 1"});
  on_n1.waits_for = {core::JobId(1)};
  EXPECT_EQ(check_at(s, {.placements = {on_n1}, .preemptions = {pre}}), Violations{});
  // Preempting a job that is not running.
  const Preemption ghost{.victim = core::JobId(7), .for_job = core::JobId(2), .reason = "r"};
  EXPECT_EQ(check_at(s, {.placements = {on_n1}, .preemptions = {pre, ghost}}),
            Violations{"preemption of job 7, which is not running"});
}

// The victim's protections: entitlement, tier, minimum runtime, the cap, stopping.
TEST(Check, PreemptionVictimMustBeEntitled) {
  struct Case {
    std::string name;
    JobBuilder victim;
    FleetBuilder::RunState state;
    std::int32_t by_tier;
    Violations want;
  };
  const std::vector<Case> cases = {
      {"non-preemptible and not borrowed",
       JobBuilder(1).gpus(8),
       {},
       2,
       {"preemption of job 1, neither preemptible nor borrowed nor more served within its "
        "tenant nor started after the starved job it made room for"}},
      {"before its minimum runtime",
       JobBuilder(1).gpus(8).preemptible(),
       {.started_ms = core::to_ms(kOneHourIn) - 60'000},
       2,
       {"preemption of job 1 before its minimum runtime"}},
      {"past its cap",
       JobBuilder(1).gpus(8).preemptible(),
       {.preemptions = 3},
       2,
       {"preemption of job 1 past its cap"}},
      {"already stopping",
       JobBuilder(1).gpus(8).preemptible(),
       {.stopping = true},
       2,
       {"preemption of job 1, which is already stopping"}},
      {"by a lower tier",
       JobBuilder(1).gpus(8).preemptible().tier(2),
       {},
       1,
       {"job 2 preempted job 1 of a higher tier",
        "job 2 preempted job 1 of the same tier without reclaiming"}},
      {"by the same tier",
       JobBuilder(1).gpus(8).preemptible(),
       {},
       1,
       {"job 2 preempted job 1 of the same tier without reclaiming"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const auto s = two_nodes()
                       .running(c.victim, whole("n1"))
                       .run_state(1, c.state)
                       .pending(JobBuilder(2).gpus(8).tier(c.by_tier))
                       .build();
    Placement p = place(2, whole("n1"));
    p.waits_for = {core::JobId(1)};
    const Preemption pre{.victim = core::JobId(1), .for_job = core::JobId(2), .reason = "r"};
    EXPECT_EQ(check_at(s, {.placements = {p}, .preemptions = {pre}}), c.want);
  }
}

TEST(Check, ResizesStayInTheElasticRangeAndKeepTheirGpus) {
  const auto s = two_nodes()
                     .running(JobBuilder(1).gpus(4).elastic(2, 8, 2),
                              {{"n1", 0}, {"n1", 1}, {"n1", 2}, {"n1", 3}})
                     .build();
  auto resize = [](std::int32_t to, std::vector<std::pair<std::string, std::int32_t>> refs) {
    return Resize{.job = core::JobId(1), .from_gpus = 4, .to_gpus = to, .gpus = gpus(refs)};
  };
  EXPECT_EQ(
      check_at(s, {.resizes = {resize(
                       6, {{"n1", 0}, {"n1", 1}, {"n1", 2}, {"n1", 3}, {"n1", 4}, {"n1", 5}})}}),
      Violations{});
  EXPECT_EQ(
      check_at(s,
               {.resizes = {resize(5, {{"n1", 0}, {"n1", 1}, {"n1", 2}, {"n1", 3}, {"n1", 4}})}}),
      Violations{"job 1 resized to 5, outside its elastic range"});
  EXPECT_EQ(
      check_at(s, {.resizes = {resize(
                       6, {{"n1", 2}, {"n1", 3}, {"n1", 4}, {"n1", 5}, {"n1", 6}, {"n1", 7}})}}),
      Violations{"job 1 grew but dropped GPUs it held"});
  EXPECT_EQ(check_at(s, {.resizes = {resize(2, {{"n1", 0}, {"n1", 7}})}}),
            Violations{"job 1 shrank onto GPUs it did not hold"});
  // Two GPUs for a size of 4: the counts disagree, and as a "grow" it drops GPUs 2 and 3.
  EXPECT_EQ(check_at(s, {.resizes = {resize(4, {{"n1", 0}, {"n1", 1}})}}),
            (Violations{"job 1 resize counts do not match its GPUs",
                        "job 1 grew but dropped GPUs it held"}));
}

// Nothing started now that outlives the backfill head's planned start takes its GPUs.
TEST(Check, BackfillKeepsTheHeadsPromisedGpus) {
  const auto s = two_nodes()
                     .pending(JobBuilder(1).gpus(8))
                     .pending(JobBuilder(2).gpus(1).max_runtime(core::seconds(2 * 3600)))
                     .pending(JobBuilder(3).gpus(1).max_runtime(core::seconds(600)))
                     .build();
  const PlannedStart head{.job = core::JobId(1),
                          .at = kOneHourIn + core::seconds(3600),
                          .expected = kOneHourIn + core::seconds(3600),
                          .gpus = gpus(whole("n2"))};
  EXPECT_EQ(check_at(s, {.placements = {place(2, {{"n2", 0}}), place(3, {{"n2", 1}})},
                         .planned_starts = {head},
                         .pending = {wait(1, 1)}}),
            Violations{"job 2 takes GPU n2/0 promised to the backfill head and would delay it"});
}

}  // namespace
}  // namespace corral::sched
