// Interactive sessions' per-user limit (SchedulerConfig::session_gpus_per_user;
// docs/sessions.md): a session waits, out of line, while its user's sessions already hold
// so many GPUs that it would pass the limit. The other half of a session's start rule,
// inside its tenant's guarantee only, is admission's (admit.h, `guaranteed_only`).
//
// Thread safety: one SessionLimits per decide() call.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "sched/config.h"
#include "sched/snapshot.h"

namespace corral::sched::detail {

// GPUs held by each user's sessions, counted from the running jobs (stopping ones
// included: they hold GPUs until they are gone) and the placements of this cycle.
class SessionLimits {
 public:
  SessionLimits(const ClusterSnapshot& s, const SchedulerConfig& config);
  // Why the session `r` must wait for its user's limit; empty when it may run (or `r` is
  // no session).
  std::string blocked(const JobRequest& r) const;
  // Counts `gpus` placed this cycle for `r` (nothing when `r` is no session).
  void add(const JobRequest& r, std::int64_t gpus);

 private:
  std::int64_t limit_;                        // 0: none
  std::map<std::string, std::int64_t> held_;  // by user
};

}  // namespace corral::sched::detail
