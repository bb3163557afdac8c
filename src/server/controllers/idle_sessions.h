// Idle interactive sessions (priorityClass interactive; docs/sessions.md): a session whose
// GPUs sit idle is warned, then reclaimed, as Determined's notebook idle timeout and
// JupyterHub's culler do. A session holds GPUs of its tenant's guarantee that nothing
// preempts (sched/internal/session_limits.h), so idleness is the one thing that gives
// them back.
//
// Idleness is read from the utilization the agents already report (the 1-minute rollups
// of telemetry, server/controllers/telemetry_sink.h): a minute in which any GPU of the
// session reached sessions.idleBelow is busy. The session has been idle since the later of
// its attempt's start and its last busy minute's end.
//
//   idle for idleTimeout ──> event session_idle_warning ──(still idle for graceMs)──> reclaimed:
//        ^                           │                                         cancelled with
//        └──── a busy minute ────────┘ (the warning no longer counts)          the reason
//
// Only what is known counts: while its GPUs report no samples (for kFreshness; an agent
// down, telemetry dropped) a session is neither warned nor reclaimed. The warning is the
// job event itself, so a restarted corrald or another replica judges the same.
//
// Thread safety: judge_idle is a pure function; IdleSessions runs one thread, and
// check_once() is for tests and that thread.
#pragma once

#include <optional>
#include <string>

#include "core/clock.h"
#include "core/result.h"
#include "core/time.h"
#include "server/base/periodic.h"
#include "server/base/settings.h"
#include "server/base/spec_cache.h"
#include "server/controllers/assignment_board.h"
#include "server/controllers/scheduler_signals.h"
#include "store/store.h"

namespace corral::server {

// The job event a session gets when it is warned.
inline constexpr std::string_view kIdleWarningEvent = "session_idle_warning";

// Agents sample every few seconds: silence this long means nobody knows whether the
// session is idle, so it is left alone.
inline constexpr core::Duration kFreshness = core::seconds(5 * 60);

// What is known of one running session.
struct IdleFacts {
  core::Time started_at;                  // its attempt's start (its GPUs' allocation)
  std::optional<core::Time> last_busy;    // the end of its last busy minute, if any
  std::optional<core::Time> last_sample;  // the latest minute any GPU of it reported
  std::optional<core::Time> warned_at;    // its latest warning in this attempt, if any
  core::Duration idle_timeout{0};         // its spec's, else sessions.idleTimeoutMs
};

enum class IdleAction { kNone, kWarn, kReclaim };

struct IdleVerdict {
  IdleAction action = IdleAction::kNone;
  core::Time idle_since;  // the later of started_at and last_busy
};

// What to do with a session now (see the drawing above). A warning counts only when it
// came after the session's last busy minute.
IdleVerdict judge_idle(const IdleFacts& facts, const SessionSettings& settings, core::Time now);

class IdleSessions {
 public:
  IdleSessions(store::Store& store, const core::Clock& clock, AssignmentBoard& board,
               SpecCache& specs, SchedulerSignals& loop, AgentSettings agents,
               SessionSettings settings);
  ~IdleSessions();
  IdleSessions(const IdleSessions&) = delete;
  IdleSessions& operator=(const IdleSessions&) = delete;

  void start();
  void stop();
  // One pass over the running sessions: warns and reclaims as judge_idle says. Returns
  // how many it reclaimed.
  core::Result<int> check_once();

 private:
  store::Store& store_;
  const core::Clock& clock_;
  AssignmentBoard& board_;
  SpecCache& specs_;
  SchedulerSignals& loop_;
  const AgentSettings agents_;
  const SessionSettings settings_;
  Periodic thread_;
};

}  // namespace corral::server
