// What the store knows of one accrual period, as ledger::accrue() takes it: every GPU of
// every registered node (from its registration time), each allocation that held one in the
// period with how its attempt started and ended (the job's events and checkpoints),
// unhealthy and drained spans (gpu_state_spans), node reservations, and utilization samples
// (the held GPUs' 1-minute telemetry rollups: one sample at each minute's start, with the
// minute's average utilization).
//
// An attempt's hold, from its job's events:
//   overhead       from placement to the attempt's "started" event (every rank running);
//                  an attempt that never started was start-up all along
//   stopping_from  the "preempted" event in the hold (a preemption or a drain asked it
//                  to checkpoint and stop)
//   lost_from      when the hold ended after "preempted", "rank failed" or "node lost":
//                  the job's last checkpoint before the end, or the attempt's start
//
// Reservations of a count of GPUs anywhere are not billed as reserved_idle: which free GPUs
// they held back is not recorded (docs/ledger.md); reservations of named nodes are.
//
// Thread safety: a function of the transaction it reads.
#pragma once

#include <optional>

#include "core/result.h"
#include "core/time.h"
#include "ledger/accrual.h"
#include "server/base/spec_cache.h"
#include "store/store.h"

namespace corral::server {

struct AccrualScope {
  core::Time start;  // the period
  core::Time end;
  // Provisional (a job's cost so far): facts up to `now` only, open holds end there.
  std::optional<core::Time> now;
  // Only the GPUs this job held in the period.
  std::optional<core::JobId> job;
};

core::Result<ledger::AccrualInput> read_accrual_input(store::Tx& tx, SpecCache& specs,
                                                      const AccrualScope& scope);

}  // namespace corral::server
