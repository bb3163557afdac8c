// AgentRepo over SQL: agent_sessions (with their fencing epochs), workers as reported,
// and the cluster identity.
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "store/internal/sql_rows.h"
#include "store/internal/sql_tx.h"

namespace corral::store::detail {
namespace {

using core::Result;
using core::Status;

constexpr std::string_view kSessionColumns =
    "node, epoch, agent_url, log_key, joined_at, heartbeat_at, lost";
constexpr std::string_view kWorkerColumns =
    "job_id, attempt, rank, node, pid, state, exit_code, signal, started_at, exited_at";

// 128 random bits as 32 lowercase hex digits.
std::string random_hex_id() {
  std::random_device rd;
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (int word = 0; word < 4; ++word) {
    std::uint32_t bits = rd();
    for (int i = 0; i < 8; ++i, bits >>= 4) out += kHex[bits & 15];
  }
  return out;
}

}  // namespace

Status SqlTx::upsert_agent_session(const AgentSessionRow& s) {
  return q("INSERT INTO agent_sessions (node, epoch, agent_url, log_key, joined_at, "
           "heartbeat_at, lost) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (node) DO "
           "UPDATE SET epoch = excluded.epoch, agent_url = excluded.agent_url, log_key = "
           "excluded.log_key, joined_at = excluded.joined_at, heartbeat_at = "
           "excluded.heartbeat_at, lost = excluded.lost",
           {s.node.value, s.epoch, s.agent_url, s.log_key, ms(s.joined_at), ms(s.heartbeat_at),
            std::int64_t{s.lost ? 1 : 0}})
      .status();
}

Result<std::vector<AgentSessionRow>> SqlTx::sessions(std::string_view where,
                                                     std::vector<SqlValue> params) {
  CORRAL_ASSIGN_OR_RETURN(auto res, q(cat("SELECT ", kSessionColumns,
                                          cat(" FROM agent_sessions ", where, " ORDER BY node")),
                                      std::move(params)));
  return read_rows<AgentSessionRow>(res, "agent_sessions", kSessionColumns, [](RowReader& in) {
    return AgentSessionRow{.node = core::NodeId(in.str(0)),
                           .epoch = in.i64(1),
                           .agent_url = in.str(2),
                           .log_key = in.str(3),
                           .joined_at = in.time(4),
                           .heartbeat_at = in.time(5),
                           .lost = in.flag(6)};
  });
}

Result<std::optional<AgentSessionRow>> SqlTx::get_agent_session(const core::NodeId& node) {
  CORRAL_ASSIGN_OR_RETURN(auto rows, sessions("WHERE node = $1", {node.value}));
  return first_row(std::move(rows));
}

Result<std::vector<AgentSessionRow>> SqlTx::list_agent_sessions() { return sessions("", {}); }

Status SqlTx::upsert_worker(const WorkerRow& w) {
  return q("INSERT INTO workers (job_id, attempt, rank, node, pid, state, exit_code, signal, "
           "started_at, exited_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) "
           "ON CONFLICT (job_id, attempt, rank) DO UPDATE SET node = excluded.node, pid = "
           "excluded.pid, state = excluded.state, exit_code = excluded.exit_code, signal = "
           "excluded.signal, started_at = excluded.started_at, exited_at = excluded.exited_at",
           {w.job.value, std::int64_t{w.attempt}, std::int64_t{w.rank}, w.node.value, w.pid,
            std::string(core::to_string(w.state)), std::int64_t{w.exit_code},
            std::int64_t{w.signal}, ms(w.started_at), ms(w.exited_at)})
      .status();
}

Result<std::vector<WorkerRow>> SqlTx::workers(std::string_view where,
                                              std::vector<SqlValue> params) {
  CORRAL_ASSIGN_OR_RETURN(auto res,
                          q(cat("SELECT ", kWorkerColumns,
                                cat(" FROM workers ", where, " ORDER BY job_id, attempt, rank")),
                            std::move(params)));
  return read_rows<WorkerRow>(res, "workers", kWorkerColumns, [](RowReader& in) {
    return WorkerRow{.job = core::JobId(in.i64(0)),
                     .attempt = in.i32(1),
                     .rank = in.i32(2),
                     .node = core::NodeId(in.str(3)),
                     .pid = in.i64(4),
                     .state = in.worker_state(5),
                     .exit_code = in.i32(6),
                     .signal = in.i32(7),
                     .started_at = in.time(8),
                     .exited_at = in.time(9)};
  });
}

Result<std::vector<WorkerRow>> SqlTx::list_workers(core::JobId job) {
  return workers("WHERE job_id = $1", {job.value});
}

Result<std::vector<WorkerRow>> SqlTx::list_workers_on(const core::NodeId& node,
                                                      const std::vector<core::JobId>& jobs) {
  std::vector<WorkerRow> out;
  for (IdChunk& chunk : id_chunks(jobs)) {
    // The node is the chunk's last parameter: $1.. are its ids.
    chunk.params.emplace_back(node.value);
    // Built before the call: its parameters may be moved before its text is made.
    const std::string where = cat("WHERE job_id IN ", chunk.list,
                                  cat(" AND node = $", std::to_string(chunk.params.size())));
    CORRAL_ASSIGN_OR_RETURN(auto rows, workers(where, std::move(chunk.params)));
    for (auto& row : rows) out.push_back(std::move(row));
  }
  return out;
}

Result<std::string> SqlTx::cluster_id() {
  constexpr std::string_view kRead = "SELECT cluster_id FROM cluster_identity WHERE singleton = 1";
  CORRAL_ASSIGN_OR_RETURN(auto res, q(kRead, {}));
  if (!res.rows.empty()) return res.rows[0][0].value_or("");
  // The store's first call. A concurrent first call (another corrald on the same
  // PostgreSQL) may insert first: then ours does nothing and both read its id back.
  CORRAL_RETURN_IF_ERROR(q("INSERT INTO cluster_identity (singleton, cluster_id) VALUES (1, $1) "
                           "ON CONFLICT (singleton) DO NOTHING",
                           {random_hex_id()})
                             .status());
  CORRAL_ASSIGN_OR_RETURN(res, q(kRead, {}));
  if (res.rows.size() != 1) return core::internal_error("cluster_id: no row after insert");
  return res.rows[0][0].value_or("");
}

}  // namespace corral::store::detail
