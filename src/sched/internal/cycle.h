// One decide() call's working state and its stages (docs/scheduling.md: order, admit,
// place, preempt, backfill, explain, elastic, forecast). decide.cc runs the queue; each
// stage that works on the whole cycle lives in a file of its own and is declared here:
//   place_job.cc      try_place(): admission and placement without preemption
//   place_share.cc    try_place_share(): the same for a share of one GPU
//   preempt_job.cc    wait_for_stopping(), try_preempt(): making room by stopping jobs
//   promise.cc        plan_head(): the head's planned start and the GPUs promised to it
//   elastic_allocation.cc allocate_elastic(): running elastic jobs re-sized where GPUs add most
//   forecast.cc       forecast_starts(): an expected start for every job left waiting
//
// Thread safety: one Cycle per decide() call, on its thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sched/config.h"
#include "sched/decisions.h"
#include "sched/internal/array_limits.h"
#include "sched/internal/class_caps.h"
#include "sched/internal/fleet_bounds.h"
#include "sched/internal/fragmentation.h"
#include "sched/internal/gate.h"
#include "sched/internal/no_fit_memo.h"
#include "sched/internal/order.h"
#include "sched/internal/place.h"
#include "sched/internal/plan.h"
#include "sched/internal/running.h"
#include "sched/internal/session_limits.h"
#include "sched/internal/waiting_cost.h"
#include "sched/snapshot.h"

namespace corral::sched::detail {

// The working state of one decide() call.
struct Cycle {
  Cycle(const ClusterSnapshot& snapshot, const SchedulerConfig& cfg, core::Time t)
      : s(snapshot),
        config(cfg),
        now(t),
        plan(snapshot),
        bounds(plan),
        running(snapshot),
        caps(snapshot, running),
        arrays(snapshot),
        sessions(snapshot, cfg),
        gate(snapshot, t),
        waiting(snapshot) {}

  const ClusterSnapshot& s;
  const SchedulerConfig& config;
  core::Time now;
  Plan plan;
  FleetBounds bounds;
  RunningIndex running;
  ClassCaps caps;          // tenants' priority-class caps, this cycle's placements counted
  ArrayLimits arrays;      // arrays' maxRunning, this cycle's placements counted
  SessionLimits sessions;  // users' session GPUs, this cycle's placements counted
  Gate gate;
  std::map<View, NoFitMemo> memos;  // valid while no GPU is given back
  std::optional<PendingJob> head;   // the backfill head, once found
  TypeIx head_type = -1;            // the GPU type of its planned start
  std::int32_t searches = 0;        // preemption searches made
  WaitingCost waiting;              // what waiting costs, for preemptions
  // The workload's classes for placing shares (fragmentation.h), built at the cycle's
  // first share placed under the fragmentation rule.
  std::optional<std::vector<WorkloadClass>> workload;
  Decisions out;
};

// The GPU types a job may use, most preferred first (place_job.cc).
std::vector<TypeIx> candidate_types(const ClusterSnapshot& s, const SchedulerConfig& config,
                                    const JobRequest& r);
// What placement is asked for `r` at `gpus` GPUs of `type`.
PlaceRequest place_request(const Cycle& c, const JobRequest& r, TypeIx type, std::int32_t gpus);
// The decision for `r` placed as `placed`.
Placement make_placement(const Cycle& c, const JobRequest& r, TypeIx type,
                         const PlaceResult& placed, bool borrowed);

struct Attempt {
  std::optional<Placement> placement;
  std::vector<Plan::Take> takes;
  TypeIx preferred = -1;  // the job's first acceptable type, -1 if none
  PendingKind kind = PendingKind::kUnschedulable;
  std::string reason;
};

Attempt try_place(Cycle& c, const JobRequest& r, TenantIx tenant);
Attempt try_place_share(Cycle& c, const JobRequest& r, TenantIx tenant);
std::optional<std::string> wait_for_stopping(Cycle& c, const JobRequest& r, TenantIx tenant,
                                             bool claim = true);
std::optional<std::string> wait_for_resize_target(Cycle& c, const PendingJob& job, TenantIx tenant);
bool try_preempt(Cycle& c, JobQueue& queue, const PendingJob& job, TenantIx tenant, bool due,
                 std::string& declined);
std::optional<std::string> plan_head(Cycle& c, const PendingJob& job, const std::string& cause);
void allocate_elastic(Cycle& c);
// A shrinking elastic job takes back what is still free of the GPUs it released, up to
// the largest of `sizes` (largest first) that is at most `at_most`; the GPUs it keeps.
std::vector<GpuRef> keep_what_is_left(Cycle& c, std::int32_t running_ix,
                                      const std::vector<Plan::Take>& kept,
                                      const std::vector<Plan::Take>& released,
                                      const std::vector<std::int32_t>& sizes, std::int32_t at_most);
void forecast_starts(Cycle& c);

}  // namespace corral::sched::detail
