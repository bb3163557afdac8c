// When the jobs left waiting for room are expected to start (issue 38 item 7: only the
// backfill head had a planned start; every job behind it read "capacity" and nothing
// more). The head's planned start is a promise the cycle keeps (backfill.cc); these are
// forecasts, for people: conservative backfill over GPU counts. Per pool (a GPU type in
// one region) a profile of free GPUs over time: what is free after this cycle, plus what
// running jobs give back at their expected ends (runtime estimates, max runtime once
// overrun). Jobs are booked in queue order; each gets the earliest time its GPUs are free
// for its expected runtime without moving a job booked before it, in any pool it may use.
// Topology, quota and caps are not looked at (counts only), so a forecast can be early;
// it is never shown as a bound. Past kMaxForecasts jobs, none.
//
// Thread safety: one per decide() call.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "sched/decisions.h"
#include "sched/internal/plan.h"
#include "sched/internal/running.h"

namespace corral::sched::detail {

// Jobs forecast per cycle, the first in queue order: each booking costs a pass over its
// pool's profile, and a forecast for the thousandth job in line rests on hundreds of
// guesses before it. Slurm's backfill plans 500 by default (bf_max_job_test); with
// 5,000 waiting, forecasting them all cost a third more per decide() (docs/performance.md).
inline constexpr std::int32_t kMaxForecasts = 1000;

class StartForecast {
 public:
  // From the state after the cycle: `plan` holds this cycle's placements and resizes;
  // `out` says which running jobs were preempted (their GPUs are already free in `plan`)
  // or resized, and what was placed (each runs for its expected runtime from `now`).
  StartForecast(const Plan& plan, const RunningIndex& running, const Decisions& out,
                core::Duration grace, core::Time now);

  // Books `r` at its smallest allowed size on the earliest pool among `types` and returns
  // when it starts; none when no pool could ever hold it.
  std::optional<core::Time> book(const JobRequest& r, const std::vector<TypeIx>& types);
  // Books the backfill head `r` on `type` where and when it is planned to start (its
  // forecast), so the jobs behind it queue after it.
  void book_at(const JobRequest& r, TypeIx type, const PlannedStart& head);

 private:
  // Free GPUs from each instant on (ascending instants; the first is now).
  using Profile = std::vector<std::pair<core::Time, std::int64_t>>;
  Profile& pool(TypeIx type, RegionIx region);
  // The earliest instant at which `gpus` stay free for `runtime`, if any.
  static std::optional<core::Time> earliest(const Profile& p, std::int64_t gpus,
                                            core::Duration runtime);
  // Takes `gpus` from [at, at + runtime).
  static void take(Profile& p, std::int64_t gpus, core::Time at, core::Duration runtime);

  const Plan& plan_;
  core::Time now_;
  std::map<std::pair<TypeIx, RegionIx>, std::vector<std::pair<core::Time, std::int64_t>>> ends_;
  std::map<std::pair<TypeIx, RegionIx>, Profile> pools_;
};

}  // namespace corral::sched::detail
