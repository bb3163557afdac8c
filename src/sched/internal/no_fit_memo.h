// NoFitMemo: remembers request shapes that found no placement in this cycle.
//
// While the plan only loses free GPUs, a request at least as large as one that did not
// fit (same type, split, topology and region; no fewer GPUs, CPUs or memory per GPU) cannot fit
// either, so the search is skipped. On a cluster that is full, which is most of the
// time, this turns thousands of doomed searches into lookups. Whoever gives GPUs back to
// the plan (preemption, rollback) must clear() it.
//
// Thread safety: needs external synchronization.
#pragma once

#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "sched/internal/place.h"

namespace corral::sched::detail {

class NoFitMemo {
 public:
  // The miss recorded for a request this one dominates, or null.
  const PlaceMiss* find(const PlaceRequest& r) const {
    const auto it = kinds_.find(kind_of(r));
    if (it == kinds_.end()) return nullptr;
    for (const Entry& e : it->second) {
      if (r.gpus >= e.request.gpus && r.cpus_per_gpu >= e.request.cpus_per_gpu &&
          r.memory_per_gpu_mib >= e.request.memory_per_gpu_mib) {
        return &e.miss;
      }
    }
    return nullptr;
  }

  void remember(const PlaceRequest& r, const PlaceMiss& miss) {
    // Keep only the smallest shapes: an entry the new one dominates is redundant.
    std::vector<Entry>& entries = kinds_[kind_of(r)];
    std::erase_if(entries, [&](const Entry& e) {
      return e.request.gpus >= r.gpus && e.request.cpus_per_gpu >= r.cpus_per_gpu &&
             e.request.memory_per_gpu_mib >= r.memory_per_gpu_mib;
    });
    entries.push_back({r, miss});
  }

  void clear() { kinds_.clear(); }

 private:
  struct Entry {
    PlaceRequest request;
    PlaceMiss miss;
  };
  // Requests of one kind differ only in size, so sizes can be compared.
  using Kind =
      std::tuple<TypeIx, std::int32_t, core::PackLevel, core::TopologyMode, bool, RegionIx>;
  static Kind kind_of(const PlaceRequest& r) {
    return {r.type, r.per_node, r.topology.pack, r.topology.mode, r.scoring, r.region};
  }

  std::map<Kind, std::vector<Entry>> kinds_;
};

}  // namespace corral::sched::detail
