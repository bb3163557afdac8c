// Queue order: tiers, weighted fair share over the tenant tree, then age.
#include "sched/internal/order.h"

#include <cmath>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "testing/decide_helpers.h"
#include "testing/fleet_builder.h"

namespace corral::sched {
namespace {

using testing::decide_checked;
using testing::FleetBuilder;
using testing::JobBuilder;
using testing::pending_of;
using testing::placement_of;

std::vector<std::int64_t> queue_ids(const Decisions& d) {
  std::vector<std::int64_t> ids;
  for (const auto& q : d.queue) ids.push_back(q.job.value);
  return ids;
}

// One free GPU; the production job is considered first though it is the youngest.
TEST(Order, HigherTierFirst) {
  const auto s = FleetBuilder()
                     .node("n", "H100", 1, 1)
                     .pending(JobBuilder(1).tier(1).queued_at(1))
                     .pending(JobBuilder(2).tier(0).queued_at(0))
                     .pending(JobBuilder(3).tier(2).queued_at(9))
                     .build();
  const Decisions d = decide_checked(s);
  EXPECT_EQ(queue_ids(d), (std::vector<std::int64_t>{3, 1, 2}));
  EXPECT_NE(placement_of(d, 3), nullptr);
}

// Same tier, same tenant: oldest first, ties by id.
TEST(Order, AgeThenIdWithinATenant) {
  const auto s = FleetBuilder()
                     .node("n", "H100", 1, 1)
                     .pending(JobBuilder(5).queued_at(20))
                     .pending(JobBuilder(4).queued_at(10))
                     .pending(JobBuilder(3).queued_at(10))
                     .build();
  EXPECT_EQ(queue_ids(decide_checked(s)), (std::vector<std::int64_t>{3, 4, 5}));
}

// Tenants a (weight 1) and b (weight 3) each queue four 1-GPU jobs on 4 free GPUs.
// Each placement raises the tenant's standing by 2/share (H100 usage factor 2): a has
// share 1/4, b 3/4, so b gets three GPUs for a's one.
TEST(Order, FairShareSplitsByWeight) {
  FleetBuilder f;
  f.node("n", "H100", 4, 4).tenant("a", 1).tenant("b", 3);
  for (int i = 0; i < 4; ++i) {
    f.pending(JobBuilder(10 + i).tenant("a").queued_at(i));
    f.pending(JobBuilder(20 + i).tenant("b").queued_at(i));
  }
  const Decisions d = decide_checked(f.build());
  int a = 0, b = 0;
  for (const auto& p : d.placements) (p.job.value < 20 ? a : b)++;
  EXPECT_EQ(a, 1);
  EXPECT_EQ(b, 3);
}

// Past usage lowers standing: with equal weights, the tenant that used more waits.
TEST(Order, DecayedUsageCountsAgainstATenant) {
  const auto s = FleetBuilder()
                     .node("n", "H100", 1, 1)
                     .tenant("heavy")
                     .tenant("light")
                     .usage("heavy", 1e6)
                     .usage("light", 1e3)
                     .pending(JobBuilder(1).tenant("heavy").queued_at(0))
                     .pending(JobBuilder(2).tenant("light").queued_at(5))
                     .build();
  const Decisions d = decide_checked(s);
  EXPECT_NE(placement_of(d, 2), nullptr);
  EXPECT_NE(pending_of(d, 1), nullptr);
}

// An organisation (weight 2) with tenants x and y, and z (weight 2) standing alone; the
// listed tenants have a pending job each.
std::map<std::string, double> shares_with_jobs_of(std::initializer_list<const char*> tenants) {
  FleetBuilder f;
  f.node("n", "H100", 1, 1).tenant("org", 2).tenant("x", 1, "org").tenant("y", 1, "org");
  f.tenant("z", 2);
  std::int64_t id = 1;
  for (const char* t : tenants) f.pending(JobBuilder(id++).tenant(t));
  const ClusterSnapshot s = f.build();
  const auto shares = detail::effective_shares(s, detail::active_tenants(s));
  std::map<std::string, double> out;
  for (const char* t : {"org", "x", "y", "z"}) out[t] = shares[*s.find_tenant(core::TenantId(t))];
  return out;
}

// An organisation's tenants share its weight: x 1/4, y 1/4, z 1/2.
TEST(Order, HierarchySplitsParentShare) {
  const auto shares = shares_with_jobs_of({"x", "y", "z"});
  EXPECT_DOUBLE_EQ(shares.at("x"), 0.25);
  EXPECT_DOUBLE_EQ(shares.at("y"), 0.25);
  EXPECT_DOUBLE_EQ(shares.at("z"), 0.5);
  EXPECT_DOUBLE_EQ(shares.at("org"), 0.5);
}

// Inactive tenants take no share: with y idle, x gets all of org's half.
TEST(Order, IdleTenantsTakeNoShare) {
  const auto shares = shares_with_jobs_of({"x", "z"});
  EXPECT_DOUBLE_EQ(shares.at("x"), 0.5);
  EXPECT_DOUBLE_EQ(shares.at("y"), 0.0);
}

// The documented formula: standing = (held + U * ln2 / half_life_s) / share.
TEST(Order, StandingFormula) {
  const core::Duration half_life = core::seconds(3600);
  // 4 weighted GPUs held, usage of 2 GPUs held for a long time (2 * 3600 / ln2).
  const double usage = 2 * 3600 / std::log(2.0);
  EXPECT_NEAR(detail::standing(4000, usage, 0.5, half_life), (4 + 2) / 0.5, 1e-9);
}

TEST(Order, FifoIgnoresTenants) {
  FleetBuilder f;
  f.node("n", "H100", 1, 1).tenant("a", 1).tenant("b", 100).usage("a", 0).usage("b", 0);
  f.pending(JobBuilder(1).tenant("a").queued_at(1));
  f.pending(JobBuilder(2).tenant("a").queued_at(2));
  f.pending(JobBuilder(3).tenant("b").queued_at(3));
  const Decisions d = decide_checked(f.build(), SchedulerConfig{.order = QueueOrder::kFifo});
  EXPECT_EQ(queue_ids(d), (std::vector<std::int64_t>{1, 2, 3}));
}

TEST(Order, PendingPositionsFollowTheQueue) {
  const auto s = FleetBuilder()
                     .node("n", "H100", 1, 1)
                     .pending(JobBuilder(1).queued_at(1))
                     .pending(JobBuilder(2).queued_at(2))
                     .pending(JobBuilder(3).queued_at(3))
                     .build();
  const Decisions d = decide_checked(s);
  ASSERT_EQ(d.pending.size(), 2u);
  EXPECT_EQ(d.pending[0].job.value, 2);
  EXPECT_EQ(d.pending[0].position, 1);
  EXPECT_EQ(d.pending[1].job.value, 3);
  EXPECT_EQ(d.pending[1].position, 2);
}

}  // namespace
}  // namespace corral::sched
