#include "cycle/replay.h"

#include <algorithm>

#include "sched/decide.h"
#include "sched/decisions.h"

namespace corral::cycle {

core::Result<std::string> replay_decisions(const CapturedCycle& cycle,
                                           const sched::SchedulerConfig& config) {
  auto snapshot = sched::build_snapshot(cycle.input);
  if (!snapshot.ok()) {
    const core::Status& s = snapshot.status();
    return core::invalid_argument(s.field().empty() ? "input" : "input." + s.field(), s.message());
  }
  return sched::to_json(sched::decide(*snapshot, config, cycle.now));
}

std::optional<std::size_t> first_difference(std::string_view a, std::string_view b) {
  const auto [ia, ib] = std::mismatch(a.begin(), a.end(), b.begin(), b.end());
  if (ia == a.end() && ib == b.end()) return std::nullopt;
  return static_cast<std::size_t>(ia - a.begin());
}

}  // namespace corral::cycle
