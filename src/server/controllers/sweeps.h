// Sweeps (docs/jobspec.md#sweeps): a sweep's trials are the tasks of its array, so
// maxRunning, listing and cancelling are the array's. What a sweep adds is judged here,
// where its trials' metrics arrive: each time a trial's report carries the sweep's metric
// at or past a rung of its early-stopping rule, ASHA (sched/asha.h) judges it there, the
// verdict is kept (store::SweepRungRow, once per trial and rung) and a trial below the
// cut is cancelled with the reason; its GPUs go back to the queue, where the sweep's next
// trial may take them.
//
// Thread safety: free functions over one transaction.
#pragma once

#include "core/agent_protocol.h"
#include "core/status.h"
#include "server/controllers/lifecycle.h"
#include "store/store.h"

namespace corral::server {

// Judges the rungs `report` (just recorded for `job`) carries the sweep's metric to, in
// order, until one stops the trial. Nothing for a job that is not a trial of a sweep with
// earlyStopping, or a trial already stopped.
core::Status judge_sweep_trial(store::Tx& tx, const LifecycleContext& ctx, const store::JobRow& job,
                               const core::RunReport& report);

}  // namespace corral::server
