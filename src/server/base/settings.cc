#include "server/base/settings.h"

namespace corral::server {

bool known_throttle_reason(std::string_view reason) {
  // The names the agent gives NVML's clock throttle reasons (nvml_inventory.cc).
  for (const std::string_view known : {"sw_power_cap", "hw_slowdown", "sw_thermal_slowdown",
                                       "hw_thermal_slowdown", "hw_power_brake"}) {
    if (reason == known) return true;
  }
  return false;
}

}  // namespace corral::server
