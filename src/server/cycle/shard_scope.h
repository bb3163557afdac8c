// ShardScope: one scheduling cycle narrowed to one shard of several (shard_map.h,
// docs/scale-out.md).
//
// The shard's loop reads the whole store like any other and builds its snapshot from
// it, so every tenant's GPUs in every shard count for quotas and fair share; then:
//   - nodes of other shards are shown cordoned: their jobs stay in the snapshot (their
//     GPUs count) but decide() places nothing there;
//   - only the pending jobs routed to this shard are in its queue;
//   - decisions that touch another shard's jobs (a preemption, a resize) are dropped,
//     with the placements that waited for them;
//   - at commit, recount_quotas() recounts the placed tenants' GPUs under their row
//     locks: a tenant another shard placed for since this cycle's read, and now over its
//     guarantee plus borrow limit, has this cycle's placements of that type dropped; they
//     stay pending for the next cycle, which sees the other shard's GPUs. A placement
//     that the other shard's GPUs take past the guarantee is marked borrowed.
//   - at commit, drop_over_rack_power() does the same for racks' power caps: two shards
//     whose nodes share a capped rack (one per GPU type, say) each keep within the cap
//     as they saw it, and together could pass it.
// With one shard (the default) none of it applies.
//
// Thread safety: free functions.
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <utility>

#include "core/ids.h"
#include "core/result.h"
#include "sched/decisions.h"
#include "sched/snapshot.h"
#include "server/cycle/shard_map.h"
#include "server/cycle/snapshot_from_store.h"
#include "store/store.h"

namespace corral::server {

// Shows other shards' nodes cordoned and drops pending jobs routed elsewhere; returns
// the names of the nodes this shard owns.
std::set<std::string> narrow_to_shard(sched::SnapshotInput& in, const ShardMap& map, int shard);

// Drops the placements `drop` selects and the preemptions and resizes made only for
// them; returns how many placements it dropped.
std::int64_t drop_placements(sched::Decisions& d,
                             const std::function<bool(const sched::Placement&)>& drop);

// Drops preemptions and resizes of jobs with a GPU outside `own_nodes`, and the
// placements that waited for them; returns how many decisions it dropped.
std::int64_t keep_own_decisions(sched::Decisions& d, const sched::ClusterSnapshot& snapshot,
                                const std::set<std::string>& own_nodes);

// What recount_quotas() changed.
struct QuotaRecount {
  std::int64_t dropped = 0;   // placements dropped: they would pass the borrow limit
  std::int64_t borrowed = 0;  // placements marked borrowed that decide() saw as guaranteed
};

// In the commit transaction, from what the store says each placed tenant holds now,
// under its row lock, and only where that is more than this cycle saw (`view`): GPUs
// another shard placed since. Drops from `d` the placements of each (tenant, GPU type)
// that would take the tenant over its guarantee plus borrow limit; then marks borrowed
// each remaining placement that takes it past its guarantee, in decision order (as
// sched/internal/admit.h would have, had it seen those GPUs).
core::Result<QuotaRecount> recount_quotas(store::SchedulerRepo& scheduler, sched::Decisions& d,
                                          const sched::ClusterSnapshot& snapshot,
                                          const StoreView& view);

// In the commit transaction, after drop_over_quota(): drops from `d` the placements on
// each capped rack that would take it past its cap given the GPUs the store says are held
// there now, counted at each node's watts per GPU (core::node_gpu_watts), and only
// because of GPUs this cycle did not see (`view`): other shards'. Returns how many
// placements it dropped.
core::Result<std::int64_t> drop_over_rack_power(store::RackCapRepo& rack_caps, sched::Decisions& d,
                                                const sched::ClusterSnapshot& snapshot,
                                                const StoreView& view);

}  // namespace corral::server
