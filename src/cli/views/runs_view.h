// What `corral runs` and `corral run ...` print.
//
//   runs            ID NAME TENANT STATUS ATTEMPTS DATASETS CODE CREATED (wide adds IMAGE, CONFIG)
//   run get         one run: manifest, attempts as placed, metrics' newest values, artifacts
//   run metrics     NAME STEP VALUE ATTEMPT REPORTED
//
// Sizes in KiB/MiB/GiB; times relative or as dates (TimeStyle).
//
// Thread safety: safe for concurrent use (pure functions).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "cli/format/table.h"
#include "cli/format/time_text.h"

namespace corral::cli {

Table runs_table(const nlohmann::json& runs, const TimeStyle& style, bool wide);
std::string run_text(const nlohmann::json& run, const TimeStyle& style);
// GET /v1/sweeps/{id}: the sweep, its best trial with its run, and each trial.
std::string sweep_text(const nlohmann::json& sweep);
Table metric_points_table(const nlohmann::json& points, const TimeStyle& style);

}  // namespace corral::cli
