// What `corral models` and `corral model ...` print.
//
//   models          ID TENANT VERSIONS LATEST
//   model get       its versions (RUN, DIGEST, GATES, APPROVED) and aliases (VERSION,
//                   CANARY, ENDPOINT, GATED)
//   model history   WHEN KIND FROM TO BY REASON GATES
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

Table models_table(const nlohmann::json& models, const TimeStyle& style);
std::string model_text(const nlohmann::json& model, const TimeStyle& style);
Table alias_history_table(const nlohmann::json& moves, const TimeStyle& style);

}  // namespace corral::cli
