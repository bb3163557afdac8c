#include "server/billing/accrual_input.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include "server/base/model_json.h"
#include "server/base/stored_documents.h"

namespace corral::server {
namespace {

using core::Result;
using core::Time;

bool within(Time t, Time from, std::optional<Time> to) { return t >= from && (!to || t <= *to); }

// How one attempt's hold began and ended, from its job's events and checkpoints.
struct AttemptFacts {
  core::Duration overhead{0};
  std::optional<Time> stopping_from;
  std::optional<Time> lost_from;
};

AttemptFacts attempt_facts(const store::AllocationRow& a, Time until,
                           const std::vector<store::JobEventRow>& events,
                           const std::vector<core::Checkpoint>& checkpoints) {
  AttemptFacts out;
  const std::optional<Time> end = a.released_at;
  std::optional<Time> started;
  bool lost = false;
  for (const auto& e : events) {
    if (!within(e.time, a.created_at, end)) continue;
    if (e.kind == "started" && !started) started = e.time;
    // A resize stops the job as a preemption does (checkpoint and restart).
    const bool stopped = e.kind == "preempted" || e.kind == "resizing";
    if (stopped && !out.stopping_from) out.stopping_from = e.time;
    if (stopped || e.kind == "rank failed" || e.kind == "node lost") lost = true;
  }
  // An attempt that has not started (or never did) is start-up all along.
  out.overhead = started.value_or(std::max(end.value_or(until), a.created_at)) - a.created_at;
  if (lost && end) {
    Time from = a.created_at;
    for (const auto& c : checkpoints) {
      if (c.time <= *end) from = std::max(from, c.time);
    }
    out.lost_from = from;
  }
  return out;
}

// Moves each allocation's start to no earlier than the time the GPU's allocations before
// it leave room for it (a whole GPU: all released; a share: its thousandths free). The
// store never lets a GPU's active rows hold more than it has (store/allocations_repo.h),
// but transactions stamp their times before they commit: a cancel that releases at t1 and
// a scheduler cycle that saw the freed room and places with its cycle's earlier time t0
// leave an overlap of t1 - t0 milliseconds. The allocation made later (the higher id)
// starts when the room is free, so the GPU's time still adds up and no more than the whole
// of it is held at once.
void order_holds(std::vector<store::AllocationRow>& allocs) {
  std::vector<store::AllocationRow*> by_gpu;
  by_gpu.reserve(allocs.size());
  for (auto& a : allocs) by_gpu.push_back(&a);
  std::sort(by_gpu.begin(), by_gpu.end(), [](const auto* a, const auto* b) {
    return std::tie(a->node.value, a->gpu_index, a->id) <
           std::tie(b->node.value, b->gpu_index, b->id);
  });
  std::size_t first = 0;  // the first row of the current GPU
  for (std::size_t i = 1; i < by_gpu.size(); ++i) {
    store::AllocationRow& next = *by_gpu[i];
    if (by_gpu[first]->node != next.node || by_gpu[first]->gpu_index != next.gpu_index) {
      first = i;
      continue;
    }
    // The earlier rows still holding at next's start, by release; an unreleased one never
    // ends within the window and can only be beside it (the store made room for both).
    std::vector<const store::AllocationRow*> holding;
    std::int64_t held = 0;
    for (std::size_t k = first; k < i; ++k) {
      const store::AllocationRow& prev = *by_gpu[k];
      if (prev.released_at && *prev.released_at <= next.created_at) continue;
      holding.push_back(&prev);
      held += prev.milli();
    }
    std::sort(holding.begin(), holding.end(), [](const auto* a, const auto* b) {
      return a->released_at.value_or(core::Time::max()) <
             b->released_at.value_or(core::Time::max());
    });
    for (const auto* prev : holding) {
      if (held + next.milli() <= 1000 || !prev->released_at) break;
      next.created_at = *prev->released_at;
      held -= prev->milli();
    }
    if (next.released_at) next.released_at = std::max(*next.released_at, next.created_at);
  }
}

}  // namespace

Result<ledger::AccrualInput> read_accrual_input(store::Tx& tx, SpecCache& specs,
                                                const AccrualScope& scope) {
  const Time until = scope.now ? std::min(*scope.now, scope.end) : scope.end;
  ledger::AccrualInput in;
  CORRAL_ASSIGN_OR_RETURN(auto allocs,
                          tx.allocations().list_allocations_overlapping(scope.start, until));
  order_holds(allocs);
  std::erase_if(allocs, [&](const auto& a) { return a.created_at >= until; });
  if (scope.job) std::erase_if(allocs, [&](const auto& a) { return a.job != *scope.job; });
  std::set<std::pair<std::string, std::int32_t>> held;
  for (const auto& a : allocs) held.insert({a.node.value, a.gpu_index});

  // GPUs, as registered, from their node's registration.
  CORRAL_ASSIGN_OR_RETURN(const auto nodes, tx.nodes().list_nodes());
  std::map<std::string, std::vector<std::int32_t>> gpus_of;
  for (const auto& row : nodes) {
    if (row.created_at >= until) continue;
    CORRAL_ASSIGN_OR_RETURN(const core::Node node, stored_node_from_json(row.spec_json));
    for (const auto& g : node.gpus) {
      if (scope.job && held.count({row.id.value, g.index}) == 0) continue;
      in.gpus.push_back({row.id, g.index, g.type, row.created_at});
      gpus_of[row.id.value].push_back(g.index);
    }
  }
  // A GPU an allocation names that the registration no longer lists (re-registered with
  // fewer) is still billed for its holds, from the first of them.
  for (const auto& a : allocs) {
    auto& listed = gpus_of[a.node.value];
    if (std::find(listed.begin(), listed.end(), a.gpu_index) != listed.end()) continue;
    listed.push_back(a.gpu_index);
    in.gpus.push_back({a.node, a.gpu_index, a.gpu_type, a.created_at});
  }

  // Holds, with what their jobs' events say of each attempt.
  std::vector<core::JobId> ids;
  for (const auto& a : allocs) ids.push_back(a.job);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  CORRAL_ASSIGN_OR_RETURN(const auto jobs, tx.jobs().get_jobs(ids));
  std::map<std::int64_t, const store::JobRow*> job_of;
  for (const auto& j : jobs) job_of[j.id.value] = &j;
  std::map<std::int64_t, std::vector<store::JobEventRow>> events;
  std::map<std::int64_t, std::vector<core::Checkpoint>> checkpoints;
  std::map<std::int64_t, bool> preemptible;
  for (const core::JobId id : ids) {
    CORRAL_ASSIGN_OR_RETURN(events[id.value], tx.records().list_job_events(id));
    CORRAL_ASSIGN_OR_RETURN(checkpoints[id.value], tx.checkpoints().list_checkpoints(id));
    const auto j = job_of.find(id.value);
    if (j == job_of.end()) continue;
    // A stored spec that no longer decodes must not stop the whole fleet's billing: its
    // job is billed at the full price.
    const auto spec = specs.get(id, j->second->spec_json);
    preemptible[id.value] = spec.ok() && (*spec)->preemptible;
  }
  for (const auto& a : allocs) {
    const auto j = job_of.find(a.job.value);
    const AttemptFacts facts =
        attempt_facts(a, until, events[a.job.value], checkpoints[a.job.value]);
    std::optional<Time> end = a.released_at;
    if (end && *end > until) end.reset();
    if (!end && scope.now) end = until;  // provisional: held until now, as far as we know
    in.holds.push_back({.node = a.node,
                        .index = a.gpu_index,
                        .job = a.job,
                        .attempt = a.attempt,
                        .tenant = j == job_of.end() ? core::TenantId() : j->second->tenant,
                        .preemptible = preemptible[a.job.value],
                        .start = a.created_at,
                        .end = end,
                        .overhead = facts.overhead,
                        .share_milli = a.share_milli,
                        .stopping_from = facts.stopping_from,
                        .lost_from = facts.lost_from});
  }

  // Unhealthy and drained spans; gpu_index -1 is the whole node.
  CORRAL_ASSIGN_OR_RETURN(const auto spans, tx.ledger().list_gpu_states(scope.start, until));
  for (const auto& s : spans) {
    auto& into = s.kind == "unhealthy" ? in.unhealthy : in.drained;
    const Time end = std::min(s.end.value_or(until), until);
    const auto add = [&](std::int32_t index) {
      into.push_back({.node = s.node, .index = index, .start = s.start, .end = end});
    };
    if (s.gpu_index >= 0) {
      add(s.gpu_index);
    } else {
      for (const std::int32_t g : gpus_of[s.node.value]) add(g);
    }
  }

  // Utilization: the held GPUs' 1-minute telemetry rollups, each a sample at its minute's
  // start with the minute's average, from the minute before the period (so its first
  // minute has a reading). A GPU without rollups has no samples: telemetry is best effort
  // and its absence bills as used (ledger/accrual.h).
  const Time samples_from = scope.start - core::Duration(60'000);
  std::vector<store::TelemetryRollupRow> minutes;
  if (scope.job) {
    std::set<std::string> held_nodes;
    for (const auto& a : allocs) held_nodes.insert(a.node.value);
    for (const std::string& node : held_nodes) {
      CORRAL_ASSIGN_OR_RETURN(
          auto some, tx.records().list_telemetry_rollup(store::TelemetryResolution::kMinute,
                                                        samples_from, until, core::NodeId(node)));
      minutes.insert(minutes.end(), some.begin(), some.end());
    }
  } else if (!allocs.empty()) {
    CORRAL_ASSIGN_OR_RETURN(minutes,
                            tx.records().list_telemetry_rollup(store::TelemetryResolution::kMinute,
                                                               samples_from, until, std::nullopt));
  }
  for (const auto& m : minutes) {
    if (held.count({m.node.value, m.gpu_index}) == 0) continue;
    in.samples.push_back(
        {.node = m.node, .index = m.gpu_index, .time = m.start, .utilization = m.avg_utilization});
  }

  // Reservations of named nodes: their free GPUs are the reservation tenant's.
  CORRAL_ASSIGN_OR_RETURN(const auto reservations, tx.tenants().list_reservations());
  // One that cannot be read is left out and reported (stored_documents.h): its GPUs'
  // idle time goes to the bucket an unreserved GPU's would.
  for (const auto& [row, r] : stored_reservations(reservations)) {
    if (r.end <= scope.start || r.start >= until) continue;
    for (const auto& node : r.nodes) {
      for (const std::int32_t g : gpus_of[node.value]) {
        in.reserved.push_back({.node = node,
                               .index = g,
                               .start = r.start,
                               .end = std::min(r.end, until),
                               .tenant = r.tenant});
      }
    }
  }
  return in;
}

}  // namespace corral::server
