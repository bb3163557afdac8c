#include "server/cycle/apply_decisions.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "core/job_phase.h"
#include "core/units.h"
#include "server/base/log.h"
#include "server/controllers/audit.h"
#include "server/controllers/runs.h"

namespace corral::server {
namespace {

using core::JobPhase;
using core::Status;

std::string describe(const sched::Placement& p) {
  const std::string count = std::to_string(p.gpus.size());
  std::string out = "placed on " + count + " " + p.gpu_type.value + ":";
  if (p.share_milli > 0) {  // "placed a 0.25 share on one H100:", "... on each of 2 H100:"
    out = "placed a " + core::format_gpu_milli(p.share_milli) + " share on " +
          (p.gpus.size() == 1 ? "one " : "each of " + count + " ") + p.gpu_type.value + ":";
  }
  std::string node;
  for (const auto& g : p.gpus) {
    if (g.node.value != node) {
      node = g.node.value;
      out += " " + node + "[";
    } else {
      out += ",";
    }
    out += std::to_string(g.index);
    if (&g == &p.gpus.back() || (&g + 1)->node.value != node) out += "]";
  }
  return out;
}

// "n1,n2": the nodes of `gpus` (sorted by node), each once.
std::string node_list(const std::vector<sched::GpuRef>& gpus) {
  std::string out;
  const std::string* last = nullptr;
  for (const auto& g : gpus) {
    if (last != nullptr && *last == g.node.value) continue;
    out += (last == nullptr ? "" : ",") + g.node.value;
    last = &g.node.value;
  }
  return out;
}

std::string resize_text(const sched::Resize& rz, const char* verb) {
  return std::string(verb) + " from " + std::to_string(rz.from_gpus) + " to " +
         std::to_string(rz.to_gpus) + " GPUs";
}

class Applier {
 public:
  Applier(store::Tx& tx, const ApplyContext& ctx)
      : tx_(tx), ctx_(ctx), lifecycle_{ctx.board, ctx.settings, ctx.now, out_.fx, ctx.specs} {}

  core::Result<Applied> run(const sched::Decisions& d) {
    CORRAL_RETURN_IF_ERROR(read_jobs(d));
    for (const auto& p : d.preemptions) CORRAL_RETURN_IF_ERROR(preempt(p));
    for (const auto& rz : d.resizes) CORRAL_RETURN_IF_ERROR(resize(rz));
    for (const auto& p : d.placements) CORRAL_RETURN_IF_ERROR(place(p));
    for (const auto& a : d.abandoned) CORRAL_RETURN_IF_ERROR(abandon(a));
    return std::move(out_);
  }

 private:
  // Every job the decisions name, in one batch read before any of them changes.
  Status read_jobs(const sched::Decisions& d) {
    std::vector<core::JobId> ids;
    for (const auto& p : d.preemptions) ids.push_back(p.victim);
    for (const auto& rz : d.resizes) ids.push_back(rz.job);
    for (const auto& p : d.placements) ids.push_back(p.job);
    for (const auto& a : d.abandoned) ids.push_back(a.job);
    for (const core::JobId id : ids) batch_[id.value] = std::nullopt;
    CORRAL_ASSIGN_OR_RETURN(auto rows, tx_.jobs().get_jobs(ids));
    for (auto& row : rows) batch_[row.id.value] = std::move(row);
    return Status();
  }

  // A job as stored: from the batch the first time (nullopt when it does not exist), read
  // again after that, since whoever took it first may have changed it.
  core::Result<std::optional<store::JobRow>> take_job(core::JobId id) {
    const auto it = batch_.find(id.value);
    if (it == batch_.end()) return tx_.jobs().get_job(id);
    std::optional<store::JobRow> row = std::move(it->second);
    batch_.erase(it);
    return row;
  }

  // A job stopped at once (nothing of it was running) is pending again: the loop's
  // in-memory queue must learn it, and what it held is free for this transaction.
  Status audit(const char* action, const store::JobRow& job, const nlohmann::json& after) {
    return append_audit(tx_.audit(), {.actor = "corrald/scheduler",
                                      .action = action,
                                      .target = "job/" + std::to_string(job.id.value),
                                      .before = std::string(core::to_string(job.phase)),
                                      .after = after.dump(),
                                      .time = ctx_.now});
  }

  Status note_if_requeued(core::JobId job) {
    if (out_.fx.released.count(job.value) == 0) return Status();
    stopped_.insert(job.value);
    CORRAL_ASSIGN_OR_RETURN(auto row, tx_.jobs().get_job(job));
    if (row && row->phase == JobPhase::kPending) out_.back_in_queue.push_back(std::move(*row));
    return Status();
  }

  Status preempt(const sched::Preemption& pre) {
    CORRAL_ASSIGN_OR_RETURN(auto victim, take_job(pre.victim));
    if (!victim || core::is_terminal(victim->phase)) return Status();
    if (!core::next_phase(victim->phase, core::JobEvent::kPreempt).ok()) return Status();
    // decide()'s reason names the job it makes room for, and why.
    CORRAL_RETURN_IF_ERROR(
        preempt_job(tx_, lifecycle_, *victim,
                    {.reason = pre.reason, .grace = pre.grace, .counts_as_preemption = true}));
    out_.preempted.push_back(pre.victim);
    // Preemptions and reclaims are the scheduler's actions on people's work: audited, with
    // the job they made room for and decide()'s reason (which says reclaim or priority).
    CORRAL_RETURN_IF_ERROR(audit("job.preempt", *victim,
                                 {{"forJob", pre.for_job.value},
                                  {"graceMs", core::to_ms(pre.grace)},
                                  {"reason", pre.reason}}));
    out_.fx.log.push_back(LogEvent("preemption")
                              .add("job", victim->id.value)
                              .add("tenant", victim->tenant.value)
                              .add("forJob", pre.for_job.value)
                              .add("graceMs", core::to_ms(pre.grace))
                              .add("reason", pre.reason));
    return note_if_requeued(pre.victim);
  }

  // An elastic job changes size the way real elastic training does, by checkpoint and
  // restart. One still `launching` on agent-less nodes has no workers, so its allocation
  // changes in place now; one agents may run is asked to checkpoint and stop (preempting,
  // keeping its GPUs until its agent confirms), with its new size recorded; once requeued
  // it is placed again at that size.
  Status resize(const sched::Resize& rz) {
    CORRAL_ASSIGN_OR_RETURN(auto job, take_job(rz.job));
    if (!job) return Status();
    store::JobRow next = *job;
    next.updated_at = ctx_.now;
    CORRAL_ASSIGN_OR_RETURN(auto held, tx_.allocations().list_allocations(rz.job));
    std::erase_if(held, [](const store::AllocationRow& a) { return !a.active; });
    CORRAL_ASSIGN_OR_RETURN(const bool managed, is_managed(tx_.agents(), held));
    if (job->phase == JobPhase::kLaunching && !managed) {
      if (held.empty()) return Status();
      next.reason = resize_text(rz, "resized") + " before launch: " + rz.reason;
      CORRAL_ASSIGN_OR_RETURN(const bool won, tx_.jobs().update_job(next, JobPhase::kLaunching));
      if (!won) return Status();
      CORRAL_RETURN_IF_ERROR(tx_.allocations().release_allocations(rz.job, ctx_.now).status());
      for (const auto& g : rz.gpus) {
        CORRAL_RETURN_IF_ERROR(
            tx_.allocations().insert_allocation({.job = rz.job,
                                                 .attempt = job->attempt,
                                                 .node = g.node,
                                                 .gpu_index = g.index,
                                                 .gpu_type = held.front().gpu_type,
                                                 .epoch = ctx_.epoch,
                                                 .active = true,
                                                 .borrowed = held.front().borrowed,
                                                 .created_at = ctx_.now}));
      }
      CORRAL_RETURN_IF_ERROR(record_run_attempt(tx_, rz.job, job->attempt, held.front().gpu_type,
                                                rz.gpus, std::nullopt, ctx_.now));
      stopped_.insert(rz.job.value);  // what it gave up is free in this transaction
    } else if (job->phase == JobPhase::kRunning || job->phase == JobPhase::kLaunching) {
      next.reason = resize_text(rz, "resizing") + " (checkpoint and restart): " + rz.reason;
      CORRAL_RETURN_IF_ERROR(
          tx_.scheduler().set_elastic_target({.job = rz.job, .gpus = rz.to_gpus}, ctx_.now));
      CORRAL_RETURN_IF_ERROR(
          preempt_job(tx_, lifecycle_, *job, {.reason = next.reason, .event = "resizing"}));
      CORRAL_RETURN_IF_ERROR(note_if_requeued(rz.job));
    } else {
      return Status();  // already stopping or gone: nothing to resize
    }
    out_.resized.push_back(rz.job);
    CORRAL_RETURN_IF_ERROR(
        audit("job.resize", *job,
              {{"fromGpus", rz.from_gpus},
               {"toGpus", rz.to_gpus},
               {"forJob", rz.for_job ? nlohmann::json(rz.for_job->value) : nlohmann::json(nullptr)},
               {"reason", rz.reason}}));
    out_.fx.log.push_back(LogEvent("resize")
                              .add("job", rz.job.value)
                              .add("tenant", job->tenant.value)
                              .add("fromGpus", rz.from_gpus)
                              .add("toGpus", rz.to_gpus)
                              .add("nodes", node_list(rz.gpus)));
    // A stopped job's event ("resizing") is already written; one resized in place gets its own.
    if (job->phase != JobPhase::kLaunching || managed) return Status();
    return tx_.records().append_job_event(
        {.job = rz.job, .time = ctx_.now, .kind = "resized", .message = next.reason});
  }

  // A job whose dependency can never be met is cancelled with decide()'s reason (Slurm's
  // kill_invalid_depend), not left pending for ever.
  Status abandon(const sched::Abandoned& a) {
    CORRAL_ASSIGN_OR_RETURN(auto job, take_job(a.job));
    out_.left_queue.push_back(a.job.value);
    if (!job || job->phase != JobPhase::kPending) return Status();
    CORRAL_RETURN_IF_ERROR(cancel_job(tx_, lifecycle_, *job, a.reason).status());
    out_.fx.log.push_back(
        LogEvent("dependency_never_met").add("job", a.job.value).add("reason", a.reason));
    return audit("job.abandon", *job, {{"phase", "cancelled"}, {"reason", a.reason}});
  }

  Status place(const sched::Placement& p) {
    // A placement on GPUs that preempted jobs still hold waits for them to stop.
    const bool victims_gone =
        std::all_of(p.waits_for.begin(), p.waits_for.end(),
                    [&](core::JobId v) { return stopped_.count(v.value) > 0; });
    if (!victims_gone) return Status();
    CORRAL_ASSIGN_OR_RETURN(auto job, take_job(p.job));
    if (!job || job->phase != JobPhase::kPending) {  // cancelled meanwhile
      out_.left_queue.push_back(p.job.value);
      return Status();
    }
    CORRAL_ASSIGN_OR_RETURN(const JobPhase admitted,
                            core::next_phase(JobPhase::kPending, core::JobEvent::kAdmit));
    CORRAL_ASSIGN_OR_RETURN(const JobPhase launching,
                            core::next_phase(admitted, core::JobEvent::kAllocate));
    store::JobRow next = *job;
    next.phase = launching;
    next.attempt += 1;
    next.reason = describe(p);
    next.pending_kind.clear();
    next.queue_position = 0;
    next.stop_grace_ms = 0;
    next.planned_start = {};
    next.planned_latest = {};
    next.updated_at = ctx_.now;
    if (next.first_started == core::Time{}) next.first_started = ctx_.now;
    CORRAL_ASSIGN_OR_RETURN(const bool won, tx_.jobs().update_job(next, JobPhase::kPending));
    out_.left_queue.push_back(p.job.value);
    if (!won) return Status();
    for (const auto& g : p.gpus) {
      CORRAL_RETURN_IF_ERROR(tx_.allocations().insert_allocation({.job = p.job,
                                                                  .attempt = next.attempt,
                                                                  .node = g.node,
                                                                  .gpu_index = g.index,
                                                                  .gpu_type = p.gpu_type,
                                                                  .epoch = ctx_.epoch,
                                                                  .active = true,
                                                                  .borrowed = p.borrowed,
                                                                  .created_at = ctx_.now,
                                                                  .share_milli = p.share_milli}));
    }
    CORRAL_RETURN_IF_ERROR(
        record_run_attempt(tx_, p.job, next.attempt, p.gpu_type, p.gpus, p.packed, ctx_.now));
    if (ctx_.elastic_targets.count(p.job.value) > 0) {
      CORRAL_RETURN_IF_ERROR(tx_.scheduler().clear_elastic_target(p.job));
    }
    CORRAL_RETURN_IF_ERROR(tx_.records().append_job_event(
        {.job = p.job, .time = ctx_.now, .kind = "placed", .message = next.reason}));
    for (const auto& g : p.gpus) out_.fx.bump.insert(g.node.value);
    out_.fx.tenant_events[job->tenant.value].queue_waits_ms.push_back(
        core::to_ms(ctx_.now - job->queued_at));
    out_.placed.push_back(p.job);
    out_.fx.log.push_back(LogEvent("placement")
                              .add("job", p.job.value)
                              .add("tenant", job->tenant.value)
                              .add("name", job->name)
                              .add("attempt", next.attempt)
                              .add("gpus", static_cast<std::int64_t>(p.gpus.size()))
                              .add("gpuType", p.gpu_type.value)
                              .add("shareMilli", p.share_milli)
                              .add("nodes", node_list(p.gpus))
                              .add("borrowed", p.borrowed));
    return Status();
  }

  store::Tx& tx_;
  const ApplyContext& ctx_;
  Applied out_;
  LifecycleContext lifecycle_;
  std::set<std::int64_t> stopped_;  // jobs whose GPUs are free inside this transaction
  std::map<std::int64_t, std::optional<store::JobRow>> batch_;  // read_jobs(), not yet taken
};

}  // namespace

core::Result<Applied> apply_decisions(store::Tx& tx, const sched::Decisions& d,
                                      const ApplyContext& ctx) {
  return Applier(tx, ctx).run(d);
}

}  // namespace corral::server
