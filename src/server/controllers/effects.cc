#include "server/controllers/effects.h"

namespace corral::server {

void Effects::merge(const Effects& other) {
  bump.insert(other.bump.begin(), other.bump.end());
  stops.insert(other.stops.begin(), other.stops.end());
  released.insert(other.released.begin(), other.released.end());
  requeued.insert(other.requeued.begin(), other.requeued.end());
  rejoined.insert(other.rejoined.begin(), other.rejoined.end());
  wake_scheduler = wake_scheduler || other.wake_scheduler;
  succeeded += other.succeeded;
  failed += other.failed;
  for (const auto& [tenant, e] : other.tenant_events) tenant_events[tenant].merge(e);
  log.insert(log.end(), other.log.begin(), other.log.end());
}

void wake_loop(const Effects& fx, SchedulerSignals& loop) {
  if (!fx.wake_scheduler) return;
  for (const std::int64_t id : fx.requeued) loop.job_submitted(core::JobId(id));
  loop.capacity_changed();
}

void apply_effects(const Effects& fx, AssignmentBoard& board) {
  for (const auto& [job, node] : fx.stops) {
    if (fx.released.count(job) == 0) board.mark_stop(job, node);
  }
  board.bump(fx.bump);
  for (const auto job : fx.released) board.forget_job(job);
  for (const auto& node : fx.rejoined) board.forget_applied(node);
  process_log().write_all(fx.log);
}

}  // namespace corral::server
