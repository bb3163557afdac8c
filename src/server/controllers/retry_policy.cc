#include "server/controllers/retry_policy.h"

#include <algorithm>
#include <csignal>

#include "server/controllers/lifecycle.h"

namespace corral::server {
namespace {

constexpr std::int32_t kKilledCode = 128 + SIGKILL;  // what a shell reports for SIGKILL

// corrald's restart backoff (restart_backoff), with the spec's own start and cap.
core::Duration backoff(const core::JobSpec& spec, AgentSettings s, std::int32_t restarts) {
  if (spec.retry && spec.retry->backoff_initial.count() > 0) {
    s.restart_backoff_ms = core::to_ms(spec.retry->backoff_initial);
    s.restart_backoff_max_ms = std::max(s.restart_backoff_ms, s.restart_backoff_max_ms);
  }
  if (spec.retry && spec.retry->backoff_max.count() > 0) {
    s.restart_backoff_max_ms = core::to_ms(spec.retry->backoff_max);
  }
  return restart_backoff(s, restarts);
}

}  // namespace

std::string_view to_string(FailureCategory c) {
  switch (c) {
    case FailureCategory::kExit:
      return "exit";
    case FailureCategory::kOutOfMemory:
      return "oom";
    case FailureCategory::kNodeFailure:
      return "node";
    case FailureCategory::kPreemption:
      return "preemption";
  }
  return "exit";
}

FailureCategory category_of(const store::WorkerRow& rank) {
  const bool killed = rank.signal == SIGKILL || (rank.signal == 0 && rank.exit_code == kKilledCode);
  return killed ? FailureCategory::kOutOfMemory : FailureCategory::kExit;
}

RetryVerdict decide_retry(const core::JobSpec& spec, store::JobRow& next, FailureCategory category,
                          std::int32_t exit_code, const AgentSettings& settings, core::Time now) {
  const core::RetryPolicy policy = spec.retry.value_or(core::RetryPolicy{});
  // An OOM kill without its own budget is a failed rank like any other, code 137.
  if (category == FailureCategory::kOutOfMemory && policy.on_out_of_memory < 0) {
    category = FailureCategory::kExit;
    exit_code = kKilledCode;
  }
  if (category == FailureCategory::kExit && !policy.on_exit_codes.empty() &&
      !std::binary_search(policy.on_exit_codes.begin(), policy.on_exit_codes.end(), exit_code)) {
    return {
        .retry = false,
        .reason = "exit code " + std::to_string(exit_code) + " is not retried (retry.onExitCodes)"};
  }
  // Restarts counted in maxRestarts: every one but those of categories with their own.
  std::int32_t shared = next.restarts;
  if (policy.on_node_failure >= 0) shared -= next.node_restarts;
  if (policy.on_out_of_memory >= 0) shared -= next.oom_restarts;
  std::int32_t used = shared;
  std::int32_t budget = spec.max_restarts;
  std::string field = "maxRestarts";
  if (category == FailureCategory::kNodeFailure && policy.on_node_failure >= 0) {
    used = next.node_restarts;
    budget = policy.on_node_failure;
    field = "retry.onNodeFailure";
  } else if (category == FailureCategory::kOutOfMemory) {
    used = next.oom_restarts;
    budget = policy.on_out_of_memory;
    field = "retry.onOutOfMemory";
  }
  const std::string what = std::string(to_string(category));
  if (used >= budget) {
    return {.retry = false,
            .reason = "out of restarts (" + field + " " + std::to_string(budget) + ")"};
  }
  ++next.restarts;
  if (category == FailureCategory::kNodeFailure) ++next.node_restarts;
  if (category == FailureCategory::kOutOfMemory) ++next.oom_restarts;
  next.retry_category = what;
  if (category != FailureCategory::kNodeFailure)
    next.not_before = now + backoff(spec, settings, used + 1);
  return {.retry = true,
          .reason = "restart " + std::to_string(used + 1) + " of " + std::to_string(budget) +
                    (field == "maxRestarts" ? "" : " (" + field + ")")};
}

RetryVerdict decide_preemption_retry(const core::JobSpec& spec, std::int32_t preemptions) {
  const std::int32_t budget = spec.retry ? spec.retry->on_preemption : -1;
  if (budget < 0) return {.retry = true, .reason = "requeued (retry.onPreemption always)"};
  if (budget == 0) {
    return {.retry = false, .reason = "not retried after a preemption (retry.onPreemption never)"};
  }
  if (preemptions > budget) {
    return {.retry = false,
            .reason = "out of requeues after preemption (retry.onPreemption " +
                      std::to_string(budget) + ")"};
  }
  return {.retry = true,
          .reason = "requeue " + std::to_string(preemptions) + " of " + std::to_string(budget) +
                    " (retry.onPreemption)"};
}

bool keeps_place(const core::JobSpec& spec, std::string_view category) {
  return category == "node" && spec.retry && spec.retry->expedite;
}

}  // namespace corral::server
