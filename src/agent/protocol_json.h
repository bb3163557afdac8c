// The JSON bodies of the corrald ⇄ agent protocol (docs/agent-protocol.md), built and
// parsed in one place so the wire format has one definition on the agent side.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/inventory.h"
#include "agent/reconciler.h"
#include "agent/worker.h"
#include "core/result.h"
#include "core/topology.h"

namespace corral::agent {

// §1: the join body.
nlohmann::json join_body(const std::string& node, const std::string& agent_url,
                         const core::TopologyLabels& labels, std::int64_t rack_power_cap_w,
                         const NodeInventory& inventory);

struct JoinAnswer {
  std::string node;
  std::string token;
  std::int64_t epoch = 0;
  std::string log_key;
  std::string cluster_id;  // valid_cluster_id() holds
};
core::Result<JoinAnswer> parse_join_answer(const std::string& body);

// §2: the assignments answer.
struct Assignments {
  std::string node;
  std::int64_t epoch = 0;
  std::int64_t version = 0;
  std::vector<DesiredWorker> workers;
};
core::Result<Assignments> parse_assignments(const std::string& body);

// §3: the heartbeat body. `applied_version` is the last assignments version fully
// applied before `workers` was observed; negative (none yet) leaves it out.
nlohmann::json heartbeat_body(std::int64_t epoch, const std::string& agent_url,
                              const std::vector<GpuHealth>& gpus,
                              const std::vector<WorkerStatus>& workers,
                              std::int64_t applied_version = -1);

// §4: what a worker posts to the local agent.
struct CheckpointReport {
  std::int64_t step = 0;
  std::string path;
  std::int64_t bytes = 0;
  std::string checksum;
};
core::Result<CheckpointReport> parse_checkpoint_report(const std::string& body);

}  // namespace corral::agent
