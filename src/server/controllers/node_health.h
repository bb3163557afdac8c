// Node health (docs/agent-protocol.md §5): what a heartbeat's GPU readings mean, and the
// controller that declares silent nodes lost.
//
// - A GPU with a critical XID, an uncorrectable ECC error, a row-remap failure, or
//   `present: false` (or missing from the heartbeat) is unhealthy: the scheduler
//   excludes it at once and the node is cordoned and drained with the reason, audited
//   as actor corrald/health.
// - A GPU above the temperature limit or drawing above its power limit, or whose clocks
//   are throttled for one of agents.throttleReasons (thermal or power-brake slowdowns by
//   default), is `hot`: it takes no new placements (unhealthy in the snapshot) but its
//   work keeps running. Throttled without a break for throttleDrainAfterMs, it is
//   unhealthy: its node is drained like for any fault.
// - No heartbeat for nodeLostAfterMs: the node is lost. Its epoch is bumped (the agent
//   is fenced: every later report gets 409), its allocations are released (the fence is
//   what makes that safe), its jobs are requeued from their last checkpoint with the
//   restart counted, and other nodes' ranks of those jobs are asked to stop. A lost node
//   takes no placements until its agent joins again. A freshly started corrald gives
//   every agent nodeLostAfterMs from its own start before judging it.
//
// Thread safety: evaluate_gpus is a pure function; NodeHealth runs one thread.
#pragma once

#include <string>
#include <vector>

#include "core/agent_protocol.h"
#include "core/clock.h"
#include "core/result.h"
#include "core/topology.h"
#include "server/base/metrics.h"
#include "server/base/periodic.h"
#include "server/base/spec_cache.h"
#include "server/controllers/assignment_board.h"
#include "server/controllers/lifecycle.h"
#include "server/controllers/scheduler_signals.h"
#include "store/store.h"

namespace corral::server {

// Judges a heartbeat's GPU readings against the registered GPUs: one observation per
// registered GPU, in its order (a GPU without a reading is absent: unhealthy). Its
// problem says why it is not ok: "XID 79 (fell off the bus)", "hot: 95 C above 87 C".
// `before` is the last judgement (for how long a GPU has been throttled), `now` the
// readings' time.
std::vector<store::GpuObservation> evaluate_gpus(const core::Node& registered,
                                                 const std::vector<core::GpuHealth>& gpus,
                                                 const AgentSettings& settings,
                                                 const std::vector<store::GpuObservation>& before,
                                                 core::Time now);

// The registered node as the scheduler and the API see it: a GPU its agent's last readings
// judged is healthy only when judged ok (a hot one takes no new placements); one not
// judged keeps the health its registration gives it. Each GPU's power limit is the one
// its agent last reported (its readings', else its inventory's at join): rack power caps
// count it instead of the type's catalog TDP (core::node_gpu_watts).
void apply_observation(core::Node& node, const store::ObservedNode& observed);

// The name of a critical XID, or empty when `xid` is not critical.
std::string critical_xid_name(std::int64_t xid);

// Declares `node` lost in one transaction (see above); no-op when it is already lost.
core::Status declare_node_lost(store::Tx& tx, const LifecycleContext& ctx, const core::NodeId& node,
                               const std::string& why);

class NodeHealth {
 public:
  // `metrics`, when given, counts the jobs that lost nodes failed or restarted.
  NodeHealth(store::Store& store, const core::Clock& clock, AssignmentBoard& board,
             SpecCache& specs, SchedulerSignals& loop, AgentSettings settings,
             Metrics* metrics = nullptr);
  ~NodeHealth();
  NodeHealth(const NodeHealth&) = delete;
  NodeHealth& operator=(const NodeHealth&) = delete;

  void start();
  void stop();
  // One pass over the sessions (tests and the thread).
  core::Status check_once();

 private:
  store::Store& store_;
  const core::Clock& clock_;
  AssignmentBoard& board_;
  SpecCache& specs_;
  SchedulerSignals& loop_;
  const AgentSettings settings_;
  Metrics* const metrics_;
  core::Time started_at_;

  Periodic thread_;
};

}  // namespace corral::server
