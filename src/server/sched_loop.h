// The scheduler loop: a thread that turns store state into decisions and applies them.
//
//   wake() (submit, cancel, node or tenant change) ──> wait batch_window ──> cycle:
//     1. read a consistent view of the store (one transaction)
//     2. build the ClusterSnapshot (snapshot_from_store.cc) and call sched::decide()
//     3. apply the Decisions in ONE transaction fenced by this loop's epoch: placed
//        jobs go pending -> admitted -> launching (core/job_phase.h) with one
//        allocation row per GPU; pending jobs get their position and reason
//
// A placed job stays in `launching` until its agents report every rank running
// (lifecycle.h). A victim run by agents goes to `preempting` and keeps its GPUs until
// they confirm its workers are gone, and placements that wait for it wait too; a victim
// placed only on agent-less nodes (nothing runs there) stops at once. After each commit
// the nodes whose desired workers changed are bumped on the AssignmentBoard, which
// wakes their agents' long polls. Lost nodes (agent_sessions.lost) take no placements;
// jobs in restart backoff (not_before in the future) are left out of the cycle; jobs
// that ended but still hold GPUs awaiting confirmation count as stopping holders.
// TODO(server): #5: elastic Resizes are not applied yet (the job keeps its size). If the store
// refuses the transaction (a GPU already actively allocated, a stale epoch) nothing of it is
// applied; a stale epoch means another corrald took over, and this loop stops scheduling.
//
// Thread safety: start/stop from one thread; wake() from any thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "core/clock.h"
#include "core/status.h"
#include "sched/config.h"
#include "sched/snapshot.h"
#include "sched/usage.h"
#include "server/assignment_board.h"
#include "server/metrics.h"
#include "server/thread_annotations.h"
#include "store/store.h"

namespace corral::server {

struct SchedLoopOptions {
  sched::SchedulerConfig config;
  // Events arriving within this window after the first are handled by one cycle.
  core::Duration batch_window{20};
  // Cycles start at most this often: under a stream of submissions each cycle takes a
  // larger batch instead of re-reading the queue for every job.
  core::Duration min_interval{100};
  // A cycle runs at least this often, so time-based policy (reservations, decay) moves.
  core::Duration tick{2000};
  std::string shard = "default";
  std::string holder = "corrald";
};

class SchedLoop {
 public:
  // `board` may be null (tests without agents).
  SchedLoop(store::Store& store, const core::Clock& clock, Metrics& metrics,
            SchedLoopOptions options, AssignmentBoard* board = nullptr);
  ~SchedLoop();
  SchedLoop(const SchedLoop&) = delete;
  SchedLoop& operator=(const SchedLoop&) = delete;

  // Takes the shard's lease (bumping its epoch, which fences any earlier holder) and
  // starts the thread.
  core::Status start();
  void stop() CORRAL_EXCLUDES(mu_);
  // Asks for a cycle soon; cheap, never blocks on a cycle.
  void wake() CORRAL_EXCLUDES(mu_);

  // One cycle on the caller's thread (tests). REQUIRES: the thread is not running.
  core::Status run_cycle();
  std::int64_t epoch() const { return epoch_; }

 private:
  void run() CORRAL_EXCLUDES(mu_);

  store::Store& store_;
  const core::Clock& clock_;
  Metrics& metrics_;
  const SchedLoopOptions options_;
  AssignmentBoard* const board_;
  std::int64_t epoch_ = 0;
  bool fenced_ = false;  // loop thread only

  // Loop-thread state: parsed job requests by id (specs never change), decayed usage.
  std::map<std::int64_t, sched::JobRequest> requests_;
  std::map<core::TenantId, sched::DecayedUsage> usage_;
  core::Time last_cycle_{};

  std::mutex mu_;
  std::condition_variable cv_;
  bool wake_ CORRAL_GUARDED_BY(mu_) = false;
  bool stop_ CORRAL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace corral::server
