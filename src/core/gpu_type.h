// GPU types: what a GPU model is, as far as scheduling and billing care.
//
// `usage_factor` weighs a GPU-second of this type in fair-share usage (an H100-hour
// counts more than a T4-hour); 1.0 is an A100. The built-in catalog covers the common
// data-centre GPUs; a deployment may add its own types in config.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "core/ids.h"

namespace corral::core {

struct GpuType {
  GpuTypeId id;  // e.g. "H100", "A100-80GB"
  std::int64_t memory_mib = 0;
  std::int32_t tdp_watts = 0;   // board power limit, used for rack power budgets
  std::int32_t generation = 0;  // architecture generation, e.g. 7 Volta ... 10 Blackwell
  double usage_factor = 1.0;    // fair-share weight of one GPU-second (A100 = 1.0)
  friend bool operator==(const GpuType&, const GpuType&) = default;
};

// The built-in catalog, sorted by id.
std::span<const GpuType> builtin_gpu_types();
std::optional<GpuType> find_builtin_gpu_type(std::string_view id);

}  // namespace corral::core
