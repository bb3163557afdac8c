// What `corral reservations` and `corral reservation get ID` print.
//
//   reservations  ID TENANT STATE GPUS NODES START END (wide adds LENGTH, HELD BY)
//
// A reservation's state is upcoming, active or ended: the API's "state", or computed
// here from startMs and endMs against now for an older corrald.
//
// Thread safety: safe for concurrent use (pure functions).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "cli/format/table.h"
#include "cli/format/time_text.h"

namespace corral::cli {

std::string reservation_state(const nlohmann::json& reservation, core::Time now);

Table reservations_table(const nlohmann::json& reservations, const TimeStyle& style, bool wide);

std::string reservation_text(const nlohmann::json& reservation, const TimeStyle& style);

}  // namespace corral::cli
