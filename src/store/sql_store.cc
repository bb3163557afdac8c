// The Store over SQL: every query and row mapping, written once for both databases.
// The drivers (sqlite/, postgres/) differ only in how they connect and run a statement.
#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <mutex>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "store/internal/sql.h"
#include "store/store.h"

namespace corral::store::detail {
namespace {

using core::Result;
using core::Status;
using core::StatusCode;

std::int64_t as_int(const std::optional<std::string>& v) {
  if (!v || v->empty()) return 0;
  return std::stoll(*v);
}
std::string as_str(const std::optional<std::string>& v) { return v.value_or(""); }
core::Time as_time(const std::optional<std::string>& v) { return core::time_from_ms(as_int(v)); }
std::int64_t ms(core::Time t) { return core::to_ms(t); }

core::NodeAdminState admin_from(std::string_view s) {
  if (s == "cordoned") return core::NodeAdminState::kCordoned;
  if (s == "draining") return core::NodeAdminState::kDraining;
  return core::NodeAdminState::kActive;
}

constexpr std::string_view kJobColumns =
    "id, tenant, name, priority_class, tier, gpus, spec_json, phase, attempt, reason, "
    "pending_kind, queue_position, created_at, updated_at, queued_at, restarts, not_before, "
    "preemptions, attained_gpu_ms, stop_grace_ms, planned_start_ms, planned_latest_ms";

JobRow job_from(const SqlRow& r) {
  JobRow j;
  j.id = core::JobId(as_int(r[0]));
  j.tenant = core::TenantId(as_str(r[1]));
  j.name = as_str(r[2]);
  j.priority_class = as_str(r[3]);
  j.tier = static_cast<std::int32_t>(as_int(r[4]));
  j.gpus = static_cast<std::int32_t>(as_int(r[5]));
  j.spec_json = as_str(r[6]);
  j.phase = core::job_phase_from_string(as_str(r[7])).value_or(core::JobPhase::kFailed);
  j.attempt = static_cast<std::int32_t>(as_int(r[8]));
  j.reason = as_str(r[9]);
  j.pending_kind = as_str(r[10]);
  j.queue_position = static_cast<std::int32_t>(as_int(r[11]));
  j.created_at = as_time(r[12]);
  j.updated_at = as_time(r[13]);
  j.queued_at = as_time(r[14]);
  j.restarts = static_cast<std::int32_t>(as_int(r[15]));
  j.not_before = as_time(r[16]);
  j.preemptions = static_cast<std::int32_t>(as_int(r[17]));
  j.attained_gpu_ms = as_int(r[18]);
  j.stop_grace_ms = as_int(r[19]);
  j.planned_start = as_time(r[20]);
  j.planned_latest = as_time(r[21]);
  return j;
}

constexpr std::string_view kAllocColumns =
    "id, job_id, attempt, node, gpu_index, gpu_type, epoch, active, borrowed, created_at, "
    "released_at";

AllocationRow alloc_from(const SqlRow& r) {
  AllocationRow a;
  a.id = as_int(r[0]);
  a.job = core::JobId(as_int(r[1]));
  a.attempt = static_cast<std::int32_t>(as_int(r[2]));
  a.node = core::NodeId(as_str(r[3]));
  a.gpu_index = static_cast<std::int32_t>(as_int(r[4]));
  a.gpu_type = core::GpuTypeId(as_str(r[5]));
  a.epoch = as_int(r[6]);
  a.active = as_int(r[7]) != 0;
  a.borrowed = as_int(r[8]) != 0;
  a.created_at = as_time(r[9]);
  if (r[10]) a.released_at = as_time(r[10]);
  return a;
}

core::Checkpoint checkpoint_from(const SqlRow& r) {
  return core::Checkpoint{.job = core::JobId(as_int(r[0])),
                          .attempt = static_cast<std::int32_t>(as_int(r[1])),
                          .step = as_int(r[2]),
                          .uri = as_str(r[3]),
                          .bytes = as_int(r[4]),
                          .checksum = as_str(r[5]),
                          .time = as_time(r[6])};
}

// node, inventory_json, heartbeat_at
InventoryRow inventory_from(const SqlRow& r) {
  return {.node = core::NodeId(as_str(r[0])),
          .inventory_json = as_str(r[1]),
          .heartbeat_at = as_time(r[2])};
}

constexpr std::string_view kAuditColumns =
    "seq, time, actor, action, target, before_summary, after_summary, request_id, prev_hash, "
    "hash";

AuditRow audit_from(const SqlRow& r) {
  return AuditRow{.seq = as_int(r[0]),
                  .time = as_time(r[1]),
                  .actor = as_str(r[2]),
                  .action = as_str(r[3]),
                  .target = as_str(r[4]),
                  .before = as_str(r[5]),
                  .after = as_str(r[6]),
                  .request_id = as_str(r[7]),
                  .prev_hash = as_str(r[8]),
                  .hash = as_str(r[9])};
}

std::string cat(std::string_view a, std::string_view b, std::string_view c = {}) {
  std::string s(a);
  s += b;
  s += c;
  return s;
}

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

class SqlTx final : public Tx {
 public:
  explicit SqlTx(SqlConn& conn) : conn_(conn) {}

  Result<JobRow> insert_job(const NewJob& job) override {
    CORRAL_ASSIGN_OR_RETURN(
        auto res,
        q(cat("INSERT INTO jobs (tenant, name, priority_class, tier, gpus, spec_json, phase, "
              "attempt, reason, pending_kind, queue_position, created_at, updated_at, queued_at) "
              "VALUES ($1, $2, $3, $4, $5, $6, 'pending', 0, '', '', 0, $7, $7, $7) RETURNING ",
              kJobColumns),
          {job.tenant.value, job.name, job.priority_class, std::int64_t{job.tier},
           std::int64_t{job.gpus}, job.spec_json, ms(job.now)}));
    if (res.rows.size() != 1) return core::internal_error("insert_job: no row returned");
    JobRow row = job_from(res.rows[0]);
    CORRAL_RETURN_IF_ERROR(add_pending(job.tenant, 1));
    CORRAL_RETURN_IF_ERROR(q("INSERT INTO job_secrets (job_id, secret_env_json) VALUES ($1, $2)",
                             {row.id.value, job.secret_env_json})
                               .status());
    return row;
  }

  Result<std::optional<JobRow>> get_job(core::JobId id) override {
    CORRAL_ASSIGN_OR_RETURN(auto res,
                            q(cat("SELECT ", kJobColumns, " FROM jobs WHERE id = $1"), {id.value}));
    if (res.rows.empty()) return std::optional<JobRow>();
    return std::optional<JobRow>(job_from(res.rows[0]));
  }

  Result<std::vector<JobRow>> list_jobs(const JobFilter& filter) override {
    std::string sql = cat("SELECT ", kJobColumns, " FROM jobs WHERE id > $1");
    std::vector<SqlValue> params{filter.after_id};
    if (filter.tenant) {
      params.emplace_back(filter.tenant->value);
      sql += " AND tenant = $" + std::to_string(params.size());
    }
    if (!filter.phases.empty()) {
      sql += " AND phase IN (";
      for (std::size_t i = 0; i < filter.phases.size(); ++i) {
        params.emplace_back(std::string(core::to_string(filter.phases[i])));
        sql += (i == 0 ? "$" : ", $") + std::to_string(params.size());
      }
      sql += ")";
    }
    params.emplace_back(std::int64_t{filter.limit});
    sql += " ORDER BY id LIMIT $" + std::to_string(params.size());
    CORRAL_ASSIGN_OR_RETURN(auto res, conn_.query(sql, params));
    std::vector<JobRow> out;
    out.reserve(res.rows.size());
    for (const auto& r : res.rows) out.push_back(job_from(r));
    return out;
  }

  Result<std::vector<JobRow>> list_jobs_holding_gpus() override {
    CORRAL_ASSIGN_OR_RETURN(auto res,
                            q(cat("SELECT ", kJobColumns,
                                  " FROM jobs WHERE id IN (SELECT DISTINCT job_id FROM allocations "
                                  "WHERE active = 1) ORDER BY id"),
                              {}));
    std::vector<JobRow> out;
    out.reserve(res.rows.size());
    for (const auto& r : res.rows) out.push_back(job_from(r));
    return out;
  }

  // attained_gpu_ms is the store's own bookkeeping (release_allocations adds to it), so a
  // caller's stale copy never overwrites it.
  Result<bool> update_job(const JobRow& row, core::JobPhase expected) override {
    CORRAL_ASSIGN_OR_RETURN(
        auto res,
        q("UPDATE jobs SET phase = $1, attempt = $2, reason = $3, pending_kind = $4, "
          "queue_position = $5, updated_at = $6, queued_at = $7, restarts = $10, "
          "not_before = $11, preemptions = $12, stop_grace_ms = $13, planned_start_ms = $14, "
          "planned_latest_ms = $15 WHERE id = $8 AND phase = $9",
          {std::string(core::to_string(row.phase)), std::int64_t{row.attempt}, row.reason,
           row.pending_kind, std::int64_t{row.queue_position}, ms(row.updated_at),
           ms(row.queued_at), row.id.value, std::string(core::to_string(expected)),
           std::int64_t{row.restarts}, ms(row.not_before), std::int64_t{row.preemptions},
           row.stop_grace_ms, ms(row.planned_start), ms(row.planned_latest)}));
    if (res.affected != 1) return false;
    const bool was = expected == core::JobPhase::kPending;
    const bool is = row.phase == core::JobPhase::kPending;
    if (was != is) CORRAL_RETURN_IF_ERROR(add_pending(row.tenant, is ? 1 : -1));
    return true;
  }

  Result<std::string> get_job_secrets(core::JobId id) override {
    CORRAL_ASSIGN_OR_RETURN(
        auto res, q("SELECT secret_env_json FROM job_secrets WHERE job_id = $1", {id.value}));
    if (res.rows.empty()) return core::not_found("job " + std::to_string(id.value));
    return as_str(res.rows[0][0]);
  }

  Result<std::int64_t> count_pending_jobs(const core::TenantId& tenant) override {
    CORRAL_ASSIGN_OR_RETURN(
        auto res, q("SELECT pending FROM tenant_pending WHERE tenant = $1", {tenant.value}));
    return res.rows.empty() ? 0 : as_int(res.rows[0][0]);
  }

  Status append_job_event(const JobEventRow& e) override {
    return q("INSERT INTO job_events (job_id, time, kind, message) VALUES ($1, $2, $3, $4)",
             {e.job.value, ms(e.time), e.kind, e.message})
        .status();
  }

  Result<std::vector<JobEventRow>> list_job_events(core::JobId job) override {
    CORRAL_ASSIGN_OR_RETURN(auto res, q("SELECT id, job_id, time, kind, message FROM job_events "
                                        "WHERE job_id = $1 ORDER BY id",
                                        {job.value}));
    std::vector<JobEventRow> out;
    for (const auto& r : res.rows) {
      out.push_back({.id = as_int(r[0]),
                     .job = core::JobId(as_int(r[1])),
                     .time = as_time(r[2]),
                     .kind = as_str(r[3]),
                     .message = as_str(r[4])});
    }
    return out;
  }

  Status insert_allocation(const AllocationRow& a) override {
    auto res =
        q("INSERT INTO allocations (job_id, attempt, node, gpu_index, gpu_type, epoch, "
          "active, borrowed, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
          {a.job.value, std::int64_t{a.attempt}, a.node.value, std::int64_t{a.gpu_index},
           a.gpu_type.value, a.epoch, std::int64_t{a.active ? 1 : 0},
           std::int64_t{a.borrowed ? 1 : 0}, ms(a.created_at)});
    if (res.status().code() == StatusCode::kAlreadyExists) {
      return Status(StatusCode::kAlreadyExists, "gpu " + a.node.value + "/" +
                                                    std::to_string(a.gpu_index) +
                                                    " already has an active allocation");
    }
    return res.status();
  }

  Result<std::int64_t> release_allocations(core::JobId job, core::Time now) override {
    CORRAL_RETURN_IF_ERROR(q("UPDATE jobs SET attained_gpu_ms = attained_gpu_ms + (SELECT "
                             "COALESCE(SUM($1 - created_at), 0) FROM allocations WHERE job_id = "
                             "$2 AND active = 1) WHERE id = $2",
                             {ms(now), job.value})
                               .status());
    CORRAL_ASSIGN_OR_RETURN(auto res, q("UPDATE allocations SET active = 0, released_at = $1 "
                                        "WHERE job_id = $2 AND active = 1",
                                        {ms(now), job.value}));
    return res.affected;
  }

  Result<std::vector<AllocationRow>> list_active_allocations() override {
    return allocs(cat("SELECT ", kAllocColumns,
                      " FROM allocations WHERE active = 1 ORDER BY node, gpu_index"),
                  {});
  }

  Result<std::vector<AllocationRow>> list_allocations(core::JobId job) override {
    return allocs(cat("SELECT ", kAllocColumns, " FROM allocations WHERE job_id = $1 ORDER BY id"),
                  {job.value});
  }

  Result<std::vector<AllocationRow>> list_active_allocations_on(const core::NodeId& node) override {
    return allocs(cat("SELECT ", kAllocColumns,
                      " FROM allocations WHERE node = $1 AND active = 1 ORDER BY gpu_index"),
                  {node.value});
  }

  Result<std::int64_t> release_allocations_on(const core::NodeId& node, core::Time now) override {
    CORRAL_RETURN_IF_ERROR(
        q("UPDATE jobs SET attained_gpu_ms = attained_gpu_ms + (SELECT COALESCE(SUM($1 - "
          "created_at), 0) FROM allocations WHERE job_id = jobs.id AND node = $2 AND active = 1) "
          "WHERE id IN (SELECT job_id FROM allocations WHERE node = $2 AND active = 1)",
          {ms(now), node.value})
            .status());
    CORRAL_ASSIGN_OR_RETURN(auto res, q("UPDATE allocations SET active = 0, released_at = $1 "
                                        "WHERE node = $2 AND active = 1",
                                        {ms(now), node.value}));
    return res.affected;
  }

  Status upsert_agent_session(const AgentSessionRow& s) override {
    return q("INSERT INTO agent_sessions (node, epoch, agent_url, log_key, joined_at, "
             "heartbeat_at, lost) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (node) DO "
             "UPDATE SET epoch = excluded.epoch, agent_url = excluded.agent_url, log_key = "
             "excluded.log_key, joined_at = excluded.joined_at, heartbeat_at = "
             "excluded.heartbeat_at, lost = excluded.lost",
             {s.node.value, s.epoch, s.agent_url, s.log_key, ms(s.joined_at), ms(s.heartbeat_at),
              std::int64_t{s.lost ? 1 : 0}})
        .status();
  }

  Result<std::optional<AgentSessionRow>> get_agent_session(const core::NodeId& node) override {
    CORRAL_ASSIGN_OR_RETURN(auto rows, sessions("WHERE node = $1", {node.value}));
    if (rows.empty()) return std::optional<AgentSessionRow>();
    return std::optional<AgentSessionRow>(std::move(rows[0]));
  }

  Result<std::vector<AgentSessionRow>> list_agent_sessions() override { return sessions("", {}); }

  Status upsert_worker(const WorkerRow& w) override {
    return q("INSERT INTO workers (job_id, attempt, rank, node, pid, state, exit_code, signal, "
             "started_at, exited_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) "
             "ON CONFLICT (job_id, attempt, rank) DO UPDATE SET node = excluded.node, pid = "
             "excluded.pid, state = excluded.state, exit_code = excluded.exit_code, signal = "
             "excluded.signal, started_at = excluded.started_at, exited_at = excluded.exited_at",
             {w.job.value, std::int64_t{w.attempt}, std::int64_t{w.rank}, w.node.value, w.pid,
              w.state, std::int64_t{w.exit_code}, std::int64_t{w.signal}, ms(w.started_at),
              ms(w.exited_at)})
        .status();
  }

  Result<std::vector<WorkerRow>> list_workers(core::JobId job) override {
    CORRAL_ASSIGN_OR_RETURN(auto res, q("SELECT job_id, attempt, rank, node, pid, state, "
                                        "exit_code, signal, started_at, exited_at FROM workers "
                                        "WHERE job_id = $1 ORDER BY attempt, rank",
                                        {job.value}));
    std::vector<WorkerRow> out;
    for (const auto& r : res.rows) {
      out.push_back({.job = core::JobId(as_int(r[0])),
                     .attempt = static_cast<std::int32_t>(as_int(r[1])),
                     .rank = static_cast<std::int32_t>(as_int(r[2])),
                     .node = core::NodeId(as_str(r[3])),
                     .pid = as_int(r[4]),
                     .state = as_str(r[5]),
                     .exit_code = static_cast<std::int32_t>(as_int(r[6])),
                     .signal = static_cast<std::int32_t>(as_int(r[7])),
                     .started_at = as_time(r[8]),
                     .exited_at = as_time(r[9])});
    }
    return out;
  }

  Status upsert_node(const NodeRow& n) override {
    return q("INSERT INTO nodes (name, spec_json, admin, created_at, updated_at, admin_reason) "
             "VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (name) DO UPDATE SET "
             "spec_json = excluded.spec_json, admin = excluded.admin, "
             "updated_at = excluded.updated_at, admin_reason = excluded.admin_reason",
             {n.id.value, n.spec_json, std::string(core::to_string(n.admin)), ms(n.created_at),
              ms(n.updated_at), n.admin_reason})
        .status();
  }

  Result<std::optional<NodeRow>> get_node(const core::NodeId& id) override {
    CORRAL_ASSIGN_OR_RETURN(auto rows, nodes("WHERE name = $1", {id.value}));
    if (rows.empty()) return std::optional<NodeRow>();
    return std::optional<NodeRow>(std::move(rows[0]));
  }

  Result<std::vector<NodeRow>> list_nodes() override { return nodes("", {}); }

  Status upsert_inventory(const InventoryRow& row) override {
    return q("INSERT INTO node_inventory (node, inventory_json, heartbeat_at) VALUES ($1, $2, $3) "
             "ON CONFLICT (node) DO UPDATE SET inventory_json = excluded.inventory_json, "
             "heartbeat_at = excluded.heartbeat_at",
             {row.node.value, row.inventory_json, ms(row.heartbeat_at)})
        .status();
  }

  Result<std::vector<InventoryRow>> list_inventory() override {
    CORRAL_ASSIGN_OR_RETURN(
        auto res,
        q("SELECT node, inventory_json, heartbeat_at FROM node_inventory ORDER BY node", {}));
    std::vector<InventoryRow> out;
    out.reserve(res.rows.size());
    for (const auto& r : res.rows) out.push_back(inventory_from(r));
    return out;
  }

  Status put_rack_cap(const RackCapRow& row) override {
    return q("INSERT INTO rack_caps (rack, declared_by, power_cap_watts, updated_at) VALUES ($1, "
             "$2, $3, $4) ON CONFLICT (rack, declared_by) DO UPDATE SET power_cap_watts = "
             "excluded.power_cap_watts, updated_at = excluded.updated_at",
             {row.rack, row.declared_by, row.power_cap_watts, ms(row.updated_at)})
        .status();
  }

  Status delete_rack_caps(std::string_view declared_by) override {
    return q("DELETE FROM rack_caps WHERE declared_by = $1", {std::string(declared_by)}).status();
  }

  Result<std::vector<RackCapRow>> list_rack_caps() override {
    CORRAL_ASSIGN_OR_RETURN(auto res, q("SELECT rack, declared_by, power_cap_watts, updated_at "
                                        "FROM rack_caps ORDER BY rack, declared_by",
                                        {}));
    std::vector<RackCapRow> out;
    for (const auto& r : res.rows) {
      out.push_back({.rack = as_str(r[0]),
                     .declared_by = as_str(r[1]),
                     .power_cap_watts = as_int(r[2]),
                     .updated_at = as_time(r[3])});
    }
    return out;
  }

  Result<std::optional<InventoryRow>> get_inventory(const core::NodeId& id) override {
    CORRAL_ASSIGN_OR_RETURN(auto res, q("SELECT node, inventory_json, heartbeat_at FROM "
                                        "node_inventory WHERE node = $1",
                                        {id.value}));
    if (res.rows.empty()) return std::optional<InventoryRow>();
    return std::optional<InventoryRow>(inventory_from(res.rows[0]));
  }

  Status put_tenant(const TenantRow& t) override {
    return q("INSERT INTO tenants (name, config_json, updated_at) VALUES ($1, $2, $3) "
             "ON CONFLICT (name) DO UPDATE SET config_json = excluded.config_json, "
             "updated_at = excluded.updated_at",
             {t.id.value, t.config_json, ms(t.updated_at)})
        .status();
  }

  Result<std::optional<TenantRow>> get_tenant(const core::TenantId& id) override {
    CORRAL_ASSIGN_OR_RETURN(auto rows, tenants("WHERE name = $1", {id.value}));
    if (rows.empty()) return std::optional<TenantRow>();
    return std::optional<TenantRow>(std::move(rows[0]));
  }

  Result<std::vector<TenantRow>> list_tenants() override { return tenants("", {}); }

  Status insert_reservation(const ReservationRow& r) override {
    return q("INSERT INTO reservations (id, tenant, spec_json, created_at) VALUES ($1, $2, $3, "
             "$4)",
             {r.id.value, r.tenant.value, r.spec_json, ms(r.created_at)})
        .status();
  }

  Result<std::vector<ReservationRow>> list_reservations() override {
    CORRAL_ASSIGN_OR_RETURN(
        auto res, q("SELECT id, tenant, spec_json, created_at FROM reservations ORDER BY id", {}));
    std::vector<ReservationRow> out;
    for (const auto& r : res.rows) {
      out.push_back({.id = core::ReservationId(as_str(r[0])),
                     .tenant = core::TenantId(as_str(r[1])),
                     .spec_json = as_str(r[2]),
                     .created_at = as_time(r[3])});
    }
    return out;
  }

  Status insert_checkpoint(const core::Checkpoint& c) override {
    return q("INSERT INTO checkpoints (job_id, attempt, step, uri, bytes, checksum, time) "
             "VALUES ($1, $2, $3, $4, $5, $6, $7)",
             {c.job.value, std::int64_t{c.attempt}, c.step, c.uri, c.bytes, c.checksum, ms(c.time)})
        .status();
  }

  Result<std::vector<core::Checkpoint>> list_checkpoints(core::JobId job) override {
    CORRAL_ASSIGN_OR_RETURN(auto res, q("SELECT job_id, attempt, step, uri, bytes, checksum, time "
                                        "FROM checkpoints WHERE job_id = $1 ORDER BY time, id",
                                        {job.value}));
    std::vector<core::Checkpoint> out;
    for (const auto& r : res.rows) out.push_back(checkpoint_from(r));
    return out;
  }

  Result<std::optional<core::Checkpoint>> latest_checkpoint(core::JobId job) override {
    CORRAL_ASSIGN_OR_RETURN(auto res, q("SELECT job_id, attempt, step, uri, bytes, checksum, time "
                                        "FROM checkpoints WHERE job_id = $1 "
                                        "ORDER BY time DESC, id DESC LIMIT 1",
                                        {job.value}));
    if (res.rows.empty()) return std::optional<core::Checkpoint>();
    return std::optional<core::Checkpoint>(checkpoint_from(res.rows[0]));
  }

  Result<std::vector<CheckpointTimeRow>> list_holders_checkpoint_times() override {
    CORRAL_ASSIGN_OR_RETURN(auto res, q("SELECT job_id, MAX(time) FROM checkpoints WHERE job_id IN "
                                        "(SELECT DISTINCT job_id FROM allocations WHERE active = "
                                        "1) GROUP BY job_id ORDER BY job_id",
                                        {}));
    std::vector<CheckpointTimeRow> out;
    out.reserve(res.rows.size());
    for (const auto& r : res.rows) {
      out.push_back({.job = core::JobId(as_int(r[0])), .time = as_time(r[1])});
    }
    return out;
  }

  Status insert_run(const RunRow& row, std::int32_t keep) override {
    CORRAL_RETURN_IF_ERROR(
        q("INSERT INTO run_history (tenant, name, job_id, run_ms, finished_at) "
          "VALUES ($1, $2, $3, $4, $5)",
          {row.tenant.value, row.name, row.job.value, row.run.count(), ms(row.finished_at)})
            .status());
    return q("DELETE FROM run_history WHERE name = $1 AND tenant = $2 AND id NOT IN (SELECT id "
             "FROM run_history WHERE name = $1 AND tenant = $2 ORDER BY id DESC LIMIT $3)",
             {row.name, row.tenant.value, std::int64_t{keep}})
        .status();
  }

  Result<std::vector<RunRow>> list_runs(const std::vector<std::string>& names) override {
    // In chunks, so a long queue of distinct names stays within any driver's parameter limit.
    constexpr std::size_t kChunk = 256;
    std::vector<RunRow> out;
    for (std::size_t at = 0; at < names.size(); at += kChunk) {
      std::string sql =
          "SELECT tenant, name, job_id, run_ms, finished_at FROM run_history WHERE name IN (";
      std::vector<SqlValue> params;
      for (std::size_t i = at; i < std::min(names.size(), at + kChunk); ++i) {
        params.emplace_back(names[i]);
        sql += (i == at ? "$" : ", $") + std::to_string(params.size());
      }
      sql += ") ORDER BY name, tenant, id DESC";
      CORRAL_ASSIGN_OR_RETURN(auto res, q(sql, std::move(params)));
      for (const auto& r : res.rows) {
        out.push_back({.tenant = core::TenantId(as_str(r[0])),
                       .name = as_str(r[1]),
                       .job = core::JobId(as_int(r[2])),
                       .run = core::Duration(as_int(r[3])),
                       .finished_at = as_time(r[4])});
      }
    }
    return out;
  }

  Status insert_telemetry(const TelemetrySample& s) override {
    // Doubles travel as text so both drivers keep full precision the same way.
    return q("INSERT INTO telemetry_samples (node, gpu_index, time, utilization, power_watts) "
             "VALUES ($1, $2, $3, CAST($4 AS DOUBLE PRECISION), CAST($5 AS DOUBLE PRECISION))",
             {s.node.value, std::int64_t{s.gpu_index}, ms(s.time), std::to_string(s.utilization),
              std::to_string(s.power_watts)})
        .status();
  }

  Result<bool> insert_ledger_entry(const LedgerEntry& e) override {
    CORRAL_ASSIGN_OR_RETURN(
        auto res, q("INSERT INTO billing_ledger (idempotency_key, tenant, job_id, gpu_type, "
                    "gpu_ms, amount_micros, start_at, end_at) VALUES ($1, $2, $3, $4, $5, $6, $7, "
                    "$8) ON CONFLICT (idempotency_key) DO NOTHING",
                    {e.idempotency_key, e.tenant.value, e.job.value, e.gpu_type.value, e.gpu_ms,
                     e.amount_micros, ms(e.start), ms(e.end)}));
    return res.affected == 1;
  }

  Result<std::vector<LedgerEntry>> list_ledger(const core::TenantId& tenant) override {
    CORRAL_ASSIGN_OR_RETURN(auto res, q("SELECT idempotency_key, tenant, job_id, gpu_type, "
                                        "gpu_ms, amount_micros, start_at, end_at FROM "
                                        "billing_ledger WHERE tenant = $1 ORDER BY id",
                                        {tenant.value}));
    std::vector<LedgerEntry> out;
    for (const auto& r : res.rows) {
      out.push_back({.idempotency_key = as_str(r[0]),
                     .tenant = core::TenantId(as_str(r[1])),
                     .job = core::JobId(as_int(r[2])),
                     .gpu_type = core::GpuTypeId(as_str(r[3])),
                     .gpu_ms = as_int(r[4]),
                     .amount_micros = as_int(r[5]),
                     .start = as_time(r[6]),
                     .end = as_time(r[7])});
    }
    return out;
  }

  Status insert_token(const TokenRow& t) override {
    return q("INSERT INTO tokens (hash, role, tenant, node, created_at) VALUES ($1, $2, $3, $4, "
             "$5)",
             {t.hash, t.role, t.tenant, t.node, ms(t.created_at)})
        .status();
  }

  Result<std::optional<TokenRow>> find_token(std::string_view hash) override {
    CORRAL_ASSIGN_OR_RETURN(
        auto res, q("SELECT hash, role, tenant, node, created_at FROM tokens WHERE hash = $1",
                    {std::string(hash)}));
    if (res.rows.empty()) return std::optional<TokenRow>();
    const auto& r = res.rows[0];
    return std::optional<TokenRow>(TokenRow{.hash = as_str(r[0]),
                                            .role = as_str(r[1]),
                                            .tenant = as_str(r[2]),
                                            .node = as_str(r[3]),
                                            .created_at = as_time(r[4])});
  }

  Result<std::int64_t> count_tokens() override {
    CORRAL_ASSIGN_OR_RETURN(auto res, q("SELECT COUNT(*) FROM tokens", {}));
    return as_int(res.rows.at(0)[0]);
  }

  Result<std::optional<IdempotencyRow>> get_idempotency(std::string_view scope,
                                                        std::string_view key) override {
    CORRAL_ASSIGN_OR_RETURN(auto res, q("SELECT scope, key, request_hash, status, response_body, "
                                        "created_at FROM idempotency_keys WHERE scope = $1 AND "
                                        "key = $2",
                                        {std::string(scope), std::string(key)}));
    if (res.rows.empty()) return std::optional<IdempotencyRow>();
    const auto& r = res.rows[0];
    return std::optional<IdempotencyRow>(
        IdempotencyRow{.scope = as_str(r[0]),
                       .key = as_str(r[1]),
                       .request_hash = as_str(r[2]),
                       .status = static_cast<std::int32_t>(as_int(r[3])),
                       .response_body = as_str(r[4]),
                       .created_at = as_time(r[5])});
  }

  Status put_idempotency(const IdempotencyRow& row) override {
    return q("INSERT INTO idempotency_keys (scope, key, request_hash, status, response_body, "
             "created_at) VALUES ($1, $2, $3, $4, $5, $6)",
             {row.scope, row.key, row.request_hash, std::int64_t{row.status}, row.response_body,
              ms(row.created_at)})
        .status();
  }

  Result<AuditHead> lock_audit_head() override {
    // The UPDATE takes the row lock in PostgreSQL (SQLite has one writer anyway), so
    // the chain cannot fork under concurrent appenders.
    CORRAL_ASSIGN_OR_RETURN(auto res,
                            q("UPDATE audit_head SET seq = seq + 1 WHERE id = 1 RETURNING seq, "
                              "hash",
                              {}));
    if (res.rows.size() != 1) return core::internal_error("audit_head row missing");
    return AuditHead{.next_seq = as_int(res.rows[0][0]), .prev_hash = as_str(res.rows[0][1])};
  }

  Status insert_audit(const AuditRow& a) override {
    CORRAL_RETURN_IF_ERROR(q(cat("INSERT INTO audit_log (", kAuditColumns,
                                 ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"),
                             {a.seq, ms(a.time), a.actor, a.action, a.target, a.before, a.after,
                              a.request_id, a.prev_hash, a.hash})
                               .status());
    return q("UPDATE audit_head SET hash = $1 WHERE id = 1", {a.hash}).status();
  }

  Result<AuditHead> read_audit_head() override {
    CORRAL_ASSIGN_OR_RETURN(auto res, q("SELECT seq, hash FROM audit_head WHERE id = 1", {}));
    if (res.rows.size() != 1) return core::internal_error("audit_head row missing");
    return AuditHead{.next_seq = as_int(res.rows[0][0]) + 1, .prev_hash = as_str(res.rows[0][1])};
  }

  Result<std::vector<AuditRow>> list_audit(std::int64_t after_seq, std::int32_t limit) override {
    CORRAL_ASSIGN_OR_RETURN(auto res, q(cat("SELECT ", kAuditColumns,
                                            " FROM audit_log WHERE seq > $1 ORDER BY seq LIMIT $2"),
                                        {after_seq, std::int64_t{limit}}));
    std::vector<AuditRow> out;
    out.reserve(res.rows.size());
    for (const auto& r : res.rows) out.push_back(audit_from(r));
    return out;
  }

  Result<std::int64_t> acquire_epoch(std::string_view shard, std::string_view holder) override {
    CORRAL_ASSIGN_OR_RETURN(
        auto res, q("INSERT INTO scheduler_lease (shard, epoch, holder) VALUES ($1, 1, $2) "
                    "ON CONFLICT (shard) DO UPDATE SET epoch = scheduler_lease.epoch + 1, "
                    "holder = excluded.holder RETURNING epoch",
                    {std::string(shard), std::string(holder)}));
    if (res.rows.size() != 1) return core::internal_error("acquire_epoch: no row returned");
    return as_int(res.rows[0][0]);
  }

  Status check_epoch(std::string_view shard, std::int64_t epoch) override {
    // A no-op UPDATE that matches only the current epoch: it locks the lease row, so a
    // concurrent acquire_epoch() waits for this transaction or fences it.
    CORRAL_ASSIGN_OR_RETURN(auto res, q("UPDATE scheduler_lease SET epoch = epoch WHERE shard = "
                                        "$1 AND epoch = $2",
                                        {std::string(shard), epoch}));
    if (res.affected != 1) {
      return core::stale_epoch("scheduler epoch " + std::to_string(epoch) + " of shard " +
                               std::string(shard) + " is stale");
    }
    return Status();
  }

  Status put_tenant_usage(const TenantUsageRow& row) override {
    // The double travels as text, like telemetry's, so both drivers keep its precision.
    char text[64];
    std::snprintf(text, sizeof text, "%.17g", row.gpu_seconds);
    return q("INSERT INTO tenant_usage (tenant, gpu_seconds, as_of) VALUES ($1, CAST($2 AS "
             "DOUBLE PRECISION), $3) ON CONFLICT (tenant) DO UPDATE SET gpu_seconds = "
             "excluded.gpu_seconds, as_of = excluded.as_of",
             {row.tenant.value, std::string(text), ms(row.as_of)})
        .status();
  }

  Result<std::vector<TenantUsageRow>> list_tenant_usage() override {
    CORRAL_ASSIGN_OR_RETURN(
        auto res, q("SELECT tenant, gpu_seconds, as_of FROM tenant_usage ORDER BY tenant", {}));
    std::vector<TenantUsageRow> out;
    for (const auto& r : res.rows) {
      out.push_back({.tenant = core::TenantId(as_str(r[0])),
                     .gpu_seconds = std::stod(r[1].value_or("0")),
                     .as_of = as_time(r[2])});
    }
    return out;
  }

  Status set_elastic_target(const ElasticTargetRow& row, core::Time now) override {
    return q("INSERT INTO elastic_targets (job_id, gpus, updated_at) VALUES ($1, $2, $3) "
             "ON CONFLICT (job_id) DO UPDATE SET gpus = excluded.gpus, "
             "updated_at = excluded.updated_at",
             {row.job.value, std::int64_t{row.gpus}, ms(now)})
        .status();
  }

  Status clear_elastic_target(core::JobId job) override {
    return q("DELETE FROM elastic_targets WHERE job_id = $1", {job.value}).status();
  }

  Result<std::vector<ElasticTargetRow>> list_elastic_targets() override {
    CORRAL_ASSIGN_OR_RETURN(auto res,
                            q("SELECT job_id, gpus FROM elastic_targets ORDER BY job_id", {}));
    std::vector<ElasticTargetRow> out;
    for (const auto& r : res.rows) {
      out.push_back(
          {.job = core::JobId(as_int(r[0])), .gpus = static_cast<std::int32_t>(as_int(r[1]))});
    }
    return out;
  }

  Result<std::string> cluster_id() override {
    constexpr std::string_view kRead =
        "SELECT cluster_id FROM cluster_identity WHERE singleton = 1";
    CORRAL_ASSIGN_OR_RETURN(auto res, q(kRead, {}));
    if (!res.rows.empty()) return as_str(res.rows[0][0]);
    // The store's first call. A concurrent first call (another corrald on the same
    // PostgreSQL) may insert first: then ours does nothing and both read its id back.
    CORRAL_RETURN_IF_ERROR(q("INSERT INTO cluster_identity (singleton, cluster_id) VALUES (1, $1) "
                             "ON CONFLICT (singleton) DO NOTHING",
                             {random_hex_id()})
                               .status());
    CORRAL_ASSIGN_OR_RETURN(res, q(kRead, {}));
    if (res.rows.size() != 1) return core::internal_error("cluster_id: no row after insert");
    return as_str(res.rows[0][0]);
  }

 private:
  Status add_pending(const core::TenantId& tenant, std::int64_t delta) {
    return q("INSERT INTO tenant_pending (tenant, pending) VALUES ($1, $2) ON CONFLICT (tenant) "
             "DO UPDATE SET pending = tenant_pending.pending + excluded.pending",
             {tenant.value, delta})
        .status();
  }

  Result<SqlResult> q(std::string_view sql, std::vector<SqlValue> params) {
    return conn_.query(sql, params);
  }

  Result<std::vector<AllocationRow>> allocs(const std::string& sql, std::vector<SqlValue> params) {
    CORRAL_ASSIGN_OR_RETURN(auto res, q(sql, std::move(params)));
    std::vector<AllocationRow> out;
    out.reserve(res.rows.size());
    for (const auto& r : res.rows) out.push_back(alloc_from(r));
    return out;
  }

  Result<std::vector<NodeRow>> nodes(std::string_view where, std::vector<SqlValue> params) {
    CORRAL_ASSIGN_OR_RETURN(
        auto res, q(cat("SELECT name, spec_json, admin, created_at, updated_at, admin_reason FROM "
                        "nodes ",
                        where, " ORDER BY name"),
                    std::move(params)));
    std::vector<NodeRow> out;
    for (const auto& r : res.rows) {
      out.push_back({.id = core::NodeId(as_str(r[0])),
                     .spec_json = as_str(r[1]),
                     .admin = admin_from(as_str(r[2])),
                     .admin_reason = as_str(r[5]),
                     .created_at = as_time(r[3]),
                     .updated_at = as_time(r[4])});
    }
    return out;
  }

  Result<std::vector<AgentSessionRow>> sessions(std::string_view where,
                                                std::vector<SqlValue> params) {
    CORRAL_ASSIGN_OR_RETURN(
        auto res, q(cat("SELECT node, epoch, agent_url, log_key, joined_at, heartbeat_at, lost "
                        "FROM agent_sessions ",
                        where, " ORDER BY node"),
                    std::move(params)));
    std::vector<AgentSessionRow> out;
    for (const auto& r : res.rows) {
      out.push_back({.node = core::NodeId(as_str(r[0])),
                     .epoch = as_int(r[1]),
                     .agent_url = as_str(r[2]),
                     .log_key = as_str(r[3]),
                     .joined_at = as_time(r[4]),
                     .heartbeat_at = as_time(r[5]),
                     .lost = as_int(r[6]) != 0});
    }
    return out;
  }

  Result<std::vector<TenantRow>> tenants(std::string_view where, std::vector<SqlValue> params) {
    CORRAL_ASSIGN_OR_RETURN(auto res, q(cat("SELECT name, config_json, updated_at FROM tenants ",
                                            where, " ORDER BY name"),
                                        std::move(params)));
    std::vector<TenantRow> out;
    for (const auto& r : res.rows) {
      out.push_back({.id = core::TenantId(as_str(r[0])),
                     .config_json = as_str(r[1]),
                     .updated_at = as_time(r[2])});
    }
    return out;
  }

  SqlConn& conn_;
};

// Thread safety: safe for concurrent use; the pool hands each transaction its own
// connection (SQLite's pool has one, so its transactions run one at a time).
class SqlStore final : public Store {
 public:
  SqlStore(std::unique_ptr<ConnPool> pool, std::int64_t version, bool group_commit,
           std::unique_ptr<ConnPool> readers)
      : pool_(std::move(pool)),
        readers_(std::move(readers)),
        version_(version),
        group_commit_(group_commit) {}

  Status read(const std::function<Status(Tx&)>& fn) override {
    if (!readers_) return transact(fn);
    CORRAL_ASSIGN_OR_RETURN(auto conn, readers_->acquire());
    // SQLite: a deferred BEGIN takes a WAL read snapshot at the first read and never
    // blocks the writer. PostgreSQL: REPEATABLE READ gives every statement of the read
    // the same snapshot. Either way the read is rolled back (it wrote nothing).
    Status status = conn->exec_script(conn->dialect() == Dialect::kPostgres
                                          ? "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
                                          : "BEGIN");
    if (status.ok()) {
      SqlTx tx(*conn);
      status = fn(tx);
      conn->rollback();
    }
    readers_->release(std::move(conn));
    return status;
  }

  Status transact(const std::function<Status(Tx&)>& fn) override {
    if (group_commit_) return transact_grouped(fn);
    // Races (serialization conflicts, lost compare-and-sets: ErrorReason::kRaced) are
    // retried a few times from the start; a unique-key clash or any other refusal is
    // not a race but an answer, so it goes back to the caller.
    constexpr int kAttempts = 5;
    Status last;
    for (int attempt = 0; attempt < kAttempts; ++attempt) {
      last = run_once(fn);
      if (!last.is(core::ErrorReason::kRaced)) return last;
    }
    return last;
  }

  std::string_view kind() const override { return pool_->kind(); }
  std::int64_t schema_version() const override { return version_; }

 private:
  // One caller's work in a group commit.
  struct Waiter {
    const std::function<Status(Tx&)>* fn;
    Status result;
    bool done = false;
  };

  // Group commit (leader/follower): callers queue their work; whoever finds no leader
  // becomes one, runs everything queued in one transaction (each in a savepoint) and
  // commits once, then wakes the others. One fsync then covers the whole batch, which
  // is what lets SQLite acknowledge thousands of durable submissions a second.
  Status transact_grouped(const std::function<Status(Tx&)>& fn) {
    Waiter me{&fn};
    std::unique_lock lock(gc_mu_);
    queue_.push_back(&me);
    while (!me.done) {
      if (leader_active_) {
        gc_cv_.wait(lock);
        continue;
      }
      leader_active_ = true;
      constexpr std::size_t kMaxBatch = 512;
      std::vector<Waiter*> batch;
      while (!queue_.empty() && batch.size() < kMaxBatch) {
        batch.push_back(queue_.front());
        queue_.pop_front();
      }
      lock.unlock();
      run_batch(batch);
      lock.lock();
      for (Waiter* w : batch) w->done = true;
      leader_active_ = false;
      gc_cv_.notify_all();
    }
    return me.result;
  }

  void run_batch(const std::vector<Waiter*>& batch) {
    auto conn = pool_->acquire();
    if (!conn.ok()) {
      for (Waiter* w : batch) w->result = conn.status();
      return;
    }
    SqlConn& c = **conn;
    Status begun = c.begin();
    if (begun.ok()) {
      SqlTx tx(c);
      for (Waiter* w : batch) {
        constexpr int kAttempts = 5;
        for (int attempt = 0; attempt < kAttempts; ++attempt) {
          w->result = c.exec_script("SAVEPOINT corral_call");
          if (!w->result.ok()) break;
          w->result = (*w->fn)(tx);
          if (w->result.ok()) {
            w->result = c.exec_script("RELEASE corral_call");
            break;
          }
          // Undo only this caller's writes; the rest of the batch stands.
          (void)c.exec_script("ROLLBACK TO corral_call; RELEASE corral_call");
          if (!w->result.is(core::ErrorReason::kRaced)) break;
        }
      }
      begun = c.commit();
      if (!begun.ok()) c.rollback();
    }
    if (!begun.ok()) {
      for (Waiter* w : batch) {
        if (w->result.ok()) w->result = begun;
      }
    }
    pool_->release(std::move(*conn));
  }

  Status run_once(const std::function<Status(Tx&)>& fn) {
    CORRAL_ASSIGN_OR_RETURN(auto conn, pool_->acquire());
    Status status = conn->begin();
    if (status.ok()) {
      SqlTx tx(*conn);
      status = fn(tx);
      if (status.ok()) {
        status = conn->commit();
      }
      if (!status.ok()) conn->rollback();
    }
    pool_->release(std::move(conn));
    return status;
  }

  std::unique_ptr<ConnPool> pool_;
  std::unique_ptr<ConnPool> readers_;  // may be null
  const std::int64_t version_;
  const bool group_commit_;

  std::mutex gc_mu_;
  std::condition_variable gc_cv_;
  std::deque<Waiter*> queue_;   // guarded by gc_mu_
  bool leader_active_ = false;  // guarded by gc_mu_
};

}  // namespace

std::unique_ptr<Store> make_sql_store(std::unique_ptr<ConnPool> pool, std::int64_t version,
                                      bool group_commit, std::unique_ptr<ConnPool> readers) {
  return std::make_unique<SqlStore>(std::move(pool), version, group_commit, std::move(readers));
}

std::string render_migration(std::string_view sql, Dialect dialect) {
  const std::string_view marker = "{{ID}}";
  const std::string_view id = dialect == Dialect::kSqlite
                                  ? "INTEGER PRIMARY KEY AUTOINCREMENT"
                                  : "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY";
  std::string out;
  std::size_t pos = 0;
  while (true) {
    const std::size_t hit = sql.find(marker, pos);
    out += sql.substr(pos, hit == std::string_view::npos ? std::string_view::npos : hit - pos);
    if (hit == std::string_view::npos) break;
    out += id;
    pos = hit + marker.size();
  }
  return out;
}

Result<std::int64_t> migrate(SqlConn& conn) {
  CORRAL_RETURN_IF_ERROR(
      conn.exec_script("CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY, "
                       "name TEXT NOT NULL, applied_at BIGINT NOT NULL)"));
  std::int64_t version = 0;
  for (const Migration& m : migrations()) {
    CORRAL_RETURN_IF_ERROR(conn.begin());
    // PostgreSQL: two servers starting at once take turns; SQLite's BEGIN IMMEDIATE
    // already holds the write lock.
    if (conn.dialect() == Dialect::kPostgres) {
      auto locked = conn.exec_script("LOCK TABLE schema_migrations IN EXCLUSIVE MODE");
      if (!locked.ok()) {
        conn.rollback();
        return locked;
      }
    }
    auto applied = conn.query("SELECT COUNT(*) FROM schema_migrations WHERE version = $1",
                              std::vector<SqlValue>{m.version});
    if (!applied.ok()) {
      conn.rollback();
      return applied.status();
    }
    if (as_int(applied->rows.at(0)[0]) == 0) {
      Status s = conn.exec_script(render_migration(m.sql, conn.dialect()));
      if (s.ok()) {
        s = conn.query(
                    "INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, "
                    "0)",
                    std::vector<SqlValue>{m.version, std::string(m.name)})
                .status();
      }
      if (!s.ok()) {
        conn.rollback();
        return Status(s.code(), "migration " + std::to_string(m.version) + " (" +
                                    std::string(m.name) + "): " + s.message());
      }
    }
    CORRAL_RETURN_IF_ERROR(conn.commit());
    version = m.version;
  }
  return version;
}

}  // namespace corral::store::detail

namespace corral::store {

core::Result<std::unique_ptr<Store>> open_store(const std::string& url_or_path) {
  if (url_or_path.starts_with("postgresql://") || url_or_path.starts_with("postgres://")) {
    return open_postgres_store(url_or_path);
  }
  return open_sqlite_store(url_or_path);
}

std::int64_t latest_schema_version() {
  const auto all = detail::migrations();
  return all.empty() ? 0 : all.back().version;
}

}  // namespace corral::store
