// The normalized trace CSV shared by every trace in shared/traces:
//
//   job_id,tenant,submit_time_s,gpus,duration_s,gpu_type,status
//
// submit_time_s and duration_s may have a fraction; gpu_type and status may be empty; an
// empty tenant is the tenant `default` (traces without tenants).
// Errors are InvalidArgument naming `file:line` and the column, e.g.
// `trace.csv:17: column gpus: must be an integer >= 1, got '0'`.
#pragma once

#include <string>
#include <string_view>

#include "core/result.h"
#include "sim/traces/workload.h"

namespace corral::sim {

core::Result<Workload> parse_normalized_csv(std::string_view text, std::string_view source);
core::Result<Workload> load_normalized_csv(const std::string& path);

}  // namespace corral::sim
