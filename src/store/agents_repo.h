// AgentRepo: node agents as corrald knows them (observed state, docs/agent-protocol.md):
// their sessions with the fencing epoch, the worker processes they report, and the
// cluster identity they are told at join. Written when agents join and report, and by
// the node-health controller when it fences a lost node.
//
// One of the repositories store::Tx is made of (store.h).
// Thread safety: as Tx (used only by the thread running the transaction, only during it).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/agent_protocol.h"
#include "core/ids.h"
#include "core/result.h"
#include "core/status.h"
#include "core/time.h"

namespace corral::store {

// A node's agent as corrald knows it. Written by corrald when the agent joins or
// heartbeats and by the node-health controller when it declares the node lost (epoch + 1,
// lost = true), which fences every later report of that agent.
struct AgentSessionRow {
  core::NodeId node;
  std::int64_t epoch = 1;
  std::string agent_url;
  std::string log_key;  // secret; never returned by an API read
  core::Time joined_at;
  core::Time heartbeat_at;
  bool lost = false;
};

// One worker process as its agent reported it (observed state).
struct WorkerRow {
  core::JobId job;
  std::int32_t attempt = 0;
  std::int32_t rank = 0;
  core::NodeId node;
  std::int64_t pid = 0;
  core::WorkerStatus::State state = core::WorkerStatus::State::kRunning;
  std::int32_t exit_code = 0;
  std::int32_t signal = 0;
  core::Time started_at;
  core::Time exited_at;
};

class AgentRepo {
 public:
  virtual ~AgentRepo() = default;

  virtual core::Status upsert_agent_session(const AgentSessionRow& row) = 0;
  virtual core::Result<std::optional<AgentSessionRow>> get_agent_session(
      const core::NodeId& node) = 0;
  virtual core::Result<std::vector<AgentSessionRow>> list_agent_sessions() = 0;  // by node
  virtual core::Status upsert_worker(const WorkerRow& row) = 0;
  // Every reported worker of `job`, by (attempt, rank).
  virtual core::Result<std::vector<WorkerRow>> list_workers(core::JobId job) = 0;
  // The workers `node` reported of `jobs`, by (job, attempt, rank): one read for a
  // heartbeat, whatever the size of its jobs' gangs.
  virtual core::Result<std::vector<WorkerRow>> list_workers_on(
      const core::NodeId& node, const std::vector<core::JobId>& jobs) = 0;

  // The cluster's identity (migration 6): 32 lowercase hex digits, random, made by the
  // first call on a store and the same for every later call, reopen and replica (two
  // first calls at once agree on one). It scopes what agents keep on their nodes.
  virtual core::Result<std::string> cluster_id() = 0;
};

}  // namespace corral::store
