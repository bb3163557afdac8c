// SpecCache: each job's stored spec, decoded once per process and shared.
//
// A job's stored spec (JobRow::spec_json, normalized at submit) never changes after the
// submit, and decoding it runs the full user-input validator. The assignments answers
// (every long poll of every node) and the lifecycle controllers (every report) read the
// specs of the jobs holding GPUs again and again, so they take them from here. An entry
// is keyed by the job id and remembers the hash and length of the text it was decoded
// from: a different text for the same id (a store shared with another writer, a job id
// reused by a fresh store) is decoded again rather than answered from a stale entry.
// Entries are dropped when a job's GPUs are released or it is requeued (forget(); it is
// decoded again if it is placed again), and at most `capacity` are kept besides: past it
// the lowest job ids go first, so a job that no path forgets cannot grow the cache forever.
//
// Thread safety: safe for concurrent use. Decoding runs outside the lock: two threads
// that miss on one job at once both decode it, and the first result stays.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string_view>

#include "core/ids.h"
#include "core/job_spec.h"
#include "core/result.h"
#include "server/base/thread_annotations.h"

namespace corral::server {

class SpecCache {
 public:
  // Far above the jobs that can hold GPUs at once in one fleet (one per GPU at most).
  static constexpr std::size_t kDefaultCapacity = 1 << 15;

  // Each decode also bumps `*decode_counter` when it is given (corrald's /metrics).
  explicit SpecCache(std::size_t capacity = kDefaultCapacity,
                     std::atomic<std::int64_t>* decode_counter = nullptr);

  // A spec decoded from one stored text, with what identifies the text.
  struct Decoded {
    std::size_t text_hash = 0;
    std::size_t text_size = 0;
    std::shared_ptr<const core::JobSpec> spec;
  };
  // Decodes `spec_json` without keeping it (the scheduler's pending jobs: most never
  // reach an agent's assignments, and would only crowd out the jobs that do). Counts as
  // a decode. DataLoss when it does not parse.
  core::Result<Decoded> decode(core::JobId job, std::string_view spec_json);
  // Keeps a spec decode() gave, so the job's next get() with the same text decodes
  // nothing: the scheduler hands over a job's spec as it places it.
  void adopt(core::JobId job, Decoded decoded) CORRAL_EXCLUDES(mu_);

  // The decoded spec of `job`, from `spec_json` (its stored spec) on first use, or when
  // `spec_json` differs from the text the entry was decoded from. DataLoss when the
  // stored spec does not parse (nothing is cached then). O(|spec_json|) for the hash on
  // a hit, a full parse and validation on a miss.
  core::Result<std::shared_ptr<const core::JobSpec>> get(core::JobId job,
                                                         std::string_view spec_json)
      CORRAL_EXCLUDES(mu_);
  void forget(core::JobId job) CORRAL_EXCLUDES(mu_);

  std::size_t size() const CORRAL_EXCLUDES(mu_);
  // How many specs were decoded so far (tests: that a second read decodes nothing).
  std::int64_t decodes() const;

 private:
  const std::size_t capacity_;
  std::atomic<std::int64_t>* const decode_counter_;
  mutable std::mutex mu_;
  std::map<std::int64_t, Decoded> specs_ CORRAL_GUARDED_BY(mu_);
  std::atomic<std::int64_t> decodes_{0};
};

}  // namespace corral::server
