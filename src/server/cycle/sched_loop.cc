#include "server/cycle/sched_loop.h"

#include <algorithm>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "core/check.h"
#include "core/gpu_type.h"
#include "core/job_phase.h"
#include "sched/check.h"
#include "sched/decide.h"
#include "server/base/log.h"
#include "server/controllers/lifecycle.h"
#include "server/cycle/apply_decisions.h"
#include "server/cycle/reason_change.h"
#include "server/cycle/shard_scope.h"

namespace corral::server {

using core::JobPhase;
using core::Status;

SchedLoop::SchedLoop(store::Store& store, const core::Clock& clock, Metrics& metrics,
                     SchedLoopOptions options, AssignmentBoard* board, SpecCache* specs)
    : store_(store),
      clock_(clock),
      metrics_(metrics),
      options_(std::move(options)),
      board_(board),
      own_specs_(specs == nullptr ? std::make_unique<SpecCache>() : nullptr),
      specs_(specs != nullptr ? specs : own_specs_.get()),
      recorder_(options_.capture),
      requests_(*specs_) {}

SchedLoop::~SchedLoop() { stop(); }

Status SchedLoop::start() {
  std::int64_t epoch = 0;
  CORRAL_RETURN_IF_ERROR(store_.transact([&](store::Tx& tx) {
    CORRAL_ASSIGN_OR_RETURN(epoch, tx.scheduler().acquire_epoch(options_.shard, options_.holder));
    return Status();
  }));
  return start_at(epoch);
}

Status SchedLoop::start_at(std::int64_t epoch) {
  std::vector<store::TenantUsageRow> saved;
  CORRAL_RETURN_IF_ERROR(store_.read([&](store::Tx& tx) {
    CORRAL_ASSIGN_OR_RETURN(saved, tx.scheduler().list_tenant_usage());
    return Status();
  }));
  epoch_ = epoch;
  fenced_ = false;
  pending_.clear();
  {
    std::lock_guard positions_lock(positions_mu_);
    positions_.reset();
    shares_.reset();
  }
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
    stop_ = false;
    wake_ = true;  // the first cycle picks up whatever the last run left pending
    full_read_ = true;
    submitted_.clear();
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
  metrics_.pending_jobs -= pending_shown_;  // another replica counts this queue now
  pending_shown_ = 0;
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

Status SchedLoop::read_pending(store::JobRepo& jobs, bool full,
                               const std::vector<std::int64_t>& submitted) {
  if (full) {
    CORRAL_ASSIGN_OR_RETURN(auto rows,
                            jobs.list_jobs({.phases = {JobPhase::kPending}, .limit = 1'000'000}));
    pending_.clear();
    for (auto& row : rows) pending_.emplace(row.id.value, std::move(row));
    return Status();
  }
  std::vector<core::JobId> ids(submitted.begin(), submitted.end());
  CORRAL_ASSIGN_OR_RETURN(auto rows, jobs.get_jobs(ids));
  for (auto& row : rows) {
    if (row.phase == JobPhase::kPending) pending_.insert_or_assign(row.id.value, std::move(row));
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
      {
        std::lock_guard errors_lock(positions_mu_);
        last_error_ = s.ok() ? "" : s.to_string();
      }
      if (!s.ok()) {
        ++metrics_.sched_errors;
        process_log().write(LogEvent("cycle_failed", LogLevel::kError)
                                .add("shard", options_.shard)
                                .add("epoch", epoch_)
                                .add("error", s.to_string()));
        if (store::is_stale_epoch(s)) {
          fenced_ = true;
          ++metrics_.stale_epoch_refusals;
          process_log().write(LogEvent("scheduler_fenced", LogLevel::kWarn)
                                  .add("shard", options_.shard)
                                  .add("epoch", epoch_)
                                  .add("reason", "another scheduler holds the lease"));
          std::lock_guard positions_lock(positions_mu_);
          positions_.reset();  // the stored positions, the new holder's, stand
          shares_.reset();
        }
      }
    }
    lock.lock();
  }
}

Status SchedLoop::write_pending(const sched::Decisions& decisions,
                                const std::map<std::int64_t, std::string>& held, core::Time now) {
  publish_positions(decisions);
  // Only rows whose position or reason changed (under a stream of submissions: the new
  // jobs). They go in transactions of at most kChunk rows, each its own turn in the group
  // commit: one transaction of thousands of rows would hold every submission queued
  // behind it for its whole length, which is what set the p99 of submissions.
  constexpr std::size_t kChunk = 128;
  const bool positions_due = now - last_position_write_ >= options_.position_write_interval;
  if (positions_due) last_position_write_ = now;
  std::map<std::int64_t, const sched::PlannedStart*> planned;
  for (const auto& ps : decisions.planned_starts) planned[ps.job.value] = &ps;
  std::vector<store::JobRow> changed;
  for (const auto& pd : decisions.pending) {
    const auto it = pending_.find(pd.job.value);
    if (it == pending_.end()) continue;
    const std::string kind(sched::to_string(pd.kind));
    const store::JobRow& was = it->second;
    // The expected start (the head's planned one, or a forecast); only the head's
    // promise has a latest start.
    const auto ps = planned.find(pd.job.value);
    const core::Time start = pd.start;
    const core::Time latest = ps != planned.end() ? ps->second->at : core::Time{};
    // A new job (no position yet) and a change of kind (capacity -> quota, say) are
    // written at once; a reason whose kind is unchanged but whose detail moved ("behind
    // job N" as the head of the queue advances, a planned start that moved) is refreshed
    // with the positions.
    // (An unschedulable job stays at position 0: it is not new each cycle.)
    const bool urgent = (was.queue_position == 0 && pd.position != 0) || was.pending_kind != kind;
    const bool moved = was.queue_position != pd.position || was.reason != pd.reason ||
                       was.planned_start != start || was.planned_latest != latest;
    if (!urgent && !(moved && positions_due)) continue;
    store::JobRow next = it->second;
    next.reason = pd.reason;
    next.pending_kind = kind;
    next.queue_position = pd.position;
    next.planned_start = start;
    next.planned_latest = latest;
    next.updated_at = now;
    changed.push_back(std::move(next));
  }
  // Held jobs (the dataset gate, the retraining budget) are not in the cycle; one that came
  // back to the queue for another reason (a restart, a preemption) says now what holds it.
  for (const auto& [id, reason] : held) {
    const auto it = pending_.find(id);
    if (it == pending_.end() ||
        (it->second.pending_kind == "held" && it->second.reason == reason)) {
      continue;
    }
    store::JobRow next = it->second;
    next.reason = reason;
    next.pending_kind = "held";
    next.queue_position = 0;
    next.planned_start = {};
    next.planned_latest = {};
    next.updated_at = now;
    changed.push_back(std::move(next));
  }
  for (std::size_t begin = 0; begin < changed.size(); begin += kChunk) {
    const std::size_t end = std::min(changed.size(), begin + kChunk);
    std::vector<std::int64_t> gone;
    const Status written = store_.transact([&](store::Tx& tx) {
      gone.clear();
      CORRAL_RETURN_IF_ERROR(tx.scheduler().check_epoch(options_.shard, epoch_));
      for (std::size_t i = begin; i < end; ++i) {
        const store::JobRow& next = changed[i];
        const store::JobRow& was = pending_.at(next.id.value);
        CORRAL_ASSIGN_OR_RETURN(const bool won, tx.jobs().update_job(next, JobPhase::kPending));
        if (!won) {
          gone.push_back(next.id.value);  // no longer pending (cancelled meanwhile)
          continue;
        }
        if (was.pending_kind != next.pending_kind ||
            reason_changed_in_substance(was.reason, next.reason)) {
          CORRAL_RETURN_IF_ERROR(tx.records().append_job_event(
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
      it->second.planned_start = changed[i].planned_start;
      it->second.planned_latest = changed[i].planned_latest;
      it->second.updated_at = now;
    }
    for (const std::int64_t id : gone) pending_.erase(id);
  }
  return Status();
}

Status SchedLoop::run_cycle() {
  const core::Time now = clock_.now();
  const auto t0 = std::chrono::steady_clock::now();
  auto t_phase = t0;
  // The time since the last phase ended, into the phase histogram.
  const auto phase_done = [&](CyclePhaseHistogram::Phase phase) {
    const auto end = std::chrono::steady_clock::now();
    metrics_.sched_phases.add(
        phase, std::chrono::duration_cast<std::chrono::microseconds>(end - t_phase).count());
    t_phase = end;
  };
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

  // 1. Read: the store view in a fixed number of batch queries, and the pending queue
  //    (whole, or only what was submitted since the last cycle).
  StoreView view;
  const Status read = store_.read([&](store::Tx& tx) {
    CORRAL_ASSIGN_OR_RETURN(view, read_store_view(tx, now));
    CORRAL_RETURN_IF_ERROR(read_pending(tx.jobs(), full, submitted));
    CORRAL_ASSIGN_OR_RETURN(view.dependencies,
                            read_dependency_facts(tx.jobs(), pending_, requests_));
    CORRAL_ASSIGN_OR_RETURN(view.sweep_service, read_sweep_service(tx.jobs(), pending_, requests_));
    if (full) CORRAL_RETURN_IF_ERROR(read_run_history(tx.records(), view));
    return Status();
  });
  if (!read.ok()) {
    force_full_read();
    return read;
  }
  phase_done(CyclePhaseHistogram::kRead);

  // 2. Build: fair-share usage accrues for the GPUs held since the last cycle, then the
  //    snapshot input (snapshot_from_store.h) and the snapshot.
  accrue_usage(view, now);
  std::map<core::TenantId, double> usage;
  for (const auto& [tenant, u] : usage_) usage[tenant] = u.value_at(now);
  sched::SnapshotInput in = snapshot_from_store(
      view, {.pending = pending_, .usage = usage, .runs = runs_}, requests_, now);
  for (auto& [id, job] : pending_) job.spec_json.clear();  // parsed into requests_
  const bool partitioned = options_.shards != nullptr && options_.shards->partitioned();
  std::set<std::string> own_nodes;
  if (partitioned) own_nodes = narrow_to_shard(in, *options_.shards, options_.shard_index);
  if (full) forget_requests(view);
  const std::int64_t cycle = ++cycles_;
  std::optional<sched::SnapshotInput> captured;
  if (recorder_.wants(cycle)) captured = in;  // build_snapshot consumes `in`
  auto snapshot = sched::build_snapshot(std::move(in));
  if (!snapshot.ok()) return snapshot.status();
  phase_done(CyclePhaseHistogram::kBuild);

  // 3. Decide, and capture the cycle when asked (cycle_recorder.h). A capture that
  //    cannot be written is logged and the cycle goes on: it is for people, not for
  //    scheduling.
  sched::Decisions decisions = sched::decide(*snapshot, options_.config, now);
  phase_done(CyclePhaseHistogram::kDecide);
  {
    auto shares =
        std::make_shared<const TenantShares>(sched::tenant_shares(*snapshot, options_.config));
    std::lock_guard lock(positions_mu_);
    shares_ = std::move(shares);
  }
  if (captured) {
    const auto file =
        recorder_.record({.input = std::move(*captured),
                          .config = options_.config,
                          .now = now,
                          .decisions_json = sched::to_json(decisions),
                          .source = "corrald shard " + options_.shard + " epoch " +
                                    std::to_string(epoch_) + " cycle " + std::to_string(cycle)},
                         epoch_, cycle);
    if (!file.ok()) {
      process_log().write(LogEvent("capture_failed", LogLevel::kWarn)
                              .add("shard", options_.shard)
                              .add("cycle", cycle)
                              .add("error", file.status().to_string()));
    }
  }

  // 4. Check, in debug builds; the store's unique index stays the last line of defence in
  //    every build.
#ifndef NDEBUG
  const auto violations = sched::check(*snapshot, decisions, options_.config, now);
  CORRAL_CHECK(violations.empty());
#endif

  // 5. Apply in one transaction, fenced by the epoch (apply_decisions.h); a shard of
  //    several applies only what is its own, within every tenant's quota as the store
  //    counts it at commit (shard_scope.h).
  if (partitioned) {
    metrics_.sched_foreign_dropped += keep_own_decisions(decisions, *snapshot, own_nodes);
  }
  std::optional<AssignmentBoard> no_board;
  if (board_ == nullptr) no_board.emplace(0);
  // The placed jobs' specs go to the SpecCache now: their agents' assignments read them
  // next, and would otherwise decode them again.
  for (const auto& p : decisions.placements) requests_.share(p.job);
  const AgentSettings settings;  // stops asked here carry the decision's own grace
  // Every shard's loop keeps the same global usage; the first shard's writes it.
  const bool write_usage =
      now - last_usage_write_ >= options_.usage_write_interval && options_.shard_index == 0;
  Applied applied;
  sched::Decisions to_apply;
  QuotaRecount recount;
  std::int64_t power_conflicts = 0;
  const Status committed = store_.transact([&](store::Tx& tx) {
    CORRAL_RETURN_IF_ERROR(tx.scheduler().check_epoch(options_.shard, epoch_));
    to_apply = decisions;  // a retried transaction starts again from them
    recount = {};
    power_conflicts = 0;
    if (partitioned) {
      CORRAL_ASSIGN_OR_RETURN(recount, recount_quotas(tx.scheduler(), to_apply, *snapshot, view));
      CORRAL_ASSIGN_OR_RETURN(power_conflicts,
                              drop_over_rack_power(tx.rack_caps(), to_apply, *snapshot, view));
    }
    CORRAL_ASSIGN_OR_RETURN(applied,
                            apply_decisions(tx, to_apply,
                                            {.epoch = epoch_,
                                             .now = now,
                                             .elastic_targets = view.elastic_targets,
                                             .board = board_ != nullptr ? *board_ : *no_board,
                                             .specs = *specs_,
                                             .settings = settings}));
    // Fair-share usage, at most every usage_write_interval: a restart loses at most that
    // much accounting instead of all of it.
    if (write_usage) {
      for (const auto& [tenant, u] : usage_) {
        CORRAL_RETURN_IF_ERROR(tx.scheduler().put_tenant_usage(
            {.tenant = tenant, .gpu_seconds = u.value_at(now), .as_of = now}));
      }
    }
    return Status();
  });
  phase_done(CyclePhaseHistogram::kApply);
  ++metrics_.sched_cycles;
  metrics_.sched_cycle_us_total +=
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0)
          .count();
  if (!committed.ok()) {
    if (committed.code() == core::StatusCode::kAlreadyExists) ++metrics_.sched_apply_conflicts;
    force_full_read();
    return committed;
  }
  metrics_.sched_borrowed_at_commit += recount.borrowed;
  metrics_.sched_rack_power_conflicts += power_conflicts;
  if (recount.dropped + power_conflicts > 0) {
    metrics_.sched_quota_conflicts += recount.dropped;
    wake();  // the dropped jobs try again at once, seeing the other shard's GPUs
  }
  apply_effects(applied.fx, board_ != nullptr ? *board_ : *no_board);
  metrics_.count_committed(applied.fx.tenant_events);
  if (write_usage) last_usage_write_ = now;
  for (const std::int64_t id : applied.left_queue) pending_.erase(id);
  for (auto& row : applied.back_in_queue) pending_.insert_or_assign(row.id.value, std::move(row));

  // 6. Write pending jobs' reasons, positions and planned starts.
  CORRAL_RETURN_IF_ERROR(write_pending(decisions, view.held, now));
  const auto placed = static_cast<std::int64_t>(applied.placed.size());
  metrics_.sched_placements += placed;
  // Each shard's loop adds its own queue to the gauge (the replica may run several).
  const auto pending = static_cast<std::int64_t>(decisions.pending.size());
  metrics_.pending_jobs += pending - pending_shown_;
  pending_shown_ = pending;
  metrics_.running_jobs = static_cast<std::int64_t>(view.holding.size()) + placed;
  return Status();
}

void SchedLoop::publish_positions(const sched::Decisions& decisions) {
  auto positions = std::make_shared<QueuePositions>();
  positions->reserve(decisions.pending.size());
  for (const auto& p : decisions.pending) positions->emplace_back(p.job.value, p.position);
  std::sort(positions->begin(), positions->end());
  std::lock_guard lock(positions_mu_);
  positions_ = std::move(positions);
}

std::shared_ptr<const SchedLoop::QueuePositions> SchedLoop::queue_positions() const {
  std::lock_guard lock(positions_mu_);
  return positions_;
}

std::string SchedLoop::last_error() const {
  std::lock_guard lock(positions_mu_);
  return last_error_;
}

std::shared_ptr<const SchedLoop::TenantShares> SchedLoop::tenant_shares() const {
  std::lock_guard lock(positions_mu_);
  return shares_;
}

std::int32_t SchedLoop::queue_position(const QueuePositions* positions, core::JobId job) {
  if (positions == nullptr) return 0;
  const auto it = std::lower_bound(positions->begin(), positions->end(),
                                   std::pair<std::int64_t, std::int32_t>(job.value, 0));
  return it != positions->end() && it->first == job.value ? it->second : 0;
}

void SchedLoop::accrue_usage(const StoreView& view, core::Time now) {
  // Each holding job's GPUs since the last cycle, weighted by the type's factor (a share
  // by its share).
  const double dt_s = static_cast<double>(core::to_ms(now - last_cycle_)) / 1000.0;
  last_cycle_ = now;
  if (dt_s <= 0) return;
  std::map<std::int64_t, const core::TenantId*> tenant_of;
  for (const auto& job : view.holding) tenant_of[job.id.value] = &job.tenant;
  for (const auto& a : view.allocations) {
    const auto t = tenant_of.find(a.job.value);
    if (t == tenant_of.end()) continue;
    const auto type = core::find_builtin_gpu_type(a.gpu_type.value);
    auto [u, fresh] = usage_.try_emplace(*t->second, options_.config.usage_half_life);
    const double held = static_cast<double>(a.milli()) / 1000;
    u->second.add(dt_s * held * (type ? type->usage_factor : 1.0), now);
  }
}

void SchedLoop::forget_requests(const StoreView& view) {
  // Parsed requests of jobs no longer pending or holding are dropped on full reads only:
  // tracking liveness every cycle cost as much as the rest of the loop on a long queue.
  std::set<std::int64_t> live;
  for (const auto& [id, job] : pending_) live.insert(id);
  for (const auto& job : view.holding) live.insert(job.id.value);
  requests_.retain(live);
}

Status SchedLoop::read_run_history(store::RecordRepo& records, const StoreView& view) {
  std::set<std::string> names;
  for (const auto& [id, job] : pending_) names.insert(job.name);
  for (const auto& job : view.holding) names.insert(job.name);
  CORRAL_ASSIGN_OR_RETURN(auto rows, records.list_runs({names.begin(), names.end()}));
  runs_ = run_history_from(rows);
  return Status();
}

}  // namespace corral::server
