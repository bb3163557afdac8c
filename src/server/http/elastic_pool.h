// ElasticPool: the threads corrald's HTTP server runs requests on, grown on demand.
//
// cpp-httplib gives a connection one thread for as long as it lives, and a connection
// lives through a request's whole wait: an agent's long poll holds one for up to 25 s,
// and its heartbeat connection (kept alive between beats 2 s apart) another. A fixed pool
// smaller than that stops answering once enough agents have joined: at 1,250 nodes and
// 128 threads, heartbeats queued behind long polls until healthy nodes were declared lost
// (docs/performance.md#10000-gpus-end-to-end). This pool keeps `warm` threads and starts
// another whenever every thread is busy, up to `max`; one that has been idle for a
// minute beyond the warm ones exits.
//
// Thread safety: safe for concurrent use; shutdown() waits for every thread to finish.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <httplib.h>
#include <mutex>

namespace corral::server {

class ElasticPool final : public httplib::TaskQueue {
 public:
  ElasticPool(std::size_t warm, std::size_t max);
  ~ElasticPool() override;
  ElasticPool(const ElasticPool&) = delete;
  ElasticPool& operator=(const ElasticPool&) = delete;

  void enqueue(std::function<void()> fn) override;
  void shutdown() override;

  std::size_t threads() const;  // running now
  std::size_t peak() const;     // the most that ever ran at once

 private:
  bool start_thread();  // REQUIRES: mu_ held; false when the system has no thread to give
  void work();

  const std::size_t warm_;
  const std::size_t max_;
  mutable std::mutex mu_;
  std::condition_variable cv_;    // a job, or shutdown
  std::condition_variable done_;  // a thread exited
  std::deque<std::function<void()>> jobs_;
  std::size_t threads_ = 0;
  std::size_t idle_ = 0;
  std::size_t peak_ = 0;
  bool shutdown_ = false;
  bool creation_failed_ = false;  // said once in the log
};

}  // namespace corral::server
