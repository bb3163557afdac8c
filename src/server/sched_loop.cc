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
  std::vector<store::JobRow> holding;  // phases that hold GPUs, and ended jobs still holding
  std::vector<store::AllocationRow> allocations;
  std::map<std::string, store::AgentSessionRow> sessions;
  std::map<std::int64_t, std::int32_t> elastic_targets;  // job -> size after a resize
};

// The registered node with the agent's health verdicts (observed), minus the extra
// observations node_from_json does not know.
core::Result<core::Node> node_from_inventory(const std::string& text) {
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_object()) doc.erase("observed");
  return node_from_json(doc.is_discarded() ? text : doc.dump());
}

// A job restarting after a resize is placed at its target size: the largest size
// allowed is capped there (a smaller one is still taken when the target no longer fits,
// rather than waiting for GPUs that went elsewhere meanwhile).
void cap_at_target(sched::JobRequest& r, std::int32_t target) {
  if (!r.elastic || target <= 0) return;
  r.elastic->max_gpus = std::min(r.elastic->max_gpus, target);
  r.elastic->min_gpus = std::min(r.elastic->min_gpus, r.elastic->max_gpus);
  r.gpus = r.elastic->max_gpus;
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
  std::vector<store::TenantUsageRow> saved;
  const Status transacted = store_.transact([&](store::Tx& tx) {
    CORRAL_ASSIGN_OR_RETURN(epoch_, tx.acquire_epoch(options_.shard, options_.holder));
    CORRAL_ASSIGN_OR_RETURN(saved, tx.list_tenant_usage());
    return Status();
  });
  if (!transacted.ok()) return transacted;
  last_cycle_ = clock_.now();
  last_usage_write_ = last_cycle_;
  // Fair share resumes where the last run left it (decayed from when it was written),
  // not from zero.
  usage_.clear();
  for (const auto& row : saved) {
    auto [it, fresh] = usage_.try_emplace(row.tenant, options_.config.usage_half_life);
    it->second.add(row.gpu_seconds, std::min(row.as_of, last_cycle_));
  }
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
    full_read_ = true;
  }
  cv_.notify_one();
}

void SchedLoop::job_submitted(core::JobId id) {
  {
    std::lock_guard lock(mu_);
    wake_ = true;
    submitted_.push_back(id.value);
  }
  cv_.notify_one();
}

void SchedLoop::capacity_changed() {
  {
    std::lock_guard lock(mu_);
    wake_ = true;
  }
  cv_.notify_one();
}

void SchedLoop::force_full_read() {
  std::lock_guard lock(mu_);
  full_read_ = true;
}

Status SchedLoop::read_pending(store::Tx& tx, bool full,
                               const std::vector<std::int64_t>& submitted) {
  if (full) {
    CORRAL_ASSIGN_OR_RETURN(auto rows,
                            tx.list_jobs({.phases = {JobPhase::kPending}, .limit = 1'000'000}));
    pending_.clear();
    for (auto& row : rows) pending_.emplace(row.id.value, std::move(row));
    return Status();
  }
  for (const std::int64_t id : submitted) {
    CORRAL_ASSIGN_OR_RETURN(auto row, tx.get_job(core::JobId(id)));
    if (row && row->phase == JobPhase::kPending) pending_.insert_or_assign(id, std::move(*row));
  }
  return Status();
}

void SchedLoop::run() {
  std::unique_lock lock(mu_);
  auto last_start = std::chrono::steady_clock::now() - std::chrono::hours(1);
  std::chrono::steady_clock::duration last_duration{};
  while (!stop_) {
    cv_.wait_for(lock, std::chrono::milliseconds(core::to_ms(options_.tick)),
                 [&] { return wake_ || stop_; });
    if (stop_) break;
    // Batching: let events that arrive just after the first share its cycle, and keep
    // cycles at least min_interval apart.
    // A cycle over a long queue takes tens of milliseconds; waiting a few times that long
    // before the next keeps the loop's share of the CPU bounded, so it does not starve
    // the submissions it is scheduling.
    const auto gap = std::max<std::chrono::steady_clock::duration>(
        std::chrono::milliseconds(core::to_ms(options_.min_interval)),
        last_duration * options_.pace_factor);
    const auto earliest = last_start + gap;
    const auto window = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(core::to_ms(options_.batch_window));
    cv_.wait_until(lock, std::max(earliest, window), [&] { return stop_; });
    if (stop_) break;
    wake_ = false;
    last_start = std::chrono::steady_clock::now();
    lock.unlock();
    if (!fenced_) {
      const Status s = run_cycle();
      last_duration = std::chrono::steady_clock::now() - last_start;
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

Status SchedLoop::write_pending(const std::vector<sched::Pending>& pending, core::Time now) {
  // Only rows whose position or reason changed (under a stream of submissions: the new
  // jobs). They go in transactions of at most kChunk rows, each its own turn in the group
  // commit: one transaction of thousands of rows would hold every submission queued
  // behind it for its whole length, which is what set the p99 of submissions.
  constexpr std::size_t kChunk = 128;
  const bool positions_due = now - last_position_write_ >= options_.position_write_interval;
  if (positions_due) last_position_write_ = now;
  std::vector<store::JobRow> changed;
  for (const auto& pd : pending) {
    const auto it = pending_.find(pd.job.value);
    if (it == pending_.end()) continue;
    const std::string kind(sched::to_string(pd.kind));
    const store::JobRow& was = it->second;
    // A new job (no position yet) and a change of kind (capacity -> quota, say) are
    // written at once; a reason whose kind is unchanged but whose detail moved ("behind
    // job N" as the head of the queue advances) is refreshed with the positions.
    const bool urgent = was.queue_position == 0 || was.pending_kind != kind;
    const bool moved = was.queue_position != pd.position || was.reason != pd.reason;
    if (!urgent && !(moved && positions_due)) continue;
    store::JobRow next = it->second;
    next.reason = pd.reason;
    next.pending_kind = kind;
    next.queue_position = pd.position;
    next.updated_at = now;
    changed.push_back(std::move(next));
  }
  for (std::size_t begin = 0; begin < changed.size(); begin += kChunk) {
    const std::size_t end = std::min(changed.size(), begin + kChunk);
    std::vector<std::int64_t> gone;
    const Status written = store_.transact([&](store::Tx& tx) {
      gone.clear();
      CORRAL_RETURN_IF_ERROR(tx.check_epoch(options_.shard, epoch_));
      for (std::size_t i = begin; i < end; ++i) {
        const store::JobRow& next = changed[i];
        const store::JobRow& was = pending_.at(next.id.value);
        CORRAL_ASSIGN_OR_RETURN(const bool won, tx.update_job(next, JobPhase::kPending));
        if (!won) {
          gone.push_back(next.id.value);  // no longer pending (cancelled meanwhile)
          continue;
        }
        if (was.reason != next.reason || was.pending_kind != next.pending_kind) {
          CORRAL_RETURN_IF_ERROR(tx.append_job_event(
              {.job = next.id, .time = now, .kind = "pending", .message = next.reason}));
        }
      }
      return Status();
    });
    if (!written.ok()) {
      force_full_read();
      return written;
    }
    for (std::size_t i = begin; i < end; ++i) {
      auto it = pending_.find(changed[i].id.value);
      if (it == pending_.end()) continue;
      it->second.reason = std::move(changed[i].reason);
      it->second.pending_kind = std::move(changed[i].pending_kind);
      it->second.queue_position = changed[i].queue_position;
      it->second.updated_at = now;
    }
    for (const std::int64_t id : gone) pending_.erase(id);
  }
  return Status();
}

Status SchedLoop::run_cycle() {
  const core::Time now = clock_.now();
  const auto t0 = std::chrono::steady_clock::now();

  // 1. Read a consistent view.
  bool full = false;
  std::vector<std::int64_t> submitted;
  {
    std::lock_guard lock(mu_);
    full = full_read_ || std::chrono::steady_clock::now() - last_full_read_ >=
                             std::chrono::milliseconds(core::to_ms(options_.full_read));
    full_read_ = false;
    submitted.swap(submitted_);
  }
  if (full) last_full_read_ = std::chrono::steady_clock::now();
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
    CORRAL_RETURN_IF_ERROR(read_pending(tx, full, submitted));
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
    CORRAL_ASSIGN_OR_RETURN(auto targets, tx.list_elastic_targets());
    for (const auto& t : targets) view.elastic_targets[t.job.value] = t.gpus;
    return Status();
  });
  if (!transacted1.ok()) {
    force_full_read();
    return transacted1;
  }

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

  // Parsed requests of jobs no longer pending or holding are dropped on full reads only:
  // tracking liveness every cycle cost as much as the rest of the loop on a long queue.
  std::set<std::int64_t> live;
  auto request_of = [&](const store::JobRow& job) -> const sched::JobRequest* {
    if (full) live.insert(job.id.value);
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
  for (auto& [id, job] : pending_) {
    const auto* req = request_of(job);
    job.spec_json.clear();  // parsed into requests_; the cache need not keep it
    if (req == nullptr || known_tenants.count(job.tenant.value) == 0) continue;
    if (job.not_before > now) continue;  // restart backoff; its reason says until when
    in.pending.push_back({.request = *req, .queued_at = job.queued_at, .attempt = job.attempt});
    if (const auto t = view.elastic_targets.find(id); t != view.elastic_targets.end()) {
      cap_at_target(in.pending.back().request, t->second);
    }
  }
  for (auto& [tenant, u] : usage_) in.usage[tenant] = u.value_at(now);
  for (auto it = requests_.begin(); full && it != requests_.end();) {
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
  const bool write_usage = now - last_usage_write_ >= options_.usage_write_interval;
  // What the transaction did to the pending queue, for pending_ once it commits.
  std::vector<std::int64_t> left_queue;
  std::vector<store::JobRow> back_in_queue;
  const Status applied = store_.transact([&](store::Tx& tx) {
    placed = 0;
    fx = Effects();
    left_queue.clear();
    back_in_queue.clear();
    CORRAL_RETURN_IF_ERROR(tx.check_epoch(options_.shard, epoch_));
    // Preemptions first. A victim run by agents moves to preempting and keeps its GPUs
    // until they confirm its workers are gone (lifecycle.h); one placed only on
    // agent-less nodes has nothing running, so it is requeued and released at once.
    std::set<std::int64_t> stopped;
    std::optional<AssignmentBoard> no_board;
    if (board_ == nullptr) no_board.emplace(0);
    const AgentSettings settings;
    const LifecycleContext ctx{board_ != nullptr ? *board_ : *no_board, settings, now, fx};
    // A job stopped at once (nothing of it was running) is pending again: the loop's
    // in-memory queue must learn it, and what it held is free for this transaction.
    auto note_if_requeued = [&](const store::JobRow& job) -> Status {
      if (fx.released.count(job.id.value) == 0) return Status();
      stopped.insert(job.id.value);
      CORRAL_ASSIGN_OR_RETURN(auto row, tx.get_job(job.id));
      if (row && row->phase == JobPhase::kPending) back_in_queue.push_back(std::move(*row));
      return Status();
    };
    for (const auto& pre : decisions.preemptions) {
      CORRAL_ASSIGN_OR_RETURN(auto victim, tx.get_job(pre.victim));
      if (!victim || core::is_terminal(victim->phase)) continue;
      if (!core::next_phase(victim->phase, core::JobEvent::kPreempt).ok()) continue;  // stopping
      // decide()'s reason names the job it makes room for, and why.
      CORRAL_RETURN_IF_ERROR(preempt_job(tx, ctx, *victim, pre.reason));
      CORRAL_RETURN_IF_ERROR(note_if_requeued(*victim));
    }
    // Resizes: an elastic job changes size the way real elastic training does, by
    // checkpoint and restart. One still `launching` has no workers, so its allocation
    // changes in place now; a `running` one is asked to checkpoint and stop
    // (preempting, keeping its GPUs until its agent confirms), with its new size
    // recorded; once requeued it is placed again at that size.
    for (const auto& rz : decisions.resizes) {
      CORRAL_ASSIGN_OR_RETURN(auto job, tx.get_job(rz.job));
      if (!job) continue;
      store::JobRow next = *job;
      next.updated_at = now;
      CORRAL_ASSIGN_OR_RETURN(auto held, tx.list_allocations(rz.job));
      std::erase_if(held, [](const store::AllocationRow& a) { return !a.active; });
      CORRAL_ASSIGN_OR_RETURN(const bool managed, is_managed(tx, held));
      if (job->phase == JobPhase::kLaunching && !managed) {
        if (held.empty()) continue;
        next.reason = "resized from " + std::to_string(rz.from_gpus) + " to " +
                      std::to_string(rz.to_gpus) + " GPUs before launch: " + rz.reason;
        CORRAL_ASSIGN_OR_RETURN(const bool won, tx.update_job(next, JobPhase::kLaunching));
        if (!won) continue;
        CORRAL_RETURN_IF_ERROR(tx.release_allocations(rz.job, now).status());
        for (const auto& g : rz.gpus) {
          CORRAL_RETURN_IF_ERROR(tx.insert_allocation({.job = rz.job,
                                                       .attempt = job->attempt,
                                                       .node = g.node,
                                                       .gpu_index = g.index,
                                                       .gpu_type = held.front().gpu_type,
                                                       .epoch = epoch_,
                                                       .active = true,
                                                       .borrowed = held.front().borrowed,
                                                       .created_at = now}));
        }
        stopped.insert(rz.job.value);  // what it gave up is free in this transaction
      } else if (job->phase == JobPhase::kRunning || job->phase == JobPhase::kLaunching) {
        // Agents may already run its workers: they checkpoint and stop first.
        next.reason = "resizing from " + std::to_string(rz.from_gpus) + " to " +
                      std::to_string(rz.to_gpus) + " GPUs (checkpoint and restart): " + rz.reason;
        CORRAL_RETURN_IF_ERROR(tx.set_elastic_target({.job = rz.job, .gpus = rz.to_gpus}, now));
        CORRAL_RETURN_IF_ERROR(preempt_job(tx, ctx, *job, next.reason));
        CORRAL_RETURN_IF_ERROR(note_if_requeued(*job));
      } else {
        continue;  // already stopping or gone: nothing to resize
      }
      CORRAL_RETURN_IF_ERROR(tx.append_job_event(
          {.job = rz.job, .time = now, .kind = "resized", .message = next.reason}));
    }
    for (const auto& p : decisions.placements) {
      // A placement on GPUs that preempted jobs still hold waits for them to stop.
      const bool victims_gone = std::all_of(p.waits_for.begin(), p.waits_for.end(),
                                            [&](core::JobId v) { return stopped.count(v.value); });
      if (!victims_gone) continue;
      CORRAL_ASSIGN_OR_RETURN(auto job, tx.get_job(p.job));
      if (!job || job->phase != JobPhase::kPending) {  // cancelled meanwhile
        left_queue.push_back(p.job.value);
        continue;
      }
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
      left_queue.push_back(p.job.value);
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
      if (view.elastic_targets.count(p.job.value) > 0) {
        CORRAL_RETURN_IF_ERROR(tx.clear_elastic_target(p.job));
      }
      CORRAL_RETURN_IF_ERROR(tx.append_job_event(
          {.job = p.job, .time = now, .kind = "placed", .message = next.reason}));
      for (const auto& g : p.gpus) fx.bump.insert(g.node.value);
      ++placed;
    }
    // Fair-share usage, at most every usage_write_interval: a restart loses at most that
    // much accounting instead of all of it.
    if (write_usage) {
      for (const auto& [tenant, u] : usage_) {
        CORRAL_RETURN_IF_ERROR(
            tx.put_tenant_usage({.tenant = tenant, .gpu_seconds = u.value_at(now), .as_of = now}));
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
    force_full_read();
    return applied;
  }
  if (board_ != nullptr) apply_effects(fx, *board_);
  if (write_usage) last_usage_write_ = now;
  for (const std::int64_t id : left_queue) pending_.erase(id);
  for (auto& row : back_in_queue) pending_.insert_or_assign(row.id.value, std::move(row));
  CORRAL_RETURN_IF_ERROR(write_pending(decisions.pending, now));
  metrics_.sched_placements += placed;
  metrics_.pending_jobs = static_cast<std::int64_t>(decisions.pending.size());
  metrics_.running_jobs = static_cast<std::int64_t>(view.holding.size()) + placed;
  return Status();
}

}  // namespace corral::server
