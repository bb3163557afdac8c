// What `corral racks` prints, as a pure function of GET /v1/racks:
//
//   RACK  CAP  IN USE  FREE  NODES  GPUS  HELD
//
// Watts as a person reads them ("1.5 kW", "900 W"); a rack without a cap shows "none"
// for its cap and "-" for what is free. In use counts each allocated GPU at the power
// limit its agent reports, the catalog TDP where none is reported (docs/scheduling.md).
//
// Thread safety: safe for concurrent use (pure functions).
#pragma once

#include <nlohmann/json.hpp>

#include "cli/format/table.h"

namespace corral::cli {

Table racks_table(const nlohmann::json& racks);

}  // namespace corral::cli
