// The agent controller: what a node agent's join, heartbeat and checkpoint reports, and
// its workers' feature lookups, do to stored state (docs/agent-protocol.md §§1, 4, 5).
// The agent protocol's routes (agent_api.h) decode the wire types and call these inside
// one transaction each.
//
// An agent's claims are believed only once its epoch is known current: every report
// but the join is checked against the node's session first (core::fenced otherwise).
//
// Thread safety: free functions over the caller's Tx.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "core/agent_protocol.h"
#include "core/result.h"
#include "server/controllers/lifecycle.h"
#include "server/controllers/runs.h"
#include "store/store.h"

namespace corral::server {

// The node's agent session, with the caller's epoch checked against it: fenced when the
// node never joined, was lost, or `epoch` is not the current one.
core::Result<store::AgentSessionRow> current_session(store::AgentRepo& agents,
                                                     const std::string& node, std::int64_t epoch);

// What a join is given, minted by the caller outside the transaction.
struct JoinGrant {
  std::string token;    // the agent token (stored only as its hash)
  std::string log_key;  // the key corrald fetches this agent's logs with
  std::string joiner;   // the join token's principal id, for the audit entry
};

// Registers the node exactly as POST /v1/nodes would (keeping its admin state), records
// its rack's declared power cap and observed inventory, starts or resumes its session
// (the epoch moves only when the node was lost) and stores the agent token.
core::Result<core::JoinAnswer> join_node(store::Tx& tx, const LifecycleContext& ctx,
                                         const core::JoinRequest& request, const JoinGrant& grant);

// One heartbeat: the session's liveness, the GPUs' health (a critical fault drains the
// node), the workers' states (only those this node was given), then every job touched
// or holding GPUs here is reconciled (a stop may be confirmed by absence).
core::Status record_heartbeat(store::Tx& tx, const LifecycleContext& ctx, const std::string& node,
                              const core::Heartbeat& beat);

// A finished checkpoint of the job's current attempt on this node. Returns false when it
// was already recorded (a retry of the agent's forward); stale_attempt for an attempt
// that is not the job's current one.
core::Result<bool> record_checkpoint(store::Tx& tx, const LifecycleContext& ctx,
                                     const std::string& node,
                                     const core::WorkerCheckpoint& checkpoint);

// A worker's metric points and artifacts, for the job's current attempt on this node
// (as a checkpoint: stale_attempt otherwise). Points replace those at the same name and
// step; an artifact already recorded is not again. Each new artifact is a job event.
core::Result<RunReportTaken> record_worker_run_report(store::Tx& tx, const LifecycleContext& ctx,
                                                      const std::string& node,
                                                      const core::WorkerRunReport& report);

// A worker's point-in-time lookup, for the job's current attempt on this node (a run
// report's checks: fenced, stale_attempt, PermissionDenied), in a feature set version of
// the job's tenant (NotFound otherwise, as for a member of the tenant). Answers what the
// member endpoint answers (features.h) and adds the lookup to the run's features.
core::Result<nlohmann::json> lookup_worker_features(store::Tx& tx, const LifecycleContext& ctx,
                                                    const std::string& node,
                                                    const core::WorkerFeatureLookup& lookup);

}  // namespace corral::server
