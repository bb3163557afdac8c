// Dependencies between jobs as the store sees them (core::Dependency; the rules are
// sched/dependencies.h): at submission a spec's dependencies are resolved to job ids and
// refused when they could never be met; each cycle, the facts decide() judges are read
// for the pending jobs that have dependencies.
//
// A dependency on an array's first task (the array's id) is on the whole array; an
// elementwise one is on the task of the named array with the waiting task's index.
//
// Thread safety: stateless functions over the caller's transaction.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "core/job_spec.h"
#include "core/result.h"
#include "sched/snapshot.h"
#include "store/store.h"

namespace corral::server {

// Resolves `spec`'s dependencies in place: a name to `spec.tenant`'s latest job of that
// name (an array's name to the array, its first task's id). InvalidArgument naming the field
// (dependsOn[i].job) for a job that does not exist or is another tenant's (the two read the same,
// so no tenant learns of another's jobs), an elementwise dependency on a job that is not an array
// of at least as many tasks, or a dependency that can never be met already (its job failed, say).
core::Status resolve_dependencies(store::JobRepo& jobs, core::JobSpec& spec);

// One pending job that waits on others: its row and its (resolved) dependencies.
struct Dependent {
  const store::JobRow* row = nullptr;
  const std::vector<core::Dependency>* depends_on = nullptr;
};

// The facts of each dependent's dependencies, by job id, in the order of its spec: the
// jobs named and their arrays' tasks in two queries (store::JobRepo::list_job_progress),
// without their specs.
core::Result<std::map<std::int64_t, std::vector<sched::DependencyFact>>> dependency_facts(
    store::JobRepo& jobs, const std::vector<Dependent>& dependents);

}  // namespace corral::server
