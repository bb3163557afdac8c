#include "server/cycle/snapshot_from_store.h"

#include <algorithm>
#include <limits>
#include <set>

#include "core/gpu_type.h"
#include "core/job_phase.h"
#include "core/job_spec_parse.h"
#include "core/priority.h"
#include "sched/estimate.h"
#include "server/base/model_json.h"
#include "server/base/stored_documents.h"
#include "server/controllers/dataset_gate.h"
#include "server/controllers/job_dependencies.h"
#include "server/controllers/node_health.h"
#include "server/controllers/retraining_budget.h"

namespace corral::server {
namespace {

using core::JobPhase;

// An elastic job's scaling curve: what its spec declares, corrected by what its workers
// measured (core::merge_scaling) on the type of its newest report; and per type, the
// declared curve corrected by what they measured on that type.
void learn_scaling(const StoreView& view, sched::JobRequest& r) {
  if (!r.elastic) return;
  const auto it = view.observed_scaling.find(r.id.value);
  if (it == view.observed_scaling.end()) return;
  for (const auto& [type, points] : it->second.by_type) {
    r.scaling_by_type[type] = core::merge_scaling(*r.elastic, points);
  }
  r.elastic->scaling = r.scaling_by_type.at(it->second.newest);
}

// A job restarting after a resize is placed at its target size: the largest size
// allowed is capped there. decide() waits for the GPUs jobs still stopping give up when
// they would seat it there (PendingJob::resize_target: the shrink it grows into); a
// smaller size is still taken when the target no longer fits, rather than waiting for
// GPUs that went elsewhere meanwhile.
void cap_at_target(sched::JobRequest& r, std::int32_t target) {
  if (!r.elastic || target <= 0) return;
  r.elastic->max_gpus = std::min(r.elastic->max_gpus, target);
  r.elastic->min_gpus = std::min(r.elastic->min_gpus, r.elastic->max_gpus);
  r.gpus = r.elastic->max_gpus;
}

}  // namespace

std::map<std::int64_t, ObservedScaling> observed_scaling(
    const std::vector<store::ThroughputRow>& rows) {
  // Figures are kept apart by type: mixing them would read a faster GPU as better scaling.
  std::map<std::int64_t, ObservedScaling> out;
  std::map<std::int64_t, core::Time> newest;
  for (const auto& r : rows) {  // by job, type, then GPUs: each type's points come sorted
    ObservedScaling& o = out[r.job.value];
    o.by_type[r.gpu_type].push_back({.gpus = r.gpus, .throughput = r.throughput});
    const auto n = newest.find(r.job.value);
    if (n == newest.end() || r.time > n->second) {
      newest[r.job.value] = r.time;
      o.newest = r.gpu_type;
    }
  }
  return out;
}

core::Result<StoreView> read_store_view(store::Tx& tx, core::Time now) {
  StoreView view;
  CORRAL_ASSIGN_OR_RETURN(view.nodes, tx.nodes().list_nodes());
  CORRAL_ASSIGN_OR_RETURN(auto observed, tx.nodes().list_observed_without_readings());
  for (auto& row : observed) view.observed[row.node.value] = std::move(row);
  CORRAL_ASSIGN_OR_RETURN(auto sessions, tx.agents().list_agent_sessions());
  for (auto& s : sessions) view.sessions[s.node.value] = std::move(s);
  CORRAL_ASSIGN_OR_RETURN(view.tenants, tx.tenants().list_tenants());
  CORRAL_ASSIGN_OR_RETURN(view.reservations, tx.tenants().list_reservations());
  CORRAL_ASSIGN_OR_RETURN(view.rack_caps, tx.rack_caps().list_rack_caps());
  CORRAL_ASSIGN_OR_RETURN(view.holding, tx.jobs().list_jobs_holding_gpus());
  CORRAL_ASSIGN_OR_RETURN(view.allocations, tx.allocations().list_active_allocations());
  CORRAL_ASSIGN_OR_RETURN(auto checkpoints, tx.checkpoints().list_holders_checkpoint_times());
  for (const auto& c : checkpoints) view.last_checkpoint[c.job.value] = c.time;
  CORRAL_ASSIGN_OR_RETURN(auto targets, tx.scheduler().list_elastic_targets());
  for (const auto& t : targets) view.elastic_targets[t.job.value] = t.gpus;
  CORRAL_ASSIGN_OR_RETURN(auto throughput, tx.checkpoints().list_observed_throughput());
  view.observed_scaling = observed_scaling(throughput);
  CORRAL_ASSIGN_OR_RETURN(const auto holds, current_holds(tx.datasets(), view.tenants));
  for (const auto& h : holds) {
    view.held.emplace(h.job.value, dataset_hold_reason(h.ref, h.status, h.reason));
  }
  CORRAL_ASSIGN_OR_RETURN(const auto budget_holds, retraining_holds(tx, view.tenants, now));
  for (const auto& [job, reason] : budget_holds) view.held.emplace(job, reason);
  return view;
}

const sched::JobRequest* RequestCache::get(const store::JobRow& job) {
  auto it = requests_.find(job.id.value);
  if (it == requests_.end()) {
    if (job.spec_json.empty()) return nullptr;  // a cached row whose spec was dropped
    auto decoded = specs_.decode(job.id, job.spec_json);
    if (!decoded.ok()) return nullptr;
    sched::JobRequest request =
        sched::job_request_from_spec(job.id, *decoded->spec, core::tier_of(job.priority_class));
    // A task of an array with a limit: the array is the row's, the limit the spec's.
    if (job.array_job.value > 0 && decoded->spec->array && decoded->spec->array->max_running > 0) {
      request.array = sched::ArrayLimit{job.array_job, decoded->spec->array->max_running};
    }
    if (sched::is_session(request)) request.user = job.submitted_by;
    it = requests_.emplace(job.id.value, Entry{std::move(request), std::move(*decoded)}).first;
  }
  return &it->second.request;
}

const std::vector<core::Dependency>* RequestCache::dependencies(const store::JobRow& job) {
  if (get(job) == nullptr) return nullptr;
  const core::JobSpec& spec = *requests_.at(job.id.value).spec.spec;
  return spec.depends_on.empty() ? nullptr : &spec.depends_on;
}

bool RequestCache::sweep_trial(const store::JobRow& job) {
  return job.array_job.value > 0 && get(job) != nullptr &&
         requests_.at(job.id.value).spec.spec->sweep.has_value();
}

core::Result<std::map<std::int64_t, std::int64_t>> read_sweep_service(
    store::JobRepo& jobs, const std::map<std::int64_t, store::JobRow>& pending,
    RequestCache& requests) {
  std::set<std::int64_t> sweeps;
  for (const auto& [id, row] : pending) {
    if (requests.sweep_trial(row)) sweeps.insert(row.array_job.value);
  }
  std::map<std::int64_t, std::int64_t> out;
  if (sweeps.empty()) return out;
  std::vector<core::JobId> arrays;
  for (const std::int64_t s : sweeps) arrays.push_back(core::JobId(s));
  CORRAL_ASSIGN_OR_RETURN(const auto trials, jobs.list_job_progress({}, arrays));
  for (const auto& t : trials) out[t.array_job.value] += t.attained_gpu_ms;
  return out;
}

core::Result<std::map<std::int64_t, std::vector<sched::DependencyFact>>> read_dependency_facts(
    store::JobRepo& jobs, const std::map<std::int64_t, store::JobRow>& pending,
    RequestCache& requests) {
  std::vector<Dependent> dependents;
  for (const auto& [id, row] : pending) {
    if (const auto* deps = requests.dependencies(row)) dependents.push_back({&row, deps});
  }
  return dependency_facts(jobs, dependents);
}

void RequestCache::share(core::JobId job) {
  const auto it = requests_.find(job.value);
  if (it != requests_.end()) specs_.adopt(job, it->second.spec);
}

void RequestCache::retain(const std::set<std::int64_t>& live) {
  std::erase_if(requests_, [&](const auto& entry) { return live.count(entry.first) == 0; });
}

sched::RunHistory run_history_from(const std::vector<store::RunRow>& rows) {
  sched::RunHistory out;
  for (const auto& r : rows) out.add_older(r.tenant, r.name, r.run);
  return out;
}

std::vector<core::Rack> racks_from(const std::vector<store::RackCapRow>& caps) {
  std::map<std::string, std::int64_t> by_config, by_agents;
  for (const auto& c : caps) {
    if (c.power_cap_watts <= 0) continue;
    if (c.declared_by == "config") {
      by_config[c.rack] = c.power_cap_watts;
    } else {
      auto [it, fresh] = by_agents.try_emplace(c.rack, c.power_cap_watts);
      it->second = std::min(it->second, c.power_cap_watts);
    }
  }
  for (const auto& [rack, cap] : by_config) by_agents[rack] = cap;
  std::vector<core::Rack> out;
  for (const auto& [rack, cap] : by_agents) out.push_back({.name = rack, .power_cap_watts = cap});
  return out;
}

sched::SnapshotInput snapshot_from_store(const StoreView& view, const StoreFacts& facts,
                                         RequestCache& requests, core::Time now) {
  sched::SnapshotInput in;
  in.gpu_types.assign(core::builtin_gpu_types().begin(), core::builtin_gpu_types().end());
  // A row this build cannot read is left out and reported (stored_documents.h): the
  // cycle goes on without that node rather than stall every tenant.
  for (auto& [row, node] : stored_nodes(view.nodes)) {
    const auto observed = view.observed.find(row->id.value);
    if (observed != view.observed.end()) apply_observation(node, observed->second);
    node.admin = row->admin;
    // A lost node takes no placements until its agent joins again.
    const auto session = view.sessions.find(row->id.value);
    node.lost = session != view.sessions.end() && session->second.lost;
    in.nodes.push_back(std::move(node));
  }
  in.racks = racks_from(view.rack_caps);

  std::set<core::TenantId> known;
  for (const TenantConfig& cfg : stored_tenants(view.tenants)) {
    known.insert(cfg.tenant.id);
    in.tenants.push_back(cfg.tenant);
  }
  // A parent named by a tenant but never configured would fail the snapshot; drop it.
  for (auto& t : in.tenants) {
    if (t.parent && known.count(*t.parent) == 0) t.parent.reset();
  }
  for (const auto& [tenant, u] : facts.usage) {
    if (u > 0 && known.count(tenant) > 0) in.usage[tenant] = u;
  }
  for (auto& [row, r] : stored_reservations(view.reservations)) {
    if (known.count(r.tenant) > 0) in.reservations.push_back(std::move(r));
  }

  std::map<std::int64_t, std::vector<const store::AllocationRow*>> by_job;
  for (const auto& a : view.allocations) by_job[a.job.value].push_back(&a);
  // Each sweep's service: its trials' ended attempts, and its running trials' current ones.
  std::map<std::int64_t, double> sweep_seconds;
  for (const auto& [sweep, ms] : view.sweep_service) {
    sweep_seconds[sweep] = static_cast<double>(ms) / 1000.0;
  }
  for (const auto& job : view.holding) {
    const auto* req = requests.get(job);
    const auto allocs = by_job.find(job.id.value);
    if (req == nullptr || allocs == by_job.end() || known.count(job.tenant) == 0) continue;
    sched::RunningJob running{
        .request = facts.runs.with_estimate(*req, job.name),
        .started_at = core::Time::max(),
        .preemptions = job.preemptions,
        .stopping = job.phase != JobPhase::kLaunching && job.phase != JobPhase::kRunning,
        .attained_gpu_seconds = static_cast<double>(job.attained_gpu_ms) / 1000.0,
        .reservation = req->reservation};
    if (const auto c = view.last_checkpoint.find(job.id.value); c != view.last_checkpoint.end()) {
      running.last_checkpoint_at = c->second;
    }
    learn_scaling(view, running.request);
    for (const auto* a : allocs->second) {
      running.gpus.push_back({a->node, a->gpu_index});
      running.borrowed = running.borrowed || a->borrowed;
      running.started_at = std::min(running.started_at, a->created_at);
      const double held =
          static_cast<double>(std::max<std::int64_t>(0, core::to_ms(now - a->created_at))) / 1000.0;
      // A share's service is its share of the GPU's time (as the sim's ModelJob counts it).
      const double service = a->share_milli > 0 ? held * a->share_milli / 1000.0 : held;
      running.attained_gpu_seconds += service;
      if (const auto s = sweep_seconds.find(job.array_job.value); s != sweep_seconds.end()) {
        s->second += service;
      }
    }
    std::sort(running.gpus.begin(), running.gpus.end());
    in.running.push_back(std::move(running));
  }
  for (const auto& [id, job] : facts.pending) {
    const auto* req = requests.get(job);
    if (req == nullptr || known.count(job.tenant) == 0) continue;
    if (job.not_before > now) continue;    // restart backoff; its reason says until when
    if (view.held.contains(id)) continue;  // its reason says what holds it
    sched::PendingJob pending{
        .request = facts.runs.with_estimate(*req, job.name),
        .queued_at = job.queued_at,
        .attempt = job.attempt,
        .preemptions = job.preemptions,
        .attained_gpu_seconds = static_cast<double>(job.attained_gpu_ms) / 1000.0};
    if (const auto s = sweep_seconds.find(job.array_job.value); s != sweep_seconds.end()) {
      pending.attained_gpu_seconds = s->second;
    }
    if (const auto d = view.dependencies.find(id); d != view.dependencies.end()) {
      pending.dependencies = d->second;
    }
    learn_scaling(view, pending.request);
    if (const auto t = view.elastic_targets.find(id); t != view.elastic_targets.end()) {
      cap_at_target(pending.request, t->second);
      pending.resize_target = t->second;
    }
    in.pending.push_back(std::move(pending));
  }
  return in;
}

}  // namespace corral::server
