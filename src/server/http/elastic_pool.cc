#include "server/http/elastic_pool.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <system_error>
#include <thread>

namespace corral::server {
namespace {

constexpr auto kIdleExit = std::chrono::seconds(60);

}  // namespace

ElasticPool::ElasticPool(std::size_t warm, std::size_t max)
    : warm_(std::max<std::size_t>(warm, 1)), max_(std::max(max, std::max<std::size_t>(warm, 1))) {
  std::lock_guard lock(mu_);
  for (std::size_t i = 0; i < warm_; ++i) start_thread();
  if (threads_ == 0) throw std::runtime_error("cannot start any HTTP worker thread");
}

ElasticPool::~ElasticPool() { shutdown(); }

bool ElasticPool::start_thread() {
  try {
    // Detached: shutdown() waits on the count, so a surge thread that exits early needs
    // no join. The thread waits for mu_ (held here) before it reads anything.
    std::thread([this] { work(); }).detach();
  } catch (const std::system_error& e) {
    // Out of threads (RLIMIT_NPROC, a cgroup's pids.max): the job waits for a busy thread,
    // and the count stays true, so shutdown() still ends.
    if (!creation_failed_)
      std::fprintf(stderr, "corrald: cannot start an HTTP thread: %s\n", e.what());
    creation_failed_ = true;
    return false;
  }
  ++threads_;
  peak_ = std::max(peak_, threads_);
  return true;
}

void ElasticPool::enqueue(std::function<void()> fn) {
  std::lock_guard lock(mu_);
  jobs_.push_back(std::move(fn));
  if (jobs_.size() > idle_ && threads_ < max_) start_thread();
  cv_.notify_one();
}

void ElasticPool::work() {
  std::unique_lock lock(mu_);
  while (true) {
    ++idle_;
    const bool woke = cv_.wait_for(lock, kIdleExit, [this] { return shutdown_ || !jobs_.empty(); });
    --idle_;
    if (jobs_.empty() && (shutdown_ || (!woke && threads_ > warm_))) break;
    if (jobs_.empty()) continue;
    std::function<void()> fn = std::move(jobs_.front());
    jobs_.pop_front();
    lock.unlock();
    fn();
    lock.lock();
  }
  --threads_;
  done_.notify_all();
}

void ElasticPool::shutdown() {
  std::unique_lock lock(mu_);
  shutdown_ = true;
  cv_.notify_all();
  done_.wait(lock, [this] { return threads_ == 0; });
}

std::size_t ElasticPool::threads() const {
  std::lock_guard lock(mu_);
  return threads_;
}

std::size_t ElasticPool::peak() const {
  std::lock_guard lock(mu_);
  return peak_;
}

}  // namespace corral::server
