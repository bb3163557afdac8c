#include "server/metrics.h"

#include <string_view>

namespace corral::server {
namespace {

void line(std::string& out, std::string_view name, std::string_view type, std::string_view help,
          std::int64_t value) {
  out += "# HELP ";
  out += name;
  out += ' ';
  out += help;
  out += "\n# TYPE ";
  out += name;
  out += ' ';
  out += type;
  out += '\n';
  out += name;
  out += ' ';
  out += std::to_string(value);
  out += '\n';
}

}  // namespace

std::string Metrics::render() const {
  std::string out;
  out += "# HELP corral_http_responses_total HTTP responses by status class\n";
  out += "# TYPE corral_http_responses_total counter\n";
  for (int i = 0; i < 4; ++i) {
    out += "corral_http_responses_total{class=\"" + std::to_string(i + 2) + "xx\"} " +
           std::to_string(http_responses[static_cast<std::size_t>(i)].load()) + "\n";
  }
  line(out, "corral_jobs_submitted_total", "counter", "jobs accepted", jobs_submitted.load());
  line(out, "corral_jobs_cancelled_total", "counter", "jobs cancelled", jobs_cancelled.load());
  line(out, "corral_jobs_succeeded_total", "counter", "jobs whose every rank exited 0",
       jobs_succeeded.load());
  line(out, "corral_jobs_failed_total", "counter", "jobs that failed with no restart left",
       jobs_failed.load());
  line(out, "corral_idempotent_replays_total", "counter",
       "mutating requests answered from an earlier attempt", idempotent_replays.load());
  line(out, "corral_admission_rejections_total", "counter", "submissions refused with 429",
       admission_rejections.load());
  line(out, "corral_sched_cycles_total", "counter", "scheduling cycles run", sched_cycles.load());
  line(out, "corral_sched_cycle_milliseconds_total", "counter", "time spent in scheduling cycles",
       sched_cycle_ms_total.load());
  line(out, "corral_sched_placements_total", "counter", "gangs placed", sched_placements.load());
  line(out, "corral_sched_apply_conflicts_total", "counter",
       "decision transactions refused by the store", sched_apply_conflicts.load());
  line(out, "corral_sched_errors_total", "counter", "cycles that failed", sched_errors.load());
  line(out, "corral_pending_jobs", "gauge", "pending jobs at the last cycle", pending_jobs.load());
  line(out, "corral_running_jobs", "gauge", "jobs holding GPUs at the last cycle",
       running_jobs.load());
  line(out, "corral_store_errors_total", "counter", "store calls that failed", store_errors.load());
  line(out, "corral_job_spec_decodes_total", "counter",
       "stored job specs decoded for agents and controllers (once per job, not per poll)",
       job_spec_decodes.load());
  line(out, "corral_agent_polls_waiting", "gauge", "agents' long polls parked on the board",
       polls_waiting.load());
  return out;
}

}  // namespace corral::server
