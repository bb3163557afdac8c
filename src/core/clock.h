// Clock: the only way code outside a main() learns the time.
//
// SystemClock reads the real clock; ManualClock is set by tests and the simulator.
// There is no process-wide fake clock: each user is handed the clock it reads.
//
// Thread safety: SystemClock is safe for concurrent use. ManualClock is safe for
// concurrent now() calls, with set/advance synchronized by the caller's design (an
// atomic keeps each read whole).
#pragma once

#include <atomic>

#include "core/time.h"

namespace corral::core {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual Time now() const = 0;
};

class SystemClock final : public Clock {
 public:
  Time now() const override;
};

class ManualClock final : public Clock {
 public:
  explicit ManualClock(Time start = Time{}) : ms_(to_ms(start)) {}
  Time now() const override { return time_from_ms(ms_.load()); }
  void set(Time t) { ms_.store(to_ms(t)); }
  void advance(Duration d) { ms_.fetch_add(to_ms(d)); }

 private:
  std::atomic<std::int64_t> ms_;
};

}  // namespace corral::core
