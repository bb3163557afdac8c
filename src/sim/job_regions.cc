// assign_regions (sim/fleet.h): which region each trace job must run in, by its trace or
// by the fleet's job_regions rule. Apart from fleet.cc, which reads the fleet file.
#include <algorithm>

#include <fmt/format.h>

#include "sim/fleet.h"
#include "sim/rng.h"

namespace corral::sim {

core::Result<std::vector<std::string>> assign_regions(const Fleet& fleet,
                                                      const std::vector<TraceJob>& jobs,
                                                      std::uint64_t seed) {
  const auto regions = fleet.region_gpus();
  std::int64_t total = 0;
  for (const auto& [region, gpus] : regions) total += gpus;
  // Its own generator, salted, so drawing regions leaves the run's other draws (failure
  // times) as they were without it.
  Rng rng(seed ^ 0x7265'6769'6f6e'7321ULL);
  std::vector<std::string> out(jobs.size());
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const TraceJob& j = jobs[i];
    if (!j.region.empty()) {
      if (std::none_of(regions.begin(), regions.end(),
                       [&](const auto& r) { return r.first == j.region; })) {
        return core::invalid_argument(
            "region", fmt::format("job {} asks for region '{}', which no pool of the fleet is in",
                                  j.name, j.region));
      }
      out[i] = j.region;
    } else if (const auto it = fleet.job_regions.tenants.find(j.tenant);
               it != fleet.job_regions.tenants.end()) {
      out[i] = it->second;
    } else if (fleet.job_regions.fraction > 0 && rng.uniform() < fleet.job_regions.fraction) {
      // In proportion to the regions' GPUs, so each region is offered load by its size.
      double at = rng.uniform() * static_cast<double>(total);
      for (const auto& [region, gpus] : regions) {
        out[i] = region;
        at -= static_cast<double>(gpus);
        if (at < 0) break;
      }
    }
  }
  return out;
}
}  // namespace corral::sim
