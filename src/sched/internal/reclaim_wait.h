// Why a job inside its guarantee still waits when borrowers hold its GPUs: the borrowers
// are protected by their minimum runtime (preempt.cc leaves them out of the search), and
// the job reclaims their GPUs when it ends. Said in the job's reason, with when:
// `reclaims 8 H100 from job 13 at <instant>, when its minimum runtime ends` (issue 38 item 7:
// a tenant waited ten minutes behind a borrower while its reason said only `capacity`).
//
// Thread safety: a pure function of the cycle's state.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sched/config.h"
#include "sched/internal/plan.h"
#include "sched/internal/running.h"

namespace corral::sched::detail {

// The reclaim `r` (of `tenant`, inside its guarantee on one of `types`) waits for, if its
// smallest size is free once enough borrowers' minimum runtimes end; none otherwise.
std::optional<std::string> reclaim_wait(const Plan& plan, const RunningIndex& running,
                                        const SchedulerConfig& config, const JobRequest& r,
                                        TenantIx tenant, const std::vector<TypeIx>& types,
                                        core::Time now);

}  // namespace corral::sched::detail
