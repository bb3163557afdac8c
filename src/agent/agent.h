// Agent: the running corral-agent. Joins corrald, long-polls the node's desired workers
// and reconciles them, heartbeats health and worker states, forwards workers'
// checkpoints and run reports, and serves the local endpoints. See docs/agent.md.
//
// Threads: the local server's pool (which also forwards workers' feature lookups, each
// on a client of lookup_clients_); `poll` (assignments → reconcile, re-polls at once
// after every answer); `heartbeat` (every heartbeat_ms, and within a few ms of a
// worker starting or exiting); `reports` (forwards checkpoints and run reports with
// backoff); `telemetry sampler`
// (every telemetry.interval_ms) and `telemetry sender` (every telemetry.flush_ms, on its
// own connection: agent/telemetry.h).
//
// Workers are kept per cluster (agent/cluster_scope.h): the join answer's clusterId picks
// the state dir's STATE_DIR/clusters/ID, whose workers the agent adopts; the workers of
// any other cluster it finds (or ran until a join answered another id) are stopped with
// no grace and forgotten, never reported to, or confused with, this cluster's.
//
// Thread safety: run() blocks until shutdown() is called from another thread (or a
// signal handler thread); nothing else is public.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "agent/client.h"
#include "agent/faults.h"
#include "agent/inventory.h"
#include "agent/launcher.h"
#include "agent/local_server.h"
#include "agent/reconciler.h"
#include "agent/telemetry.h"
#include "core/clock.h"
#include "core/topology.h"

namespace corral::agent {

struct AgentOptions {
  std::string server_url;  // corrald, or several replicas: "http://a:1,http://b:2"
  std::string join_token;
  std::string node;
  core::TopologyLabels labels;
  std::int64_t rack_power_cap_w = 0;
  std::string state_dir;
  std::string listen_host = "127.0.0.1";
  int listen_port = 0;
  std::int64_t heartbeat_ms = 2000;
  TelemetryOptions telemetry;
  std::string faults_path;     // default STATE_DIR/faults.json
  std::string supervisor_exe;  // this binary
  // Where the node's NVIDIA MPS control daemon listens (its CUDA_MPS_PIPE_DIRECTORY):
  // given to workers with a share of a GPU; empty: MPS's default, /tmp/nvidia-mps.
  std::string mps_pipe_dir;
};

class Agent {
 public:
  Agent(AgentOptions options, std::unique_ptr<Inventory> inventory, const core::Clock& clock);
  ~Agent();
  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;

  // Starts everything and serves until shutdown(). Fails early (a Status) when the
  // inventory, the listen address or the first join is refused for good.
  core::Status run();
  void shutdown();

  // The URL workers and corrald reach this agent at (valid once run() started serving).
  std::string agent_url() const;

 private:
  // The workers of one cluster: a launcher on its dir and the reconciler over it.
  struct ClusterScope {
    std::string cluster_id;  // empty: a leftover dir of an unknown cluster, only swept
    std::string dir;         // STATE_DIR/clusters/ID (STATE_DIR for the old layout)
    std::unique_ptr<Launcher> launcher;
    std::unique_ptr<Reconciler> reconciler;  // null for a leftover dir
    // The last assignments version of this cluster applied by poll_loop (protocol §3
    // appliedVersion): another cluster's versions say nothing about this one's.
    std::atomic<std::int64_t> applied_version{-1};
  };
  struct Session {
    std::string token;
    std::int64_t epoch = 0;
    std::string log_key;
    std::uint64_t generation = 0;  // bumped on every (re)join
    // The cluster joined. Before the first join: the one this state dir last joined (its
    // workers adopted), or none; the join keeps it only if the answer's id is the same.
    std::shared_ptr<ClusterScope> scope;
  };
  // A worker's checkpoint or run report, forwarded in the order workers sent them.
  struct PendingReport {
    std::string cluster_id;  // forwarded only while the agent is in this cluster
    std::int64_t epoch = 0;
    core::WorkerKey key;
    std::variant<core::CheckpointReport, core::RunReport> report;
    int tries = 0;
    std::int64_t next_try_ms = 0;
  };

  core::Status join_once();
  // A launcher on `dir` and, unless `leftover`, a reconciler that adopts its workers.
  std::shared_ptr<ClusterScope> open_scope(const std::string& cluster_id, const std::string& dir,
                                           bool leftover);
  // Left for good: its reconciler is closed, and sweep_retired() stops its workers.
  void retire(std::shared_ptr<ClusterScope> scope);
  // One sweep() pass over the retired scopes, dropping those done; true when none is left.
  bool sweep_retired();
  bool sweeping() const;
  // After a refusal seen under session `generation`: stop everything when fenced, then
  // join again (retrying until it works or the agent shuts down). Idempotent per
  // generation: the first thread to notice does it, the others wait.
  void rejoin(std::uint64_t generation, bool fenced);
  Session session() const;
  void poll_loop();
  void heartbeat_loop();
  void report_loop();
  // Queues a worker's report for report_loop() (LocalServer::Hooks::on_checkpoint).
  core::Status queue_report(const std::string& token,
                            std::variant<core::CheckpointReport, core::RunReport> report);
  // A worker's feature lookup, forwarded at once under the session it was asked in
  // (LocalServer::Hooks::on_feature_lookup).
  core::Result<LocalServer::Answer> forward_feature_lookup(
      const std::string& token, const core::FeatureLookupRequest& request);
  void telemetry_sample_loop();
  void telemetry_send_loop();
  // The inventory's faults overlay, as the faults file says now (simulated only; null when
  // there is none or the file does not parse).
  std::optional<Faults> current_faults();
  void trigger_heartbeat();
  bool sleep_ms(std::int64_t ms);  // false when shutting down
  void log(const std::string& line) const;

  AgentOptions options_;
  std::shared_ptr<ServerList> servers_;  // set by run(), from options_.server_url
  std::unique_ptr<Inventory> inventory_;
  std::mutex inventory_mu_;  // the heartbeat and the telemetry sampler both read it
  const core::Clock& clock_;
  NodeInventory discovered_;
  std::string agent_url_;
  // Whether the first join looked for other clusters' leftover dirs; join_once() only.
  bool leftovers_checked_ = false;

  std::mutex join_mu_;     // one rejoin at a time
  std::mutex sweep_mu_;    // one sweep at a time (Launcher needs it); taken before mu_
  mutable std::mutex mu_;  // guards everything below
  std::condition_variable cv_;
  bool stopping_ = false;
  bool heartbeat_due_ = false;
  Session session_;
  std::vector<std::shared_ptr<ClusterScope>> retired_;  // their workers still being stopped
  std::deque<PendingReport> reports_;
  TelemetryBuffer telemetry_;
  // Idle clients for workers' lookups: one per concurrent lookup, kept for reuse, since a
  // client serves one thread at a time.
  std::mutex lookup_mu_;
  std::vector<std::unique_ptr<CorraldClient>> lookup_clients_;

  std::unique_ptr<LocalServer> local_;  // last: its hooks use the members above
};

// Parses --labels "rack=r1,leaf=l1,...": the topology labels and rackPowerCapW.
// InvalidArgument("--labels") names the bad entry.
core::Status parse_labels(const std::string& text, core::TopologyLabels& labels,
                          std::int64_t& rack_power_cap_w);

}  // namespace corral::agent
