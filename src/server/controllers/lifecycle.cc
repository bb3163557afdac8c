#include "server/controllers/lifecycle.h"

#include <algorithm>
#include <map>
#include <optional>

#include "core/job_phase.h"
#include "core/units.h"
#include "server/controllers/assignments.h"
#include "server/controllers/retry_policy.h"

namespace corral::server {
namespace {

using core::JobEvent;
using core::JobPhase;
using core::Status;

std::vector<store::AllocationRow> active_only(std::vector<store::AllocationRow> rows) {
  std::erase_if(rows, [](const store::AllocationRow& a) { return !a.active; });
  return rows;
}

std::set<std::string> nodes_of(const std::vector<store::AllocationRow>& allocs) {
  std::set<std::string> out;
  for (const auto& a : allocs) out.insert(a.node.value);
  return out;
}

Status append(store::RecordRepo& records, const LifecycleContext& ctx, core::JobId job,
              std::string kind, std::string message) {
  return records.append_job_event(
      {.job = job, .time = ctx.now, .kind = std::move(kind), .message = std::move(message)});
}

// Writes `next` if the job is still in `from`; raced otherwise (transact retries).
Status write_job(store::JobRepo& jobs, const store::JobRow& next, JobPhase from) {
  CORRAL_ASSIGN_OR_RETURN(const bool won, jobs.update_job(next, from));
  if (!won) return core::raced("job changed meanwhile");
  return Status();
}

void stop_everywhere(const LifecycleContext& ctx, core::JobId job,
                     const std::vector<store::AllocationRow>& allocs) {
  for (const auto& n : nodes_of(allocs)) ctx.fx.stops.insert({job.value, n});
}

std::string describe_exit(const store::WorkerRow& w) {
  if (w.signal != 0)
    return "rank " + std::to_string(w.rank) + " killed by signal " + std::to_string(w.signal);
  return "rank " + std::to_string(w.rank) + " exited with code " + std::to_string(w.exit_code);
}

// launching or running -> failed: the job ends with `reason` and every rank is asked to
// stop; its GPUs stay held until the agents confirm (reconcile_job, step 2).
Status fail(store::Tx& tx, const LifecycleContext& ctx, store::JobRow& job,
            const std::vector<store::AllocationRow>& allocs, std::string reason) {
  store::JobRow next = job;
  next.updated_at = ctx.now;
  next.phase = JobPhase::kFailed;
  next.reason = std::move(reason);
  CORRAL_RETURN_IF_ERROR(write_job(tx.jobs(), next, job.phase));
  CORRAL_RETURN_IF_ERROR(append(tx.records(), ctx, job.id, "finished", "failed: " + next.reason));
  ++ctx.fx.failed;
  ++ctx.fx.tenant_events[job.tenant.value].failures;
  stop_everywhere(ctx, job.id, allocs);
  job = std::move(next);
  return Status();
}

// preempting (or a job with no GPUs left) -> requeued -> pending; or -> failed, for a
// preempted job its retry.onPreemption does not requeue.
Status requeue(store::Tx& tx, const LifecycleContext& ctx, const store::JobRow& job) {
  const auto spec = ctx.specs.get(job.id, job.spec_json);
  if (spec.ok() && job.retry_category == to_string(FailureCategory::kPreemption)) {
    const RetryVerdict verdict = decide_preemption_retry(**spec, job.preemptions);
    if (!verdict.retry) {
      store::JobRow ended = job;
      return fail(tx, ctx, ended, {}, "preempted (" + job.reason + "); " + verdict.reason);
    }
  }
  CORRAL_ASSIGN_OR_RETURN(const JobPhase requeued, core::next_phase(job.phase, JobEvent::kStopped));
  CORRAL_ASSIGN_OR_RETURN(const JobPhase pending, core::next_phase(requeued, JobEvent::kRequeue));
  store::JobRow next = job;
  next.phase = pending;
  // A job that lost its node keeps its place when its retry policy says so (expedite).
  if (!spec.ok() || !keeps_place(**spec, job.retry_category)) next.queued_at = ctx.now;
  next.retry_category.clear();
  next.updated_at = ctx.now;
  next.pending_kind.clear();
  next.queue_position = 0;
  const bool backoff = next.not_before > ctx.now;
  next.reason = backoff ? "restart backoff until " + core::instant_text(next.not_before)
                        : "requeued after attempt " + std::to_string(job.attempt) + " stopped";
  CORRAL_RETURN_IF_ERROR(write_job(tx.jobs(), next, job.phase));
  ctx.fx.wake_scheduler = true;
  ctx.fx.requeued.insert(job.id.value);
  ctx.specs.forget(job.id);  // no workers until it is placed again
  return append(tx.records(), ctx, job.id, "requeued",
                "attempt " + std::to_string(job.attempt) + " confirmed stopped; " + next.reason);
}

}  // namespace

core::Duration restart_backoff(const AgentSettings& s, std::int32_t restarts) {
  std::int64_t ms = s.restart_backoff_ms;
  for (std::int32_t i = 1; i < restarts && ms < s.restart_backoff_max_ms; ++i) ms *= 2;
  return core::Duration(std::min(ms, s.restart_backoff_max_ms));
}

core::Result<bool> is_managed(store::AgentRepo& agents,
                              const std::vector<store::AllocationRow>& allocs) {
  for (const auto& n : nodes_of(allocs)) {
    CORRAL_ASSIGN_OR_RETURN(auto session, agents.get_agent_session(core::NodeId(n)));
    if (session) return true;
  }
  return false;
}

namespace {

// How long the job held GPUs, over every attempt: each attempt from its first GPU's
// placement to its last GPU's release (the running one: to now).
core::Duration run_time(const std::vector<store::AllocationRow>& every, core::Time now) {
  std::map<std::int32_t, std::pair<core::Time, core::Time>> span;  // attempt -> [from, to]
  for (const auto& a : every) {
    const core::Time to = a.active ? now : a.released_at.value_or(a.created_at);
    auto [it, fresh] = span.try_emplace(a.attempt, a.created_at, to);
    it->second.first = std::min(it->second.first, a.created_at);
    it->second.second = std::max(it->second.second, to);
  }
  core::Duration total{0};
  for (const auto& [attempt, s] : span) total += std::max(core::Duration(0), s.second - s.first);
  return total;
}

// Every rank of `attempt` exited 0: the job succeeded (`job` becomes the new row). Its
// run time is kept for the estimates of later runs of the same name.
Status succeed(store::Tx& tx, const LifecycleContext& ctx, store::JobRow& job,
               std::int32_t attempt) {
  CORRAL_ASSIGN_OR_RETURN(const auto every, tx.allocations().list_allocations(job.id));
  CORRAL_RETURN_IF_ERROR(tx.records().insert_run({.tenant = job.tenant,
                                                  .name = job.name,
                                                  .job = job.id,
                                                  .run = run_time(every, ctx.now),
                                                  .finished_at = ctx.now},
                                                 kRunHistoryKept));
  store::JobRow next = job;
  next.phase = JobPhase::kSucceeded;
  next.updated_at = ctx.now;
  next.reason = "every rank of attempt " + std::to_string(attempt) + " exited 0";
  CORRAL_RETURN_IF_ERROR(write_job(tx.jobs(), next, job.phase));
  CORRAL_RETURN_IF_ERROR(
      append(tx.records(), ctx, job.id, "finished", "succeeded: " + next.reason));
  ++ctx.fx.succeeded;
  job = std::move(next);
  return Status();
}

}  // namespace

Status reconcile_job(store::Tx& tx, const LifecycleContext& ctx, core::JobId id) {
  CORRAL_ASSIGN_OR_RETURN(auto found, tx.jobs().get_job(id));
  if (!found) return Status();
  store::JobRow job = *found;
  CORRAL_ASSIGN_OR_RETURN(const auto every, tx.allocations().list_allocations(id));
  const auto allocs = active_only(every);
  if (allocs.empty()) {
    // Every GPU was released (its nodes fenced): a preempting job goes back to the queue.
    if (job.phase == JobPhase::kPreempting) return requeue(tx, ctx, job);
    return Status();
  }
  CORRAL_ASSIGN_OR_RETURN(const bool managed, is_managed(tx.agents(), allocs));
  if (!managed) return Status();  // agent-less: nothing runs, nothing reports

  CORRAL_ASSIGN_OR_RETURN(const auto spec_ptr, ctx.specs.get(id, job.spec_json));
  const core::JobSpec& spec = *spec_ptr;
  const std::int32_t attempt = allocs.front().attempt;
  // Ranks come from the whole attempt's placement: after a node is fenced its rows are
  // released, but the other nodes' ranks keep their numbers.
  const auto placement = attempt_placement(every, attempt);
  const auto slots = rank_layout(placement, spec.processes);
  std::map<std::int32_t, store::WorkerRow> workers;
  CORRAL_ASSIGN_OR_RETURN(auto rows, tx.agents().list_workers(id));
  for (auto& w : rows) {
    if (w.attempt == attempt) workers[w.rank] = std::move(w);
  }

  // 1. A job that should run: start, finish, or fail as a gang.
  if (job.phase == JobPhase::kLaunching || job.phase == JobPhase::kRunning) {
    const store::WorkerRow* failed = nullptr;
    std::size_t exited_ok = 0, seen = 0;
    for (const auto& s : slots) {
      const auto it = workers.find(s.rank);
      if (it == workers.end()) continue;
      ++seen;
      if (it->second.state != core::WorkerStatus::State::kExited) continue;
      if (it->second.exit_code == 0 && it->second.signal == 0) {
        ++exited_ok;
      } else if (failed == nullptr || (category_of(it->second) == FailureCategory::kOutOfMemory &&
                                       category_of(*failed) != FailureCategory::kOutOfMemory)) {
        // An OOM kill is the cause, whatever its rank: the others fail after it (their
        // peer died).
        failed = &it->second;
      }
    }
    if (seen == slots.size() && job.phase == JobPhase::kLaunching) {
      store::JobRow next = job;
      next.phase = JobPhase::kRunning;
      next.updated_at = ctx.now;
      next.reason = "every rank of attempt " + std::to_string(attempt) + " started";
      CORRAL_RETURN_IF_ERROR(write_job(tx.jobs(), next, job.phase));
      CORRAL_RETURN_IF_ERROR(append(tx.records(), ctx, id, "started", next.reason));
      job = next;
    }
    // The attempt's time runs from its GPUs' allocation, as the scheduler counts it.
    core::Time started = core::Time::max();
    for (const auto& a : placement) started = std::min(started, a.created_at);
    if (failed == nullptr && exited_ok < slots.size() && ctx.now - started >= spec.max_runtime) {
      // A job is stopped at its limit, as Slurm stops one at its TimeLimit: planned starts,
      // backfill and reservations count on it (docs/jobspec.md, maxRuntime). It ends failed,
      // whatever restarts it has left: a restart would meet the same limit.
      CORRAL_RETURN_IF_ERROR(fail(tx, ctx, job, allocs,
                                  "ran past its maxRuntime of " +
                                      core::format_duration(spec.max_runtime) + " in attempt " +
                                      std::to_string(attempt)));
    } else if (failed != nullptr) {
      // One rank failing ends the gang attempt: every other rank is asked to stop.
      store::JobRow next = job;
      next.updated_at = ctx.now;
      const std::string what = describe_exit(*failed) + " in attempt " + std::to_string(attempt);
      const FailureCategory category = category_of(*failed);
      const RetryVerdict verdict = decide_retry(
          spec, next, category, failed->signal != 0 ? 128 + failed->signal : failed->exit_code,
          ctx.settings, ctx.now);
      if (verdict.retry) {
        next.phase = JobPhase::kPreempting;
        next.reason = what + "; " + verdict.reason + " once every rank has stopped";
        CORRAL_RETURN_IF_ERROR(write_job(tx.jobs(), next, job.phase));
        CORRAL_RETURN_IF_ERROR(append(tx.records(), ctx, id, "rank failed", next.reason));
        CORRAL_RETURN_IF_ERROR(
            append(tx.records(), ctx, id, "retry",
                   std::string(to_string(category)) + ": " + what + "; " + verdict.reason));
        ++ctx.fx.tenant_events[job.tenant.value].restarts;
        stop_everywhere(ctx, id, allocs);
        job = next;
      } else {
        CORRAL_RETURN_IF_ERROR(fail(tx, ctx, job, allocs, what + "; " + verdict.reason));
      }
    } else if (exited_ok == slots.size() && job.phase == JobPhase::kRunning) {
      CORRAL_RETURN_IF_ERROR(succeed(tx, ctx, job, attempt));
    }
  }
  if (job.phase == JobPhase::kLaunching || job.phase == JobPhase::kRunning) return Status();

  // 2. A job that should not run: release its GPUs once every rank is confirmed gone.
  bool confirmed = true;
  bool all_ok = !slots.empty();
  for (const auto& s : slots) {
    const auto it = workers.find(s.rank);
    if (it != workers.end() && it->second.state == core::WorkerStatus::State::kExited) {
      all_ok = all_ok && it->second.exit_code == 0 && it->second.signal == 0;
      continue;
    }
    all_ok = false;
    CORRAL_ASSIGN_OR_RETURN(auto session, tx.agents().get_agent_session(s.node));
    if (!session || session->lost) continue;  // nothing runs there, or fenced
    const auto stop = ctx.board.stop_version(id.value, s.node.value);
    if (!stop) ctx.fx.stops.insert({id.value, s.node.value});
    // Never started: the agent applied the stop (or later) and does not list the rank.
    const bool never_started =
        it == workers.end() && stop && ctx.board.applied(s.node.value) >= *stop;
    if (!never_started) confirmed = false;
  }
  if (!confirmed) return Status();
  if (job.phase == JobPhase::kPreempting && all_ok) {
    CORRAL_RETURN_IF_ERROR(succeed(tx, ctx, job, attempt));  // within its grace period
  }
  // Confirmed by the agents (or by fencing): only now do the GPUs go back to the pool.
  CORRAL_RETURN_IF_ERROR(tx.allocations().release_allocations(id, ctx.now).status());
  ctx.fx.released.insert(id.value);
  ctx.specs.forget(id);
  for (const auto& n : nodes_of(allocs)) ctx.fx.bump.insert(n);
  ctx.fx.wake_scheduler = true;
  CORRAL_RETURN_IF_ERROR(append(
      tx.records(), ctx, id, "released",
      "every rank of attempt " + std::to_string(attempt) + " confirmed stopped; GPUs released"));
  if (job.phase == JobPhase::kPreempting) return requeue(tx, ctx, job);
  return Status();
}

Status preempt_job(store::Tx& tx, const LifecycleContext& ctx, const store::JobRow& job,
                   const StopRequest& stop) {
  const std::string& reason = stop.reason;
  const auto edge = core::next_phase(job.phase, JobEvent::kPreempt);
  if (!edge.ok()) {
    // The table's message names the phase and the event, not the job.
    return core::failed_precondition("job " + std::to_string(job.id.value) + " in phase " +
                                     std::string(core::to_string(job.phase)) +
                                     " cannot be preempted");
  }
  const JobPhase preempting = *edge;
  CORRAL_ASSIGN_OR_RETURN(auto all_allocs, tx.allocations().list_allocations(job.id));
  const auto allocs = active_only(std::move(all_allocs));
  CORRAL_ASSIGN_OR_RETURN(const bool managed, is_managed(tx.agents(), allocs));
  store::JobRow next = job;
  next.phase = preempting;
  next.reason = reason;
  next.updated_at = ctx.now;
  next.stop_grace_ms = stop.grace.count();
  std::optional<RetryVerdict> retry;
  if (stop.counts_as_preemption) {
    ++next.preemptions;
    ++ctx.fx.tenant_events[job.tenant.value].preemptions;
    // Whether it goes back to the queue once stopped is its retry.onPreemption's to say,
    // decided now (the event says so) and carried to the requeue by its category.
    CORRAL_ASSIGN_OR_RETURN(const auto spec, ctx.specs.get(job.id, job.spec_json));
    retry = decide_preemption_retry(*spec, next.preemptions);
    next.retry_category = std::string(to_string(FailureCategory::kPreemption));
  }
  CORRAL_RETURN_IF_ERROR(write_job(tx.jobs(), next, job.phase));
  CORRAL_RETURN_IF_ERROR(append(tx.records(), ctx, job.id, stop.event,
                                retry && !retry->retry ? reason + "; " + retry->reason : reason));
  if (retry && retry->retry) {
    CORRAL_RETURN_IF_ERROR(append(tx.records(), ctx, job.id, "retry",
                                  std::string(to_string(FailureCategory::kPreemption)) + ": " +
                                      reason + "; " + retry->reason));
  }
  for (const auto& n : nodes_of(allocs)) ctx.fx.bump.insert(n);
  if (managed) {
    stop_everywhere(ctx, job.id, allocs);
    return Status();
  }
  // No agent runs it, so nothing can be running: stop at once (the pre-agent behaviour).
  CORRAL_RETURN_IF_ERROR(tx.allocations().release_allocations(job.id, ctx.now).status());
  ctx.fx.released.insert(job.id.value);
  ctx.specs.forget(job.id);
  return requeue(tx, ctx, next);
}

core::Result<std::int32_t> drain_jobs_on(store::Tx& tx, const LifecycleContext& ctx,
                                         const core::NodeId& node, const std::string& reason) {
  CORRAL_ASSIGN_OR_RETURN(auto allocs, tx.allocations().list_active_allocations_on(node));
  std::vector<core::JobId> ids;
  for (const auto& a : allocs) ids.push_back(a.job);
  CORRAL_ASSIGN_OR_RETURN(const auto jobs, tx.jobs().get_jobs(ids));
  std::int32_t drained = 0;
  for (const store::JobRow& job : jobs) {
    if (job.phase != JobPhase::kLaunching && job.phase != JobPhase::kRunning) continue;
    // Drained under it (a health fault, an admin): requeued like a lost node's job, its
    // place kept where its retry policy says so, on no budget.
    store::JobRow marked = job;
    marked.retry_category = std::string(to_string(FailureCategory::kNodeFailure));
    CORRAL_RETURN_IF_ERROR(
        preempt_job(tx, ctx, marked, {.reason = "node " + node.value + " draining: " + reason}));
    ++drained;
  }
  return drained;
}

core::Result<store::JobRow> cancel_job(store::Tx& tx, const LifecycleContext& ctx,
                                       const store::JobRow& job, const std::string& note) {
  auto next_phase = core::next_phase(job.phase, core::JobEvent::kCancel);
  if (!next_phase.ok()) {
    return core::failed_precondition("job " + std::to_string(job.id.value) + " is " +
                                     std::string(core::to_string(job.phase)) +
                                     "; only a job that has not ended can be cancelled");
  }
  store::JobRow next = job;
  next.phase = *next_phase;
  next.reason = note;
  next.pending_kind.clear();
  next.queue_position = 0;
  next.updated_at = ctx.now;
  CORRAL_ASSIGN_OR_RETURN(const bool won, tx.jobs().update_job(next, job.phase));
  if (!won) return core::raced("job changed while cancelling");
  CORRAL_RETURN_IF_ERROR(tx.records().append_job_event(
      {.job = job.id, .time = next.updated_at, .kind = "cancelled", .message = note}));
  CORRAL_ASSIGN_OR_RETURN(auto allocs, tx.allocations().list_allocations(job.id));
  std::erase_if(allocs, [](const store::AllocationRow& a) { return !a.active; });
  CORRAL_ASSIGN_OR_RETURN(const bool managed, is_managed(tx.agents(), allocs));
  if (managed) {
    // Agents run it: its GPUs stay allocated until they confirm every rank is gone
    // (lifecycle.h); the agents see `desired: stop` now.
    for (const auto& a : allocs) ctx.fx.stops.insert({job.id.value, a.node.value});
    CORRAL_RETURN_IF_ERROR(reconcile_job(tx, ctx, job.id));
  } else {
    // No agent ever ran it (agent-less nodes): nothing to wait for.
    CORRAL_RETURN_IF_ERROR(tx.allocations().release_allocations(job.id, next.updated_at).status());
    for (const auto& a : allocs) ctx.fx.bump.insert(a.node.value);
    ctx.fx.released.insert(job.id.value);
  }
  return next;
}

}  // namespace corral::server
