// What `corral models` and `corral model ...` print.
//
//   models          ID TENANT VERSIONS LATEST
//   model get       its versions (RUN, DIGEST, GATES, APPROVED) and aliases (VERSION,
//                   CANARY, ENDPOINT, GATED)
//   model history   WHEN KIND FROM TO BY REASON GATES
//   model register, model approve
//                   one version: its run, artifact and digest, schemas, each gate (an
//                   approval with who recorded it and why, or that it is still wanted)
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
// `what` follows the heading: "model llm@v7: registered".
std::string model_version_text(const nlohmann::json& version, const std::string& what,
                               const TimeStyle& style);
Table alias_history_table(const nlohmann::json& moves, const TimeStyle& style);

}  // namespace corral::cli
