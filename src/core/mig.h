// MIG (Multi-Instance GPU): the GPU instance profiles NVIDIA defines for a GPU type, and
// where on the GPU each may be placed (NVIDIA's MIG user guide, "Supported MIG Profiles",
// and `nvidia-smi mig -lgipp`). A MIG-capable GPU has 8 memory slices and 7 compute
// slices; an instance of a profile takes `memory_slices` consecutive memory slices from
// one of the profile's allowed starts. A layout (the instances on one GPU) is one the
// driver accepts when every instance is at an allowed start of its profile and no two
// share a memory slice (nvmlDeviceCreateGpuInstanceWithPlacement refuses an overlap); the
// allowed starts keep the compute slices of any such layout within 7.
//
// The catalog holds A100 (40 and 80 GB), H100 (80 GB) and H200 (141 GB); the media
// extension profiles (+me) are left out: they take the same place as their base profile.
// Memory is nominal (the profile's name), not the driver's exact figure.
//
// Thread safety: the catalog is immutable.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/ids.h"
#include "core/status.h"

namespace corral::core {

inline constexpr std::int32_t kMigMemorySlices = 8;
inline constexpr std::int32_t kMigComputeSlices = 7;

struct MigProfile {
  std::string name;                // "1g.10gb": its compute slices, its memory
  std::int32_t id = 0;             // NVML's GPU instance profile id (nvidia-smi mig -cgi ID)
  std::int32_t compute = 0;        // compute slices, of kMigComputeSlices
  std::int32_t memory_slices = 0;  // of kMigMemorySlices
  std::int64_t memory_mib = 0;
  std::vector<std::int32_t> starts;  // the memory slices it may start at
};

// The profiles of `type`, smallest first; empty for a type that is not MIG-capable.
std::span<const MigProfile> mig_profiles(const GpuTypeId& type);
// The profile of `type` named `name`, or nullptr.
const MigProfile* find_mig_profile(const GpuTypeId& type, std::string_view name);

// One GPU instance: its profile's name and the memory slice it starts at.
struct MigInstance {
  std::string profile;
  std::int32_t start = 0;
  friend auto operator<=>(const MigInstance&, const MigInstance&) = default;
};

// OK when the driver accepts `layout` on a GPU of `type`; otherwise InvalidArgument whose
// field names the instance (`layout[2]`) and whose message says why.
Status check_mig_layout(const GpuTypeId& type, const std::vector<MigInstance>& layout);

// The starts where an instance of `profile` fits beside `layout` (a valid layout of
// `type`), in order: adding it at one of them keeps the layout valid, anywhere else not.
std::vector<std::int32_t> mig_free_starts(const GpuTypeId& type,
                                          const std::vector<MigInstance>& layout,
                                          const MigProfile& profile);

}  // namespace corral::core
