// Plan: the scheduler's working state for one decide() call.
//
// The snapshot is const for the whole cycle; the plan holds only what changes as jobs
// are placed: which GPUs are free, how much each tenant holds, rack power in use, and
// aggregates over the topology (free GPUs and a histogram of nodes by free count, per
// GPU type, for every leaf, spine, cluster, region and NVLink rack) so that placement asks
// "can this domain hold the gang?" in O(1) instead of scanning GPUs.
//
// Every change goes through take()/give_back() and is journaled, so what-if search
// (preemption, backfill) can mark() and rollback() instead of copying.
//
// Thread safety: needs external synchronization (one decide() call owns it).
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <iterator>
#include <vector>

#include "sched/snapshot.h"

namespace corral::sched::detail {

// A set of node indices as a bit set over the fleet: insert and erase in O(1), iteration
// in index order (what a std::set<NodeIx> gave, without a tree node per entry, which
// cost a third of a cycle on a 1,000-node fleet).
class NodeSet {
 public:
  class iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = NodeIx;
    using difference_type = std::ptrdiff_t;
    using pointer = const NodeIx*;
    using reference = NodeIx;
    iterator() = default;
    iterator(const std::vector<std::uint64_t>* words, std::size_t word) : words_(words), w_(word) {
      seek();
    }
    NodeIx operator*() const {
      return static_cast<NodeIx>(w_ * 64 + static_cast<std::size_t>(std::countr_zero(bits_)));
    }
    iterator& operator++() {
      bits_ &= bits_ - 1;
      if (bits_ == 0) {
        ++w_;
        seek();
      }
      return *this;
    }
    bool operator==(const iterator& o) const { return w_ == o.w_ && bits_ == o.bits_; }

   private:
    void seek() {
      while (w_ < words_->size() && (*words_)[w_] == 0) ++w_;
      bits_ = w_ < words_->size() ? (*words_)[w_] : 0;
    }
    const std::vector<std::uint64_t>* words_ = nullptr;
    std::size_t w_ = 0;
    std::uint64_t bits_ = 0;
  };

  void resize(std::size_t nodes) { words_.assign((nodes + 63) / 64, 0); }
  void insert(NodeIx n) { words_[n / 64] |= std::uint64_t{1} << (n % 64); }
  void erase(NodeIx n) { words_[n / 64] &= ~(std::uint64_t{1} << (n % 64)); }
  bool empty() const {
    for (std::uint64_t w : words_) {
      if (w != 0) return false;
    }
    return true;
  }
  iterator begin() const { return {&words_, 0}; }
  iterator end() const { return {&words_, words_.size()}; }

 private:
  std::vector<std::uint64_t> words_;
};

// A GPU type's usage factor in thousandths.
std::int64_t usage_milli(const core::GpuType& type);

// The topology levels that aggregate nodes. A gang never spans clusters, so kRegion is
// never a packing level: it only counts what a region-bound job may use.
enum class Level { kNvlRack, kLeaf, kSpine, kCluster, kRegion };
inline constexpr std::int32_t kLevelCount = 5;

// Free GPUs of one type in one domain, and how many of its nodes have exactly c free.
struct DomainStats {
  std::int32_t free = 0;
  std::array<std::int32_t, kMaxGpusPerNode + 1> nodes_by_free{};

  // Nodes with at least `k` free GPUs. O(64).
  std::int32_t nodes_with_at_least(std::int32_t k) const;
};

class Plan {
 public:
  // Starts from the snapshot: usable GPUs not held by running jobs are free.
  explicit Plan(const ClusterSnapshot& snapshot);

  const ClusterSnapshot& snapshot() const { return s_; }

  std::uint64_t free_mask(NodeIx node) const { return free_mask_[node]; }
  std::int32_t free_count(NodeIx node) const { return free_count_[node]; }
  std::int32_t free_cpus(NodeIx node) const { return free_cpus_[node]; }
  std::int64_t free_memory_mib(NodeIx node) const { return free_mem_[node]; }
  std::int64_t rack_power_used(RackIx rack) const { return rack_watts_[rack]; }

  // Whether some node of `type` has more than one NVLink domain (PCIe servers in pairs).
  bool type_has_split_nodes(TypeIx type) const { return split_types_[type]; }
  // Free GPUs of `type` in the whole fleet.
  std::int32_t type_free(TypeIx type) const { return type_free_[type]; }
  // Free GPUs of `type` a job bound to `region` may use (kAnyRegion: the whole fleet's;
  // kNoSuchRegion: none).
  std::int32_t free_in(TypeIx type, RegionIx region) const {
    if (region == kAnyRegion) return type_free_[type];
    return region < 0 ? 0 : stats(Level::kRegion, region, type).free;
  }
  // The region domain `domain` of `level` lies in (every domain lies in one).
  RegionIx domain_region(Level level, std::int32_t domain) const;
  // Aggregates for domain `domain` of `level`.
  const DomainStats& stats(Level level, std::int32_t domain, TypeIx type) const;
  std::int32_t domain_count(Level level) const;
  // Nodes of `type` in a domain, in index order.
  const std::vector<NodeIx>& domain_nodes(Level level, std::int32_t domain, TypeIx type) const;
  // Nodes of `type` with exactly `count` free GPUs, in index order.
  const NodeSet& nodes_with_free(TypeIx type, std::int32_t count) const {
    return buckets_[type][count];
  }

  // Thousandths of GPUs of `type` held by `tenant` (running and placed this cycle): 1000
  // per whole GPU, a share's own for a share.
  std::int64_t tenant_used_milli(TenantIx tenant, TypeIx type) const;
  // Sum over the tenant's held GPUs of their type's usage factor, in thousandths (an
  // integer, so taking and rolling back leaves it exactly as it was).
  std::int64_t tenant_weighted_held_milli(TenantIx tenant) const {
    return weighted_held_milli_[tenant];
  }

  struct Take {
    NodeIx node = -1;
    std::uint64_t mask = 0;
  };
  // Gives the GPUs in each take's mask (all free) to `tenant`, with per-GPU cpus and memory.
  void take(const std::vector<Take>& takes, TenantIx tenant, std::int32_t cpus_per_gpu,
            std::int64_t memory_per_gpu_mib);
  // The reverse of take(): the GPUs (held by `tenant` with those cpus and memory) become
  // free. Used for preemption victims and shrinking elastic jobs.
  void give_back(const std::vector<Take>& takes, TenantIx tenant, std::int32_t cpus_per_gpu,
                 std::int64_t memory_per_gpu_mib);
  // One of `r`'s shares (is_share) on GPU `gpu` of `node`, which is free or holds shares
  // with room for it (share_room); the GPU leaves the free pool with its first share and
  // comes back with its last (running shares, at construction). Journaled like take(), so
  // rollback() undoes it.
  void take_share(NodeIx node, std::int32_t gpu, TenantIx tenant, const JobRequest& r);
  // What is left of GPU `gpu` of `node` for shares: a free GPU's whole, a shared one's
  // rest; none of a GPU a whole-GPU job holds, a blocked one, or one that is not usable.
  // (A shared GPU is never blocked: a caller keeps shares off reserved or promised GPUs
  // with Gate::forbidden().)
  ShareUse share_room(NodeIx node, std::int32_t gpu) const;

  // Hides free GPUs from placement without charging anyone (reservations, the backfill
  // head's GPUs); unblock() shows them again. REQUIRES for unblock: they were blocked.
  void block(const std::vector<Take>& takes);
  void unblock(const std::vector<Take>& takes);

  // What keeps `gpus` more GPUs, each with `cpus_per_gpu`, `memory_per_gpu_mib` and the
  // node's watts per GPU (NodeTopo::gpu_watts), off `node` beyond `extra_watts` already
  // counted on its rack: the checks every placement makes (free GPUs aside). A node that
  // declares no CPUs or no memory does not account for them.
  enum class Room { kFits, kResources, kPower };
  Room room_on(NodeIx node, std::int32_t gpus, std::int32_t cpus_per_gpu,
               std::int64_t memory_per_gpu_mib, std::int64_t extra_watts = 0) const {
    const core::Node& n = s_.nodes()[node];
    if ((n.cpus > 0 && free_cpus_[node] < gpus * cpus_per_gpu) ||
        (n.memory_mib > 0 && free_mem_[node] < gpus * memory_per_gpu_mib)) {
      return Room::kResources;
    }
    const RackIx rack = s_.topo()[node].rack;
    const std::int64_t cap = s_.rack_power_cap_watts(rack);
    if (cap > 0 && rack_watts_[rack] + extra_watts + gpus * s_.topo()[node].gpu_watts > cap) {
      return Room::kPower;
    }
    return Room::kFits;
  }

  using Mark = std::size_t;
  Mark mark() const { return journal_.size(); }
  // Undoes every change since `mark`.
  void rollback(Mark mark);

 private:
  struct Entry {
    NodeIx node;
    std::uint64_t mask;
    TenantIx tenant;  // -1: a block, charged to nobody
    std::int32_t cpus;
    std::int64_t memory_mib;
    int sign;                       // +1 take, -1 give back
    std::int32_t share_milli = 0;   // a share of the one GPU in mask; 0: whole GPUs
    std::int64_t share_memory = 0;  // the share's GPU memory
  };
  // Moves the GPUs in `e.mask` between free and held; sign +1 takes, -1 gives back.
  void apply(const Entry& e, int sign);
  void record(const std::vector<Take>& takes, TenantIx tenant, std::int32_t cpus,
              std::int64_t memory_mib, int sign);
  std::int32_t domain_of(Level level, NodeIx node) const;
  DomainStats& stats_mut(Level level, std::int32_t domain, TypeIx type);

  const ClusterSnapshot& s_;
  std::int32_t type_count_;
  std::vector<std::uint64_t> free_mask_;
  std::vector<std::int32_t> free_count_;  // popcount of free_mask_, kept in step
  std::vector<std::int32_t> free_cpus_;
  std::vector<std::int64_t> free_mem_;
  std::vector<std::int64_t> rack_watts_;
  std::vector<std::int32_t> type_free_;
  std::vector<bool> split_types_;  // [type] some node has more than one NVLink domain
  std::array<std::vector<DomainStats>, kLevelCount> stats_;  // [level][domain * types + type]
  std::array<std::vector<std::vector<NodeIx>>, kLevelCount> nodes_;  // same indexing
  std::vector<std::array<NodeSet, kMaxGpusPerNode + 1>> buckets_;    // [type][free]
  std::vector<std::int64_t> tenant_used_milli_;                      // [tenant * types + type]
  SharedGpus shared_;
  std::vector<std::int64_t> weighted_held_milli_;  // [tenant]
  std::vector<Entry> journal_;
};

// Whether two lists of takes share a GPU.
bool overlaps(const std::vector<Plan::Take>& a, const std::vector<Plan::Take>& b);

}  // namespace corral::sched::detail
