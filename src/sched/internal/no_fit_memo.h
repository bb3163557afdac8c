// NoFitMemo: remembers request shapes that found no placement in this cycle.
//
// While the plan only loses free GPUs, a request at least as large as one that did not
// fit (same type, split and topology; no fewer GPUs, CPUs or memory per GPU) cannot fit
// either, so the search is skipped. On a cluster that is full, which is most of the
// time, this turns thousands of doomed searches into lookups. Whoever gives GPUs back to
// the plan (preemption, rollback) must clear() it.
//
// Thread safety: needs external synchronization.
#pragma once

#include <cstdint>
#include <vector>

#include "sched/internal/place.h"

namespace corral::sched::detail {

class NoFitMemo {
 public:
  // The miss recorded for a request this one dominates, or null.
  const PlaceMiss* find(const PlaceRequest& r) const {
    for (const Entry& e : entries_) {
      if (same_kind(e.request, r) && r.gpus >= e.request.gpus &&
          r.cpus_per_gpu >= e.request.cpus_per_gpu &&
          r.memory_per_gpu_mib >= e.request.memory_per_gpu_mib) {
        return &e.miss;
      }
    }
    return nullptr;
  }

  void remember(const PlaceRequest& r, const PlaceMiss& miss) {
    // Keep only the smallest shapes: an entry the new one dominates is redundant.
    std::erase_if(entries_, [&](const Entry& e) {
      return same_kind(e.request, r) && e.request.gpus >= r.gpus &&
             e.request.cpus_per_gpu >= r.cpus_per_gpu &&
             e.request.memory_per_gpu_mib >= r.memory_per_gpu_mib;
    });
    entries_.push_back({r, miss});
  }

  void clear() { entries_.clear(); }

 private:
  struct Entry {
    PlaceRequest request;
    PlaceMiss miss;
  };

  static bool same_kind(const PlaceRequest& a, const PlaceRequest& b) {
    return a.type == b.type && a.per_node == b.per_node && a.topology.pack == b.topology.pack &&
           a.topology.mode == b.topology.mode && a.scoring == b.scoring;
  }

  std::vector<Entry> entries_;
};

}  // namespace corral::sched::detail
