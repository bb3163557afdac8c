#include "core/mig.h"

#include <algorithm>
#include <map>
#include <string>

namespace corral::core {
namespace {

// The six GPU instance profiles every catalog type has, by NVML id, named for a GPU whose
// memory slice holds `slice_gb` (the 1-slice profile's) and whose 2-slice memory holds
// `pair_gb`, half `half_gb`, all `all_gb`: A100-40GB 5/10/20/40, 80 GB parts 10/20/40/80.
std::vector<MigProfile> mig_profiles_for(int slice_gb, int pair_gb, int half_gb, int all_gb) {
  const auto gb = [](int n) { return std::int64_t{n} * 1024; };
  const auto name = [](int g, int mem) {
    return std::to_string(g) + "g." + std::to_string(mem) + "gb";
  };
  return {
      {name(1, slice_gb), 19, 1, 1, gb(slice_gb), {0, 1, 2, 3, 4, 5, 6}},
      {name(1, pair_gb), 15, 1, 2, gb(pair_gb), {0, 2, 4, 6}},
      {name(2, pair_gb), 14, 2, 2, gb(pair_gb), {0, 2, 4}},
      {name(3, half_gb), 9, 3, 4, gb(half_gb), {0, 4}},
      {name(4, half_gb), 5, 4, 4, gb(half_gb), {0}},
      {name(7, all_gb), 0, 7, 8, gb(all_gb), {0}},
  };
}

const std::map<std::string, std::vector<MigProfile>, std::less<>>& mig_catalog() {
  static const auto* const kCatalog =
      new std::map<std::string, std::vector<MigProfile>, std::less<>>{
          {"A100-40GB", mig_profiles_for(5, 10, 20, 40)},
          {"A100-80GB", mig_profiles_for(10, 20, 40, 80)},
          {"H100", mig_profiles_for(10, 20, 40, 80)},
          {"H200", mig_profiles_for(18, 35, 71, 141)},
      };
  return *kCatalog;
}

// The memory slices `p` takes from `start`, as a bit mask.
std::uint32_t mig_slices(const MigProfile& p, std::int32_t start) {
  return ((std::uint32_t{1} << p.memory_slices) - 1) << start;
}

}  // namespace

std::span<const MigProfile> mig_profiles(const GpuTypeId& type) {
  const auto it = mig_catalog().find(type.value);
  if (it == mig_catalog().end()) return {};
  return it->second;
}

const MigProfile* find_mig_profile(const GpuTypeId& type, std::string_view name) {
  for (const MigProfile& p : mig_profiles(type)) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

Status check_mig_layout(const GpuTypeId& type, const std::vector<MigInstance>& layout) {
  if (mig_profiles(type).empty() && !layout.empty()) {
    return invalid_argument("layout", "GPU type " + type.value + " has no MIG profiles");
  }
  std::uint32_t taken = 0;
  for (std::size_t i = 0; i < layout.size(); ++i) {
    const std::string field = "layout[" + std::to_string(i) + "]";
    const MigInstance& m = layout[i];
    const MigProfile* p = find_mig_profile(type, m.profile);
    if (p == nullptr) {
      return invalid_argument(field, "no MIG profile " + m.profile + " on " + type.value);
    }
    if (std::find(p->starts.begin(), p->starts.end(), m.start) == p->starts.end()) {
      std::string allowed;
      for (std::int32_t s : p->starts) allowed += (allowed.empty() ? "" : ", ") + std::to_string(s);
      return invalid_argument(field, p->name + " may start at memory slice " + allowed + ", not " +
                                         std::to_string(m.start));
    }
    if ((taken & mig_slices(*p, m.start)) != 0) {
      return invalid_argument(
          field, p->name + " at " + std::to_string(m.start) + " overlaps an instance before it");
    }
    taken |= mig_slices(*p, m.start);
  }
  return ok_status();
}

std::vector<std::int32_t> mig_free_starts(const GpuTypeId& type,
                                          const std::vector<MigInstance>& layout,
                                          const MigProfile& profile) {
  std::uint32_t taken = 0;
  for (const MigInstance& m : layout) {
    if (const MigProfile* p = find_mig_profile(type, m.profile)) taken |= mig_slices(*p, m.start);
  }
  std::vector<std::int32_t> out;
  for (std::int32_t s : profile.starts) {
    if ((taken & mig_slices(profile, s)) == 0) out.push_back(s);
  }
  return out;
}

}  // namespace corral::core
