// EmulatedFleet: `corral-agent --emulate N`, N nodes in one process for scale tests
// (docs/agent.md#the-fleet-emulator). Each node joins with its own token and epoch, keeps
// its own session, long-polls its assignments, heartbeats its GPUs' health and its
// workers, reports checkpoints and sends telemetry through the real agent's client
// (client.h) and wire contract; its workers are timers (timer_runner.h) under the real
// agent's Reconciler, and its GPUs a simulated inventory: a preset's, or with a fleet
// file the shape of one of its nodes (`--fleet`). What it leaves out is what runs on a
// real node only: processes, logs, the local server for workers.
//
// Threads: one per node for its long poll (a blocking call, as a real agent's), and a
// few senders that share the nodes between them (node i on sender i % threads) for
// heartbeats, checkpoints and telemetry, each node on its own connection; one that joins
// again the nodes whose heartbeats were refused (fenced, or a token corrald lost), so a
// sender never waits on one node's join; and one that watches STATE_DIR/down/ (a file named after a
// node takes it down for good: it stops answering, as a machine that lost power).
//
// Injected faults: STATE_DIR/faults/NODE.json, the real agent's faults file (faults.h).
//
// Thread safety: run() blocks until shutdown() is called from another thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "agent/telemetry.h"
#include "core/clock.h"
#include "core/fleet_pools.h"
#include "core/status.h"
#include "core/topology.h"

namespace corral::agent {

struct EmulatorOptions {
  std::string server_url;  // corrald, or several replicas: "http://a:1,http://b:2"
  std::string join_token;
  std::string prefix;      // nodes PREFIX1 ... PREFIXN
  std::int32_t count = 0;  // N; with `fleet`, 0 is every node of the fleet
  // Either `preset`, every node's shape (--simulate), with its topology below, or
  // `fleet`, a simulator fleet file (--fleet): node i has the shape and the topology
  // labels of the fleet's i-th node in id order (core/fleet_pools.h), and its rack's
  // power cap.
  std::string preset;
  std::string fleet;
  // With `preset`: region and cluster for every node; spine, leaf and rack are numbered
  // from the node's position: nodes_per_leaf to a leaf switch, leaves_per_spine to a
  // spine, nodes_per_rack to a rack (an NVLink rack's trays to one rack).
  core::TopologyLabels labels;
  std::int32_t nodes_per_leaf = 32;
  std::int32_t leaves_per_spine = 8;
  std::int32_t nodes_per_rack = 4;
  std::string state_dir;  // faults/ and down/
  std::int64_t heartbeat_ms = 2000;
  TelemetryOptions telemetry;
  std::int32_t threads = 0;  // senders; 0: one per 16 nodes, at least 4
};

class EmulatedFleet {
 public:
  EmulatedFleet(EmulatorOptions options, const core::Clock& clock);
  ~EmulatedFleet();
  EmulatedFleet(const EmulatedFleet&) = delete;
  EmulatedFleet& operator=(const EmulatedFleet&) = delete;

  // Builds the nodes and runs them until shutdown(). InvalidArgument for a bad preset or
  // fleet file, or a count the fleet file has not that many nodes for.
  core::Status run();
  void shutdown();

 private:
  struct Node;
  struct Sender;

  // Gives node `i` its inventory (and what it discovers), labels and rack power cap: from the fleet
  // file when `fleet` is given, else from the preset and the node's position.
  core::Status shape_node(Node& node, std::int32_t i, const core::FleetPools* fleet);
  core::Status join(Node& node);
  // As the real agent's: one thread rejoins per generation; fenced stops every worker.
  void rejoin(Node& node, std::uint64_t generation, bool fenced);
  void poll_loop(Node& node);
  void send_loop(std::size_t sender);
  void service(Node& node, std::int64_t now_ms);
  void watch_down_loop();
  // Rejoins the nodes whose heartbeats or reports were refused, one at a time.
  void rejoin_loop();
  void trigger(Node& node);
  // Wakes every sender and cancels every long poll, so they see stopping_.
  void wake_all();
  void note_heartbeat(std::int64_t rtt_ms, std::int64_t gap_ms);
  void stats_loop();
  bool sleep_ms(std::int64_t ms);  // false when shutting down
  bool stopping() const;
  void log(const std::string& line) const;

  EmulatorOptions options_;
  const core::Clock& clock_;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<std::unique_ptr<Sender>> senders_;
  mutable std::mutex mu_;  // stopping_ and the stats below
  std::condition_variable cv_;
  bool stopping_ = false;
  struct Rejoin {
    Node* node = nullptr;
    std::uint64_t generation = 0;  // the session the refusal was seen under
    bool fenced = false;
  };
  std::deque<Rejoin> rejoins_;      // for rejoin_loop()
  std::vector<std::int64_t> rtts_;  // heartbeat round trips since the last stats line
  std::int64_t max_gap_ms_ = 0;     // the longest time a node went without an answer
  std::int64_t failed_heartbeats_ = 0;
};

}  // namespace corral::agent
