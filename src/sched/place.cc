// Gang placement. Levels are tried from the tightest that could hold the gang outward:
//
//   1. one NVLink domain inside one node   (best fit: the fullest domain that still fits,
//                                           then the fullest node, then the lowest index)
//   2. one node, spread over its domains   (fewest domains)
//   3. one multi-node NVLink rack          (NVL72-style)
//   4. one leaf switch, 5. one spine, 6. the cluster
//
// A required topology stops at its level; preferred and none go on outward. At levels
// 3-6 the candidate domains are tried smallest-free-first (best fit), which keeps whole
// nodes and whole leaves free for the large gangs that need them. Inside a domain, whole
// free nodes are used first and the remainder goes to the fullest node that can take it.
// A region-bound request sees only its region's nodes, and only the domains inside that
// region (every domain lies in one), so it is never placed elsewhere at any level.
#include "sched/internal/place.h"

#include <algorithm>
#include <bit>
#include <utility>

namespace corral::sched::detail {
namespace {

using core::PackLevel;
using core::TopologyMode;

// Lowest `count` set bits of `mask`.
std::uint64_t lowest_bits(std::uint64_t mask, std::int32_t count) {
  std::uint64_t out = 0;
  for (std::int32_t i = 0; i < count && mask != 0; ++i) {
    const std::uint64_t bit = mask & (~mask + 1);
    out |= bit;
    mask &= ~bit;
  }
  return out;
}

// Whether the request may use `node`: any node, or one of the region it is bound to.
bool in_region(const ClusterSnapshot& s, const PlaceRequest& r, NodeIx node) {
  return r.region == kAnyRegion || s.topo()[node].region == r.region;
}

// Checks one node for `gpus` GPUs beyond what `extra_watts` already adds to its rack
// in this selection.
class NodeFit {
 public:
  NodeFit(const Plan& plan, const PlaceRequest& r, PlaceMiss& miss)
      : plan_(plan), r_(r), miss_(miss) {}

  bool fits(NodeIx node, std::int32_t gpus) {
    if (plan_.free_count(node) < gpus) return false;
    const RackIx rack = plan_.snapshot().topo()[node].rack;
    switch (plan_.room_on(node, gpus, r_.cpus_per_gpu, r_.memory_per_gpu_mib, extra(rack))) {
      case Plan::Room::kFits:
        return true;
      case Plan::Room::kResources:
        miss_.resources_blocked = true;
        return false;
      case Plan::Room::kPower:
        miss_.power_blocked = true;
        miss_.power_rack = rack;
        return false;
    }
    return false;
  }
  // The most GPUs, up to `gpus`, that fit on `node`: fits() is monotone in the count (CPUs,
  // memory and watts grow with it), so a binary search.
  std::int32_t most(NodeIx node, std::int32_t gpus) {
    if (fits(node, gpus)) return gpus;
    std::int32_t lo = 0, hi = gpus;  // lo fits (none always does), hi does not
    while (hi - lo > 1) {
      const std::int32_t mid = lo + (hi - lo) / 2;
      (fits(node, mid) ? lo : hi) = mid;
    }
    return lo;
  }
  // Counts `gpus` on `node` toward its rack for the rest of this selection.
  void hold(NodeIx node, std::int32_t gpus) {
    const NodeTopo& topo = plan_.snapshot().topo()[node];
    for (auto& [r, watts] : extra_) {
      if (r == topo.rack) {
        watts += gpus * topo.gpu_watts;
        return;
      }
    }
    extra_.push_back({topo.rack, gpus * topo.gpu_watts});
  }

 private:
  // Watts this selection already put on `rack`. A gang spans few racks: a flat list.
  std::int64_t extra(RackIx rack) const {
    for (const auto& [r, watts] : extra_) {
      if (r == rack) return watts;
    }
    return 0;
  }

  const Plan& plan_;
  const PlaceRequest& r_;
  PlaceMiss& miss_;
  std::vector<std::pair<RackIx, std::int64_t>> extra_;
};

struct DomainPick {
  std::uint64_t mask = 0;        // the GPUs to take; 0: no domain fits
  std::int32_t domain_free = 0;  // free GPUs of their domain before taking them
};

// `gpus` free GPUs of `node` inside one NVLink domain, best fit (the domain with the
// fewest free GPUs that still fits, the first on ties).
DomainPick pick_in_one_domain(const Plan& plan, NodeIx node, std::int32_t gpus) {
  const NodeTopo& topo = plan.snapshot().topo()[node];
  std::uint64_t best = 0;
  std::int32_t best_free = kMaxGpusPerNode + 1;
  for (std::uint64_t domain : topo.domain_masks) {
    const std::uint64_t free = domain & plan.free_mask(node);
    const std::int32_t n = std::popcount(free);
    if (n >= gpus && n < best_free) {
      best = free;
      best_free = n;
    }
  }
  if (best == 0) return {};
  return {lowest_bits(best, gpus), best_free};
}

std::uint64_t mask_in_one_domain(const Plan& plan, NodeIx node, std::int32_t gpus) {
  return pick_in_one_domain(plan, node, gpus).mask;
}

// `gpus` free GPUs of `node` spread over the fewest NVLink domains (fullest first).
std::uint64_t mask_fewest_domains(const Plan& plan, NodeIx node, std::int32_t gpus) {
  const NodeTopo& topo = plan.snapshot().topo()[node];
  std::vector<std::uint64_t> domains;
  for (std::uint64_t d : topo.domain_masks) {
    if ((d & plan.free_mask(node)) != 0) domains.push_back(d & plan.free_mask(node));
  }
  std::stable_sort(domains.begin(), domains.end(), [](std::uint64_t a, std::uint64_t b) {
    return std::popcount(a) > std::popcount(b);
  });
  std::uint64_t out = 0;
  std::int32_t left = gpus;
  for (std::uint64_t d : domains) {
    const std::uint64_t part = lowest_bits(d, left);
    out |= part;
    left -= std::popcount(part);
    if (left == 0) break;
  }
  return left == 0 ? out : 0;
}

std::uint64_t mask_on_node(const Plan& plan, NodeIx node, std::int32_t gpus, bool scoring) {
  if (!scoring) return lowest_bits(plan.free_mask(node), gpus);
  const std::uint64_t packed = mask_in_one_domain(plan, node, gpus);
  return packed != 0 ? packed : mask_fewest_domains(plan, node, gpus);
}

// Level 1 with scoring: the fleet's fullest NVLink domain that fits (fewest free GPUs
// left in it), then the fullest node, then the lowest index. Nodes are visited fullest
// first, and a domain never has more free GPUs than its node: once one fits, a node that
// is one domain can only tie or do worse, so only nodes split into several domains are
// looked at after it, and on a type with no such node (NVSwitch fleets) the first fit is
// the answer.
std::optional<PlaceResult> place_in_fullest_domain(const Plan& plan, const PlaceRequest& r,
                                                   PlaceMiss& miss) {
  NodeFit fit(plan, r, miss);
  const ClusterSnapshot& s = plan.snapshot();
  const bool split_nodes = plan.type_has_split_nodes(r.type);
  std::optional<PlaceResult> best;
  std::int32_t best_free = kMaxGpusPerNode + 1;
  for (std::int32_t free = r.gpus; free <= kMaxGpusPerNode; ++free) {
    for (NodeIx node : plan.nodes_with_free(r.type, free)) {
      if (best && s.topo()[node].domain_masks.size() <= 1) continue;
      if (!in_region(s, r, node) || !fit.fits(node, r.gpus)) continue;
      const DomainPick pick = pick_in_one_domain(plan, node, r.gpus);
      if (pick.mask == 0 || pick.domain_free >= best_free) continue;
      best = PlaceResult{.takes = {{node, pick.mask}}};
      best_free = pick.domain_free;
      // An exact fit is the tightest; without split nodes nothing later can beat it.
      if (best_free == r.gpus || !split_nodes) return best;
    }
  }
  return best;
}

// Levels 1-2: the whole gang on one node. With scoring, nodes are visited fullest
// first (best fit), else in index order.
std::optional<PlaceResult> place_on_one_node(const Plan& plan, const PlaceRequest& r,
                                             bool one_domain, PlaceMiss& miss) {
  if (one_domain && r.scoring) return place_in_fullest_domain(plan, r, miss);
  NodeFit fit(plan, r, miss);
  const ClusterSnapshot& s = plan.snapshot();
  const auto try_node = [&](NodeIx node) -> std::optional<PlaceResult> {
    if (!in_region(s, r, node) || !fit.fits(node, r.gpus)) return std::nullopt;
    const std::uint64_t mask = one_domain ? mask_in_one_domain(plan, node, r.gpus)
                                          : mask_on_node(plan, node, r.gpus, r.scoring);
    if (mask == 0) return std::nullopt;
    return PlaceResult{.takes = {{node, mask}}};
  };
  if (r.scoring) {
    for (std::int32_t free = r.gpus; free <= kMaxGpusPerNode; ++free) {
      for (NodeIx node : plan.nodes_with_free(r.type, free)) {
        if (auto placed = try_node(node)) return placed;
      }
    }
    return std::nullopt;
  }
  for (ClusterIx c = 0; c < plan.domain_count(Level::kCluster); ++c) {
    if (r.region != kAnyRegion && s.region_of_cluster(c) != r.region) continue;
    for (NodeIx node : plan.domain_nodes(Level::kCluster, c, r.type)) {
      if (auto placed = try_node(node)) return placed;
    }
  }
  return std::nullopt;
}

// Picks nodes inside one domain for the gang, or nothing.
std::optional<PlaceResult> place_in_domain(const Plan& plan, const PlaceRequest& r,
                                           const std::vector<NodeIx>& domain_nodes,
                                           PlaceMiss& miss) {
  NodeFit fit(plan, r, miss);
  std::vector<NodeIx> nodes;
  for (NodeIx n : domain_nodes) {
    if (plan.free_count(n) > 0) nodes.push_back(n);
  }
  PlaceResult out;
  if (r.per_node > 0) {
    // A fixed split: gpus / per_node nodes, each the fullest node that fits per_node.
    if (r.scoring) {
      std::stable_sort(nodes.begin(), nodes.end(),
                       [&](NodeIx a, NodeIx b) { return plan.free_count(a) < plan.free_count(b); });
    }
    std::int32_t need = r.gpus / r.per_node;
    for (NodeIx n : nodes) {
      if (need == 0) break;
      if (!fit.fits(n, r.per_node)) continue;
      const std::uint64_t mask = mask_on_node(plan, n, r.per_node, r.scoring);
      if (mask == 0) continue;
      fit.hold(n, r.per_node);
      out.takes.push_back({n, mask});
      --need;
    }
    if (need > 0) return std::nullopt;
  } else {
    // Any split: whole free nodes first (emptiest first), then the remainder on the
    // fullest node that can take all of it, so no extra node is cut into. A node whose
    // CPUs, memory or rack power hold fewer GPUs than it has free gives what they hold
    // (NodeFit::most), and when no node can take the whole remainder
    // it is gathered node by node the same way.
    if (r.scoring) {
      std::stable_sort(nodes.begin(), nodes.end(),
                       [&](NodeIx a, NodeIx b) { return plan.free_count(a) > plan.free_count(b); });
    }
    std::int32_t left = r.gpus;
    std::vector<bool> used(nodes.size(), false);
    bool gathering = false;  // no node took the whole remainder: the rest goes node by node
    for (size_t i = 0; i < nodes.size() && left > 0; ++i) {
      const NodeIx n = nodes[i];
      const std::int32_t free = plan.free_count(n);
      if (free > left && r.scoring && !gathering) {
        // Best fit for the remainder: the last (fullest) node that still has `left` free.
        for (size_t k = nodes.size(); k-- > i;) {
          if (!used[k] && plan.free_count(nodes[k]) >= left && fit.fits(nodes[k], left)) {
            fit.hold(nodes[k], left);
            out.takes.push_back({nodes[k], mask_on_node(plan, nodes[k], left, true)});
            used[k] = true;
            left = 0;
            break;
          }
        }
        if (left == 0) break;
        gathering = true;  // searched once: searching again per node would be quadratic
      }
      const std::int32_t count = fit.most(n, std::min(free, left));
      if (count == 0) continue;
      fit.hold(n, count);
      out.takes.push_back({n, mask_on_node(plan, n, count, r.scoring)});
      used[i] = true;
      left -= count;
    }
    if (left > 0) return std::nullopt;
  }
  std::sort(out.takes.begin(), out.takes.end(),
            [](const Plan::Take& a, const Plan::Take& b) { return a.node < b.node; });
  return out;
}

// Levels 3-6: the gang across nodes of one domain at `level`. Candidate domains whose
// aggregates show they cannot hold the gang are skipped without looking at their nodes.
std::optional<PlaceResult> place_across_nodes(const Plan& plan, const PlaceRequest& r, Level level,
                                              PlaceMiss& miss) {
  std::vector<std::int32_t> candidates;
  for (std::int32_t d = 0; d < plan.domain_count(level); ++d) {
    if (r.region != kAnyRegion && plan.domain_region(level, d) != r.region) continue;
    const DomainStats& st = plan.stats(level, d, r.type);
    if (st.free < r.gpus) continue;
    if (r.per_node > 0 && st.nodes_with_at_least(r.per_node) < r.gpus / r.per_node) continue;
    candidates.push_back(d);
  }
  if (r.scoring) {
    std::stable_sort(candidates.begin(), candidates.end(), [&](std::int32_t a, std::int32_t b) {
      return plan.stats(level, a, r.type).free < plan.stats(level, b, r.type).free;
    });
  }
  for (std::int32_t d : candidates) {
    if (auto placed = place_in_domain(plan, r, plan.domain_nodes(level, d, r.type), miss)) {
      return placed;
    }
  }
  return std::nullopt;
}

}  // namespace

bool satisfies(const ClusterSnapshot& s, const std::vector<Plan::Take>& takes, PackLevel wanted) {
  if (takes.empty()) return false;
  const auto& topo = s.topo();
  const auto all_same = [&](auto field) {
    return std::all_of(takes.begin(), takes.end(), [&](const Plan::Take& t) {
      return field(topo[t.node]) == field(topo[takes[0].node]);
    });
  };
  switch (wanted) {
    case PackLevel::kNvlink: {
      if (takes.size() > 1) {
        return topo[takes[0].node].nvl_rack >= 0 &&
               all_same([](const NodeTopo& t) { return t.nvl_rack; });
      }
      if (topo[takes[0].node].nvl_rack >= 0) return true;
      for (std::uint64_t d : topo[takes[0].node].domain_masks) {
        if ((takes[0].mask & ~d) == 0) return true;
      }
      return false;
    }
    case PackLevel::kNode:
      return takes.size() == 1;
    case PackLevel::kLeaf:
      return all_same([](const NodeTopo& t) { return t.leaf; });
    case PackLevel::kSpine:
      return all_same([](const NodeTopo& t) { return t.spine; });
    case PackLevel::kNone:
      return true;
  }
  return false;
}

PackLevel packed_level(const ClusterSnapshot& s, const std::vector<Plan::Take>& takes) {
  for (PackLevel level :
       {PackLevel::kNvlink, PackLevel::kNode, PackLevel::kLeaf, PackLevel::kSpine}) {
    if (satisfies(s, takes, level)) return level;
  }
  return PackLevel::kNone;
}

std::optional<PlaceResult> find_placement(const Plan& plan, const PlaceRequest& r,
                                          PlaceMiss& miss) {
  if (plan.free_in(r.type, r.region) < r.gpus) return std::nullopt;
  const bool required = r.topology.mode == TopologyMode::kRequired;
  const PackLevel want = r.topology.pack;
  const bool one_node_ok = r.per_node == 0 || r.per_node == r.gpus;
  const bool many_nodes_ok = r.per_node != r.gpus;

  std::optional<PlaceResult> placed;
  if (!r.scoring) {
    // Baseline policies: no topology preference at all, just first fit.
    if (one_node_ok && (!required || want != PackLevel::kNvlink)) {
      placed = place_on_one_node(plan, r, false, miss);
    }
    if (!placed && many_nodes_ok && !required) {
      placed = place_across_nodes(plan, r, Level::kCluster, miss);
    }
  } else {
    // The search steps, tightest first, and which of them a required constraint admits.
    enum Step { kOneDomain, kOneNode, kNvlRack, kLeaf, kSpine, kCluster };
    const auto allowed = [&](Step step) {
      if (!required) return true;
      switch (want) {
        case PackLevel::kNvlink:
          return step == kOneDomain || step == kNvlRack;
        case PackLevel::kNode:
          return step == kOneDomain || step == kOneNode;
        case PackLevel::kLeaf:
          return step <= kLeaf;
        case PackLevel::kSpine:
          return step <= kSpine;
        case PackLevel::kNone:
          return true;
      }
      return true;
    };
    if (one_node_ok && allowed(kOneDomain)) placed = place_on_one_node(plan, r, true, miss);
    if (!placed && one_node_ok && allowed(kOneNode)) {
      placed = place_on_one_node(plan, r, false, miss);
    }
    const std::pair<Step, Level> wider[] = {{kNvlRack, Level::kNvlRack},
                                            {kLeaf, Level::kLeaf},
                                            {kSpine, Level::kSpine},
                                            {kCluster, Level::kCluster}};
    for (const auto& [step, level] : wider) {
      if (placed || !many_nodes_ok) break;
      if (allowed(step)) placed = place_across_nodes(plan, r, level, miss);
    }
  }
  if (!placed) return std::nullopt;
  placed->packed = packed_level(plan.snapshot(), placed->takes);
  // A required constraint holds on the result itself, whatever level found it.
  if (required && !satisfies(plan.snapshot(), placed->takes, want)) return std::nullopt;
  return placed;
}

}  // namespace corral::sched::detail
