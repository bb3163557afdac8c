// Placing a share of one GPU (JobRequest::gpu_milli). It may go on any usable GPU of an
// acceptable type that is free or already holds shares with room for it (its thousandths
// and its GPU memory), on a node with the CPUs and memory it asks and, for a GPU that
// draws no power yet, room under its rack's cap. SchedulerConfig::share_placement chooses
// among those; the default puts it where its node's fragmentation (fragmentation.h)
// grows least, so whole GPUs and whole nodes stay free for the jobs that need them. Ties
// go to the fuller GPU, then node and GPU order. Quota counts the share exactly.
//
// A job of several shares (gpus > 1) gets each on a GPU of its own, chosen in turn by the
// same rule, all or nothing, on one type (on any nodes: shares ask for no topology).
//
// A share neither preempts nor is promised a start: it waits for room, and a share is
// never a victim either (running.cc), so a shared GPU frees only when its last share ends.
#include <algorithm>
#include <bit>
#include <functional>
#include <optional>
#include <tuple>

#include "core/splitmix.h"
#include "core/units.h"
#include "sched/internal/admit.h"
#include "sched/internal/cycle.h"
#include "sched/internal/fragmentation.h"
#include "sched/internal/text.h"

namespace corral::sched::detail {
namespace {

struct ShareSpot {
  NodeIx node = -1;
  std::int32_t gpu = -1;
  std::int32_t room = 0;  // thousandths free on the GPU before the share
};

// The GPUs `r` fits on among the nodes of `type` it may use, in node and GPU order.
// `forbidden` (Gate::forbidden(), per node): what the job's view keeps it off, reserved or
// promised GPUs, shared ones too (the gate blocks only free GPUs in the plan).
std::vector<ShareSpot> share_spots(const Plan& plan, const JobRequest& r, TypeIx type,
                                   RegionIx region, const std::vector<std::uint64_t>& forbidden) {
  const ClusterSnapshot& s = plan.snapshot();
  const bool counts_memory = s.gpu_types()[type].memory_mib > 0;  // 0: the type states none
  std::vector<ShareSpot> out;
  for (NodeIx node = 0; node < static_cast<NodeIx>(s.nodes().size()); ++node) {
    const NodeTopo& topo = s.topo()[node];
    const core::Node& n = s.nodes()[node];
    if (topo.type != type || (region != kAnyRegion && topo.region != region)) continue;
    if ((n.cpus > 0 && plan.free_cpus(node) < r.cpus_per_gpu) ||
        (n.memory_mib > 0 && plan.free_memory_mib(node) < r.memory_per_gpu_mib)) {
      continue;
    }
    // A GPU that draws nothing yet must fit under its rack's cap; one that does already
    // adds nothing, but a rack already past its cap (lowered since) takes nothing more.
    const bool powers_one_more = plan.room_on(node, 1, 0, 0) == Plan::Room::kFits;
    const bool under_cap = plan.room_on(node, 0, 0, 0) == Plan::Room::kFits;
    if (!under_cap) continue;
    for (std::uint64_t m = topo.usable_mask & ~forbidden[node]; m != 0; m &= m - 1) {
      const std::int32_t gpu = std::countr_zero(m);
      const ShareUse room = plan.share_room(node, gpu);
      if (room.milli < r.gpu_milli || (counts_memory && room.memory_mib < r.gpu_memory_mib)) {
        continue;
      }
      if (room.milli == 1000 && !powers_one_more) continue;
      out.push_back({node, gpu, static_cast<std::int32_t>(room.milli)});
    }
  }
  return out;
}

// Each GPU's free thousandths on `node` (0: held whole or not usable).
std::vector<std::int32_t> free_milli(const Plan& plan, NodeIx node) {
  std::vector<std::int32_t> out;
  for (std::uint64_t m = plan.snapshot().topo()[node].all_mask; m != 0; m &= m - 1) {
    out.push_back(static_cast<std::int32_t>(plan.share_room(node, std::countr_zero(m)).milli));
  }
  return out;
}

// How much of `spot`'s node the workload loses by the share going there (lower first).
class FragmentationScore {
 public:
  FragmentationScore(const Plan& plan, const std::vector<WorkloadClass>& classes,
                     const JobRequest& r)
      : plan_(plan), classes_(classes), r_(r) {}

  double operator()(const ShareSpot& spot) {
    if (spot.node != node_) {
      node_ = spot.node;
      free_ = free_milli(plan_, node_);
      const core::Node& n = plan_.snapshot().nodes()[node_];
      cpus_ = n.cpus > 0 ? plan_.free_cpus(node_) : -1;
      before_ = fragmentation(classes_, type(), cpus_, free_);
    }
    // The GPU's position among the node's GPUs (all_mask's set bits below it).
    const std::uint64_t below =
        plan_.snapshot().topo()[node_].all_mask & ((std::uint64_t{1} << spot.gpu) - 1);
    std::vector<std::int32_t> after = free_;
    after[static_cast<std::size_t>(std::popcount(below))] -= r_.gpu_milli;
    return fragmentation(classes_, type(), cpus_ < 0 ? -1 : cpus_ - r_.cpus_per_gpu, after) -
           before_;
  }

 private:
  TypeIx type() const { return plan_.snapshot().topo()[node_].type; }
  const Plan& plan_;
  const std::vector<WorkloadClass>& classes_;
  const JobRequest& r_;
  NodeIx node_ = -1;
  std::vector<std::int32_t> free_;
  std::int64_t cpus_ = -1;
  double before_ = 0;
};

// The spot the configured rule picks among `spots` (not empty).
// `placed`: how many of the job's shares were placed before this one.
ShareSpot choose(Cycle& c, const JobRequest& r, const std::vector<ShareSpot>& spots,
                 std::int32_t placed) {
  const Plan& plan = c.plan;
  const ClusterSnapshot& s = c.s;
  const auto left = [&](const ShareSpot& x) { return x.room - r.gpu_milli; };
  // Lower keys win; the node and GPU order break what is left of a tie.
  using Key = std::tuple<double, double, NodeIx, std::int32_t>;
  std::function<Key(const ShareSpot&)> key;
  std::optional<FragmentationScore> frag;
  switch (c.config.share_placement) {
    case SharePlacement::kRandom:
      return spots[core::splitmix64(static_cast<std::uint64_t>(r.id.value) * 64 + placed) %
                   spots.size()];
    case SharePlacement::kFragmentation:
      if (!c.workload) c.workload = workload_classes(s);
      frag.emplace(plan, *c.workload, r);
      key = [&](const ShareSpot& x) { return Key{(*frag)(x), left(x), x.node, x.gpu}; };
      break;
    case SharePlacement::kBestFit: {
      // What the node has left after it, half GPU capacity and half CPUs, each as a
      // share of the largest node's (FGD's best-fit baseline).
      double most_cpus = 1, most_milli = 1;
      for (NodeIx n = 0; n < static_cast<NodeIx>(s.nodes().size()); ++n) {
        most_cpus = std::max(most_cpus, static_cast<double>(s.nodes()[n].cpus));
        most_milli = std::max(most_milli, 1000.0 * std::popcount(s.topo()[n].all_mask));
      }
      key = [&, most_cpus, most_milli](const ShareSpot& x) {
        std::int64_t milli = -r.gpu_milli;
        for (std::int32_t f : free_milli(plan, x.node)) milli += f;
        const double cpus = static_cast<double>(plan.free_cpus(x.node) - r.cpus_per_gpu);
        return Key{0.5 * cpus / most_cpus + 0.5 * static_cast<double>(milli) / most_milli, left(x),
                   x.node, x.gpu};
      };
      break;
    }
    case SharePlacement::kPacking:
      key = [&](const ShareSpot& x) {
        const std::uint64_t usable = s.topo()[x.node].usable_mask;
        if (x.room < 1000) return Key{0, left(x), x.node, x.gpu};  // already shared
        const std::int32_t free = plan.free_count(x.node);
        const bool busy = free < std::popcount(usable) ||
                          std::ranges::any_of(free_milli(plan, x.node),
                                              [](std::int32_t f) { return f > 0 && f < 1000; });
        return busy ? Key{1, free, x.node, x.gpu} : Key{2, std::popcount(usable), x.node, x.gpu};
      };
      break;
  }
  ShareSpot best = spots.front();
  Key best_key = key(best);
  for (std::size_t i = 1; i < spots.size(); ++i) {
    const Key candidate = key(spots[i]);
    if (candidate < best_key) {
      best = spots[i];
      best_key = candidate;
    }
  }
  return best;
}

}  // namespace

Attempt try_place_share(Cycle& c, const JobRequest& r, TenantIx tenant) {
  Attempt out;
  const RegionIx region = c.s.region_of(r);
  if (region == kNoSuchRegion) {
    out.reason = cat("unschedulable: no node is in region ", r.region);
    return out;
  }
  const std::vector<TypeIx> types = candidate_types(c.s, c.config, r);
  if (!types.empty()) out.preferred = types.front();
  std::string quota_reason;
  bool could_fit = false;  // some acceptable type has GPUs with the memory it asks
  for (const TypeIx type : types) {
    const std::int64_t memory = c.s.gpu_types()[type].memory_mib;
    if (memory > 0 && r.gpu_memory_mib > memory) continue;
    could_fit = true;
    const Admission admission = admit(c.plan, tenant, type, gpu_milli_of(r, r.gpus), is_session(r));
    if (!admission.ok) {
      if (quota_reason.empty()) quota_reason = admission.reason;
      continue;
    }
    // Each share on a GPU of its own, chosen in turn with the ones before it taken
    // (tentatively: the caller takes them), all or nothing.
    const Plan::Mark mark = c.plan.mark();
    std::vector<Plan::Take> takes;
    for (std::int32_t k = 0; k < r.gpus; ++k) {
      std::vector<ShareSpot> spots = share_spots(c.plan, r, type, region, c.gate.forbidden());
      std::erase_if(spots, [&](const ShareSpot& x) {
        return std::ranges::any_of(takes, [&](const Plan::Take& t) {
          return t.node == x.node && t.mask == std::uint64_t{1} << x.gpu;
        });
      });
      if (spots.empty()) break;
      const ShareSpot spot = choose(c, r, spots, k);
      c.plan.take_share(spot.node, spot.gpu, tenant, r);
      takes.push_back({spot.node, std::uint64_t{1} << spot.gpu});
    }
    c.plan.rollback(mark);
    if (static_cast<std::int32_t>(takes.size()) < r.gpus) continue;
    out.placement = Placement{.job = r.id,
                              .gpu_type = c.s.gpu_types()[type].id,
                              .gpus = gpus_of(c.s, takes),
                              .share_milli = r.gpu_milli,
                              .borrowed = admission.borrowed,
                              .packed = packed_level(c.s, takes),
                              .reservation = r.reservation};
    out.takes = std::move(takes);
    return out;
  }
  if (!could_fit) {
    out.kind = PendingKind::kUnschedulable;
    out.reason = cat("unschedulable: no acceptable GPU type has ", r.gpu_memory_mib,
                     " MiB of memory for the share");
  } else if (!quota_reason.empty()) {
    out.kind = PendingKind::kQuota;
    out.reason = quota_reason;
  } else {
    out.kind = PendingKind::kCapacity;
    out.reason = cat("capacity: ",
                     r.gpus == 1 ? std::string("no GPU of an acceptable type has ")
                                 : cat("fewer than ", r.gpus, " GPUs of one acceptable type have "),
                     core::format_gpu_milli(r.gpu_milli), " of a GPU",
                     r.gpu_memory_mib > 0 ? cat(" and ", r.gpu_memory_mib, " MiB") : "",
                     " free on a node with room for its CPUs and memory");
  }
  return out;
}

}  // namespace corral::sched::detail
