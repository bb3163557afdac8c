// What `corral audit` prints: SEQ TIME ACTOR ACTION TARGET AFTER (wide adds BEFORE and
// REQUEST, and shows BEFORE and AFTER whole; the table cuts them at 60 characters).
//
// Thread safety: safe for concurrent use (a pure function).
#pragma once

#include <nlohmann/json.hpp>

#include "cli/format/table.h"
#include "cli/format/time_text.h"

namespace corral::cli {

Table audit_table(const nlohmann::json& entries, const TimeStyle& style, bool wide);

}  // namespace corral::cli
