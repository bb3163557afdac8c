// Captured scheduling cycles: the exact input of a cycle (snapshot input, config, now)
// and what decide() made of it, written as a cycle file (cycle/capture.h) that
// `corral-sim replay` reads. An operator uses it to answer "why was my job preempted"
// with the real queue of that moment, or to try another configuration on it.
//
// Files live in one directory (corrald: DATA_DIR/cycles), named
// cycle-<epoch>-<cycle number, zero-padded>.json so names sort in time order, mode 0600,
// written to a temporary name and renamed, so a reader never sees half a file. The
// directory is kept under max_bytes: after each write the oldest files go first. A
// capture is taken every `every`th cycle (0: never on a schedule) and for each
// capture_next() call; the scheduler never reads these files.
//
// Thread safety: safe for concurrent use (the loop thread records, API threads ask).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "core/result.h"
#include "core/time.h"
#include "cycle/capture.h"
#include "server/base/settings.h"
#include "server/base/thread_annotations.h"

namespace corral::server {

struct CaptureFile {
  std::string name;
  std::int64_t bytes = 0;
};

class CycleRecorder {
 public:
  explicit CycleRecorder(CaptureOptions options);

  bool enabled() const { return !options_.dir.empty(); }
  // Whether cycle `n` is to be captured: on the schedule, or asked for since the last.
  bool wants(std::int64_t n) CORRAL_EXCLUDES(mu_);
  // Writes `c` as cycle `n` of `epoch` and trims the directory; the file's name.
  core::Result<std::string> record(const cycle::CapturedCycle& c, std::int64_t epoch,
                                   std::int64_t n) CORRAL_EXCLUDES(mu_);
  // Asks for the next cycle and waits up to `wait` for its file; Unavailable when no
  // cycle ran meanwhile, FailedPrecondition when captures are off.
  core::Result<CaptureFile> capture_next(std::chrono::milliseconds wait) CORRAL_EXCLUDES(mu_);

  // The files kept, oldest first.
  std::vector<CaptureFile> list() const;
  // One file's text; NotFound for a name that is not one of them.
  core::Result<std::string> read(const std::string& name) const;

 private:
  void trim();  // REQUIRES: mu_ held

  const CaptureOptions options_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool asked_ CORRAL_GUARDED_BY(mu_) = false;
  std::int64_t written_ CORRAL_GUARDED_BY(mu_) = 0;  // files written so far
  CaptureFile last_ CORRAL_GUARDED_BY(mu_);
};

}  // namespace corral::server
