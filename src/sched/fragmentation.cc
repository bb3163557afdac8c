#include "sched/internal/fragmentation.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace corral::sched::detail {

std::vector<WorkloadClass> workload_classes(const ClusterSnapshot& s) {
  std::int32_t widest = 1;  // a gang needs at most a whole node of the widest
  for (TypeIx t = 0; t < static_cast<TypeIx>(s.gpu_types().size()); ++t) {
    widest = std::max(widest, s.max_node_gpus(t));
  }
  std::map<WorkloadClass, std::int64_t> counts;
  std::int64_t jobs = 0;
  const auto add = [&](const JobRequest& r) {
    WorkloadClass c;
    for (const core::GpuTypeId& id : r.gpu_types) c.types.push_back(*s.find_type(id));
    std::sort(c.types.begin(), c.types.end());
    c.gpus = std::min(r.gpus_per_node > 0 ? r.gpus_per_node : r.gpus, widest);
    c.cpus = r.cpus_per_gpu * c.gpus;
    c.per_gpu_milli = is_share(r) ? r.gpu_milli : 1000;
    ++counts[c];
    ++jobs;
  };
  for (const RunningJob& j : s.running()) add(j.request);
  for (const PendingJob& j : s.pending()) add(j.request);

  std::vector<std::pair<std::int64_t, WorkloadClass>> by_count;
  for (auto& [c, n] : counts) by_count.emplace_back(n, c);
  std::stable_sort(by_count.begin(), by_count.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<WorkloadClass> out;
  std::int64_t covered = 0;
  for (auto& [n, c] : by_count) {
    if (out.size() == 64 || covered * 100 >= jobs * 95) break;
    covered += n;
    c.weight = static_cast<double>(n);
    out.push_back(std::move(c));
  }
  for (WorkloadClass& c : out) c.weight /= static_cast<double>(covered);
  return out;
}

double fragmentation(std::span<const WorkloadClass> classes, TypeIx type, std::int64_t free_cpus,
                     std::span<const std::int32_t> free_milli) {
  std::int64_t total = 0;
  for (std::int32_t f : free_milli) total += f;
  if (total == 0) return 0;
  double out = 0;
  for (const WorkloadClass& m : classes) {
    const bool type_ok =
        m.types.empty() || std::binary_search(m.types.begin(), m.types.end(), type);
    std::int32_t fit = 0;       // GPUs with room for its per-GPU need
    std::int64_t too_full = 0;  // the free capacity of the others
    for (std::int32_t f : free_milli) {
      if (f >= m.per_gpu_milli) {
        ++fit;
      } else {
        too_full += f;
      }
    }
    const bool runs = type_ok && (free_cpus < 0 || free_cpus >= m.cpus) && fit >= m.gpus;
    out += m.weight * static_cast<double>(runs ? too_full : total);
  }
  return out;
}

}  // namespace corral::sched::detail
