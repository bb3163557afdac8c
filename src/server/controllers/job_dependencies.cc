#include "server/controllers/job_dependencies.h"

#include <algorithm>
#include <optional>
#include <string>

#include "core/json_object.h"
#include "sched/dependencies.h"

namespace corral::server {
namespace {

using core::Result;
using core::Status;

// What one job (or one task) stands at: started once it was placed; an ended row changes
// no more, so its updated_at is when it ended.
sched::DependencyFact fact_of(const store::JobProgress& job) {
  const bool ended = core::is_terminal(job.phase);
  return {.job = job.id,
          .started = job.attempt > 0,
          .ended = ended,
          .succeeded = job.phase == core::JobPhase::kSucceeded,
          .started_at = job.first_started,
          .ended_at = ended ? job.updated_at : core::Time{}};
}

// A whole array, its tasks summed up (sched::summed_fact).
sched::DependencyFact fact_of(core::JobId array, const std::vector<store::JobProgress>& tasks) {
  std::vector<sched::DependencyFact> each;
  for (const store::JobProgress& t : tasks) each.push_back(fact_of(t));
  return sched::summed_fact(array, each);
}

bool is_array(const store::JobProgress& job) { return job.array_job == job.id; }

// The jobs dependencies name and their arrays' tasks, read without their specs:
// `prefetch` reads a whole cycle's in two queries; anything else is read when asked.
class Reader {
 public:
  explicit Reader(store::JobRepo& jobs) : jobs_(jobs) {}

  Status prefetch(const std::vector<core::JobId>& ids) {
    CORRAL_ASSIGN_OR_RETURN(const auto named, jobs_.list_job_progress(ids, {}));
    for (const core::JobId id : ids) jobs_read_.emplace(id.value, std::nullopt);
    std::vector<core::JobId> arrays;
    for (const store::JobProgress& j : named) {
      jobs_read_[j.id.value] = j;
      if (is_array(j)) arrays.push_back(j.id);
    }
    CORRAL_ASSIGN_OR_RETURN(const auto tasks, jobs_.list_job_progress({}, arrays));
    for (const core::JobId a : arrays) tasks_read_[a.value];
    for (const store::JobProgress& t : tasks) tasks_read_[t.array_job.value].push_back(t);
    for (auto& [array, list] : tasks_read_) {
      std::sort(list.begin(), list.end(),
                [](const auto& a, const auto& b) { return a.array_index < b.array_index; });
    }
    return Status();
  }

  Result<std::optional<store::JobProgress>> job(core::JobId id) {
    if (const auto it = jobs_read_.find(id.value); it != jobs_read_.end()) return it->second;
    CORRAL_RETURN_IF_ERROR(prefetch({id}));
    return jobs_read_.at(id.value);
  }

  Result<const std::vector<store::JobProgress>*> tasks(core::JobId array) {
    if (!tasks_read_.contains(array.value)) CORRAL_RETURN_IF_ERROR(prefetch({array}));
    return &tasks_read_[array.value];
  }

  // The fact for `dep` of a job at array index `index`; nullopt when the job it names is
  // gone, or (elementwise) has no task at `index`.
  Result<std::optional<sched::DependencyFact>> fact(const core::Dependency& dep,
                                                    std::int32_t index) {
    CORRAL_ASSIGN_OR_RETURN(const auto row, job(*dep.id));
    if (!row) return std::optional<sched::DependencyFact>();
    std::optional<sched::DependencyFact> out;
    if (is_array(*row)) {
      CORRAL_ASSIGN_OR_RETURN(const auto* all, tasks(row->id));
      if (!dep.elementwise) {
        out = fact_of(row->id, *all);
      } else {
        const auto t = std::find_if(all->begin(), all->end(), [&](const store::JobProgress& r) {
          return r.array_index == index;
        });
        if (t != all->end()) out = fact_of(*t);
      }
    } else if (!dep.elementwise) {
      out = fact_of(*row);
    }
    if (out) out->on = dep.on;
    return out;
  }

 private:
  store::JobRepo& jobs_;
  std::map<std::int64_t, std::optional<store::JobProgress>> jobs_read_;
  std::map<std::int64_t, std::vector<store::JobProgress>> tasks_read_;
};

}  // namespace

Status resolve_dependencies(store::JobRepo& jobs, core::JobSpec& spec) {
  Reader reader(jobs);
  const std::int32_t count = spec.array ? spec.array->count : 1;
  for (std::size_t i = 0; i < spec.depends_on.size(); ++i) {
    core::Dependency& dep = spec.depends_on[i];
    const std::string field = core::child_path(core::element_path("dependsOn", i), "job");
    const std::string named =
        dep.id ? "job " + std::to_string(dep.id->value) : "a job named \"" + dep.name + "\"";
    std::optional<store::JobProgress> row;
    if (dep.id) {
      CORRAL_ASSIGN_OR_RETURN(row, reader.job(*dep.id));
    } else {
      CORRAL_ASSIGN_OR_RETURN(const auto named_row, jobs.find_job_by_name(spec.tenant, dep.name));
      if (named_row) {
        CORRAL_ASSIGN_OR_RETURN(row, reader.job(named_row->id));
      }
    }
    if (!row || row->tenant != spec.tenant) {
      return core::invalid_argument(field, "tenant " + spec.tenant.value + " has no " + named);
    }
    // A name given to an array names the array (its first task), not its last task.
    if (!dep.id && row->array_job.value > 0 && row->array_job != row->id) {
      CORRAL_ASSIGN_OR_RETURN(row, reader.job(row->array_job));
      if (!row) return core::internal_error("array of " + named + " is gone");
    }
    dep.id = row->id;
    dep.name.clear();
    if (dep.elementwise) {
      if (!is_array(*row)) {
        return core::invalid_argument(
            field, named + " is not an array, so an elementwise dependency has no task to match");
      }
      CORRAL_ASSIGN_OR_RETURN(const auto* tasks, reader.tasks(row->id));
      if (static_cast<std::int32_t>(tasks->size()) < count) {
        return core::invalid_argument(
            field, "array " + std::to_string(row->id.value) + " has " +
                       std::to_string(tasks->size()) + " tasks, fewer than this array's " +
                       std::to_string(count) + ": an elementwise dependency pairs task i with i");
      }
    }
    // A dependency already never met would leave the job to be cancelled at once.
    for (std::int32_t index = 0; index < (dep.elementwise ? count : 1); ++index) {
      CORRAL_ASSIGN_OR_RETURN(const auto fact, reader.fact(dep, index));
      if (!fact) continue;
      const sched::DependencyVerdict verdict = sched::judge_dependencies({*fact});
      if (verdict.state == sched::DependencyState::kNever) {
        return core::invalid_argument(field, verdict.reason);
      }
    }
  }
  return Status();
}

Result<std::map<std::int64_t, std::vector<sched::DependencyFact>>> dependency_facts(
    store::JobRepo& jobs, const std::vector<Dependent>& dependents) {
  Reader reader(jobs);
  std::vector<core::JobId> named;
  for (const Dependent& d : dependents) {
    for (const core::Dependency& dep : *d.depends_on) {
      if (dep.id) named.push_back(*dep.id);
    }
  }
  if (!named.empty()) CORRAL_RETURN_IF_ERROR(reader.prefetch(named));
  std::map<std::int64_t, std::vector<sched::DependencyFact>> out;
  for (const Dependent& d : dependents) {
    auto& facts = out[d.row->id.value];
    for (const core::Dependency& dep : *d.depends_on) {
      if (!dep.id) continue;  // stored specs hold ids only
      CORRAL_ASSIGN_OR_RETURN(auto fact, reader.fact(dep, d.row->array_index));
      // A job that is gone (or a task missing from a shorter array) can never be waited
      // for: it reads as ended, neither started nor succeeded.
      if (!fact) fact = sched::DependencyFact{.job = *dep.id, .on = dep.on, .ended = true};
      facts.push_back(*fact);
    }
  }
  return out;
}

}  // namespace corral::server
