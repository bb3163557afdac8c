#include "server/sched_loop.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/gpu_type.h"
#include "core/job_phase.h"
#include "core/job_spec_parse.h"
#include "core/priority.h"
#include "sched/check.h"
#include "sched/decide.h"
#include "server/lifecycle.h"
#include "server/model_json.h"

namespace corral::server {
namespace {

using core::JobPhase;
using core::Status;

// Everything one cycle reads, from one transaction.
struct StoreView {
  std::vector<store::NodeRow> nodes;
  std::map<std::string, store::InventoryRow> inventory;
  std::vector<store::TenantRow> tenants;
  std::vector<store::ReservationRow> reservations;
  std::vector<store::JobRow> pending;
  std::vector<store::JobRow> holding;  // phases that hold GPUs, and ended jobs still holding
  std::vector<store::AllocationRow> allocations;
  std::map<std::string, store::AgentSessionRow> sessions;
};

// The registered node with the agent's health verdicts (observed), minus the extra
// observations node_from_json does not know.
core::Result<core::Node> node_from_inventory(const std::string& text) {
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_object()) doc.erase("observed");
  return node_from_json(doc.is_discarded() ? text : doc.dump());
}

std::int32_t tier_of(const std::string& priority_class) {
  for (const auto& pc : core::default_priority_classes()) {
    if (pc.name == priority_class) return pc.tier;
  }
  return 1;
}

std::string describe(const sched::Placement& p) {
  std::string out = "placed on " + std::to_string(p.gpus.size()) + " " + p.gpu_type.value + ":";
  std::string node;
  for (const auto& g : p.gpus) {
    if (g.node.value != node) {
      node = g.node.value;
      out += " " + node + "[";
    } else {
      out += ",";
    }
    out += std::to_string(g.index);
    if (&g == &p.gpus.back() || (&g + 1)->node.value != node) out += "]";
  }
  return out;
}

}  // namespace

SchedLoop::SchedLoop(store::Store& store, const core::Clock& clock, Metrics& metrics,
                     SchedLoopOptions options, AssignmentBoard* board)
    : store_(store),
      clock_(clock),
      metrics_(metrics),
      options_(std::move(options)),
      board_(board) {}

SchedLoop::~SchedLoop() { stop(); }

Status SchedLoop::start() {
  const Status transacted = store_.transact([&](store::Tx& tx) {
    CORRAL_ASSIGN_OR_RETURN(epoch_, tx.acquire_epoch(options_.shard, options_.holder));
    return Status();
  });
  if (!transacted.ok()) return transacted;
  last_cycle_ = clock_.now();
  {
    std::lock_guard lock(mu_);
    wake_ = true;  // the first cycle picks up whatever the last run left pending
  }
  thread_ = std::thread([this] { run(); });
  return Status();
}

void SchedLoop::stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void SchedLoop::wake() {
  {
    std::lock_guard lock(mu_);
    wake_ = true;
  }
  cv_.notify_one();
}

void SchedLoop::run() {
  std::unique_lock lock(mu_);
  auto last_start = std::chrono::steady_clock::now() - std::chrono::hours(1);
  while (!stop_) {
    cv_.wait_for(lock, std::chrono::milliseconds(core::to_ms(options_.tick)),
                 [&] { return wake_ || stop_; });
    if (stop_) break;
    // Batching: let events that arrive just after the first share its cycle, and keep
    // cycles at least min_interval apart.
    const auto earliest =
        last_start + std::chrono::milliseconds(core::to_ms(options_.min_interval));
    const auto window = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(core::to_ms(options_.batch_window));
    cv_.wait_until(lock, std::max(earliest, window), [&] { return stop_; });
    if (stop_) break;
    wake_ = false;
    last_start = std::chrono::steady_clock::now();
    lock.unlock();
    if (!fenced_) {
      const Status s = run_cycle();
      if (!s.ok()) {
        ++metrics_.sched_errors;
        std::fprintf(stderr, "corrald: scheduling cycle failed: %s\n", s.to_string().c_str());
        if (s.code() == core::StatusCode::kAborted &&
            s.message().find("epoch") != std::string::npos) {
          fenced_ = true;
          std::fprintf(stderr, "corrald: another scheduler holds the lease; not scheduling\n");
        }
      }
    }
    lock.lock();
  }
}

Status SchedLoop::run_cycle() {
  const core::Time now = clock_.now();
  const auto t0 = std::chrono::steady_clock::now();

  // 1. Read a consistent view.
  StoreView view;
  const Status transacted1 = store_.read([&](store::Tx& tx) {
    view = StoreView();
    CORRAL_ASSIGN_OR_RETURN(view.nodes, tx.list_nodes());
    for (const auto& n : view.nodes) {
      CORRAL_ASSIGN_OR_RETURN(auto inv, tx.get_inventory(n.id));
      if (inv) view.inventory[n.id.value] = std::move(*inv);
    }
    CORRAL_ASSIGN_OR_RETURN(view.tenants, tx.list_tenants());
    CORRAL_ASSIGN_OR_RETURN(view.reservations, tx.list_reservations());
    CORRAL_ASSIGN_OR_RETURN(view.pending,
                            tx.list_jobs({.phases = {JobPhase::kPending}, .limit = 1'000'000}));
    CORRAL_ASSIGN_OR_RETURN(view.holding,
                            tx.list_jobs({.phases = {JobPhase::kAdmitted, JobPhase::kLaunching,
                                                     JobPhase::kRunning, JobPhase::kPreempting},
                                          .limit = 1'000'000}));
    CORRAL_ASSIGN_OR_RETURN(view.allocations, tx.list_active_allocations());
    // Jobs that ended (cancelled, failed) keep their GPUs until their agents confirm.
    std::set<std::int64_t> seen;
    for (const auto& j : view.holding) seen.insert(j.id.value);
    for (const auto& a : view.allocations) {
      if (!seen.insert(a.job.value).second) continue;
      CORRAL_ASSIGN_OR_RETURN(auto job, tx.get_job(a.job));
      if (job) view.holding.push_back(std::move(*job));
    }
    CORRAL_ASSIGN_OR_RETURN(auto sessions, tx.list_agent_sessions());
    for (auto& s : sessions) view.sessions[s.node.value] = std::move(s);
    return Status();
  });
  if (!transacted1.ok()) return transacted1;

  // 2. Build the snapshot.
  sched::SnapshotInput in;
  in.gpu_types.assign(core::builtin_gpu_types().begin(), core::builtin_gpu_types().end());
  for (const auto& row : view.nodes) {
    const auto inv = view.inventory.find(row.id.value);
    auto node = node_from_inventory(inv != view.inventory.end() ? inv->second.inventory_json
                                                                : row.spec_json);
    if (!node.ok()) continue;  // stored by this server, so valid; skip rather than stall
    node->admin = row.admin;
    // A lost node takes no placements until its agent joins again.
    const auto session = view.sessions.find(row.id.value);
    if (session != view.sessions.end() && session->second.lost) {
      for (auto& g : node->gpus) g.healthy = false;
    }
    in.nodes.push_back(std::move(*node));
  }
  std::set<std::string> known_tenants;
  for (const auto& row : view.tenants) {
    auto cfg = tenant_config_from_json(row.id.value, row.config_json);
    if (!cfg.ok()) continue;
    known_tenants.insert(row.id.value);
    in.tenants.push_back(cfg->tenant);
  }
  // A parent named by a tenant but never configured would fail the snapshot; drop it.
  for (auto& t : in.tenants) {
    if (t.parent && known_tenants.count(t.parent->value) == 0) t.parent.reset();
  }
  for (const auto& row : view.reservations) {
    auto r = reservation_from_json(row.spec_json);
    if (r.ok() && known_tenants.count(r->tenant.value) > 0) in.reservations.push_back(*r);
  }

  std::set<std::int64_t> live;
  auto request_of = [&](const store::JobRow& job) -> const sched::JobRequest* {
    live.insert(job.id.value);
    auto it = requests_.find(job.id.value);
    if (it == requests_.end()) {
      auto parsed = core::parse_job_spec(job.spec_json, core::SpecFormat::kJson);
      if (!parsed.ok()) return nullptr;
      it = requests_
               .emplace(job.id.value, sched::job_request_from_spec(job.id, *parsed.spec,
                                                                   tier_of(job.priority_class)))
               .first;
    }
    return &it->second;
  };

  // Usage: each holding job's GPUs since the last cycle, weighted by the type's factor.
  const double dt_s = static_cast<double>(core::to_ms(now - last_cycle_)) / 1000.0;
  last_cycle_ = now;
  std::map<std::int64_t, std::vector<const store::AllocationRow*>> by_job;
  for (const auto& a : view.allocations) by_job[a.job.value].push_back(&a);
  std::map<std::int64_t, const store::JobRow*> pending_rows;
  for (const auto& job : view.holding) {
    const auto* req = request_of(job);
    const auto allocs = by_job.find(job.id.value);
    if (req == nullptr || allocs == by_job.end() || known_tenants.count(job.tenant.value) == 0) {
      continue;
    }
    sched::RunningJob running{
        .request = *req,
        .started_at = allocs->second.front()->created_at,
        .stopping = job.phase != JobPhase::kLaunching && job.phase != JobPhase::kRunning};
    for (const auto* a : allocs->second) {
      running.gpus.push_back({a->node, a->gpu_index});
      running.borrowed = running.borrowed || a->borrowed;
    }
    std::sort(running.gpus.begin(), running.gpus.end());
    if (dt_s > 0) {
      const auto type = core::find_builtin_gpu_type(allocs->second.front()->gpu_type.value);
      auto [u, fresh] = usage_.try_emplace(job.tenant, options_.config.usage_half_life);
      u->second.add(
          static_cast<double>(running.gpus.size()) * dt_s * (type ? type->usage_factor : 1.0), now);
    }
    in.running.push_back(std::move(running));
  }
  for (const auto& job : view.pending) {
    const auto* req = request_of(job);
    if (req == nullptr || known_tenants.count(job.tenant.value) == 0) continue;
    if (job.not_before > now) continue;  // restart backoff; its reason says until when
    in.pending.push_back({.request = *req, .queued_at = job.queued_at, .attempt = job.attempt});
    pending_rows[job.id.value] = &job;
  }
  for (auto& [tenant, u] : usage_) in.usage[tenant] = u.value_at(now);
  for (auto it = requests_.begin(); it != requests_.end();) {
    it = live.count(it->first) > 0 ? std::next(it) : requests_.erase(it);
  }

  auto snapshot = sched::build_snapshot(std::move(in));
  if (!snapshot.ok()) return snapshot.status();
  const sched::Decisions decisions = sched::decide(*snapshot, options_.config, now);
#ifndef NDEBUG
  // Debug builds check the invariants before applying; the store's unique index stays
  // the last line of defence in every build.
  const auto violations = sched::check(*snapshot, decisions, options_.config, now);
  CORRAL_CHECK(violations.empty());
#endif

  // 3. Apply in one transaction, fenced by the epoch.
  std::int64_t placed = 0;
  Effects fx;
  const Status applied = store_.transact([&](store::Tx& tx) {
    placed = 0;
    fx = Effects();
    CORRAL_RETURN_IF_ERROR(tx.check_epoch(options_.shard, epoch_));
    // Preemptions first. A victim run by agents moves to preempting and keeps its GPUs
    // until they confirm its workers are gone (lifecycle.h); one placed only on
    // agent-less nodes has nothing running, so it is requeued and released at once.
    std::set<std::int64_t> stopped;
    std::optional<AssignmentBoard> no_board;
    if (board_ == nullptr) no_board.emplace(0);
    const AgentSettings settings;
    const LifecycleContext ctx{board_ != nullptr ? *board_ : *no_board, settings, now, fx};
    for (const auto& pre : decisions.preemptions) {
      CORRAL_ASSIGN_OR_RETURN(auto victim, tx.get_job(pre.victim));
      if (!victim || core::is_terminal(victim->phase)) continue;
      if (!core::next_phase(victim->phase, core::JobEvent::kPreempt).ok()) continue;  // stopping
      CORRAL_RETURN_IF_ERROR(preempt_job(
          tx, ctx, *victim,
          "preempted for job " + std::to_string(pre.for_job.value) + ": " + pre.reason));
      if (fx.released.count(victim->id.value) > 0) stopped.insert(victim->id.value);
    }
    for (const auto& p : decisions.placements) {
      // A placement on GPUs that preempted jobs still hold waits for them to stop.
      const bool victims_gone = std::all_of(p.waits_for.begin(), p.waits_for.end(),
                                            [&](core::JobId v) { return stopped.count(v.value); });
      if (!victims_gone) continue;
      CORRAL_ASSIGN_OR_RETURN(auto job, tx.get_job(p.job));
      if (!job || job->phase != JobPhase::kPending) continue;  // cancelled meanwhile
      CORRAL_ASSIGN_OR_RETURN(const JobPhase admitted,
                              core::next_phase(JobPhase::kPending, core::JobEvent::kAdmit));
      CORRAL_ASSIGN_OR_RETURN(const JobPhase launching,
                              core::next_phase(admitted, core::JobEvent::kAllocate));
      store::JobRow next = *job;
      next.phase = launching;
      next.attempt += 1;
      next.reason = describe(p);
      next.pending_kind.clear();
      next.queue_position = 0;
      next.updated_at = now;
      CORRAL_ASSIGN_OR_RETURN(const bool won, tx.update_job(next, JobPhase::kPending));
      if (!won) continue;
      for (const auto& g : p.gpus) {
        CORRAL_RETURN_IF_ERROR(tx.insert_allocation({.job = p.job,
                                                     .attempt = next.attempt,
                                                     .node = g.node,
                                                     .gpu_index = g.index,
                                                     .gpu_type = p.gpu_type,
                                                     .epoch = epoch_,
                                                     .active = true,
                                                     .borrowed = p.borrowed,
                                                     .created_at = now}));
      }
      CORRAL_RETURN_IF_ERROR(tx.append_job_event(
          {.job = p.job, .time = now, .kind = "placed", .message = next.reason}));
      for (const auto& g : p.gpus) fx.bump.insert(g.node.value);
      ++placed;
    }
    for (const auto& pd : decisions.pending) {
      const auto it = pending_rows.find(pd.job.value);
      if (it == pending_rows.end()) continue;
      const store::JobRow& row = *it->second;
      const std::string kind(sched::to_string(pd.kind));
      const bool reason_changed = row.reason != pd.reason || row.pending_kind != kind;
      if (!reason_changed && row.queue_position == pd.position) continue;
      store::JobRow next = row;
      next.reason = pd.reason;
      next.pending_kind = kind;
      next.queue_position = pd.position;
      next.updated_at = now;
      CORRAL_ASSIGN_OR_RETURN(const bool won, tx.update_job(next, JobPhase::kPending));
      if (won && reason_changed) {
        CORRAL_RETURN_IF_ERROR(tx.append_job_event(
            {.job = pd.job, .time = now, .kind = "pending", .message = pd.reason}));
      }
    }
    return Status();
  });
  ++metrics_.sched_cycles;
  metrics_.sched_cycle_ms_total +=
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0)
          .count();
  if (!applied.ok()) {
    if (applied.code() == core::StatusCode::kAlreadyExists) ++metrics_.sched_apply_conflicts;
    return applied;
  }
  if (board_ != nullptr) apply_effects(fx, *board_);
  metrics_.sched_placements += placed;
  metrics_.pending_jobs = static_cast<std::int64_t>(decisions.pending.size());
  metrics_.running_jobs = static_cast<std::int64_t>(view.holding.size()) + placed;
  return Status();
}

}  // namespace corral::server
