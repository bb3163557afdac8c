// The scheduler loop: a thread that turns store state into decisions and applies them.
//
//   wake() (submit, cancel, node or tenant change) ──> wait batch_window ──> cycle:
//     1. read a consistent view of the store (one transaction); the pending queue is
//        kept in memory between cycles and only new submissions are read, with a full
//        re-read after other changes (under a stream of submissions, re-reading a queue
//        of 20,000 jobs every cycle was most of corrald's CPU)
//     2. build the ClusterSnapshot (snapshot_from_store.cc) and call sched::decide()
//     3. apply the Decisions in ONE transaction fenced by this loop's epoch: placed
//        jobs go pending -> admitted -> launching (core/job_phase.h) with one
//        allocation row per GPU; then pending jobs whose position or reason changed
//        get them, in short transactions of their own (position and reason are for
//        people to read; a long transaction would stall submissions behind it)
//
// A placed job stays in `launching` until its agents report every rank running
// (lifecycle.h). A victim run by agents goes to `preempting` and keeps its GPUs until
// they confirm its workers are gone, and placements that wait for it wait too; a victim
// placed only on agent-less nodes (nothing runs there) stops at once. After each commit
// the nodes whose desired workers changed are bumped on the AssignmentBoard, which
// wakes their agents' long polls. Lost nodes (agent_sessions.lost) take no placements;
// jobs in restart backoff (not_before in the future) are left out of the cycle; jobs
// that ended but still hold GPUs awaiting confirmation count as stopping holders.
// Elastic Resizes are applied by checkpoint and restart: a `running` job goes to
// `preempting` with its new size recorded (elastic_targets) and, once requeued, is placed
// at that size; a `launching` job (no workers yet) has its allocation changed in place.
// Decayed fair-share usage is written to the store every few seconds and read back at
// start, so a restart keeps fairness. If the store refuses the transaction (a GPU
// already actively allocated, a stale epoch) nothing of it is applied; a stale epoch
// means another corrald took over, and this loop stops scheduling.
//
// Thread safety: start/stop from one thread; wake() from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "core/status.h"
#include "sched/config.h"
#include "sched/decisions.h"
#include "sched/shares.h"
#include "sched/snapshot.h"
#include "sched/usage.h"
#include "server/base/metrics.h"
#include "server/base/settings.h"
#include "server/base/spec_cache.h"
#include "server/base/thread_annotations.h"
#include "server/controllers/assignment_board.h"
#include "server/controllers/scheduler_signals.h"
#include "server/cycle/cycle_recorder.h"
#include "server/cycle/shard_map.h"
#include "server/cycle/snapshot_from_store.h"
#include "store/store.h"

namespace corral::server {

class SchedLoop : public SchedulerSignals {
 public:
  // `board` and `specs` may be null (tests without agents).
  SchedLoop(store::Store& store, const core::Clock& clock, Metrics& metrics,
            SchedLoopOptions options, AssignmentBoard* board = nullptr, SpecCache* specs = nullptr);
  ~SchedLoop();
  SchedLoop(const SchedLoop&) = delete;
  SchedLoop& operator=(const SchedLoop&) = delete;

  // Takes the shard's lease (bumping its epoch, which fences any earlier holder) and
  // starts the thread.
  core::Status start();
  // Starts the thread at `epoch`, a lease the caller already holds (scheduler.h). After
  // stop() a loop may start again, at a newer epoch: it forgets its queue and reads it
  // again.
  core::Status start_at(std::int64_t epoch) CORRAL_EXCLUDES(mu_);
  // True once a commit was refused with a stale epoch: another replica holds the shard.
  bool fenced() const { return fenced_; }
  // Why the last cycle failed ("" when it succeeded, or none ran yet), for /healthz.
  std::string last_error() const CORRAL_EXCLUDES(positions_mu_);
  const std::string& shard() const { return options_.shard; }
  void stop() CORRAL_EXCLUDES(mu_);
  // Asks for a cycle soon that re-reads the whole pending queue; cheap, never blocks on a
  // cycle. Call it after any change that may touch a pending job or free capacity.
  void wake() override CORRAL_EXCLUDES(mu_);
  // After a submission commits: asks for a cycle that reads just this new job (and the
  // others submitted since the last cycle) instead of the whole queue.
  void job_submitted(core::JobId id) override CORRAL_EXCLUDES(mu_);
  // Asks for a cycle soon without re-reading the pending queue: GPUs were released or
  // nodes changed (both read every cycle anyway).
  void capacity_changed() override CORRAL_EXCLUDES(mu_);

  // One cycle on the caller's thread (tests). REQUIRES: the thread is not running.
  core::Status run_cycle();

  // Each pending job's queue position as the last cycle ordered the queue, by job id:
  // one order for every reader. The stored positions cannot give that, as they are
  // refreshed only every position_write_interval while new jobs are written at once.
  // Null before the first cycle and once another scheduler holds the lease.
  using QueuePositions = std::vector<std::pair<std::int64_t, std::int32_t>>;
  std::shared_ptr<const QueuePositions> queue_positions() const CORRAL_EXCLUDES(positions_mu_);
  // The job's position in `positions` (0: not in the queue the last cycle saw).
  static std::int32_t queue_position(const QueuePositions* positions, core::JobId job);
  // Each tenant's fair share and decayed usage as the last cycle weighed them
  // (sched/shares.h). Null when queue_positions() is.
  using TenantShares = std::vector<sched::TenantShare>;
  std::shared_ptr<const TenantShares> tenant_shares() const CORRAL_EXCLUDES(positions_mu_);
  std::int64_t epoch() const { return epoch_; }
  // Where this loop's captured cycles go (and come from, for the API).
  CycleRecorder& recorder() { return recorder_; }

 private:
  void run() CORRAL_EXCLUDES(mu_);

  store::Store& store_;
  const core::Clock& clock_;
  Metrics& metrics_;
  const SchedLoopOptions options_;
  AssignmentBoard* const board_;
  std::unique_ptr<SpecCache> own_specs_;  // when the caller gave none
  SpecCache* const specs_;                // never null
  std::int64_t epoch_ = 0;
  std::atomic<bool> fenced_{false};
  CycleRecorder recorder_;
  std::int64_t cycles_ = 0;         // run by this loop; numbers captured cycles
  std::int64_t pending_shown_ = 0;  // this loop's part of metrics_.pending_jobs

  void force_full_read() CORRAL_EXCLUDES(mu_);
  // Writes each pending job's new position, reason and planned start (and a `pending`
  // event when the reason changed), in short transactions; and the reason of each job in
  // `held` (job -> the dataset gate's reason) that does not say it yet.
  core::Status write_pending(const sched::Decisions& decisions,
                             const std::map<std::int64_t, std::string>& held, core::Time now);
  // Reads the pending queue into pending_: all of it, or only `submitted`.
  core::Status read_pending(store::JobRepo& jobs, bool full,
                            const std::vector<std::int64_t>& submitted);
  // Reads the run history of the job names in the queue and on GPUs into runs_.
  core::Status read_run_history(store::RecordRepo& records, const StoreView& view);
  void publish_positions(const sched::Decisions& decisions) CORRAL_EXCLUDES(positions_mu_);
  // Adds the GPU-seconds held since the last cycle to usage_.
  void accrue_usage(const StoreView& view, core::Time now);
  // Drops the parsed requests of jobs neither pending nor holding GPUs.
  void forget_requests(const StoreView& view);

  // Loop-thread state: parsed job requests (specs never change), run history, decayed
  // usage.
  RequestCache requests_;
  sched::RunHistory runs_;
  // The pending queue as of the last cycle, by id; spec_json is dropped once parsed.
  std::map<std::int64_t, store::JobRow> pending_;
  std::chrono::steady_clock::time_point last_full_read_{};
  std::map<core::TenantId, sched::DecayedUsage> usage_;
  core::Time last_cycle_{};
  core::Time last_usage_write_{};
  core::Time last_position_write_{};

  mutable std::mutex positions_mu_;
  std::string last_error_ CORRAL_GUARDED_BY(positions_mu_);
  std::shared_ptr<const QueuePositions> positions_ CORRAL_GUARDED_BY(positions_mu_);
  std::shared_ptr<const TenantShares> shares_ CORRAL_GUARDED_BY(positions_mu_);

  std::mutex mu_;
  std::condition_variable cv_;
  bool wake_ CORRAL_GUARDED_BY(mu_) = false;
  bool stop_ CORRAL_GUARDED_BY(mu_) = false;
  bool full_read_ CORRAL_GUARDED_BY(mu_) = true;
  std::vector<std::int64_t> submitted_ CORRAL_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace corral::server
