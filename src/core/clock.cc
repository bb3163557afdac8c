#include "core/clock.h"

namespace corral::core {

Time SystemClock::now() const {
  return std::chrono::time_point_cast<Duration>(std::chrono::system_clock::now());
}

}  // namespace corral::core
