#include "sched/internal/session_limits.h"

#include "sched/internal/text.h"

namespace corral::sched::detail {

SessionLimits::SessionLimits(const ClusterSnapshot& s, const SchedulerConfig& config)
    : limit_(config.session_gpus_per_user) {
  if (limit_ <= 0) return;
  for (const RunningJob& j : s.running()) {
    add(j.request, static_cast<std::int64_t>(j.gpus.size()));
  }
}

std::string SessionLimits::blocked(const JobRequest& r) const {
  if (limit_ <= 0 || !is_session(r)) return "";
  const auto it = held_.find(r.user);
  const std::int64_t held = it == held_.end() ? 0 : it->second;
  if (held + r.gpus <= limit_) return "";
  const std::string who = r.user.empty() ? std::string("an unknown user") : "user " + r.user;
  return cat("session limit: ", who, "'s sessions hold ", held, " of the ", limit_,
             " GPUs a user's sessions may hold (scheduler.sessionGpusPerUser); this one needs ",
             r.gpus);
}

void SessionLimits::add(const JobRequest& r, std::int64_t gpus) {
  if (limit_ > 0 && is_session(r)) held_[r.user] += gpus;
}

}  // namespace corral::sched::detail
