#include "sched/dependencies.h"

#include <algorithm>

#include "sched/internal/text.h"

namespace corral::sched {
namespace {

using detail::cat;

using core::DependencyCondition;

bool met(const DependencyFact& f) {
  switch (f.on) {
    case DependencyCondition::kSuccess:
      return f.succeeded;
    case DependencyCondition::kFailure:
      return f.ended && !f.succeeded;
    case DependencyCondition::kFinish:
      return f.ended;
    case DependencyCondition::kStart:
      return f.started;
  }
  return false;
}

// Why `f` can never be met, or empty while it still can.
std::string never(const DependencyFact& f) {
  switch (f.on) {
    case DependencyCondition::kSuccess:
      return f.ended && !f.succeeded ? "ended without succeeding" : "";
    case DependencyCondition::kFailure:
      return f.succeeded ? "succeeded" : "";
    case DependencyCondition::kFinish:
      return "";
    case DependencyCondition::kStart:
      return f.ended && !f.started ? "ended without starting" : "";
  }
  return "";
}

std::string_view awaited(DependencyCondition on) {
  switch (on) {
    case DependencyCondition::kSuccess:
      return "succeed";
    case DependencyCondition::kFailure:
      return "fail";
    case DependencyCondition::kFinish:
      return "finish";
    case DependencyCondition::kStart:
      return "start";
  }
  return "succeed";
}

}  // namespace

DependencyVerdict judge_dependencies(const std::vector<DependencyFact>& facts) {
  const DependencyFact* first_unmet = nullptr;
  std::int32_t unmet = 0;
  for (const DependencyFact& f : facts) {
    if (met(f)) continue;
    if (std::string why = never(f); !why.empty()) {
      return {.state = DependencyState::kNever,
              .reason = cat("dependency never met: job ", f.job.value, " ", why,
                            " (on: ", core::to_string(f.on), ")")};
    }
    if (first_unmet == nullptr) first_unmet = &f;
    ++unmet;
  }
  if (first_unmet == nullptr) return {};
  std::string reason =
      cat("waiting for job ", first_unmet->job.value, " to ", awaited(first_unmet->on));
  if (unmet > 1) reason += cat(" (and ", unmet - 1, " more)");
  return {.state = DependencyState::kWaiting, .reason = std::move(reason)};
}

DependencyFact summed_fact(core::JobId array, const std::vector<DependencyFact>& tasks) {
  DependencyFact f{.job = array, .started = false, .ended = true, .succeeded = true};
  for (const DependencyFact& t : tasks) {
    f.started = f.started || t.started;
    f.ended = f.ended && t.ended;
    f.succeeded = f.succeeded && t.succeeded;
    if (t.started && (f.started_at == core::Time{} || t.started_at < f.started_at)) {
      f.started_at = t.started_at;
    }
    f.ended_at = std::max(f.ended_at, t.ended_at);
  }
  if (!f.ended) f.ended_at = {};
  return f;
}

bool dependencies_met(const std::vector<DependencyFact>& facts) {
  return std::all_of(facts.begin(), facts.end(), met);
}

core::Time queued_since(const PendingJob& job) {
  core::Time since = job.queued_at;
  for (const DependencyFact& f : job.dependencies) {
    since = std::max(since, f.on == DependencyCondition::kStart ? f.started_at : f.ended_at);
  }
  return since;
}

}  // namespace corral::sched
