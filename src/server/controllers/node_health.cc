#include "server/controllers/node_health.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>

#include "core/job_phase.h"
#include "server/base/log.h"
#include "server/controllers/audit.h"
#include "server/controllers/gpu_states.h"
#include "server/controllers/retry_policy.h"

namespace corral::server {
namespace {

using core::JobPhase;
using core::Status;

}  // namespace

std::string critical_xid_name(std::int64_t xid) {
  static const std::map<std::int64_t, const char*> kCritical = {
      {48, "double-bit ECC error"},
      {62, "internal micro-controller halt"},
      {63, "ECC page retirement or row remap recording event"},
      {64, "ECC page retirement or row remap recording failure"},
      {74, "NVLink error"},
      {79, "fell off the bus"},
      {92, "high single-bit ECC error rate"},
      {94, "contained ECC error"},
      {95, "uncontained ECC error"},
      {119, "GSP RPC timeout"},
      {120, "GSP error"},
  };
  const auto it = kCritical.find(xid);
  return it == kCritical.end() ? std::string() : it->second;
}

void apply_observation(core::Node& node, const store::ObservedNode& observed) {
  for (auto& g : node.gpus) {
    // The newest report wins: the inventory's limit comes at join, the readings' (kept
    // with the judged conditions) with every heartbeat.
    for (const core::ObservedGpu& found : observed.inventory.gpus) {
      if (g.index == found.index && found.power_limit_w > 0)
        g.power_limit_watts = found.power_limit_w;
    }
    for (const store::GpuObservation& judged : observed.gpus) {
      if (g.index != judged.index) continue;
      g.healthy = judged.condition == core::GpuCondition::kOk;
      if (judged.power_limit_w > 0) g.power_limit_watts = judged.power_limit_w;
    }
  }
}

std::vector<store::GpuObservation> evaluate_gpus(const core::Node& registered,
                                                 const std::vector<core::GpuHealth>& gpus,
                                                 const AgentSettings& settings,
                                                 const std::vector<store::GpuObservation>& before,
                                                 core::Time now) {
  std::map<std::int32_t, const core::GpuHealth*> by_index;
  for (const auto& g : gpus) by_index[g.index] = &g;  // the last reading of an index counts
  std::map<std::int32_t, const store::GpuObservation*> judged_before;
  for (const auto& b : before) judged_before[b.index] = &b;
  std::vector<store::GpuObservation> out;
  for (const auto& gpu : registered.gpus) {
    store::GpuObservation v{.index = gpu.index};
    const auto was = judged_before.find(gpu.index);
    // A reading without a limit keeps the last one known.
    if (was != judged_before.end()) v.power_limit_w = was->second->power_limit_w;
    const auto it = by_index.find(gpu.index);
    if (it == by_index.end() || !it->second->present) {
      v.condition = core::GpuCondition::kUnhealthy;
      v.problem = "absent";
      out.push_back(v);
      continue;
    }
    const core::GpuHealth& g = *it->second;
    if (g.power_limit_w > 0) v.power_limit_w = g.power_limit_w;
    // Throttled for a reason that counts: since the first reading that said so.
    std::string throttled;
    for (const std::string& reason : g.throttle) {
      if (settings.throttle_reasons.count(reason) == 0) continue;
      throttled += (throttled.empty() ? "" : ", ") + reason;
    }
    if (!throttled.empty()) {
      v.throttled_since = was != judged_before.end() && was->second->throttled_since
                              ? *was->second->throttled_since
                              : now;
    }
    const std::int64_t throttled_ms = v.throttled_since ? core::to_ms(now - *v.throttled_since) : 0;
    std::vector<std::string> problems;
    for (const std::int32_t xid : g.xid_errors) {
      const std::string name = critical_xid_name(xid);
      if (!name.empty()) problems.push_back("XID " + std::to_string(xid) + " (" + name + ")");
    }
    if (g.ecc_uncorrectable > 0) problems.push_back("uncorrectable ECC error");
    if (g.remap_failed) problems.push_back("row remap failed");
    if (!throttled.empty() && settings.throttle_drain_after_ms > 0 &&
        throttled_ms >= settings.throttle_drain_after_ms) {
      problems.push_back("throttled (" + throttled + ") for " +
                         std::to_string(throttled_ms / 1000) + " s");
    }
    if (!problems.empty()) {
      v.condition = core::GpuCondition::kUnhealthy;
      v.problem = problems.front();
      for (std::size_t i = 1; i < problems.size(); ++i) v.problem += ", " + problems[i];
    } else {
      const double temp = g.temperature_c;
      const double power = g.power_w;
      const double limit = g.power_limit_w;
      if (temp > settings.hot_temperature_c) {
        v.condition = core::GpuCondition::kHot;
        v.problem = "hot: " + std::to_string(static_cast<int>(temp)) + " C above " +
                    std::to_string(settings.hot_temperature_c) + " C";
      } else if (limit > 0 && power > limit) {
        v.condition = core::GpuCondition::kHot;
        v.problem = "hot: drawing " + std::to_string(static_cast<int>(power)) + " W above " +
                    std::to_string(static_cast<int>(limit)) + " W";
      } else if (!throttled.empty()) {
        v.condition = core::GpuCondition::kHot;
        v.problem = "hot: throttled (" + throttled + ")";
      }
    }
    out.push_back(v);
  }
  return out;
}

Status declare_node_lost(store::Tx& tx, const LifecycleContext& ctx, const core::NodeId& node,
                         const std::string& why) {
  CORRAL_ASSIGN_OR_RETURN(auto session, tx.agents().get_agent_session(node));
  if (!session || session->lost) return Status();
  // The fence: a new epoch refuses every later report of the old agent, which is what
  // makes releasing its GPUs below safe without hearing from it.
  session->epoch += 1;
  session->lost = true;
  CORRAL_RETURN_IF_ERROR(tx.agents().upsert_agent_session(*session));
  CORRAL_ASSIGN_OR_RETURN(auto allocs, tx.allocations().list_active_allocations_on(node));
  std::vector<core::JobId> ids;
  for (const auto& a : allocs) ids.push_back(a.job);
  // Read before the release below, which the job rows do not depend on.
  CORRAL_ASSIGN_OR_RETURN(const auto jobs, tx.jobs().get_jobs(ids));
  CORRAL_RETURN_IF_ERROR(tx.allocations().release_allocations_on(node, ctx.now).status());
  CORRAL_RETURN_IF_ERROR(record_node_lost(tx.ledger(), node, why, ctx.now));
  ctx.fx.bump.insert(node.value);
  ctx.fx.wake_scheduler = true;
  CORRAL_RETURN_IF_ERROR(append_audit(
      tx.audit(), {.actor = "corrald/health",
                   .action = "node.lost",
                   .target = "node/" + node.value,
                   .before = "epoch=" + std::to_string(session->epoch - 1),
                   .after = "lost epoch=" + std::to_string(session->epoch) + ": " + why,
                   .time = ctx.now}));
  ctx.fx.log.push_back(LogEvent("node_lost", LogLevel::kWarn)
                           .add("node", node.value)
                           .add("epoch", session->epoch)
                           .add("jobs", static_cast<std::int64_t>(jobs.size()))
                           .add("reason", why));
  for (const store::JobRow& job : jobs) {
    const std::string lost = "node " + node.value + " lost (" + why + ")";
    CORRAL_RETURN_IF_ERROR(tx.records().append_job_event(
        {.job = job.id, .time = ctx.now, .kind = "node lost", .message = lost}));
    if (job.phase == JobPhase::kLaunching || job.phase == JobPhase::kRunning) {
      // The attempt is lost: it counts as a restart, and restarts from its checkpoint.
      // A stored spec that no longer decodes (data loss, or a validator grown stricter since
      // the submit) must not keep the node's loss from being recorded, on every sweep: its
      // job gets the default restart budget.
      const auto spec = ctx.specs.get(job.id, job.spec_json);
      store::JobRow next = job;
      next.updated_at = ctx.now;
      const RetryVerdict verdict =
          decide_retry(spec.ok() ? **spec : core::JobSpec{}, next, FailureCategory::kNodeFailure, 0,
                       ctx.settings, ctx.now);
      if (verdict.retry) {
        next.phase = JobPhase::kPreempting;  // until the other nodes' ranks confirm
        next.reason =
            lost + "; attempt " + std::to_string(job.attempt) + " ended; " + verdict.reason;
        CORRAL_RETURN_IF_ERROR(tx.records().append_job_event(
            {.job = job.id, .time = ctx.now, .kind = "retry", .message = "node: " + next.reason}));
      } else {
        next.phase = JobPhase::kFailed;
        next.reason = lost + "; " + verdict.reason;
      }
      CORRAL_ASSIGN_OR_RETURN(const bool won, tx.jobs().update_job(next, job.phase));
      if (!won) return core::raced("job changed while losing its node");
      TenantEvents& counted = ctx.fx.tenant_events[job.tenant.value];  // for /metrics
      if (next.phase == JobPhase::kFailed) {
        ++counted.failures;
        ++ctx.fx.failed;
        CORRAL_RETURN_IF_ERROR(
            tx.records().append_job_event({.job = job.id,
                                           .time = ctx.now,
                                           .kind = "finished",
                                           .message = "failed: " + next.reason}));
      } else {
        ++counted.restarts;
      }
    }
    // Other nodes' ranks stop; the job is requeued (or released) once they confirm.
    CORRAL_ASSIGN_OR_RETURN(auto rest, tx.allocations().list_allocations(job.id));
    for (const auto& a : rest) {
      if (a.active) ctx.fx.stops.insert({job.id.value, a.node.value});
    }
    CORRAL_RETURN_IF_ERROR(reconcile_job(tx, ctx, job.id));
  }
  return Status();
}

NodeHealth::NodeHealth(store::Store& store, const core::Clock& clock, AssignmentBoard& board,
                       SpecCache& specs, SchedulerSignals& loop, AgentSettings settings,
                       Metrics* metrics)
    : store_(store),
      clock_(clock),
      board_(board),
      specs_(specs),
      loop_(loop),
      settings_(settings),
      metrics_(metrics) {}

NodeHealth::~NodeHealth() { stop(); }

void NodeHealth::start() {
  started_at_ = clock_.now();
  const core::Duration period(std::clamp<std::int64_t>(settings_.node_lost_after_ms / 4, 20, 1000));
  thread_.start(period, [this] {
    const Status s = check_once();
    if (!s.ok()) {
      process_log().write(
          LogEvent("node_health_failed", LogLevel::kError).add("error", s.to_string()));
    }
  });
}

void NodeHealth::stop() { thread_.stop(); }

Status NodeHealth::check_once() {
  const core::Time now = clock_.now();
  // Agents get the full silence allowance from this corrald's start, so a restart of
  // corrald never declares every node lost at once.
  if (now - started_at_ < core::Duration(settings_.node_lost_after_ms)) return Status();
  std::vector<store::AgentSessionRow> sessions;
  CORRAL_RETURN_IF_ERROR(store_.read([&](store::Tx& tx) {
    CORRAL_ASSIGN_OR_RETURN(sessions, tx.agents().list_agent_sessions());
    return Status();
  }));
  for (const auto& s : sessions) {
    const auto silence = core::to_ms(now - s.heartbeat_at);
    if (s.lost || silence <= settings_.node_lost_after_ms) continue;
    Effects fx;
    const Status done = store_.transact([&](store::Tx& tx) {
      fx = Effects();
      // Re-read inside the transaction: a heartbeat may have arrived meanwhile.
      CORRAL_ASSIGN_OR_RETURN(auto fresh, tx.agents().get_agent_session(s.node));
      if (!fresh || fresh->lost ||
          core::to_ms(now - fresh->heartbeat_at) <= settings_.node_lost_after_ms) {
        return Status();
      }
      const LifecycleContext ctx{board_, settings_, now, fx, specs_};
      return declare_node_lost(tx, ctx, s.node,
                               "no heartbeat for " + std::to_string(silence) + " ms");
    });
    if (!done.ok()) return done;
    apply_effects(fx, board_);
    if (metrics_ != nullptr) {
      metrics_->jobs_failed += fx.failed;
      metrics_->count_committed(fx.tenant_events);
    }
    wake_loop(fx, loop_);
  }
  return Status();
}

}  // namespace corral::server
