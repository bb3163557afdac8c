// Replaying a captured cycle: the same decide() call again, on the captured input at the
// captured `now`, with the captured config or another one. `corral-sim replay` is the
// command; this is the part a test can call.
//
// Thread safety: stateless functions.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"
#include "cycle/capture.h"
#include "sched/config.h"

namespace corral::cycle {

// sched::to_json(decide(build_snapshot(cycle.input), config, cycle.now)). InvalidArgument
// when build_snapshot() refuses the input, its field prefixed with `input.`.
core::Result<std::string> replay_decisions(const CapturedCycle& cycle,
                                           const sched::SchedulerConfig& config);

// The offset of the first byte where `a` and `b` differ (the shorter one's length when
// one is a prefix of the other); nullopt when they are equal.
std::optional<std::size_t> first_difference(std::string_view a, std::string_view b);

}  // namespace corral::cycle
