#include "server/controllers/idle_sessions.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <vector>

#include "core/job_phase.h"
#include "core/priority.h"
#include "core/units.h"
#include "server/base/log.h"
#include "server/controllers/effects.h"
#include "server/controllers/lifecycle.h"

namespace corral::server {
namespace {

using core::Status;

constexpr core::Duration kMinute = core::seconds(60);

std::string percent(double share) {
  return std::to_string(static_cast<int>(std::lround(share * 100))) + "%";
}

// What telemetry says of `allocs`' GPUs since `from`: the end of the last busy minute and
// the start of the latest minute any of them reported.
struct Seen {
  std::optional<core::Time> last_busy;
  std::optional<core::Time> last_sample;
};

core::Result<Seen> read_telemetry(store::RecordRepo& records,
                                  const std::vector<store::AllocationRow>& allocs, core::Time from,
                                  core::Time now, double idle_below) {
  std::map<std::string, std::set<std::int32_t>> gpus;  // node -> indices
  for (const store::AllocationRow& a : allocs) gpus[a.node.value].insert(a.gpu_index);
  Seen seen;
  for (const auto& [node, indices] : gpus) {
    CORRAL_ASSIGN_OR_RETURN(const auto rows,
                            records.list_telemetry_rollup(store::TelemetryResolution::kMinute, from,
                                                          now + kMinute, core::NodeId(node)));
    for (const store::TelemetryRollupRow& r : rows) {
      if (!indices.contains(r.gpu_index) || r.samples == 0) continue;
      seen.last_sample = std::max(seen.last_sample.value_or(r.start), r.start);
      if (r.max_utilization >= idle_below) {
        const core::Time end = std::min(now, r.start + kMinute);
        seen.last_busy = std::max(seen.last_busy.value_or(end), end);
      }
    }
  }
  return seen;
}

}  // namespace

IdleVerdict judge_idle(const IdleFacts& facts, const SessionSettings& settings, core::Time now) {
  IdleVerdict out{.idle_since =
                      std::max(facts.started_at, facts.last_busy.value_or(facts.started_at))};
  if (!facts.last_sample || *facts.last_sample < now - kFreshness) return out;  // unknown
  const bool warned = facts.warned_at && *facts.warned_at >= out.idle_since;
  if (!warned) {
    if (now - out.idle_since >= facts.idle_timeout) out.action = IdleAction::kWarn;
    return out;
  }
  if (now - *facts.warned_at >= core::Duration(settings.grace_ms)) {
    out.action = IdleAction::kReclaim;
  }
  return out;
}

IdleSessions::IdleSessions(store::Store& store, const core::Clock& clock, AssignmentBoard& board,
                           SpecCache& specs, SchedulerSignals& loop, AgentSettings agents,
                           SessionSettings settings)
    : store_(store),
      clock_(clock),
      board_(board),
      specs_(specs),
      loop_(loop),
      agents_(std::move(agents)),
      settings_(settings) {}

IdleSessions::~IdleSessions() { stop(); }

void IdleSessions::start() {
  thread_.start(core::Duration(settings_.check_every_ms), [this] {
    const auto done = check_once();
    if (!done.ok()) {
      process_log().write(LogEvent("idle_sessions_failed", LogLevel::kError)
                              .add("error", done.status().to_string()));
    }
  });
}

void IdleSessions::stop() { thread_.stop(); }

core::Result<int> IdleSessions::check_once() {
  const core::Time now = clock_.now();
  std::vector<core::JobId> sessions;
  CORRAL_RETURN_IF_ERROR(store_.read([&](store::Tx& tx) {
    CORRAL_ASSIGN_OR_RETURN(const auto holding, tx.jobs().list_jobs_holding_gpus());
    for (const store::JobRow& j : holding) {
      if (j.phase == core::JobPhase::kRunning && j.priority_class == core::kInteractiveClass) {
        sessions.push_back(j.id);
      }
    }
    return Status();
  }));
  int reclaimed = 0;
  for (const core::JobId id : sessions) {
    Effects fx;
    bool ended = false;
    const Status done = store_.transact([&](store::Tx& tx) {
      fx = Effects();
      ended = false;
      // Re-read inside the transaction: it may have ended or been cancelled meanwhile.
      CORRAL_ASSIGN_OR_RETURN(const auto job, tx.jobs().get_job(id));
      if (!job || job->phase != core::JobPhase::kRunning) return Status();
      CORRAL_ASSIGN_OR_RETURN(auto allocs, tx.allocations().list_allocations(id));
      std::erase_if(allocs, [](const store::AllocationRow& a) { return !a.active; });
      if (allocs.empty()) return Status();
      IdleFacts facts{.started_at = allocs.front().created_at};
      for (const auto& a : allocs) facts.started_at = std::min(facts.started_at, a.created_at);
      CORRAL_ASSIGN_OR_RETURN(const auto spec, specs_.get(id, job->spec_json));
      facts.idle_timeout = spec->session && spec->session->idle_timeout.count() > 0
                               ? spec->session->idle_timeout
                               : core::Duration(settings_.idle_timeout_ms);
      CORRAL_ASSIGN_OR_RETURN(const auto events, tx.records().list_job_events(id));
      for (const store::JobEventRow& e : events) {
        if (e.kind == kIdleWarningEvent && e.time >= facts.started_at) facts.warned_at = e.time;
      }
      // Read back far enough to see a busy minute that would matter: within the idle
      // timeout, or since the idle timeout before the warning (it was idle since then at
      // least). None there: idle at least since the window opened. So a check reads a few
      // dozen minutes of rollups, not the session's whole life.
      const core::Time from =
          std::max(facts.started_at,
                   std::min(now, facts.warned_at.value_or(now)) - facts.idle_timeout - kMinute);
      CORRAL_ASSIGN_OR_RETURN(
          const Seen seen, read_telemetry(tx.records(), allocs, from, now, settings_.idle_below));
      facts.last_sample = seen.last_sample;
      facts.last_busy = seen.last_busy ? seen.last_busy : std::optional<core::Time>(from);
      const IdleVerdict verdict = judge_idle(facts, settings_, now);
      // When it was last busy is known if that was inside what was read, or it never was.
      const bool known = seen.last_busy || from == facts.started_at;
      const std::string idle =
          "no GPU of it reached " + percent(settings_.idle_below) + " utilization " +
          (known ? "since " + core::instant_text(verdict.idle_since) + " (" +
                       core::format_duration(now - verdict.idle_since) + ")"
                 : "for at least " + core::format_duration(now - verdict.idle_since));
      if (verdict.action == IdleAction::kWarn) {
        return tx.records().append_job_event(
            {.job = id,
             .time = now,
             .kind = std::string(kIdleWarningEvent),
             .message = "idle session: " + idle + "; it is reclaimed at " +
                        core::instant_text(now + core::Duration(settings_.grace_ms)) +
                        " unless its GPUs are used"});
      }
      if (verdict.action != IdleAction::kReclaim) return Status();
      const LifecycleContext ctx{board_, agents_, now, fx, specs_};
      CORRAL_RETURN_IF_ERROR(cancel_job(tx, ctx, *job,
                                        "reclaimed: idle session: " + idle + "; warned at " +
                                            core::instant_text(*facts.warned_at))
                                 .status());
      ended = true;
      return Status();
    });
    if (!done.ok()) return done;
    apply_effects(fx, board_);
    wake_loop(fx, loop_);
    if (ended) ++reclaimed;
  }
  return reclaimed;
}

}  // namespace corral::server
