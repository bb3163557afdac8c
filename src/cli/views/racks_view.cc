#include "cli/views/racks_view.h"

#include "cli/format/units_text.h"

namespace corral::cli {

using nlohmann::json;

Table racks_table(const json& racks) {
  Table t{.headers = {"RACK", "CAP", "IN USE", "FREE", "NODES", "GPUS", "HELD"}};
  for (const json& r : racks) {
    const json& cap = field(r, "capWatts");
    const json& free = field(r, "freeWatts");
    t.rows.push_back({text(field(r, "name")),
                      cap.is_number() ? power_text(cap.get<double>()) : "none",
                      power_text(r.value("usedWatts", 0.0)),
                      free.is_number() ? power_text(free.get<double>()) : "",
                      text(field(r, "nodes")), text(field(r, "gpus")), text(field(r, "gpusHeld"))});
  }
  return t;
}

}  // namespace corral::cli
