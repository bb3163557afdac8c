// Reservations on hand-drawn clusters: which GPUs a reservation holds over time, and how
// an open reservation takes its GPUs back from jobs that were lent them (issue 19).
#include <gtest/gtest.h>

#include "testing/decide_helpers.h"
#include "testing/fleet_builder.h"

namespace corral::sched {
namespace {

using testing::decide_checked;
using testing::FleetBuilder;
using testing::indices_on;
using testing::JobBuilder;
using testing::kHour;
using testing::kNow;
using testing::nodes_of;
using testing::pending_of;
using testing::placement_of;
using testing::whole;

constexpr std::int64_t kMinute = 60'000;

JobBuilder spot(std::int64_t id) {
  return JobBuilder(id).tenant("ops").tier(0).preemptible().gpus(8).checkpoint(core::seconds(1800),
                                                                               core::seconds(120));
}

// "big" held every GB200 from 0h to 5h and is over; "nlp-launch" (later by id, open now)
// asks for 4 of them. The ended reservation holds nothing: nlp-launch's job starts, and
// so does a job in no reservation on the other tray.
TEST(Reservation, AnEndedReservationHoldsNothing) {
  const auto s = FleetBuilder()
                     .node("g1", "GB200", 4, 4)
                     .node("g2", "GB200", 4, 4)
                     .reservation("big", "vision", "GB200", 8, 0, 5 * kHour)
                     .reservation("nlp-launch", "nlp", "GB200", 4, 9 * kHour, 14 * kHour)
                     .pending(JobBuilder(1).tenant("nlp").gpus(4).reservation("nlp-launch"))
                     .pending(JobBuilder(2).tenant("cv").gpus(4))
                     .build();
  const Decisions d = decide_checked(s, {}, kNow);
  ASSERT_NE(placement_of(d, 1), nullptr) << (pending_of(d, 1) ? pending_of(d, 1)->reason : "");
  EXPECT_EQ(placement_of(d, 1)->reservation, core::ReservationId("nlp-launch"));
  ASSERT_NE(placement_of(d, 2), nullptr) << (pending_of(d, 2) ? pending_of(d, 2)->reason : "");
  EXPECT_NE(nodes_of(*placement_of(d, 1)), nodes_of(*placement_of(d, 2)));
}

// A reservation earlier by id whose window is next week does not hold GPUs from one open
// today: their windows never meet, so they may hold the same GPUs.
TEST(Reservation, ReservationsWhoseWindowsDoNotMeetMayHoldTheSameGpus) {
  const auto s = FleetBuilder()
                     .dgx("a")
                     .reservation("big", "vision", "H100", 8, 100 * kHour, 120 * kHour)
                     .reservation("nlp-launch", "nlp", "H100", 8, 9 * kHour, 14 * kHour)
                     .pending(JobBuilder(1).tenant("nlp").gpus(8).reservation("nlp-launch"))
                     .build();
  const Decisions d = decide_checked(s, {}, kNow);
  ASSERT_NE(placement_of(d, 1), nullptr) << (pending_of(d, 1) ? pending_of(d, 1)->reason : "");
}

// "first" (8h-10h30) holds node a, "second" (9h-14h) the next node b. When first ends,
// second keeps b: a reservation that got its count does not move while others end.
TEST(Reservation, AReservationKeepsItsGpusWhenAnEarlierOneEnds) {
  FleetBuilder f;
  f.dgx("a").dgx("b").dgx("c");
  f.reservation("first", "vision", "H100", 8, 8 * kHour, 10 * kHour + 30 * kMinute);
  f.reservation("second", "nlp", "H100", 8, 9 * kHour, 14 * kHour);
  f.pending(JobBuilder(1).tenant("nlp").gpus(8).reservation("second"));
  for (const std::int64_t at : {10 * kHour, 11 * kHour}) {
    SCOPED_TRACE(at);
    const Decisions d = decide_checked(f.build(), {}, core::time_from_ms(at));
    ASSERT_NE(placement_of(d, 1), nullptr);
    EXPECT_EQ(nodes_of(*placement_of(d, 1)), std::set<std::string>{"b"});
  }
}

// "big" holds the only node until 10h30 and overlaps "late" (9h-14h), which got nothing:
// once big is over, late takes what big gave back.
TEST(Reservation, AReservationLeftShortTakesWhatAnEndedOneGaveBack) {
  FleetBuilder f;
  f.dgx("a");
  f.reservation("big", "vision", "H100", 8, 8 * kHour, 10 * kHour + 30 * kMinute);
  f.reservation("late", "nlp", "H100", 8, 9 * kHour, 14 * kHour);
  f.pending(JobBuilder(1).tenant("nlp").gpus(8).reservation("late"));
  const Decisions during = decide_checked(f.build(), {}, kNow);
  EXPECT_EQ(placement_of(during, 1), nullptr);
  const Decisions after = decide_checked(f.build(), {}, core::time_from_ms(11 * kHour));
  EXPECT_NE(placement_of(after, 1), nullptr);
}

// "r" holds 12 GPUs: node a whole and GPUs 0-3 of node b. A preemptible job of another
// tenant runs on all of b. Inside the window r's job takes it back, though half of what
// it frees lies outside r (those four stay unused until it is gone).
TEST(Reservation, ReclaimsFromAJobOnThePartlyReservedNode) {
  const auto s = FleetBuilder()
                     .dgx("a")
                     .dgx("b")
                     .reservation("r", "nlp", "H100", 12, 9 * kHour, 14 * kHour)
                     .running(spot(1), whole("b"))
                     .pending(JobBuilder(2).tenant("nlp").gpus(12).reservation("r"))
                     .build();
  const Decisions d = decide_checked(s, {}, kNow);
  ASSERT_EQ(d.preemptions.size(), 1u);
  EXPECT_EQ(d.preemptions[0].victim.value, 1);
  EXPECT_EQ(d.preemptions[0].reason, "reservation r opened for job 2");
  const Placement* p = placement_of(d, 2);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(indices_on(*p, "b"), (std::set<std::int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(p->waits_for, std::vector<core::JobId>{core::JobId(1)});
}

// A job in no reservation, not preemptible, was placed on b before the window because its
// max runtime (1 h from 7h) ended in time, and it is still there at 10h. It yields to the
// reservation's job.
TEST(Reservation, ReclaimsFromANonPreemptibleJobThatRanIntoTheWindow) {
  const auto s =
      FleetBuilder()
          .dgx("a")
          .dgx("b")
          .reservation_nodes("launch", "nlp", {"b"}, 9 * kHour, 14 * kHour)
          .running(JobBuilder(1).tenant("cv").gpus(8), whole("a"))
          .running(JobBuilder(2).tenant("cv").gpus(8).max_runtime(core::seconds(3600)), whole("b"))
          .run_state(2, {.started_ms = 7 * kHour})
          .pending(JobBuilder(3).tenant("nlp").gpus(8).reservation("launch"))
          .build();
  const Decisions d = decide_checked(s, {}, kNow);
  ASSERT_EQ(d.preemptions.size(), 1u);
  EXPECT_EQ(d.preemptions[0].victim.value, 2);
  EXPECT_EQ(d.preemptions[0].reason,
            "reservation launch opened for job 3 while this job still held its GPUs");
  ASSERT_NE(placement_of(d, 3), nullptr);
  EXPECT_EQ(nodes_of(*placement_of(d, 3)), std::set<std::string>{"b"});
}

// The preemption cap does not keep a reservation from its GPUs; neither does the
// reservation tenant's own preemptible work outside the reservation, of the same tier.
TEST(Reservation, ReclaimsPastThePreemptionCapAndFromItsTenantsOtherWork) {
  FleetBuilder f;
  f.dgx("b").reservation_nodes("launch", "nlp", {"b"}, 9 * kHour, 14 * kHour);
  f.pending(JobBuilder(3).tenant("nlp").gpus(8).reservation("launch"));
  const auto capped = FleetBuilder(f).running(spot(1), whole("b")).run_state(1, {.preemptions = 3});
  const auto own = FleetBuilder(f).running(spot(1).tenant("nlp").tier(1), whole("b"));
  for (const FleetBuilder* fleet : {&capped, &own}) {
    const Decisions d = decide_checked(fleet->build(), {}, kNow);
    ASSERT_EQ(d.preemptions.size(), 1u);
    EXPECT_EQ(d.preemptions[0].victim.value, 1);
    EXPECT_NE(placement_of(d, 3), nullptr);
  }
}

// The minimum runtime still protects: a preemptible job of the standard tier that started
// on b five minutes ago keeps it until its ten minutes are up. (The preemptible tier has
// no minimum runtime by default; see Preempt.APreemptibleJobHasNoMinimumRuntimeByDefault.)
TEST(Reservation, MinimumRuntimeStillProtects) {
  const auto s = FleetBuilder()
                     .dgx("b")
                     .reservation_nodes("launch", "nlp", {"b"}, 9 * kHour, 14 * kHour)
                     .running(JobBuilder(spot(1)).tier(1), whole("b"))
                     .run_state(1, {.started_ms = 10 * kHour - 5 * kMinute})
                     .pending(JobBuilder(3).tenant("nlp").gpus(8).reservation("launch"))
                     .build();
  const Decisions d = decide_checked(s, {}, kNow);
  EXPECT_TRUE(d.preemptions.empty());
  EXPECT_NE(pending_of(d, 3), nullptr);
}

// Both kinds of borrower on the reservation: the preemptible one yields first.
TEST(Reservation, PreemptibleBorrowersYieldBeforeOverrunningOnes) {
  const auto s =
      FleetBuilder()
          .dgx("a")
          .dgx("b")
          .reservation_nodes("launch", "nlp", {"a", "b"}, 9 * kHour, 14 * kHour)
          .running(JobBuilder(1).tenant("cv").gpus(8).max_runtime(core::seconds(3600)), whole("a"))
          .run_state(1, {.started_ms = 7 * kHour, .checkpoint_ms = 10 * kHour - kMinute})
          .running(spot(2), whole("b"))
          .run_state(2, {.started_ms = 7 * kHour, .checkpoint_ms = 9 * kHour})
          .pending(JobBuilder(3).tenant("nlp").gpus(8).reservation("launch"))
          .build();
  const Decisions d = decide_checked(s, {}, kNow);
  ASSERT_EQ(d.preemptions.size(), 1u);
  EXPECT_EQ(d.preemptions[0].victim.value, 2);
}

}  // namespace
}  // namespace corral::sched
