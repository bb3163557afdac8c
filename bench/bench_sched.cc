// decide() on a 10,000-GPU fleet: 1,250 nodes x 8 GPUs, 4 GPU types, 40 leaf switches,
// 5 spines, 50 tenants, 2,000 running jobs filling it and 5,000 pending jobs of 1-512
// GPUs. Run:  build/release/bench/bench_sched --benchmark_repetitions=5
//                 --benchmark_report_aggregates_only=true
#include <chrono>
#include <cstdio>
#include <map>

#include <benchmark/benchmark.h>

#include "sched/check.h"
#include "sched/decide.h"
#include "testing/random_fleet.h"

namespace corral::sched {
namespace {

using testing::Rng;

constexpr std::int32_t kRunning = 2'000;
constexpr std::int32_t kPending = 5'000;

testing::FleetShape fleet_shape() {
  return {.nodes = 1'250,
          .gpu_types = 4,
          .leaves = 40,
          .spines = 5,
          .tenants = 50,
          .unhealthy_gpu_fraction = 0.005,
          .cordoned_node_fraction = 0.01,
          .mixed_node_shapes = false,
          .rack_power_caps = true,
          .cpu_limits = true,
          .quotas = true};
}

// The fleet with kRunning jobs placed by decide() itself (so the running state is
// consistent), and `pending` jobs queued. With `preemptible`, half the running jobs are
// preemptible tier-0 work that checkpoints every 30 minutes, so blocked production jobs
// have victims to choose from. With `regions` > 1 the nodes are split into that many
// regions and half the pending jobs are bound to one (a tenth of those to a region no
// node is in).
SnapshotInput make_input(std::int32_t pending, bool preemptible = false, std::int32_t regions = 1) {
  Rng rng(42);
  testing::FleetShape shape = fleet_shape();
  shape.regions = regions;
  SnapshotInput in = testing::random_fleet(rng, shape);
  // Generous borrow limits so the fleet fills up; quotas still bind some tenants.
  for (core::Tenant& t : in.tenants) {
    for (auto& [type, q] : t.quotas) {
      q.borrow_limit_milli = std::max<std::int64_t>(q.borrow_limit_milli, 400'000);
    }
  }
  const testing::WorkloadShape small{.max_gpus = 8};
  std::int64_t next_id = 1;
  while (static_cast<std::int32_t>(in.running.size()) < kRunning) {
    in.pending = testing::random_jobs(rng, in, small, next_id, 500);
    next_id += 500;
    auto s = build_snapshot(in);
    // Filling without preemption: a placement onto a victim's GPUs would hold them twice
    // here, where nobody stops the victim.
    SchedulerConfig fill;
    fill.preemption.enabled = false;
    const Decisions d = decide(*s, fill, core::Time{});
    if (d.placements.empty()) break;
    std::map<core::JobId, const JobRequest*> by_id;
    for (const auto& p : in.pending) by_id[p.request.id] = &p.request;
    for (const Placement& p : d.placements) {
      if (static_cast<std::int32_t>(in.running.size()) == kRunning) break;
      in.running.push_back({.request = *by_id[p.job], .gpus = p.gpus, .borrowed = p.borrowed});
    }
  }
  const testing::WorkloadShape big{.max_gpus = 512, .region_fraction = regions > 1 ? 0.5 : 0.0};
  in.pending = testing::random_jobs(rng, in, big, 1'000'000, pending);
  if (preemptible) {
    for (RunningJob& r : in.running) {
      if (!rng.chance(0.5)) continue;
      r.request.tier = 0;
      r.request.preemptible = true;
      r.request.checkpoint_interval = core::seconds(1800);
      r.request.restore_time = core::seconds(120);
      r.last_checkpoint_at = core::time_from_ms(rng.uniform(0, 1'800'000));
    }
  }
  return in;
}

ClusterSnapshot make_snapshot(std::int32_t pending, bool preemptible = false) {
  auto s = build_snapshot(make_input(pending, preemptible));
  if (!s.ok()) std::fprintf(stderr, "%s\n", s.status().to_string().c_str());
  return std::move(s).value();
}

void BM_DecideFull10k(benchmark::State& state) {
  const ClusterSnapshot s = make_snapshot(kPending);
  std::size_t placed = 0;
  for (auto _ : state) {
    const Decisions d = decide(s, SchedulerConfig{}, core::Time{});
    placed = d.placements.size();
    benchmark::DoNotOptimize(d);
  }
  std::size_t held = 0;
  for (const auto& r : s.running()) held += r.gpus.size();
  state.counters["running"] = static_cast<double>(s.running().size());
  state.counters["gpus_held"] = static_cast<double>(held);
  state.counters["pending"] = static_cast<double>(s.pending().size());
  state.counters["placed"] = static_cast<double>(placed);
}
BENCHMARK(BM_DecideFull10k)->Unit(benchmark::kMillisecond);

// The same with every running job protected by the minimum runtime (the default before the
// preemptible tier lost its protection): decide() places nothing and preempts nothing, so
// this compares the cost of the code itself across versions.
void BM_DecideFull10kAllProtected(benchmark::State& state) {
  const ClusterSnapshot s = make_snapshot(kPending);
  SchedulerConfig config;
  config.preemption.min_runtime_by_tier.clear();
  std::size_t placed = 0;
  for (auto _ : state) {
    const Decisions d = decide(s, config, core::Time{});
    placed = d.placements.size();
    benchmark::DoNotOptimize(d);
  }
  state.counters["placed"] = static_cast<double>(placed);
}
BENCHMARK(BM_DecideFull10kAllProtected)->Unit(benchmark::kMillisecond);

// The added cost of one more pending job: decide() on 5,000 + 500 pending minus decide()
// on 5,000, divided by 500 (one job alone is below the timer's noise).
void BM_DecideOneMore10k(benchmark::State& state) {
  constexpr std::int32_t kExtra = 500;
  const ClusterSnapshot base = make_snapshot(kPending);
  const ClusterSnapshot more = make_snapshot(kPending + kExtra);
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(decide(base, SchedulerConfig{}, core::Time{}));
    const auto t1 = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(decide(more, SchedulerConfig{}, core::Time{}));
    const auto t2 = std::chrono::steady_clock::now();
    const double extra = std::chrono::duration<double>((t2 - t1) - (t1 - t0)).count();
    state.SetIterationTime(std::max(extra, 0.0) / kExtra);
  }
}
BENCHMARK(BM_DecideOneMore10k)->UseManualTime()->Iterations(20)->Unit(benchmark::kMicrosecond);

// A full cluster with preemption candidates: half the running jobs are preemptible, and a
// third of the pending jobs are of a higher tier.
void BM_DecidePreempt10k(benchmark::State& state) {
  const ClusterSnapshot s = make_snapshot(kPending, /*preemptible=*/true);
  const core::Time now = core::time_from_ms(4 * 3'600'000);
  std::size_t preempted = 0, placed = 0;
  for (auto _ : state) {
    const Decisions d = decide(s, SchedulerConfig{}, now);
    preempted = d.preemptions.size() + d.resizes.size();
    placed = d.placements.size();
    benchmark::DoNotOptimize(d);
  }
  state.counters["preempted"] = static_cast<double>(preempted);
  state.counters["placed"] = static_cast<double>(placed);
}
BENCHMARK(BM_DecidePreempt10k)->Unit(benchmark::kMillisecond);

// 1,000 elastic jobs among the running and the pending, half each. A running one holds
// its size within a range from half to twice it, so it is a shrink candidate for blocked
// jobs and may grow; a pending one accepts half to twice its size, powers of two, so it
// starts at the largest that fits. Four hours in, every running job is past its minimum
// runtime.
void BM_DecideElastic10k(benchmark::State& state) {
  constexpr std::int32_t kElastic = 500;
  SnapshotInput in = make_input(kPending);
  std::int32_t running = 0, pending = 0;
  for (RunningJob& r : in.running) {
    const auto held = static_cast<std::int32_t>(r.gpus.size());
    if (running == kElastic || held < 2 || r.request.gpus_per_node != 0) continue;
    r.request.elastic = core::ElasticRange{.min_gpus = held / 2, .max_gpus = held * 2};
    ++running;
  }
  for (PendingJob& p : in.pending) {
    const std::int32_t g = p.request.gpus;
    if (pending == kElastic || g < 2 || p.request.gpus_per_node != 0) continue;
    p.request.elastic = core::ElasticRange{
        .min_gpus = g / 2, .max_gpus = g * 2, .step = core::ElasticStep::kPowerOfTwo};
    ++pending;
  }
  auto built = build_snapshot(in);
  if (!built.ok()) std::fprintf(stderr, "%s\n", built.status().to_string().c_str());
  const ClusterSnapshot s = std::move(built).value();
  const core::Time now = core::time_from_ms(4 * 3'600'000);
  std::size_t placed = 0, resized = 0;
  for (auto _ : state) {
    const Decisions d = decide(s, SchedulerConfig{}, now);
    placed = d.placements.size();
    resized = d.resizes.size();
    benchmark::DoNotOptimize(d);
  }
  state.counters["elastic_running"] = running;
  state.counters["elastic_pending"] = pending;
  state.counters["placed"] = static_cast<double>(placed);
  state.counters["resized"] = static_cast<double>(resized);
}
BENCHMARK(BM_DecideElastic10k)->Unit(benchmark::kMillisecond);

// The same fleet in four regions of 2,500 GPUs, half the pending jobs bound to one of
// them: what region-bound placement costs against BM_DecideFull10k.
void BM_DecideRegions10k(benchmark::State& state) {
  auto built = build_snapshot(make_input(kPending, /*preemptible=*/false, /*regions=*/4));
  if (!built.ok()) std::fprintf(stderr, "%s\n", built.status().to_string().c_str());
  const ClusterSnapshot s = std::move(built).value();
  std::size_t placed = 0, bound = 0;
  for (auto _ : state) {
    const Decisions d = decide(s, SchedulerConfig{}, core::Time{});
    placed = d.placements.size();
    benchmark::DoNotOptimize(d);
  }
  for (const PendingJob& p : s.pending()) bound += p.request.region.empty() ? 0 : 1;
  state.counters["bound"] = static_cast<double>(bound);
  state.counters["running"] = static_cast<double>(s.running().size());
  state.counters["placed"] = static_cast<double>(placed);
}
BENCHMARK(BM_DecideRegions10k)->Unit(benchmark::kMillisecond);

void BM_BuildSnapshot10k(benchmark::State& state) {
  const SnapshotInput in = make_input(kPending);
  for (auto _ : state) {
    auto s = build_snapshot(in);
    benchmark::DoNotOptimize(s);
  }
}
BENCHMARK(BM_BuildSnapshot10k)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace corral::sched

BENCHMARK_MAIN();
