// The `scheduler:` section of a YAML config: the decide() knobs (sched::SchedulerConfig)
// by the names people write. corrald's --config and `corral-sim replay --config` read it
// here, so the same file means the same policy in both; the keys, their ranges and
// defaults are in docs/scheduling.md#configuration.
//
//   scheduler:
//     order: fairShare               # fairShare | fifo | attainedService
//     usageHalfLifeMs: 604800000     # half-life of decayed fair-share usage (7 days)
//     topologyScoring: true          # score placements by topology (off: first fit)
//     preemptionEnabled: true
//     minRuntimeMs: 600000           # a job runs this long before it may be preempted
//     maxPreemptionsPerJob: 3        # after this many a job is protected until it ends
//     graceMs: 120000                # a victim's time to checkpoint and stop
//     maxPreemptionSearchesPerCycle: 64
//     backfill: true                 # EASY backfill around the first blocked job
//     starvationAgeMs: 7200000       # waiting this long goes ahead of fair share (0: never)
//     elasticGrowth: true            # running elastic jobs re-sized where GPUs add most
//     elasticReplanPeriodMs: 60000   # a job is re-sized after holding its size this long
//     elasticFairness: -1            # power-mean exponent of the elastic allocator
//     lasThresholdsGpuSeconds: [3600, 36000]   # attainedService levels
//
// The same section also holds corrald's own loop knobs (kSchedulerLoopKeys), which
// corrald reads itself and a replay ignores.
//
// Thread safety: stateless functions.
#pragma once

#include <array>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "sched/config.h"

namespace YAML {  // NOLINT(readability-identifier-naming): yaml-cpp names it, not us
class Node;
}  // namespace YAML

namespace corral::cycle {

// Keys of the section that corrald's scheduler loop reads (server/config.cc), not
// decide(). A loop knob added there is added here too, or the section refuses it.
inline constexpr std::array<std::string_view, 2> kSchedulerLoopKeys = {"batchWindowMs", "tickMs"};

// `base` with the knobs that `section` (the YAML map under `scheduler:`) sets; a knob it
// leaves out keeps base's value. Loop keys are allowed and left alone. InvalidArgument
// names the key (`scheduler.graceMs: must be between 0 and 86400000, got -1`), an
// unknown key included.
// YAML scalars become JSON numbers, booleans or strings by their look, so YAML config goes
// through the same strict readers as the JSON the API and the cycle file take (corrald's
// tenant section, the knobs here). A quoted scalar stays a string: `graceMs: "5"` is
// refused as not an integer.
nlohmann::json yaml_to_json(const YAML::Node& node);

core::Result<sched::SchedulerConfig> apply_scheduler_section(const YAML::Node& section,
                                                             sched::SchedulerConfig base);

// Reads the YAML file at `path` (corrald's --config will do: its other sections, such as
// tenants and agents, are corrald's and ignored here) and applies its `scheduler:`
// section over `base`. InvalidArgument names the key, or `--config` when the file
// cannot be read, is not YAML, or has no scheduler section.
core::Result<sched::SchedulerConfig> load_scheduler_config(const std::string& path,
                                                           sched::SchedulerConfig base);

}  // namespace corral::cycle
