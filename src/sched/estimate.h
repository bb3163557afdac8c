// Run-time estimates: what a job is expected to take, for the planned starts of the jobs
// that wait behind it (docs/scheduling.md, "Planned starts").
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "core/ids.h"
#include "core/time.h"
#include "sched/snapshot.h"

namespace corral::sched {

// How many of a tenant's recent runs of one job name an estimate looks at.
inline constexpr std::size_t kEstimateRuns = 20;

// The job's own expectedRuntime when it has one; else the median of `recent_runs` (its
// tenant's successful runs of jobs with the same name, latest first; only the first
// kEstimateRuns count), which one outlier does not move; else none (max_runtime stands).
RuntimeEstimate estimate_runtime(core::Duration spec_expected,
                                 std::vector<core::Duration> recent_runs);

// Each tenant's successful runs of each job name (wall time holding GPUs over every
// attempt), latest first, as corrald keeps them in its store and corral-sim in memory:
// both adapters take estimates from here, so both forecast alike.
class RunHistory {
 public:
  // Adds a run newer than every one known for (tenant, name); keeps the latest few.
  void add_latest(const core::TenantId& tenant, const std::string& name, core::Duration run);
  // Adds a run older than every one known (a store read, latest first).
  void add_older(const core::TenantId& tenant, const std::string& name, core::Duration run);
  bool empty() const { return runs_.empty(); }

  // `r` with its best estimate: its own expectedRuntime, else its history under `name`.
  JobRequest with_estimate(JobRequest r, std::string_view name) const;

 private:
  struct Key {
    std::string tenant, name;
  };
  // Lookups by views, so a cycle over thousands of jobs allocates no key.
  struct Less {
    using is_transparent = void;
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      // As views on both sides: clang's libstdc++ tuple has no < between a tuple of
      // strings and one of string_views (GCC accepts it).
      using Views = std::tuple<std::string_view, std::string_view>;
      return Views(a.tenant, a.name) < Views(b.tenant, b.name);
    }
  };
  struct View {
    std::string_view tenant, name;
  };
  std::map<Key, std::vector<core::Duration>, Less> runs_;
};

}  // namespace corral::sched
