// Arrays' maxRunning (core::ArraySpec, sched::ArrayLimit): a task of an array waits
// while its array's tasks hold GPUs up to the limit.
//
// Thread safety: one ArrayLimits per decide() call.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "sched/snapshot.h"

namespace corral::sched::detail {

// Tasks of limited arrays holding GPUs, counted from the running jobs (stopping ones
// included: they hold GPUs until they are gone) and the placements of this cycle.
class ArrayLimits {
 public:
  explicit ArrayLimits(const ClusterSnapshot& s);
  // Why `r` must wait for its array's limit; empty when it may run.
  std::string blocked(const JobRequest& r) const;
  // Counts a task of `array` placed this cycle (none: not a task of a limited array).
  void add(const std::optional<ArrayLimit>& array);

 private:
  std::map<core::JobId, std::int32_t> holding_;
};

}  // namespace corral::sched::detail
