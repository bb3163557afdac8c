// What `corral drift ...` prints.
//
//   drift reports     WHEN KIND SEGMENT DRIFTED FEATURES PERFORMANCE RETRAINING
//   drift report      the report just made: what drifted, the retraining it caused, and
//                     each feature's statistic against its threshold (FEATURE DRIFTED
//                     STATISTIC VALUE THRESHOLD PSI JENSEN-SHANNON REFERENCE CURRENT)
//   drift retraining  the model's template (job, GPUs), its tenant's budget with what is in
//                     use this period, and the jobs its drift submitted
//                     (JOB VERSION REPORT PHASE GPUS SUBMITTED)
//
// Times relative or as dates (TimeStyle).
//
// Thread safety: safe for concurrent use (pure functions).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "cli/format/table.h"
#include "cli/format/time_text.h"

namespace corral::cli {

Table drift_reports_table(const nlohmann::json& reports, const TimeStyle& style);
std::string drift_report_text(const nlohmann::json& report, const TimeStyle& style);
std::string retraining_text(const nlohmann::json& status, const TimeStyle& style);

}  // namespace corral::cli
