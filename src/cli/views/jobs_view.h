// What `corral jobs`, `corral job ID` and `corral queue` print, as pure functions of the
// API's answers and a TimeStyle (tests/cli/golden/ holds their outputs, now frozen).
//
//   jobs   ID NAME TENANT STATE GPUS NODES AGE WAIT/RUN REASON
//          (wide adds SIZE, GPU TYPE, CLASS, ATTEMPT, before AGE); an array's tasks are
//          one row, "ID[COUNT]", with its tasks' states counted
//   queue  POS JOB NAME TENANT GPUS WAIT KIND REASON (wide adds CLASS, PLANNED START)
//
// Thread safety: safe for concurrent use (pure functions).
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/format/table.h"
#include "cli/format/time_text.h"

namespace corral::cli {

// `jobs`: GET /v1/jobs's items; `allocations`: GET /v1/allocations's items (where each
// job runs now, and since when).
Table jobs_table(const nlohmann::json& jobs, const nlohmann::json& allocations,
                 const TimeStyle& style, bool wide);

// GET /v1/jobs/{id} and its events (null when they could not be read).
std::string job_text(const nlohmann::json& job, const nlohmann::json& events,
                     const TimeStyle& style);

// "16 running, 150 pending, 34 succeeded": how many jobs are in each phase, in the
// lifecycle's order.
std::string phase_counts_text(const std::map<std::string, std::int64_t>& counts);

// GET /v1/arrays/{id}: the array's tasks, their states and costs.
std::string array_text(const nlohmann::json& array, const TimeStyle& style);

// GET /v1/queue's items.
Table queue_table(const nlohmann::json& queue, const TimeStyle& style, bool wide);

}  // namespace corral::cli
