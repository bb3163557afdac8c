// What decide() is told of a trace job that has a run-time profile (sim/traces/pollux.h):
// its speed on each of the fleet's GPU types and its scaling curve, both read off the
// profile at the placements decide() would try first (whole nodes of each type).
//
// A profile measured on several types (the Sia workloads) gives each type its own figure;
// the job's curve is taken on the type the job runs fastest on, and each type's own curve
// goes beside it (JobRequest::scaling_by_type), as corrald learns one per type from its
// workers' reports.
//
// Thread safety: stateless functions.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/ids.h"
#include "core/job_spec.h"
#include "core/result.h"
#include "sim/fleet.h"
#include "sim/traces/pollux.h"

namespace corral::sim {

// InvalidArgument naming the job when the profile has figures per type but none for one
// of the fleet's types (the engine could not say how long it runs there).
core::Status check_profile_types(const RuntimeProfile& profile, const Fleet& fleet,
                                 const std::string& job_name);

// The job's throughput per GPU on each fleet type at `gpus` GPUs, relative to its fastest
// type (1.0); empty for a profile without per-type figures.
std::map<core::GpuTypeId, double> gpu_speed(const RuntimeProfile& profile, const Fleet& fleet,
                                            std::int32_t gpus);

// scaling_curve() on the fleet type the job is fastest on at `max_gpus` (for a profile
// without per-type figures: the fleet's largest node).
std::vector<core::ScalingPoint> fleet_scaling_curve(const RuntimeProfile& profile,
                                                    const Fleet& fleet, std::int32_t min_gpus,
                                                    std::int32_t max_gpus);

// scaling_curve() on each of the fleet's types, for a profile with per-type figures (as
// sched::JobRequest::scaling_by_type); empty for one without.
std::map<core::GpuTypeId, std::vector<core::ScalingPoint>> scaling_curves_by_type(
    const RuntimeProfile& profile, const Fleet& fleet, std::int32_t min_gpus,
    std::int32_t max_gpus);

}  // namespace corral::sim
