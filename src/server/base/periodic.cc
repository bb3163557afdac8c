#include "server/base/periodic.h"

#include <utility>

namespace corral::server {

void Periodic::start(core::Duration period, std::function<void()> task) {
  {
    std::lock_guard lock(mu_);
    stop_ = false;  // started again after a stop (scheduler.h moves controllers)
  }
  thread_ = std::thread([this, period, task = std::move(task)] {
    std::unique_lock lock(mu_);
    while (!stop_) {
      cv_.wait_for(lock, period, [&] { return stop_; });
      if (stop_) break;
      lock.unlock();
      task();
      lock.lock();
    }
  });
}

void Periodic::stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace corral::server
