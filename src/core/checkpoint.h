// Checkpoint metadata. The bytes live at `uri` (a directory or object store), never in
// the database; Corral records where they are and how to verify them.
#pragma once

#include <cstdint>
#include <string>

#include "core/ids.h"
#include "core/time.h"

namespace corral::core {

struct Checkpoint {
  JobId job;
  std::int32_t attempt = 0;  // the attempt that wrote it
  std::int64_t step = 0;     // the training step it captures
  std::string uri;
  std::int64_t bytes = 0;
  std::string checksum;  // e.g. "sha256:…"
  Time time;             // when the worker reported it complete
  // The job's GPUs in that attempt, and the training throughput the worker measured over
  // the interval the checkpoint closes (its own unit, the one of the spec's
  // elastic.scaling; 0: not measured). decide() learns the job's scaling curve from them
  // (core::merge_scaling).
  std::int32_t gpus = 0;
  double throughput = 0;
};

}  // namespace corral::core
