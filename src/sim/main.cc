// corral-sim: replays a workload on a simulated fleet under one or more policies, with
// the production scheduler in virtual time, and writes summary.json, jobs.csv and
// report.html. Exit status: 0 done, 1 a run failed (bad input, or the scheduler broke an
// invariant), 2 usage error.
//
// `corral-sim replay FILE...` decides captured production cycles again instead
// (sim/replay_cli.h); `corral-sim fill` runs FGD's GPU-sharing fill experiment
// (sim/fill_cli.h).
#include <cmath>
#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cycle/scheduler_config.h"
#include "sim/engine.h"
#include "sim/fill_cli.h"
#include "sim/fleet.h"
#include "sim/metrics.h"
#include "sim/policies.h"
#include "sim/replay_cli.h"
#include "sim/report.h"
#include "sim/sharing_incentive.h"
#include "sim/traces/normalized.h"
#include "sim/traces/pollux.h"
#include "sim/traces/synthetic.h"

namespace {

using namespace corral;  // NOLINT(google-build-using-namespace): a main() file

int fail(const core::Status& s) {
  std::fprintf(stderr, "corral-sim: %s\n", s.to_string().c_str());
  return 1;
}

int run(int argc, char** argv) {
  CLI::App app{"corral-sim: the production scheduler in virtual time over a simulated fleet"};
  std::string fleet_path, workload_path, format = "normalized", out_dir;
  std::vector<std::string> policies;
  std::vector<double> sweep_fairness;
  std::int64_t max_jobs = 0;
  double load_factor = 0, cycle_s = 10, checkpoint_s = 0, checkpoint_cost_s = 0, restore_s = 0,
         estimate = 1.0;
  std::uint64_t seed = 1;
  std::int32_t check_every = 1;
  bool no_failures = false, no_early_stopping = false, quiet = false, checkpoint_on_stop = false,
       whole_including = false, no_gpu_speed = false, sharing_incentive = false;
  std::string pollux_profiles, scheduler_config;
  double start_s = 0, min_runtime_s = -1;
  std::int32_t max_preemptions = -1, whole_nodes_above = 0;
  std::vector<double> las_thresholds;
  app.add_option("--fleet", fleet_path, "fleet YAML (examples/fleets)")->required();
  app.add_option("--workload", workload_path, "workload file (normalized CSV or synthetic YAML)")
      ->required();
  app.add_option("--workload-format", format, "normalized | synthetic | pollux | sia")
      ->check(CLI::IsMember({"normalized", "synthetic", "pollux", "sia"}));
  app.add_option("--pollux-profiles", pollux_profiles,
                 "pollux, sia: folder of per-application profiles (default: the traces/ folder "
                 "beside the workload's folder or the one above it)");
  app.add_option("--start-s", start_s, "start-up time paid on every start, the first included")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--checkpoint-on-stop", checkpoint_on_stop,
               "a preempted or failed job keeps all its work (checkpoints on the way out)");
  app.add_option("--las-thresholds-gpu-s", las_thresholds,
                 "tiresias: attained-service queue thresholds in GPU-seconds")
      ->delimiter(',');
  app.add_option("--preempt-min-runtime-s", min_runtime_s,
                 "preemptive policies: a job runs this long before it may be preempted")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--max-preemptions", max_preemptions,
                 "preemptive policies: preemptions after which a job is protected")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--scheduler-config", scheduler_config,
                 "YAML whose scheduler: section (corrald's --config will do) is applied over "
                 "the Corral policies' default config; the baselines keep theirs. The flags "
                 "above apply after it");
  app.add_option("--policy", policies,
                 "policy to run, repeatable: fifo | slurm | tiresias | corral")
      ->required();
  app.add_option("--out", out_dir, "output directory")->required();
  app.add_option("--max-jobs", max_jobs, "replay only the first N jobs (0: all)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--load-factor", load_factor,
                 "synthetic: offered load vs fleet GPUs; normalized: multiply the arrival rate")
      ->check(CLI::PositiveNumber);
  app.add_option("--seed", seed, "seed for failures and synthetic workloads");
  app.add_option("--cycle-interval-s", cycle_s,
                 "at most one scheduling cycle per this many "
                 "virtual seconds")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--check-every", check_every, "run sched::check on every Nth cycle (0: never)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--checkpoint-interval-s", checkpoint_s, "jobs checkpoint this often (0: never)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--checkpoint-cost-s", checkpoint_cost_s,
                 "seconds a job stalls to write each periodic checkpoint")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--restore-s", restore_s, "restore time after a restart from a checkpoint")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--estimate-factor", estimate,
                 "run-time estimate given to the scheduler, as a "
                 "multiple of the true duration")
      ->check(CLI::PositiveNumber);
  app.add_option("--whole-nodes-above", whole_nodes_above,
                 "a rigid job asking more than N GPUs, in a multiple of N, takes N on each "
                 "node (whole nodes of N GPUs); others keep the scheduler's split (0: off)")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--whole-nodes-including-n", whole_including,
               "with --whole-nodes-above N: a job of exactly N GPUs also takes one whole node");
  app.add_flag("--no-failures", no_failures, "ignore the fleet's failure model");
  app.add_flag("--no-early-stopping", no_early_stopping,
               "run every trial of a sweep to its end, whatever its early-stopping rule");
  app.add_flag("--no-gpu-speed", no_gpu_speed,
               "do not tell Corral's policies each job's speed by GPU type (an ablation)");
  app.add_option("--sweep-fairness", sweep_fairness,
                 "also run Corral's default once per value of its fairness knob (0 to 1), as "
                 "policies named 'corral fairness=F'; the report draws the frontier")
      ->delimiter(',')
      ->check(CLI::Range(0.0, 1.0));
  app.add_flag("--sharing-incentive", sharing_incentive,
               "per tenant, its JCT alone on its guaranteed share over its JCT here (one more "
               "run per tenant and policy)");
  app.add_flag("--quiet", quiet, "print nothing on success");
  app.footer(
      "To decide a captured production cycle again: corral-sim replay FILE... "
      "[--config FILE.yaml] [--check] (corral-sim replay --help)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }

  // 1. Inputs.
  auto fleet = sim::load_fleet(fleet_path);
  if (!fleet.ok()) return fail(fleet.status());
  std::vector<sim::Policy> chosen;
  // Each named policy, then Corral's default once per swept fairness.
  std::vector<std::pair<std::string, std::optional<double>>> runs_of;
  for (const std::string& name : policies) runs_of.emplace_back(name, std::nullopt);
  for (const double f : sweep_fairness) runs_of.emplace_back("corral", f);
  for (const auto& [name, fairness] : runs_of) {
    auto p = sim::policy_by_name(name);
    if (!p.ok()) {
      std::fprintf(stderr, "corral-sim: %s\n", p.status().to_string().c_str());
      return 2;
    }
    if (!scheduler_config.empty() && p->corral) {
      auto applied = cycle::load_scheduler_config(scheduler_config, p->config);
      if (!applied.ok()) return fail(applied.status());
      p->config = std::move(*applied);
    }
    if (fairness) {
      p->config.fairness = *fairness;
      p->name = fmt::format("corral fairness={}", *fairness);
    }
    chosen.push_back(std::move(*p));
  }
  // The flags that override the named policies' knobs, for every run alike.
  for (sim::Policy& p : chosen) {
    if (no_gpu_speed) p.gpu_speed = false;
    if (!las_thresholds.empty()) p.config.las_thresholds_gpu_seconds = las_thresholds;
    if (min_runtime_s >= 0) {
      p.config.preemption.min_runtime = core::Duration(std::llround(min_runtime_s * 1000));
    }
    if (max_preemptions >= 0) p.config.preemption.max_preemptions_per_job = max_preemptions;
  }
  sim::Workload workload;
  if (format == "synthetic") {
    auto spec = sim::load_synthetic_spec(workload_path);
    if (!spec.ok()) return fail(spec.status());
    if (load_factor > 0) spec->load_factor = load_factor;
    if (max_jobs > 0) spec->jobs = std::min(spec->jobs, max_jobs);
    if (app.count("--seed") > 0) spec->seed = seed;
    workload = sim::generate_synthetic(*spec, fleet->total_gpus());
    workload.source = workload_path;
  } else {
    auto loaded = format == "pollux" ? sim::load_pollux_workload(workload_path, pollux_profiles)
                  : format == "sia"  ? sim::load_sia_workload(workload_path, pollux_profiles)
                                     : sim::load_normalized_csv(workload_path);
    if (!loaded.ok()) return fail(loaded.status());
    workload = std::move(*loaded);
    if (max_jobs > 0 && static_cast<std::int64_t>(workload.jobs.size()) > max_jobs) {
      workload.jobs.resize(static_cast<std::size_t>(max_jobs));
    }
    if (load_factor > 0) {
      // Compress (or stretch) arrivals around the first submission.
      const std::int64_t t0 = workload.jobs.empty() ? 0 : workload.jobs.front().submit_ms;
      for (sim::TraceJob& j : workload.jobs) {
        j.submit_ms = t0 + std::llround(static_cast<double>(j.submit_ms - t0) / load_factor);
      }
    }
  }

  // 2. One run per policy, on the same workload.
  const auto ms = [](double s) { return core::Duration(std::llround(s * 1000)); };
  const sim::EngineOptions options{.cycle_interval = ms(cycle_s),
                                   .check_every = check_every,
                                   .failures = !no_failures,
                                   .whole_nodes_above = whole_nodes_above,
                                   .whole_nodes_including = whole_including,
                                   .seed = seed,
                                   .runtime = {.checkpoint_interval = ms(checkpoint_s),
                                               .checkpoint_cost = ms(checkpoint_cost_s),
                                               .restore_time = ms(restore_s),
                                               .start_time = ms(start_s),
                                               .checkpoint_on_stop = checkpoint_on_stop,
                                               .estimate_factor = estimate},
                                   .early_stopping = !no_early_stopping};
  std::vector<sim::PolicyRun> runs;
  for (const sim::Policy& policy : chosen) {
    auto result = sim::simulate(*fleet, workload, policy, options);
    if (!result.ok()) return fail(result.status());
    sim::Metrics metrics = sim::compute_metrics(*result, *fleet);
    metrics.sweeps = sim::sweep_metrics(workload, *result);
    if (sharing_incentive) {
      const core::Status s =
          sim::add_sharing_incentive(*fleet, workload, policy, options, *result, metrics);
      if (!s.ok()) return fail(s);
    }
    if (!quiet) {
      std::printf(
          "%-8s jobs=%lld allocation=%.3f mean_jct=%.0fs median_jct=%.0fs p99_jct=%.0fs "
          "mean_queue=%.0fs makespan=%.0fs jain=%.3f cycles=%lld wall=%.2fs (decide %.2fs)\n",
          policy.name.c_str(), static_cast<long long>(metrics.jobs), metrics.gpu_allocation,
          metrics.jct_s.mean, metrics.jct_s.median, metrics.jct_s.p99, metrics.queue_s.mean,
          metrics.makespan_s, metrics.jain_index, static_cast<long long>(metrics.cycles),
          metrics.wall_seconds, metrics.decide_seconds);
      if (const sim::SweepMetrics& s = metrics.sweeps; s.sweeps > 0) {
        std::printf(
            "         sweeps=%lld trials=%lld stopped_early=%lld trial_gpu_hours=%.1f "
            "best_found=%lld/%lld mean_regret=%.4f mean_sweep_hours=%.2f "
            "others_mean_jct_hours=%.2f\n",
            static_cast<long long>(s.sweeps), static_cast<long long>(s.trials),
            static_cast<long long>(s.stopped_early), s.trial_gpu_hours,
            static_cast<long long>(s.best_found), static_cast<long long>(s.finished), s.mean_regret,
            s.mean_sweep_hours, s.others_mean_jct_hours);
      }
    }
    runs.push_back({std::move(*result), std::move(metrics)});
  }
  if (const core::Status s = sim::write_outputs(out_dir, *fleet, workload, runs); !s.ok()) {
    return fail(s);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc >= 2 && std::string_view(argv[1]) == "replay") {
      return corral::sim::replay_command(argc - 1, argv + 1);
    }
    if (argc >= 2 && std::string_view(argv[1]) == "fill") {
      return corral::sim::fill_command(argc - 1, argv + 1);
    }
    return run(argc, argv);
  } catch (const std::exception& e) {
    // Every library error should have become a Status; this is the last net.
    std::fprintf(stderr, "corral-sim: internal error: %s\n", e.what());
    return 1;
  }
}
