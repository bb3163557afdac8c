#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "core/dataset.h"
#include "core/gpu_type.h"
#include "core/internal/spec_tree.h"
#include "core/internal/spec_validator.h"
#include "core/json_object.h"
#include "core/priority.h"
#include "core/units.h"
#include "core/utf8.h"
#include "core/worker_env.h"

namespace corral::core::internal {

// Rules that relate two or more fields. Each runs only when its inputs were valid.
void Validator::check_cross_field() {
  Resources& r = spec_.resources;
  const bool gpus_ok = gpus_.has_value();
  const bool per_node_ok = gpus_per_node_.has_value() && *gpus_per_node_ > 0;

  // 1. A fixed per-node split must fit the job and divide it evenly.
  if (gpus_ok && per_node_ok) {
    if (r.gpus_per_node > r.gpus) {
      fail("resources.gpusPerNode",
           fmt::format("must not exceed resources.gpus ({}), got {}", r.gpus, r.gpus_per_node));
    } else if (r.gpus % r.gpus_per_node != 0) {
      fail("resources.gpusPerNode",
           fmt::format("must divide resources.gpus ({}), got {}", r.gpus, r.gpus_per_node));
    }
  }

  // 2. Node and NVLink packing cannot hold more than one NVLink domain's GPUs, at the
  //    largest size the job can grow to.
  const std::int32_t largest = spec_.elastic ? std::max(spec_.elastic->max_gpus, r.gpus) : r.gpus;
  const PackLevel pack = spec_.topology.pack;
  if ((pack == PackLevel::kNode || pack == PackLevel::kNvlink) && gpus_ok &&
      largest > kMaxGpusPerNode) {
    fail("topology.pack",
         fmt::format("\"{}\" packing holds at most {} gpus, but the job asks for up to {}",
                     to_string(pack), kMaxGpusPerNode, largest));
  }
  if (pack == PackLevel::kNode && gpus_ok && per_node_ok && r.gpus_per_node != r.gpus) {
    fail("resources.gpusPerNode",
         fmt::format("must equal resources.gpus ({}) when topology.pack is \"node\", got {}",
                     r.gpus, r.gpus_per_node));
  }

  // 3. preemptible: the class's default unless stated; the preemptible class cannot opt out.
  if (preemptible_.has_value()) {
    if (class_preemptible_ && !*preemptible_) {
      fail("preemptible",
           fmt::format("must be true for priority class \"{}\", got false", spec_.priority_class));
    }
    spec_.preemptible = *preemptible_;
  } else {
    spec_.preemptible = class_preemptible_;
  }

  // 4. Elastic ranges: ordered, containing the starting size, and on the step.
  if (spec_.elastic) {
    check_elastic(*spec_.elastic, gpus_ok, per_node_ok);
  }
  if (elastic_present_ && !checkpoint_present_) {
    fail("checkpoint",
         "is required for an elastic job (it resizes by restarting from a "
         "checkpoint)");
  }

  // 5. An estimate longer than the limit would never be reached: the job is stopped first.
  if (spec_.expected_runtime > spec_.max_runtime) {
    fail("expectedRuntime",
         fmt::format("must not exceed maxRuntime ({}), got {}", format_duration(spec_.max_runtime),
                     format_duration(spec_.expected_runtime)));
  }

  // 6. A variable lives in env or in secretEnv, never both (which would win is unclear).
  for (const auto& [key, value] : spec_.secret_env) {
    if (spec_.env.contains(key)) {
      fail(child_path("secretEnv", key), "is also set in env; set it in one of them only");
    }
  }

  // 7. An interactive session is a person's: never preempted, one fixed size, one job.
  check_session();
  check_share();

  // 8. Task i waits for task i of another array only when this job is an array too.
  for (std::size_t i = 0; i < spec_.depends_on.size(); ++i) {
    if (spec_.depends_on[i].elementwise && !spec_.array) {
      fail(child_path(element_path("dependsOn", i), "elementwise"),
           "needs an array job (array.count): task i waits for task i of the job named");
    }
  }
}

// A share's worker runs on one GPU beside others' shares; what needs whole GPUs or a
// chosen shape of them is refused here, as decide() would never place it.
void Validator::check_share() {
  if (spec_.resources.gpu_milli == 0) return;
  const char* why = "a job of shares has a share of one GPU per worker";
  if (elastic_present_)
    fail("elastic", fmt::format("is not allowed with resources.gpuShare ({})", why));
  if (gpus_per_node_.has_value()) {
    fail("resources.gpusPerNode", fmt::format("is not allowed with resources.gpuShare ({})", why));
  }
  if (spec_.processes == ProcessMode::kPerNode) {
    fail("processes", fmt::format("must be perGpu with resources.gpuShare ({})", why));
  }
  if (spec_.topology.mode == TopologyMode::kRequired && spec_.topology.pack != PackLevel::kNone) {
    fail("topology.mode",
         "must be preferred with resources.gpuShare (shares are placed against "
         "fragmentation, not packed)");
  }
}

void Validator::check_elastic(const ElasticRange& e, bool gpus_ok, bool per_node_ok) {
  const Resources& r = spec_.resources;
  if (e.max_gpus < e.min_gpus) {
    fail("elastic.maxGpus",
         fmt::format("must be at least elastic.minGpus ({}), got {}", e.min_gpus, e.max_gpus));
    return;
  }
  if (gpus_ok && (r.gpus < e.min_gpus || r.gpus > e.max_gpus)) {
    fail("resources.gpus", fmt::format("must be between elastic.minGpus ({}) and "
                                       "elastic.maxGpus ({}) for an elastic job, got {}",
                                       e.min_gpus, e.max_gpus, r.gpus));
  }
  const auto on_step = [&](std::int32_t n, const std::string& path) {
    if (e.step == ElasticStep::kPowerOfTwo && !is_power_of_two(n)) {
      fail(path, fmt::format("must be a power of two (elastic.step is \"pow2\"), got {}", n));
    } else if (e.step == ElasticStep::kMultiple && n % e.step_multiple != 0) {
      fail(path,
           fmt::format("must be a multiple of elastic.step ({}), got {}", e.step_multiple, n));
    } else if (per_node_ok && n % r.gpus_per_node != 0) {
      fail(path, fmt::format("must be a multiple of resources.gpusPerNode ({}), got {}",
                             r.gpus_per_node, n));
    }
  };
  on_step(e.min_gpus, "elastic.minGpus");
  on_step(e.max_gpus, "elastic.maxGpus");
  if (gpus_ok) {
    on_step(r.gpus, "resources.gpus");
  }
}

}  // namespace corral::core::internal
