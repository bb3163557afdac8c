#include "sched/internal/array_limits.h"

#include "sched/internal/text.h"

namespace corral::sched::detail {

ArrayLimits::ArrayLimits(const ClusterSnapshot& s) {
  for (const RunningJob& j : s.running()) {
    if (j.request.array) ++holding_[j.request.array->array];
  }
}

std::string ArrayLimits::blocked(const JobRequest& r) const {
  if (!r.array || r.array->max_running <= 0) return "";
  const auto it = holding_.find(r.array->array);
  const std::int32_t holding = it == holding_.end() ? 0 : it->second;
  if (holding < r.array->max_running) return "";
  return cat("array ", r.array->array.value, " has ", holding, " of its tasks running (maxRunning ",
             r.array->max_running, ")");
}

void ArrayLimits::add(const std::optional<ArrayLimit>& array) {
  if (array) ++holding_[array->array];
}

}  // namespace corral::sched::detail
