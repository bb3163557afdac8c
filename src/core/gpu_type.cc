#include "core/gpu_type.h"

#include <algorithm>
#include <array>
#include <string>

namespace corral::core {
namespace {

// Memory and board power from the vendors' data sheets (SXM parts unless the name says
// otherwise). Usage factors follow list-price ratios relative to an A100, rounded.
const std::array<GpuType, 12>& catalog() {
  static const std::array<GpuType, 12> kCatalog = {{
      {GpuTypeId("A10"), 24 * 1024, 150, 8, 0.3},
      {GpuTypeId("A100-40GB"), 40 * 1024, 400, 8, 0.9},
      {GpuTypeId("A100-80GB"), 80 * 1024, 400, 8, 1.0},
      {GpuTypeId("B200"), 180 * 1024, 1000, 10, 3.0},
      {GpuTypeId("GB200"), 186 * 1024, 1200, 10, 3.5},
      {GpuTypeId("H100"), 80 * 1024, 700, 9, 2.0},
      {GpuTypeId("H200"), 141 * 1024, 700, 9, 2.3},
      {GpuTypeId("L4"), 24 * 1024, 72, 9, 0.25},
      {GpuTypeId("L40S"), 48 * 1024, 350, 9, 0.6},
      {GpuTypeId("T4"), 16 * 1024, 70, 7, 0.15},
      {GpuTypeId("V100"), 32 * 1024, 300, 7, 0.5},
      {GpuTypeId("V100-16GB"), 16 * 1024, 300, 7, 0.45},
  }};
  return kCatalog;
}

}  // namespace

std::span<const GpuType> builtin_gpu_types() { return catalog(); }

std::optional<GpuType> find_builtin_gpu_type(std::string_view id) {
  const auto& types = catalog();
  const auto it =
      std::find_if(types.begin(), types.end(), [&](const GpuType& t) { return t.id.value == id; });
  if (it == types.end()) return std::nullopt;
  return *it;
}

}  // namespace corral::core
