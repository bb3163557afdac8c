// Small helpers for decide() tests: the clock they share and readers of Decisions.
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "sched/check.h"
#include "sched/decide.h"

namespace corral::testing {

// The clock of most decide() tests: hour 10, far from time zero, in milliseconds.
inline constexpr std::int64_t kHour = 3'600'000;
inline const core::Time kNow = core::time_from_ms(10 * kHour);
inline const sched::SchedulerConfig kNoBackfill{.backfill = false};

// decide() at `now` (default: time zero), also asserting that check() finds nothing.
inline sched::Decisions decide_checked(const sched::ClusterSnapshot& s,
                                       const sched::SchedulerConfig& config = {},
                                       core::Time now = core::Time{}) {
  sched::Decisions d = sched::decide(s, config, now);
  for (const std::string& v : sched::check(s, d, config, now)) {
    ADD_FAILURE() << "invariant: " << v;
  }
  return d;
}

inline const sched::Placement* placement_of(const sched::Decisions& d, std::int64_t job) {
  for (const auto& p : d.placements) {
    if (p.job.value == job) return &p;
  }
  return nullptr;
}

inline const sched::Pending* pending_of(const sched::Decisions& d, std::int64_t job) {
  for (const auto& p : d.pending) {
    if (p.job.value == job) return &p;
  }
  return nullptr;
}

inline std::set<std::string> nodes_of(const sched::Placement& p) {
  std::set<std::string> nodes;
  for (const auto& g : p.gpus) nodes.insert(g.node.value);
  return nodes;
}

inline std::set<std::int32_t> indices_on(const sched::Placement& p, const std::string& node) {
  std::set<std::int32_t> out;
  for (const auto& g : p.gpus) {
    if (g.node.value == node) out.insert(g.index);
  }
  return out;
}

}  // namespace corral::testing
