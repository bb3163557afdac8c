// What the controllers (lifecycle, node health) and the API surfaces tell the scheduler
// loop after their transactions commit, and nothing else: they depend on this interface,
// not on the loop, so no include arrow runs from a controller to SchedLoop
// (tools/check_deps.sh checks it).
//
// Thread safety: implementations are called from any thread, and must not block.
#pragma once

#include "core/ids.h"

namespace corral::server {

class SchedulerSignals {
 public:
  virtual ~SchedulerSignals() = default;
  // A job entered the pending queue (submitted, or requeued by a controller): a cycle
  // soon that reads just the new jobs.
  virtual void job_submitted(core::JobId id) = 0;
  // GPUs were released or nodes changed: a cycle soon, without re-reading the queue.
  virtual void capacity_changed() = 0;
  // A change may touch any pending job (a cancel, a tenant's quota, a node's admin
  // state): a cycle soon that re-reads the whole queue.
  virtual void wake() = 0;
};

}  // namespace corral::server
