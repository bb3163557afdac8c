#include "server/agent_api/agent_reports.h"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/json_object.h"
#include "core/units.h"
#include "server/base/crypto.h"
#include "server/base/log.h"
#include "server/base/model_json.h"
#include "server/base/role.h"
#include "server/base/stored_documents.h"
#include "server/controllers/audit.h"
#include "server/controllers/features.h"
#include "server/controllers/gpu_states.h"
#include "server/controllers/node_admin.h"
#include "server/controllers/node_health.h"
#include "server/controllers/sweeps.h"

namespace corral::server {

using core::Result;
using core::Status;
using nlohmann::json;

Result<store::AgentSessionRow> current_session(store::AgentRepo& agents, const std::string& node,
                                               std::int64_t epoch) {
  CORRAL_ASSIGN_OR_RETURN(auto session, agents.get_agent_session(core::NodeId(node)));
  if (!session) return core::fenced("node " + node + " has not joined; join again");
  if (session->lost || epoch != session->epoch) {
    return core::fenced("epoch " + std::to_string(epoch) + " of node " + node +
                        " is stale (current " + std::to_string(session->epoch) +
                        (session->lost ? ", node lost" : "") +
                        "); stop every worker and join again");
  }
  return *session;
}

Result<core::JoinAnswer> join_node(store::Tx& tx, const LifecycleContext& ctx,
                                   const core::JoinRequest& request, const JoinGrant& grant) {
  const core::Node& node = request.node;
  // The agent keeps its run records under this id: see docs/agent-protocol.md §1.
  CORRAL_ASSIGN_OR_RETURN(const std::string cluster_id, tx.agents().cluster_id());
  // Registered exactly as POST /v1/nodes would.
  CORRAL_ASSIGN_OR_RETURN(const Registration reg, store_registration(tx.nodes(), node, ctx.now));
  // The rack's power cap as this node's agent declares it (0: it declares none); the
  // scheduler takes the admin config's cap, else the smallest declared.
  const std::string declared_by = "node/" + node.id.value;
  CORRAL_RETURN_IF_ERROR(tx.rack_caps().delete_rack_caps(declared_by));
  if (request.rack_power_cap_w > 0 && !node.labels.rack.empty()) {
    CORRAL_RETURN_IF_ERROR(tx.rack_caps().put_rack_cap({.rack = node.labels.rack,
                                                        .declared_by = declared_by,
                                                        .power_cap_watts = request.rack_power_cap_w,
                                                        .updated_at = ctx.now}));
  }
  // A join reports what the agent found; the GPUs' conditions wait for its readings.
  CORRAL_RETURN_IF_ERROR(tx.nodes().upsert_observed(
      {.node = node.id, .inventory = request.inventory, .heartbeat_at = ctx.now}));
  CORRAL_RETURN_IF_ERROR(record_node_joined(tx.ledger(), node.id, ctx.now));
  CORRAL_ASSIGN_OR_RETURN(auto session, tx.agents().get_agent_session(node.id));
  // The epoch only moves when the node is lost, so an agent that restarts on a node
  // that was not lost meanwhile gets the same one back.
  store::AgentSessionRow row{.node = node.id,
                             .epoch = session ? session->epoch : 1,
                             .agent_url = request.agent_url,
                             .log_key = grant.log_key,
                             .joined_at = ctx.now,
                             .heartbeat_at = ctx.now,
                             .lost = false};
  CORRAL_RETURN_IF_ERROR(tx.agents().upsert_agent_session(row));
  const std::string hash = sha256_hex(grant.token);
  CORRAL_RETURN_IF_ERROR(
      tx.security().insert_token({.hash = hash,
                                  .role = std::string(to_string(Role::kAgent)),
                                  .node = node.id.value,
                                  .created_at = ctx.now,
                                  .name = "agent-" + node.id.value + "-" + hash.substr(0, 8),
                                  .owner = "join"}));
  CORRAL_RETURN_IF_ERROR(append_audit(
      tx.audit(), {.actor = grant.joiner + "(join)",
                   .action = "agent.join",
                   .target = "node/" + node.id.value,
                   .before = session ? "epoch=" + std::to_string(session->epoch) +
                                           (session->lost ? " lost" : "")
                                     : "",
                   .after = "epoch=" + std::to_string(row.epoch) + " url=" + request.agent_url +
                            " token:agent-" + node.id.value + "-" + hash.substr(0, 8),
                   .time = ctx.now}));
  ctx.fx.bump.insert(node.id.value);
  ctx.fx.rejoined.insert(node.id.value);
  ctx.fx.wake_scheduler = true;
  return core::JoinAnswer{.node = node.id.value,
                          .token = grant.token,
                          .epoch = row.epoch,
                          .log_key = grant.log_key,
                          .cluster_id = cluster_id};
}

namespace {

// The workers a heartbeat reports, against what the store knew of them (`known`: the
// workers this node reported before, of the jobs it names) and what this node holds
// (`here`: its active allocations). Writes the changed ones; `touched` gets their jobs.
Status record_workers(store::Tx& tx, const std::string& node,
                      const std::vector<core::WorkerStatus>& workers,
                      const std::vector<store::WorkerRow>& known,
                      const std::vector<store::AllocationRow>& here,
                      std::set<std::int64_t>& touched) {
  std::map<std::int64_t, std::vector<store::AllocationRow>> released;  // read on demand
  for (const core::WorkerStatus& w : workers) {
    const std::int64_t job = w.key.job;
    store::WorkerRow row{.job = core::JobId(job),
                         .attempt = w.key.attempt,
                         .rank = w.key.rank,
                         .node = core::NodeId(node),
                         .pid = w.pid,
                         .state = w.state,
                         .exit_code = w.exit_code,
                         .signal = w.signal,
                         .started_at = core::time_from_ms(w.started_at_ms),
                         .exited_at = core::time_from_ms(w.exited_at_ms)};
    const auto same = std::find_if(known.begin(), known.end(), [&](const store::WorkerRow& k) {
      return k.job.value == job && k.attempt == row.attempt && k.rank == row.rank;
    });
    // An exit is final: a late "running" from before it never undoes it.
    if (same != known.end() && same->state == core::WorkerStatus::State::kExited) continue;
    if (same != known.end() && same->state == row.state && same->pid == row.pid) continue;
    // Only workers this node was given count; a worker of another node or of no
    // allocation at all is ignored (never trusted, never an error: agents race). Most are
    // of an allocation the node holds; one whose GPUs were released is checked against
    // the job's every allocation.
    const auto of_attempt = [&](const store::AllocationRow& al) {
      return al.job.value == job && al.attempt == w.key.attempt && al.node.value == node;
    };
    bool ours = std::any_of(here.begin(), here.end(), of_attempt);
    if (!ours) {
      if (released.count(job) == 0) {
        CORRAL_ASSIGN_OR_RETURN(released[job], tx.allocations().list_allocations(core::JobId(job)));
      }
      ours = std::any_of(released[job].begin(), released[job].end(), of_attempt);
    }
    if (!ours) continue;
    CORRAL_RETURN_IF_ERROR(tx.agents().upsert_worker(row));
    touched.insert(job);
  }
  return Status();
}

// Whether a launching or running `job` may have run past its maxRuntime, judged from
// the allocations it holds on this node: they are no older than its attempt's start (a
// gang's GPUs are placed together), so this never says no to a job past its limit on a
// node that holds its first GPUs. reconcile_job() decides from the whole placement.
bool may_be_past_max_runtime(const LifecycleContext& ctx, const store::JobRow& job,
                             const std::vector<store::AllocationRow>& here) {
  core::Time started = core::Time::max();
  for (const auto& al : here) {
    if (al.job == job.id && al.attempt == job.attempt) started = std::min(started, al.created_at);
  }
  if (started == core::Time::max()) return true;  // not from this node's rows: ask
  const auto spec = ctx.specs.get(job.id, job.spec_json);
  return !spec.ok() || ctx.now - started >= (*spec)->max_runtime;
}

Status record_health(store::Tx& tx, const std::string& node,
                     const std::vector<core::GpuHealth>& gpus, const LifecycleContext& ctx) {
  CORRAL_ASSIGN_OR_RETURN(auto row, tx.nodes().get_node(core::NodeId(node)));
  if (!row) return core::not_found("node " + node + " is not registered");
  CORRAL_ASSIGN_OR_RETURN(core::Node registered, stored_node_from_json(row->spec_json));
  // Only the conditions are read and only what changed is written: a heartbeat leaves the
  // join's inventory alone (docs/performance.md#10000-gpus-end-to-end).
  CORRAL_ASSIGN_OR_RETURN(const auto judged_before, tx.nodes().list_gpu_conditions(registered.id));
  std::vector<store::GpuObservation> judged =
      evaluate_gpus(registered, gpus, ctx.settings, judged_before, ctx.now);
  CORRAL_RETURN_IF_ERROR(
      record_gpu_conditions(tx.ledger(), registered.id, judged_before, judged, ctx.now));
  std::string critical;  // the first unhealthy GPU drains the node
  for (const store::GpuObservation& g : judged) {
    if (g.condition == core::GpuCondition::kUnhealthy && critical.empty()) {
      critical = "gpu " + std::to_string(g.index) + ": " + g.problem;
    }
  }
  CORRAL_ASSIGN_OR_RETURN(
      const bool updated,
      tx.nodes().update_observed(registered.id,
                                 judged == judged_before ? std::nullopt : std::optional(judged),
                                 gpus, ctx.now));
  if (!updated) {
    CORRAL_RETURN_IF_ERROR(tx.nodes().upsert_observed({.node = registered.id,
                                                       .gpus = std::move(judged),
                                                       .readings = gpus,
                                                       .heartbeat_at = ctx.now}));
  }
  ctx.fx.wake_scheduler = ctx.fx.wake_scheduler || !critical.empty();
  if (critical.empty() || row->admin == core::NodeAdminState::kDraining) return Status();
  // A failing GPU: cordon and drain the node, with the reason recorded and audited.
  const core::NodeAdminState before = row->admin;
  row->admin = core::NodeAdminState::kDraining;
  row->admin_reason = critical;
  row->updated_at = ctx.now;
  CORRAL_RETURN_IF_ERROR(tx.nodes().upsert_node(*row));
  CORRAL_RETURN_IF_ERROR(
      record_admin_state(tx.ledger(), row->id, before, row->admin, row->admin_reason, ctx.now));
  CORRAL_RETURN_IF_ERROR(append_audit(tx.audit(), {.actor = "corrald/health",
                                                   .action = "node.drain",
                                                   .target = "node/" + node,
                                                   .before = std::string(core::to_string(before)),
                                                   .after = "draining: " + critical,
                                                   .time = ctx.now}));
  CORRAL_ASSIGN_OR_RETURN(const std::int32_t jobs, drain_jobs_on(tx, ctx, row->id, critical));
  ctx.fx.log.push_back(LogEvent("drain", LogLevel::kWarn)
                           .add("node", node)
                           .add("by", "corrald/health")
                           .add("before", std::string(core::to_string(before)))
                           .add("jobs", jobs)
                           .add("reason", critical));
  return Status();
}

}  // namespace

Status record_heartbeat(store::Tx& tx, const LifecycleContext& ctx, const std::string& node,
                        const core::Heartbeat& beat) {
  CORRAL_ASSIGN_OR_RETURN(auto session, current_session(tx.agents(), node, beat.epoch));
  // Claims of an agent are believed only once its epoch is known current.
  if (beat.applied_version.value_or(0) > 0) ctx.board.set_applied(node, *beat.applied_version);
  session.heartbeat_at = ctx.now;
  if (beat.agent_url) session.agent_url = *beat.agent_url;
  CORRAL_RETURN_IF_ERROR(tx.agents().upsert_agent_session(session));
  if (beat.gpus) CORRAL_RETURN_IF_ERROR(record_health(tx, node, *beat.gpus, ctx));
  // What the node holds and what it reports, read once for all its jobs.
  CORRAL_ASSIGN_OR_RETURN(const auto here,
                          tx.allocations().list_active_allocations_on(core::NodeId(node)));
  std::vector<core::JobId> held;
  for (const auto& al : here) held.push_back(al.job);
  std::vector<core::JobId> named = held;
  for (const auto& w : beat.workers) named.push_back(core::JobId(w.key.job));
  CORRAL_ASSIGN_OR_RETURN(const auto known, tx.agents().list_workers_on(core::NodeId(node), named));
  std::set<std::int64_t> touched;
  CORRAL_RETURN_IF_ERROR(record_workers(tx, node, beat.workers, known, here, touched));
  // A job is reconciled when one of its workers changed, when it should stop (a stop
  // may be confirmed by absence), or when it may have run past its maxRuntime (the
  // heartbeat is that rule's clock). A running job with nothing new is left alone: the
  // cost of a heartbeat no longer grows with the jobs a node runs.
  std::set<std::int64_t> reconcile = touched;
  CORRAL_ASSIGN_OR_RETURN(const auto jobs, tx.jobs().get_jobs(held));
  for (const store::JobRow& job : jobs) {
    const bool runs =
        job.phase == core::JobPhase::kLaunching || job.phase == core::JobPhase::kRunning;
    if (!runs || may_be_past_max_runtime(ctx, job, here)) reconcile.insert(job.id.value);
  }
  for (const auto id : reconcile) CORRAL_RETURN_IF_ERROR(reconcile_job(tx, ctx, core::JobId(id)));
  return Status();
}

namespace {

// The job whose attempt `key` names, when that attempt is the job's current one and runs
// on `node` under the session of `epoch`: what a worker's report must be to count.
Result<store::JobRow> reporting_job(store::Tx& tx, const std::string& node, std::int64_t epoch,
                                    const core::WorkerKey& key,
                                    std::vector<store::AllocationRow>& allocs) {
  const std::int64_t job_id = key.job;
  const std::int32_t attempt = key.attempt;
  CORRAL_RETURN_IF_ERROR(current_session(tx.agents(), node, epoch).status());
  CORRAL_ASSIGN_OR_RETURN(auto job, tx.jobs().get_job(core::JobId(job_id)));
  if (!job) return core::not_found("job " + std::to_string(job_id) + " not found");
  if (attempt != job->attempt) {
    return core::stale_attempt("attempt " + std::to_string(attempt) + " of job " +
                               std::to_string(job_id) + " is not its current attempt (" +
                               std::to_string(job->attempt) + ")");
  }
  CORRAL_ASSIGN_OR_RETURN(allocs, tx.allocations().list_allocations(job->id));
  const bool ours = std::any_of(allocs.begin(), allocs.end(), [&](const auto& al) {
    return al.attempt == attempt && al.node.value == node;
  });
  if (!ours) {
    return Status(core::StatusCode::kPermissionDenied, "job " + std::to_string(job_id) +
                                                           " attempt " + std::to_string(attempt) +
                                                           " does not run on node " + node);
  }
  return *job;
}

}  // namespace

Result<bool> record_checkpoint(store::Tx& tx, const LifecycleContext& ctx, const std::string& node,
                               const core::WorkerCheckpoint& c) {
  const std::int64_t job_id = c.key.job;
  const std::int32_t attempt = c.key.attempt;
  const std::int64_t step = c.report.step;
  const std::string& path = c.report.path;
  std::vector<store::AllocationRow> allocs;
  CORRAL_ASSIGN_OR_RETURN(const store::JobRow found,
                          reporting_job(tx, node, c.epoch, c.key, allocs));
  const store::JobRow* job = &found;
  CORRAL_ASSIGN_OR_RETURN(auto existing, tx.checkpoints().list_checkpoints(job->id));
  for (const auto& known : existing) {
    if (known.attempt == attempt && known.step == step) {
      return false;  // already recorded: a retry of the agent's forward
    }
  }
  // The attempt's size and type, so a reported throughput is known by where it ran.
  const auto gpus = std::count_if(allocs.begin(), allocs.end(),
                                  [&](const auto& al) { return al.attempt == attempt; });
  const auto mine = std::find_if(allocs.begin(), allocs.end(),
                                 [&](const auto& al) { return al.attempt == attempt; });
  if (c.report.throughput > 0 && mine != allocs.end()) {
    CORRAL_RETURN_IF_ERROR(
        tx.checkpoints().record_throughput({.job = job->id,
                                            .gpu_type = mine->gpu_type,
                                            .gpus = static_cast<std::int32_t>(gpus),
                                            .throughput = c.report.throughput,
                                            .time = ctx.now}));
  }
  CORRAL_RETURN_IF_ERROR(
      tx.checkpoints().insert_checkpoint({.job = job->id,
                                          .attempt = attempt,
                                          .step = step,
                                          .uri = path,
                                          .bytes = c.report.bytes,
                                          .checksum = c.report.checksum,
                                          .time = ctx.now,
                                          .gpus = static_cast<std::int32_t>(gpus),
                                          .throughput = c.report.throughput}));
  CORRAL_RETURN_IF_ERROR(
      tx.records().append_job_event({.job = job->id,
                                     .time = ctx.now,
                                     .kind = "checkpointed",
                                     .message = "attempt " + std::to_string(attempt) + " step " +
                                                std::to_string(step) + " at " + path}));
  ++ctx.fx.tenant_events[job->tenant.value].checkpoints;
  ctx.fx.log.push_back(LogEvent("checkpoint")
                           .add("job", job_id)
                           .add("tenant", job->tenant.value)
                           .add("attempt", attempt)
                           .add("step", step)
                           .add("node", node)
                           .add("bytes", c.report.bytes)
                           .add("path", path));
  return true;
}

Result<RunReportTaken> record_worker_run_report(store::Tx& tx, const LifecycleContext& ctx,
                                                const std::string& node,
                                                const core::WorkerRunReport& r) {
  std::vector<store::AllocationRow> allocs;
  CORRAL_ASSIGN_OR_RETURN(const store::JobRow job, reporting_job(tx, node, r.epoch, r.key, allocs));
  CORRAL_ASSIGN_OR_RETURN(const RunReportTaken taken,
                          record_run_report(tx.runs(), job.id, r.key.attempt, r.report, ctx.now));
  CORRAL_RETURN_IF_ERROR(judge_sweep_trial(tx, ctx, job, r.report));
  for (const auto& a : taken.artifacts) {
    CORRAL_RETURN_IF_ERROR(tx.records().append_job_event(
        {.job = job.id,
         .time = ctx.now,
         .kind = "artifact",
         .message = "attempt " + std::to_string(r.key.attempt) + " produced " + a.name + " at " +
                    a.uri + " (" + core::format_bytes(a.bytes) + ", " + a.digest + ")"}));
  }
  return taken;
}

Result<nlohmann::json> lookup_worker_features(store::Tx& tx, const LifecycleContext& ctx,
                                              const std::string& node,
                                              const core::WorkerFeatureLookup& l) {
  std::vector<store::AllocationRow> allocs;
  CORRAL_ASSIGN_OR_RETURN(const store::JobRow job, reporting_job(tx, node, l.epoch, l.key, allocs));
  CORRAL_ASSIGN_OR_RETURN(const store::FeatureSetRow set,
                          tenant_feature_set(tx.features(), l.request.set, job.tenant.value));
  CORRAL_ASSIGN_OR_RETURN(const nlohmann::json request, core::parse_json_object(l.request.lookup));
  CORRAL_ASSIGN_OR_RETURN(FeatureLookupAnswer answer, lookup_features(tx.features(), set, request));
  // What the run read joins its manifest: a lookup adds to its version's counts.
  CORRAL_RETURN_IF_ERROR(tx.features().record_run_feature_lookup(
      {.job = job.id,
       .name = set.name,
       .version = set.version,
       .lookups = 1,
       .rows = answer.rows,
       .latest_at_ms = answer.latest_at_ms,
       .first_lookup_at = ctx.now,
       .last_lookup_at = ctx.now,
       .watermarks = nlohmann::json(answer.watermarks).dump()}));
  return std::move(answer.body);
}

}  // namespace corral::server
