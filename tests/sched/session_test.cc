// Interactive sessions in decide() (docs/sessions.md): a session starts only inside its
// tenant's guarantee, within its user's GPU limit (out of line past it), and is never a
// preemption's victim.
#include <gtest/gtest.h>

#include "core/check.h"
#include "sched/check.h"
#include "sched/decide.h"
#include "testing/decide_helpers.h"
#include "testing/fleet_builder.h"

namespace corral::sched {
namespace {

using testing::decide_checked;
using testing::FleetBuilder;
using testing::JobBuilder;
using testing::kHour;
using testing::kNow;
using testing::pending_of;
using testing::placement_of;
using testing::whole;

// Tenant nlp is guaranteed 3 H100 and may borrow 16 more. Its sessions take the guarantee
// and no more; its standard job still borrows the idle rest.
TEST(Sessions, StartOnlyInsideTheTenantsGuarantee) {
  const auto s = FleetBuilder()
                     .dgx("a")
                     .quota("nlp", "H100", 3, 16)
                     .pending(JobBuilder(1).tenant("nlp").session("alice").gpus(2).queued_at(1))
                     .pending(JobBuilder(2).tenant("nlp").session("bob").gpus(2).queued_at(2))
                     .pending(JobBuilder(3).tenant("nlp").gpus(4).queued_at(3))
                     .build();
  const Decisions d = decide_checked(s, {}, kNow);
  ASSERT_NE(placement_of(d, 1), nullptr);
  EXPECT_FALSE(placement_of(d, 1)->borrowed);
  // 2 held + 2 more would pass the guarantee of 3, though 6 GPUs are free.
  ASSERT_NE(pending_of(d, 2), nullptr);
  EXPECT_EQ(pending_of(d, 2)->kind, PendingKind::kQuota);
  EXPECT_EQ(pending_of(d, 2)->reason,
            "quota: tenant nlp holds 2/3 guaranteed H100; a session starts only inside its "
            "tenant's guarantee and needs 2");
  ASSERT_NE(placement_of(d, 3), nullptr);
  EXPECT_TRUE(placement_of(d, 3)->borrowed);
}

// A session inside its guarantee takes it back from a borrower, as any job of its tenant
// may (the guarantee is the tenant's at any time); a tenant without one runs no session.
TEST(Sessions, ReclaimTheirGuaranteeAndNeedOne) {
  const auto s = FleetBuilder()
                     .dgx("a")
                     .quota("nlp", "H100", 2, 0)
                     .quota("cv", "H100", 0, 8)
                     .running(JobBuilder(1).tenant("cv").gpus(8), whole("a"), /*borrowed=*/true)
                     .run_state(1, {.started_ms = 0, .checkpoint_ms = 10 * kHour - 60'000})
                     .pending(JobBuilder(2).tenant("nlp").session("alice").gpus(2))
                     .pending(JobBuilder(3).tenant("cv").session("carol").gpus(1))
                     .build();
  const Decisions d = decide_checked(s, {}, kNow);
  ASSERT_EQ(d.preemptions.size(), 1u);
  EXPECT_EQ(d.preemptions[0].victim.value, 1);
  EXPECT_EQ(d.preemptions[0].for_job.value, 2);
  ASSERT_NE(pending_of(d, 3), nullptr);
  EXPECT_EQ(pending_of(d, 3)->kind, PendingKind::kQuota);
}

// scheduler.sessionGpusPerUser 2: alice holds 1 in a running session, so her 2-GPU session
// waits out of line and her 1-GPU one starts; carol's two 2-GPU sessions are counted
// within the cycle: the first starts, the second waits; bob is not held to alice's count.
TEST(Sessions, AUsersSessionsStayWithinTheLimit) {
  SchedulerConfig config;
  config.session_gpus_per_user = 2;
  const auto s = FleetBuilder()
                     .dgx("a")
                     .dgx("b")
                     .quota("t1", "H100", 16, 0)
                     .running(JobBuilder(1).session("alice").gpus(1), {{"a", 0}})
                     .pending(JobBuilder(2).session("alice").gpus(2).queued_at(1))
                     .pending(JobBuilder(3).session("alice").gpus(1).queued_at(2))
                     .pending(JobBuilder(4).session("carol").gpus(2).queued_at(3))
                     .pending(JobBuilder(5).session("carol").gpus(2).queued_at(4))
                     .pending(JobBuilder(6).session("bob").gpus(2).queued_at(5))
                     .build();
  const Decisions d = decide_checked(s, config, kNow);
  ASSERT_NE(pending_of(d, 2), nullptr);
  EXPECT_EQ(pending_of(d, 2)->kind, PendingKind::kSessionLimit);
  EXPECT_EQ(pending_of(d, 2)->position, 0);
  EXPECT_EQ(pending_of(d, 2)->reason,
            "session limit: user alice's sessions hold 1 of the 2 GPUs a user's sessions may hold "
            "(scheduler.sessionGpusPerUser); this one needs 2");
  EXPECT_NE(placement_of(d, 3), nullptr);
  EXPECT_NE(placement_of(d, 4), nullptr);
  ASSERT_NE(pending_of(d, 5), nullptr);
  EXPECT_EQ(pending_of(d, 5)->kind, PendingKind::kSessionLimit);
  EXPECT_NE(placement_of(d, 6), nullptr);

  // 0: no limit.
  config.session_gpus_per_user = 0;
  const Decisions open = decide_checked(s, config, kNow);
  EXPECT_NE(placement_of(open, 2), nullptr);
  EXPECT_NE(placement_of(open, 5), nullptr);
}

// Under fair-share order a job may pause its own tenant's long-running job through a
// checkpoint (attained service); the same two jobs as sessions: never.
TEST(Sessions, AreNeverPreempted) {
  const auto with = [](bool sessions) {
    FleetBuilder f;
    f.dgx("a").quota("t1", "H100", 16, 0);
    JobBuilder running = JobBuilder(1).gpus(8).checkpoint(core::seconds(600), core::seconds(60));
    JobBuilder waiting = JobBuilder(2).gpus(8).queued_at(10 * kHour - 60'000);
    if (sessions) {
      running.session("alice");
      waiting.session("bob");
    } else {
      running.tier(2);
      waiting.tier(2);
    }
    f.running(running, whole("a"));
    f.run_state(1, {.started_ms = 5 * kHour, .checkpoint_ms = 10 * kHour - 60'000});
    f.pending(waiting);
    auto in = f.input();
    in.running[0].attained_gpu_seconds = 8 * 5 * 3600;
    auto s = build_snapshot(in);
    CORRAL_CHECK(s.ok());
    return std::move(*s);
  };
  SchedulerConfig config;
  config.session_gpus_per_user = 8;
  EXPECT_EQ(decide_checked(with(false), config, kNow).preemptions.size(), 1u);
  const Decisions d = decide_checked(with(true), config, kNow);
  EXPECT_TRUE(d.preemptions.empty());
  ASSERT_NE(pending_of(d, 2), nullptr);
  EXPECT_EQ(pending_of(d, 2)->kind, PendingKind::kCapacity);
}

// check() names a session placed on borrowed GPUs and a session preempted.
TEST(Sessions, CheckNamesABorrowedOrPreemptedSession) {
  const auto s = FleetBuilder()
                     .dgx("a")
                     .dgx("b")
                     .quota("t1", "H100", 0, 16)
                     .running(JobBuilder(1).session("alice").gpus(8), whole("a"))
                     .pending(JobBuilder(2).session("bob").gpus(1))
                     .build();
  Decisions d;
  d.placements.push_back({.job = core::JobId(2),
                          .gpu_type = core::GpuTypeId("H100"),
                          .gpus = {{core::NodeId("b"), 0}},
                          .borrowed = true});
  d.preemptions.push_back({.victim = core::JobId(1), .for_job = core::JobId(2), .reason = "x"});
  const auto violations = check(s, d, {}, kNow);
  const auto names = [&](const std::string& text) {
    for (const std::string& v : violations) {
      if (v.find(text) != std::string::npos) return true;
    }
    return false;
  };
  EXPECT_TRUE(names("is a session started beyond its tenant's guarantee")) << violations.size();
  EXPECT_TRUE(names("preemption of job 1, a session"));
}

}  // namespace
}  // namespace corral::sched
