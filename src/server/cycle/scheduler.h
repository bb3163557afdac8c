// Scheduler: this replica's share of the scheduling (docs/scale-out.md).
//
// Every corrald replica on one database serves the whole API; scheduling is split into
// shards (shard_map.h), each run by one SchedLoop on whichever replica holds its lease
// row. Every lease_period / 3 a lease thread here
//   1. keeps this replica's row in `replicas` alive and renews the leases it holds (one
//      another replica took since is lost: its loop stops; its late writes were refused
//      by the epoch already);
//   2. counts the live replicas and claims lapsed leases while it holds fewer than its
//      share (the items divided by the replicas, rounded up), or any lease that has
//      stayed lapsed for a whole round (its replica died and nobody else took it);
//   3. hands one lease a round over while it holds more than its share (a replica
//      joined): to the replica furthest below its share, by name, so that no other takes
//      it meanwhile.
// Besides the shards there is one more lease, `@controllers`: its holder runs the
// cluster-wide controllers that must run once (node health, ledger accrual, usage
// history), so they move with a failover like the shards.
//
// Before all that, each round checks that this replica schedules under the config the
// others do (config_agreement.h); one that does not holds no lease and says why
// (config_problem(): the log, /healthz, /v1/shards).
//
// A replica that dies or hangs loses its leases within one lease period; another claims
// each within about a third more (a round). A claimed lease bumps the shard's epoch, so
// a paused holder that resumes has every write refused (SchedLoop: fenced).
//
// Signals (SchedulerSignals) go to this replica's loops and, through the store's
// listener (store/listener.h: PostgreSQL LISTEN/NOTIFY), to the other replicas' loops;
// the assignment board's bumps travel the same way, so an agent's long poll on any
// replica wakes when its node's work changes.
//
// Thread safety: start/stop from one thread; everything else from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/status.h"
#include "server/base/metrics.h"
#include "server/base/periodic.h"
#include "server/base/settings.h"
#include "server/base/spec_cache.h"
#include "server/controllers/assignment_board.h"
#include "server/controllers/scheduler_signals.h"
#include "server/cycle/config_agreement.h"
#include "server/cycle/sched_loop.h"
#include "server/cycle/shard_map.h"
#include "store/listener.h"
#include "store/store.h"

namespace corral::server {

// One lease as this replica sees it, for GET /v1/shards.
struct LeaseView {
  std::string shard;
  std::string holder;
  std::int64_t epoch = 0;
  core::Time expires_at;
  bool mine = false;
};

class Scheduler : public SchedulerSignals {
 public:
  static constexpr std::string_view kControllers = "@controllers";

  Scheduler(store::Store& store, const core::Clock& clock, Metrics& metrics,
            const SchedLoopOptions& loop_options, ShardMap shards, ReplicaSettings replica,
            AssignmentBoard* board, SpecCache* specs);
  ~Scheduler() override;
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Called with true when this replica takes the @controllers lease and false when it
  // loses or releases it, from the lease thread. REQUIRES: before start().
  void on_controllers(std::function<void(bool)> fn) { on_controllers_ = std::move(fn); }
  // Opens the listener on `store_url` (PostgreSQL only), claims what this replica may
  // at once, and starts the lease thread. `address`: this replica's API, for its row.
  core::Status start(const std::string& store_url, const std::string& address);
  // Stops the loops and releases this replica's leases, so a successor need not wait.
  void stop();

  // SchedulerSignals: this replica's loops, and the other replicas'.
  void job_submitted(core::JobId id) override;
  void capacity_changed() override;
  void wake() override;

  // The queue positions and tenant shares of the loops this replica runs (null when it
  // runs none: readers fall back on the stored positions).
  std::shared_ptr<const SchedLoop::QueuePositions> queue_positions() const;
  std::shared_ptr<const SchedLoop::TenantShares> tenant_shares() const;
  // The first shard's cycle recorder (captures are made by the replica that runs it).
  CycleRecorder& recorder() { return loops_.front()->recorder(); }
  // The epoch of the first shard this replica runs (0: none).
  std::int64_t epoch() const;
  const ShardMap& shards() const { return shards_; }
  const ReplicaSettings& replica() const { return replica_; }
  // The decide() knobs every shard runs with (the submit checks read the session limit).
  const sched::SchedulerConfig& sched_config() const { return sched_config_; }
  // Why scheduling here is failing: "shard NAME: <the last cycle's error>" for the first
  // shard this replica runs whose last cycle failed; "" when none did.
  std::string degraded() const;
  // Why this replica takes no lease: its scheduling config differs from the one the live
  // replicas run ("" when it agrees). The last round's judgement.
  std::string config_problem() const;
  // This replica's scheduling config, and the one stored as of the last round.
  const SchedConfigIdentity& config_identity() const { return identity_; }
  std::optional<store::SchedConfigRow> stored_config() const;
  // Whether this replica runs the once-per-cluster controllers now.
  bool runs_controllers() const { return controllers_; }
  // Every lease and replica row, as the store has them.
  core::Result<std::vector<LeaseView>> leases();
  core::Result<std::vector<store::ReplicaRow>> replicas();

  // One round of the lease thread (tests call it with the thread not started).
  void lease_round();

 private:
  // The leases to spread: every shard, then the controllers'.
  std::vector<std::string> items() const;
  void start_item(const std::string& item, std::int64_t epoch);
  void stop_item(const std::string& item);
  void on_peer(std::string_view channel, std::string_view payload);
  void publish(std::string channel, std::string payload);
  // Stops and releases every lease held (a replica whose config stopped agreeing).
  void release_all();
  // The live replica under this config holding the fewest live leases, fewer than
  // `share`; "" when every other one holds its share.
  std::string below_share(const std::vector<store::ReplicaRow>& replicas,
                          const std::vector<store::LeaseRow>& leases, std::int64_t share,
                          core::Time now) const;
  // Records the round's config judgement (logged when it changes); false when this
  // replica must hold no lease, having released what it held.
  bool note_config_verdict(const std::optional<store::SchedConfigRow>& stored,
                           const ConfigVerdict& verdict);

  store::Store& store_;
  const core::Clock& clock_;
  Metrics& metrics_;
  const ShardMap shards_;
  const ReplicaSettings replica_;
  AssignmentBoard* const board_;
  std::vector<std::unique_ptr<SchedLoop>> loops_;  // one per shard, by index
  std::string address_;
  core::Time started_at_{};

  mutable std::mutex mu_;                     // the lease thread's state, and start/stop
  std::atomic<bool> row_written_{false};      // a round wrote this replica's row
  std::map<std::string, std::int64_t> held_;  // item -> epoch; guarded by mu_
  std::vector<std::string> order_;            // held items, oldest claim first; guarded by mu_
  const SchedConfigIdentity identity_;
  const sched::SchedulerConfig sched_config_;
  std::string config_problem_;                          // guarded by mu_
  std::optional<store::SchedConfigRow> stored_config_;  // guarded by mu_
  std::atomic<bool> controllers_{false};
  std::function<void(bool)> on_controllers_;
  // queue_positions() of several shards, merged, and the loops' positions it came from.
  mutable std::mutex merged_mu_;
  mutable std::vector<std::shared_ptr<const SchedLoop::QueuePositions>> merged_from_
      CORRAL_GUARDED_BY(merged_mu_);
  mutable std::shared_ptr<const SchedLoop::QueuePositions> merged_ CORRAL_GUARDED_BY(merged_mu_);
  std::unique_ptr<store::Listener> listener_;
  Periodic rounds_;
};

}  // namespace corral::server
