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

void Validator::read_resources(const TreeNode* node) {
  const std::string path = "resources";
  const TreeNode* map = as_map(node, path);
  const FieldMap f = map ? fields(*map, path,
                                  {"gpus", "gpuTypes", "gpuSpeed", "gpusPerNode", "cpusPerGpu",
                                   "memoryPerGpu", "region", "gpuShare", "gpuMemoryGiB"})
                         : FieldMap();
  Resources& r = spec_.resources;
  // A share job is one share unless it says how many (a gang of shares, a GPU each).
  const bool share = f.get("gpuShare") != nullptr;
  if (f.get("gpus") == nullptr && !share && (map != nullptr || node == nullptr)) {
    fail("resources.gpus", "is required");
  }
  gpus_ = f.get("gpus") == nullptr && share
              ? std::optional<std::int64_t>(1)
              : read_int(f.get("gpus"), "resources.gpus", 1, kMaxGpus);
  if (gpus_) {
    r.gpus = static_cast<std::int32_t>(*gpus_);
  }
  read_gpu_types(f.get("gpuTypes"));
  read_gpu_speed(f.get("gpuSpeed"));
  read_gpu_share(f.get("gpuShare"), f.get("gpuMemoryGiB"));
  // Leaving gpusPerNode out lets the scheduler choose the split; 0 once meant the same
  // and is refused now, with the way to say it.
  const TreeNode* per_node = f.get("gpusPerNode");
  if (per_node != nullptr && per_node->kind == TreeKind::kInt && !per_node->int_overflow &&
      per_node->int_value == 0) {
    fail("resources.gpusPerNode",
         fmt::format("must be between 1 and {}, got 0 (leave it out to let the scheduler "
                     "choose the split)",
                     kMaxGpusPerNode));
  } else {
    gpus_per_node_ = read_int(per_node, "resources.gpusPerNode", 1, kMaxGpusPerNode);
  }
  if (gpus_per_node_) {
    r.gpus_per_node = static_cast<std::int32_t>(*gpus_per_node_);
  }
  if (auto cpus = read_int(f.get("cpusPerGpu"), "resources.cpusPerGpu", 0, kMaxCpusPerGpu)) {
    r.cpus_per_gpu = static_cast<std::int32_t>(*cpus);
  }
  if (auto mib = read_memory(f.get("memoryPerGpu"), "resources.memoryPerGpu")) {
    r.memory_per_gpu_mib = *mib;
  }
  // Region names are DNS labels (us-east-1, eu-west): the same rule as node names, so
  // a typo such as "US East" is refused here rather than left pending forever.
  if (auto region = read_dns_label(f.get("region"), "resources.region")) {
    r.region = std::move(*region);
  }
}

void Validator::read_gpu_types(const TreeNode* node) {
  const std::string path = "resources.gpuTypes";
  if (node == nullptr) {
    return;
  }
  if (node->kind != TreeKind::kList) {
    fail(path, fmt::format("must be a list of gpu types, got {}", describe(*node)));
    return;
  }
  for (std::size_t i = 0; i < node->items.size(); ++i) {
    const std::string item_path = element_path(path, i);
    auto s = read_string(&node->items[i], item_path);
    if (!s) {
      continue;
    }
    if (!find_builtin_gpu_type(*s)) {
      std::string known;
      for (const auto& t : builtin_gpu_types()) {
        known += known.empty() ? t.id.value : ", " + t.id.value;
      }
      fail(item_path, fmt::format("unknown gpu type {}, known types: {}", quote(*s), known));
      continue;
    }
    const GpuTypeId id(*s);
    auto& types = spec_.resources.gpu_types;
    if (std::find(types.begin(), types.end(), id) != types.end()) {
      fail(item_path, fmt::format("duplicate gpu type {}", quote(*s)));
      continue;
    }
    types.push_back(id);
  }
}

// resources.gpuSpeed: {TYPE: relative speed per GPU}; every type known and, when
// gpuTypes limits the choice, one of those (a speed for a type the job refuses is a
// mistake worth naming).
void Validator::read_gpu_speed(const TreeNode* node) {
  const std::string path = "resources.gpuSpeed";
  const TreeNode* map = as_map(node, path);
  if (map == nullptr) {
    return;
  }
  const auto& allowed = spec_.resources.gpu_types;
  for (const auto& [key, value] : map->entries) {
    const std::string item = child_path(path, key);
    if (!find_builtin_gpu_type(key)) {
      fail(item, fmt::format("unknown gpu type {}", quote(key)));
      continue;
    }
    const GpuTypeId id(key);
    if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), id) == allowed.end()) {
      fail(item, fmt::format("{} is not one of resources.gpuTypes", quote(key)));
      continue;
    }
    const double speed = number_value(value).value_or(-1);
    if (!(speed >= kMinThroughput && speed <= kMaxThroughput)) {
      fail(item, fmt::format("must be a number between 1e-9 and 1e15 (only ratios between "
                             "types count), got {}",
                             describe(value)));
      continue;
    }
    if (!spec_.resources.gpu_speed.emplace(id, speed).second) {
      fail(item, "duplicate key");
    }
  }
}

// The share in thousandths: finer would promise MPS a precision it does not have, and a
// share of 1 or more is whole GPUs (resources.gpus).
void Validator::read_gpu_share(const TreeNode* share, const TreeNode* memory) {
  Resources& r = spec_.resources;
  if (share != nullptr) {
    const double x = number_value(*share).value_or(-1);
    const double milli = std::round(x * 1000);
    if (!(x > 0 && x < 1)) {
      fail("resources.gpuShare",
           fmt::format("must be a fraction of one GPU between 0.001 and 0.999 (ask for whole "
                       "GPUs with resources.gpus), got {}",
                       describe(*share)));
    } else if (std::abs(x * 1000 - milli) > 1e-6 || milli < 1) {
      fail("resources.gpuShare",
           fmt::format("must be a multiple of 0.001, got {}", describe(*share)));
    } else {
      r.gpu_milli = static_cast<std::int32_t>(milli);
    }
  }
  if (memory == nullptr) return;
  if (share == nullptr) {
    fail("resources.gpuMemoryGiB",
         "is the GPU memory of a share and needs resources.gpuShare (a whole GPU's memory is "
         "all its own)");
    return;
  }
  const double gib = number_value(*memory).value_or(-1);
  const double max_gib = static_cast<double>(kMaxMemoryPerGpuMib) / 1024;
  if (!(gib * 1024 >= 1 && gib <= max_gib)) {
    fail("resources.gpuMemoryGiB",
         fmt::format("must be a number of GiB between 1 MiB (0.0009765625) and {}, got {}", max_gib,
                     describe(*memory)));
    return;
  }
  r.gpu_memory_mib = std::llround(gib * 1024);
}

// A size string ("120Gi") or a plain number of bytes.
std::optional<std::int64_t> Validator::read_memory(const TreeNode* node, const std::string& path) {
  if (node == nullptr) {
    return std::nullopt;
  }
  if (node->kind != TreeKind::kString && node->kind != TreeKind::kInt) {
    fail(path, fmt::format("must be a size like 512Mi, 120Gi or 80G, got {}", describe(*node)));
    return std::nullopt;
  }
  const Result<std::int64_t> mib = parse_memory_mib(node->text);
  if (!mib.ok()) {
    fail(path, mib.status().message());
    return std::nullopt;
  }
  if (*mib < 1 || *mib > kMaxMemoryPerGpuMib) {
    fail(path, fmt::format("must be between 1Mi and {}, got {}",
                           format_memory_mib(kMaxMemoryPerGpuMib), describe(*node)));
    return std::nullopt;
  }
  return *mib;
}

void Validator::read_topology(const TreeNode* node) {
  const TreeNode* map = as_map(node, "topology");
  if (map == nullptr) {
    return;
  }
  const FieldMap f = fields(*map, "topology", {"pack", "mode"});
  static constexpr PackLevel kLevels[] = {PackLevel::kNvlink, PackLevel::kNode, PackLevel::kLeaf,
                                          PackLevel::kSpine, PackLevel::kNone};
  if (auto ix = read_choice(f.get("pack"), "topology.pack",
                            {"nvlink", "node", "leaf", "spine", "none"})) {
    spec_.topology.pack = kLevels[*ix];
  }
  if (auto ix = read_choice(f.get("mode"), "topology.mode", {"preferred", "required"})) {
    spec_.topology.mode = *ix == 0 ? TopologyMode::kPreferred : TopologyMode::kRequired;
  }
}

void Validator::read_elastic(const TreeNode* node) {
  const std::string path = "elastic";
  const TreeNode* map = as_map(node, path);
  if (map == nullptr) {
    return;
  }
  const FieldMap f = fields(*map, path, {"minGpus", "maxGpus", "step", "scaling"});
  elastic_present_ = true;
  if (f.get("minGpus") == nullptr) {
    fail("elastic.minGpus", "is required");
  }
  if (f.get("maxGpus") == nullptr) {
    fail("elastic.maxGpus", "is required");
  }
  ElasticRange range;
  const auto min = read_int(f.get("minGpus"), "elastic.minGpus", 1, kMaxGpus);
  const auto max = read_int(f.get("maxGpus"), "elastic.maxGpus", 1, kMaxGpus);
  bool step_ok = true;
  if (const TreeNode* step = f.get("step")) {
    if (step->kind == TreeKind::kString && step->text == "pow2") {
      range.step = ElasticStep::kPowerOfTwo;
    } else if (step->kind == TreeKind::kInt && !step->int_overflow && step->int_value >= 1 &&
               step->int_value <= kMaxGpus) {
      range.step_multiple = static_cast<std::int32_t>(step->int_value);
    } else {
      fail("elastic.step", fmt::format("must be an integer between 1 and {} or \"pow2\", got {}",
                                       kMaxGpus, describe(*step)));
      step_ok = false;
    }
  }
  if (!min || !max || !step_ok) {
    return;
  }
  range.min_gpus = static_cast<std::int32_t>(*min);
  range.max_gpus = static_cast<std::int32_t>(*max);
  range.scaling = read_scaling(f.get("scaling"));
  spec_.elastic = range;
}

// elastic.scaling: [{gpus: N, throughput: X}, ...], at most 64 points, distinct sizes,
// throughputs > 0; kept sorted by size.
std::vector<ScalingPoint> Validator::read_scaling(const TreeNode* node) {
  const std::string path = "elastic.scaling";
  std::vector<ScalingPoint> out;
  if (node == nullptr) {
    return out;
  }
  if (node->kind != TreeKind::kList || node->items.size() > 64) {
    fail(path,
         fmt::format("must be a list of at most 64 {{gpus, throughput}} points, got {}",
                     node->kind == TreeKind::kList ? fmt::format("{} points", node->items.size())
                                                   : describe(*node)));
    return out;
  }
  for (std::size_t i = 0; i < node->items.size(); ++i) {
    const std::string item = element_path(path, i);
    const TreeNode* map = as_map(&node->items[i], item);
    if (map == nullptr) {
      continue;
    }
    const FieldMap f = fields(*map, item, {"gpus", "throughput"});
    const auto gpus = read_int(f.get("gpus"), item + ".gpus", 1, kMaxGpus);
    const TreeNode* tp = f.get("throughput");
    if (f.get("gpus") == nullptr) fail(item + ".gpus", "is required");
    if (tp == nullptr) fail(item + ".throughput", "is required");
    double value = 0;
    if (tp != nullptr) {
      value = number_value(*tp).value_or(-1);
      if (!(value >= kMinThroughput && value <= kMaxThroughput)) {
        fail(item + ".throughput",
             fmt::format("must be a number between 1e-9 and 1e15 (samples/s or any unit), "
                         "got {}",
                         describe(*tp)));
        continue;
      }
    }
    if (!gpus || tp == nullptr) {
      continue;
    }
    const auto n = static_cast<std::int32_t>(*gpus);
    if (std::any_of(out.begin(), out.end(), [&](const ScalingPoint& p) { return p.gpus == n; })) {
      fail(item + ".gpus", fmt::format("duplicate size {}", n));
      continue;
    }
    out.push_back({.gpus = n, .throughput = value});
  }
  std::sort(out.begin(), out.end(),
            [](const ScalingPoint& a, const ScalingPoint& b) { return a.gpus < b.gpus; });
  return out;
}

}  // namespace corral::core::internal
