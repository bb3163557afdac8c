// Decisions: what one decide() call concludes, as a list of deltas for someone else to
// apply (the server in one store transaction, the simulator in virtual time).
//
// The order is stable: placements in the order they were made, pending jobs by queue
// position. to_json() is byte-for-byte deterministic, which golden tests, the server's
// decision log and the simulator's traces rely on.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/ids.h"
#include "core/job_spec.h"
#include "sched/snapshot.h"

namespace corral::sched {

// A gang placed all-or-nothing: every GPU it asked for, on one GPU type.
struct Placement {
  core::JobId job;
  core::GpuTypeId gpu_type;
  std::vector<GpuRef> gpus;  // sorted
  // A job of shares: its share of each of `gpus`, in thousandths (JobRequest::gpu_milli);
  // 0: the GPUs are whole.
  std::int32_t share_milli = 0;
  bool borrowed = false;  // some of it is capacity lent beyond the tenant's guarantee
  core::PackLevel packed = core::PackLevel::kNone;  // the tightest level that contains it
  // Jobs preempted or shrunk by this decision to free some of these GPUs: the job may
  // launch only once every one of them has confirmed its processes are gone.
  std::vector<core::JobId> waits_for;
  std::optional<core::ReservationId> reservation;  // placed inside this reservation
};

// A request to checkpoint and stop within `grace`, never a bare kill.
struct Preemption {
  core::JobId victim;
  core::JobId for_job;
  std::string reason;
  core::Duration grace{0};
};

// An elastic job restarted from its checkpoint at a new size. `gpus` is the whole new set.
struct Resize {
  core::JobId job;
  std::int32_t from_gpus = 0;
  std::int32_t to_gpus = 0;
  std::vector<GpuRef> gpus;
  std::optional<core::JobId> for_job;  // shrunk to make room for this job
  std::string reason;
};

// The first blocked job's reserved start under EASY backfill.
struct PlannedStart {
  core::JobId job;
  core::Time at;             // at the latest: running jobs end by their max runtimes (a bound)
  core::Time expected;       // the forecast (<= at): running jobs end by their runtime estimates
  std::vector<GpuRef> gpus;  // the GPUs it is expected to get; later jobs may not delay them
};

enum class PendingKind {
  kQuota,          // the tenant's quota (with borrowing) does not allow it
  kCapacity,       // not enough free usable GPUs of an acceptable type
  kTopology,       // enough GPUs, but not packed as the job requires
  kPower,          // placing it would exceed a rack's power cap
  kUnschedulable,  // can never fit this fleet as asked (e.g. more GPUs than exist)
  kWaiting,        // first in line: GPUs are reserved for it at its planned start
  kReservation,    // its reservation's window is not open, or the reservation is full
  kDependency,     // a job it depends on has not reached the state it waits for
  kArrayLimit,     // its array already runs as many tasks as its maxRunning allows
  kSessionLimit,   // a session whose user's sessions hold as many GPUs as allowed
};
std::string_view to_string(PendingKind kind);

// Whether a job pending for `kind` is out of line (position 0): it cannot run whatever
// GPUs free (it never fits, or waits for another job, its array's limit or its user's
// other sessions), so it must
// never read as ahead of work that can.
bool out_of_line(PendingKind kind);

// A pending job ended because it can never run: a job it depends on ended in a way its
// dependency does not accept (dependencies.h). The adapter cancels it with `reason`.
struct Abandoned {
  core::JobId job;
  std::string reason;
};

struct Pending {
  core::JobId job;
  // 1-based place in the queue after this cycle, among the jobs that can run; 0 for one
  // out of line (out_of_line()), which is never ahead of runnable work.
  std::int32_t position = 0;
  PendingKind kind = PendingKind::kCapacity;
  std::string reason;  // short, for a user to act on
  // When it is expected to start, for a job waiting for room: the backfill head's planned
  // start (its forecast), or for the jobs behind it a forecast by GPU counts (forecast.h).
  // Zero when none can be computed (quota, reservations, a job that never fits).
  core::Time start{};
};

// One step of the queue: the order in which this cycle considered pending jobs, with
// the tenant's fair-share standing at that moment (0 under FIFO). Shown to users so
// they can see why a job is behind another.
struct QueueEntry {
  core::JobId job;
  double standing = 0;
};

struct Decisions {
  std::vector<Placement> placements;  // in the order they were made
  std::vector<Preemption> preemptions;
  std::vector<Resize> resizes;
  std::vector<PlannedStart> planned_starts;
  std::vector<Pending> pending;      // by position
  std::vector<QueueEntry> queue;     // every queued pending job, in the order considered
  std::vector<Abandoned> abandoned;  // by job id
};

std::string to_json(const Decisions& decisions);

}  // namespace corral::sched
