// Periodic: a thread of its own that runs a task every period until stopped. corrald's
// background loops other than the scheduler's (node health, ledger accrual, the metrics
// refresh, the telemetry writer) each run on one; stop() wakes a waiting thread at once.
//
// Thread safety: start() and stop() from one thread; stop() may be called again, and
// start() again after stop().
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "core/time.h"
#include "server/base/thread_annotations.h"

namespace corral::server {

class Periodic {
 public:
  Periodic() = default;
  ~Periodic() { stop(); }
  Periodic(const Periodic&) = delete;
  Periodic& operator=(const Periodic&) = delete;

  // Runs `task` every `period`, the first time one period from now.
  void start(core::Duration period, std::function<void()> task);
  // Wakes the thread, and joins it once a task under way returns.
  void stop() CORRAL_EXCLUDES(mu_);

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ CORRAL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace corral::server
