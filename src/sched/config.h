// SchedulerConfig: the policy knobs of decide(). Defaults are Corral's default policy;
// the simulator's baselines (FIFO, Slurm-like, ...) are other settings of the same knobs.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "core/time.h"

namespace corral::sched {

enum class QueueOrder {
  kFairShare,        // tier, weighted fair share over the tenant tree, then inside a
                     // tenant least attained service in discrete levels, then age
  kFifo,             // tier, then age only
  kAttainedService,  // tier, then least attained GPU-service in discrete levels (Tiresias)
};

// Where a share of a GPU (JobRequest::gpu_milli) goes among the GPUs it fits on
// (place_share.cc; docs/scheduling.md, "Shares of a GPU").
enum class SharePlacement {
  kFragmentation,  // the GPU whose node loses least of what the workload can still use
                   // (FGD's fragmentation measure over the jobs running and queued)
  kBestFit,        // the node with the least GPU and CPU left, then the fullest GPU
  kPacking,        // a GPU already shared, then a free GPU on a busy node, then an idle node
  kRandom,         // any GPU it fits on, drawn by the job's id (a baseline)
};

// Preemption: who may take GPUs from whom, and what protects a victim.
struct PreemptionConfig {
  bool enabled = true;
  // A job runs at least this long (since its start) before it may be preempted or shrunk,
  // so standard and production work is not churned by every arrival.
  core::Duration min_runtime = core::seconds(10 * 60);
  // ... except in the tiers named here, which have their own protection. By default the
  // preemptible tier (0) has none: preemptible work exists to make room for higher tiers
  // at once, and yields within one grace period (checkpointing first when it can), as
  // Kueue's preemption does and Slurm's PreemptExemptTime=0 (its default) does.
  std::map<std::int32_t, core::Duration> min_runtime_by_tier = {{0, core::Duration(0)}};
  // After this many preemptions a job is protected until it finishes.
  std::int32_t max_preemptions_per_job = 3;
  // Time a victim has to checkpoint and stop after the request.
  core::Duration grace = core::seconds(120);
  // Preemption searches per cycle; past it blocked jobs wait for the next cycle.
  std::int32_t max_searches_per_cycle = 64;
  // Under fair-share order a job may preempt its own tenant's jobs of its tier or below
  // that attained more service (a higher attained-service level): least attained service
  // first inside the tenant, as Tiresias does between all jobs. Only a victim whose stop
  // loses at most this much work per GPU (since its last checkpoint, plus its restore)
  // is taken: the tenant's long jobs pause through a checkpoint, never by throwing work
  // away. 0: never.
  core::Duration attained_service_max_loss = core::seconds(10 * 60);

  // The protection of a job of `tier`.
  core::Duration min_runtime_for(std::int32_t tier) const {
    const auto it = min_runtime_by_tier.find(tier);
    return it == min_runtime_by_tier.end() ? min_runtime : it->second;
  }
};

struct SchedulerConfig {
  QueueOrder order = QueueOrder::kFairShare;
  // Under kFairShare, how strictly tenants' standings order the queue, from 1 (strict
  // weighted fair share: the tenant furthest below its share goes next) to 0 (tenants
  // ignored: least attained service, then age, across all jobs). Between, every tenant
  // within (1 - fairness) / fairness of a fair share of the lowest standing may go next,
  // and the job that would go first without tenants does (order.cc, JobQueue::pick_ready).
  double fairness = 1.0;
  // Half-life of decayed fair-share usage (usage.h).
  core::Duration usage_half_life = core::seconds(7 * 24 * 3600);
  // Score placements by topology (tight packing, best fit). Off: first fit in node order.
  bool topology_scoring = true;
  PreemptionConfig preemption;
  // EASY backfill: the first blocked job gets a planned start from running jobs' max
  // runtimes, and later jobs start now only when they cannot delay it. Off by default:
  // the GPUs held back for every head cost more than they bring on the real traces we
  // replay (docs/evaluation.md); off, every job that fits starts (as in Kueue's
  // BestEffortFIFO and in Tiresias), and only one starved job at a time is promised one.
  bool backfill = false;
  // A job waiting this long is starved: it goes ahead of fair share in its tier while its
  // tenant is under its share, and ahead of its tenant's other jobs in any case (oldest
  // first); and one starved job at a time (JobQueue::may_promise), when blocked for room,
  // is promised its start as backfill's head is (docs/scheduling.md, "Starvation bound").
  // 0: never. The promise holds GPUs back: against none, mean JCT on the Pollux workloads
  // is 1-2% longer at this age, 2-5% at 8 h, 7-9% at 2 h (docs/evaluation.md).
  core::Duration starvation_age = core::seconds(24 * 3600);
  // Running elastic jobs are re-sized together, every re-plan period, to where GPUs add
  // the most to the power mean of their speedups (elastic_allocation.cc; docs/scheduling.md,
  // part 7), over the GPUs they hold and those no pending job could use. Off: elastic
  // jobs keep the size they started at, unless shrunk for a pending job.
  bool elastic_growth = true;
  // An elastic job runs only at sizes where each GPU still adds at least this share of
  // what one GPU adds at the job's minimum size, by its scaling curve:
  // throughput(n) / n >= elastic_min_efficiency * throughput(min) / min. It starts at the
  // largest such size that fits and never grows past it. 0: any size in its range.
  double elastic_min_efficiency = 0.5;
  // What a resize costs beyond the job's restore time (stop, requeue, start): the
  // allocator charges a job this plus its restore time for every change of size.
  core::Duration elastic_resize_cost = core::seconds(30);
  // A running elastic job is re-sized only after it held its size this long (Pollux and
  // Sia re-plan every minute).
  core::Duration elastic_replan_period = core::seconds(60);
  // The power mean's exponent over the jobs' speedups that the allocator maximises: the
  // more negative, the more GPUs go to jobs behind the others. -1 (the harmonic mean) is
  // Pollux's; Sia uses -0.5; 0 is the geometric mean (proportional fairness). At most 0.
  double elastic_fairness = -1.0;
  // How much a GPU type's price weighs when a job that gives its speed by type
  // (JobRequest::gpu_speed) is placed: types go by speed / usage_factor^weight, highest
  // first (the usage factor is what a GPU-second costs the tenant's fair share). 1: most
  // work per unit of price; 0: the fastest type. On the Sia workloads 0.5 has the lowest
  // mean JCT of the three summed over its traces, and a lower cost than 0
  // (docs/evaluation.md, "Sia workloads").
  double type_price_weight = 0.5;
  // A job's attained-service level is the number of thresholds (GPU-seconds) its
  // attained service has passed; lower levels go first, FIFO within a level: between all
  // jobs under kAttainedService, inside each tenant under kFairShare. Empty: one level.
  std::vector<double> las_thresholds_gpu_seconds = {3'600.0, 36'000.0};
  // The most GPUs one user's interactive sessions (priority class interactive) may hold at
  // once, across tenants: a session that would pass it waits, out of line, until one of
  // the user's sessions ends (sched/internal/session_limits.h). 0: no limit.
  std::int32_t session_gpus_per_user = 2;
  SharePlacement share_placement = SharePlacement::kFragmentation;
};

}  // namespace corral::sched
