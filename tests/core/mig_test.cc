// The MIG catalog (core/mig.h): NVIDIA's profiles and placements, and layouts checked as
// the driver checks them.
#include "core/mig.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include <gtest/gtest.h>

namespace corral::core {
namespace {

const GpuTypeId kH100("H100");

std::vector<std::string> names(const GpuTypeId& type) {
  std::vector<std::string> out;
  for (const MigProfile& p : mig_profiles(type)) out.push_back(p.name);
  return out;
}

TEST(Mig, TheCatalogNamesProfilesAsNvidiaDoes) {
  EXPECT_EQ(names(kH100), (std::vector<std::string>{"1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb",
                                                    "4g.40gb", "7g.80gb"}));
  EXPECT_EQ(
      names(GpuTypeId("A100-40GB")),
      (std::vector<std::string>{"1g.5gb", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb"}));
  EXPECT_EQ(names(GpuTypeId("H200")).back(), "7g.141gb");
  EXPECT_TRUE(mig_profiles(GpuTypeId("L40S")).empty());
  EXPECT_EQ(find_mig_profile(kH100, "3g.40gb")->id, 9);
  EXPECT_EQ(find_mig_profile(kH100, "3g.40gb")->memory_mib, 40 * 1024);
  EXPECT_EQ(find_mig_profile(kH100, "1g.5gb"), nullptr);
}

// NVIDIA's "Number of Instances Available" per profile, on a GPU holding nothing else.
TEST(Mig, EachProfileAloneFitsAsManyTimesAsNvidiaSays) {
  const std::map<std::string, std::size_t> most = {{"1g.10gb", 7}, {"1g.20gb", 4}, {"2g.20gb", 3},
                                                   {"3g.40gb", 2}, {"4g.40gb", 1}, {"7g.80gb", 1}};
  for (const MigProfile& p : mig_profiles(kH100)) {
    std::vector<MigInstance> layout;
    while (true) {
      const auto starts = mig_free_starts(kH100, layout, p);
      if (starts.empty()) break;
      layout.push_back({p.name, starts.front()});
    }
    EXPECT_EQ(layout.size(), most.at(p.name)) << p.name;
    EXPECT_TRUE(check_mig_layout(kH100, layout).ok());
  }
}

TEST(Mig, LayoutsTheDriverRefusesAreRefusedNamingTheInstance) {
  EXPECT_TRUE(check_mig_layout(kH100, {{"4g.40gb", 0}, {"3g.40gb", 4}}).ok());
  EXPECT_TRUE(
      check_mig_layout(kH100, {{"3g.40gb", 4}, {"2g.20gb", 0}, {"1g.10gb", 2}, {"1g.10gb", 3}})
          .ok());
  const Status overlap = check_mig_layout(kH100, {{"3g.40gb", 0}, {"4g.40gb", 0}});
  EXPECT_EQ(overlap.field(), "layout[1]");
  EXPECT_EQ(overlap.message(), "4g.40gb at 0 overlaps an instance before it");
  const Status start = check_mig_layout(kH100, {{"4g.40gb", 4}});
  EXPECT_EQ(start.field(), "layout[0]");
  EXPECT_EQ(start.message(), "4g.40gb may start at memory slice 0, not 4");
  EXPECT_EQ(check_mig_layout(kH100, {{"3g.40gb", 0}, {"3g.40gb", 4}, {"1g.10gb", 6}}).field(),
            "layout[2]");
  EXPECT_EQ(check_mig_layout(kH100, {{"1g.5gb", 0}}).message(), "no MIG profile 1g.5gb on H100");
  EXPECT_FALSE(check_mig_layout(GpuTypeId("L40S"), {{"1g.10gb", 0}}).ok());
  EXPECT_TRUE(check_mig_layout(GpuTypeId("L40S"), {}).ok());
}

// Every layout the driver accepts, found by search: none uses more than 7 compute slices
// or 8 memory slices, and each profile fits beside it exactly where mig_free_starts says.
TEST(MigProperty, EveryAcceptedLayoutFitsTheGpu) {
  for (const char* name : {"A100-40GB", "H100", "H200"}) {
    const GpuTypeId type(name);
    std::set<std::vector<MigInstance>> seen;
    std::function<void(std::vector<MigInstance>)> grow = [&](std::vector<MigInstance> layout) {
      std::sort(layout.begin(), layout.end());
      if (!seen.insert(layout).second) return;
      std::int32_t compute = 0, memory = 0;
      for (const MigInstance& m : layout) {
        compute += find_mig_profile(type, m.profile)->compute;
        memory += find_mig_profile(type, m.profile)->memory_slices;
      }
      EXPECT_LE(compute, kMigComputeSlices);
      EXPECT_LE(memory, kMigMemorySlices);
      for (const MigProfile& p : mig_profiles(type)) {
        const auto free = mig_free_starts(type, layout, p);
        for (std::int32_t s = 0; s < kMigMemorySlices; ++s) {
          std::vector<MigInstance> more = layout;
          more.push_back({p.name, s});
          const bool fits = std::find(free.begin(), free.end(), s) != free.end();
          EXPECT_EQ(check_mig_layout(type, more).ok(), fits) << p.name << " at " << s;
          if (fits) grow(more);
        }
      }
    };
    grow({});
    EXPECT_GT(seen.size(), 100u) << name;  // the search did explore
  }
}

}  // namespace
}  // namespace corral::core
