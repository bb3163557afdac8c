// corral-sim-reliability: the LLM-scale reliability study (sim/reliability.h) over a grid
// of restart latencies x spare pools x checkpoint intervals, several seeds each. Prints a
// Markdown table of medians over the seeds beside the Young/Daly estimate; --csv writes
// every run. Exit status: 0 done, 1 a run failed, 2 usage error.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "sim/reliability.h"

namespace {

using namespace corral;  // NOLINT(google-build-using-namespace): a main() file

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

core::Duration from_s(double s) { return core::Duration(std::llround(s * 1000)); }

int run(int argc, char** argv) {
  CLI::App app{"corral-sim-reliability: one LLM training gang under node failures"};
  sim::LlmReliabilitySetup base;
  std::vector<double> intervals_min = {30}, restarts_min = {10};
  std::vector<std::int32_t> spares = {0};
  std::int32_t seeds = 5;
  double cost_s = 60, repair_h = 4, cycle_s = 10;
  std::string csv_path;
  app.add_option("--nodes", base.nodes, "the job's nodes")->check(CLI::PositiveNumber);
  app.add_option("--gpus-per-node", base.gpus_per_node)->check(CLI::Range(1, 64));
  app.add_option("--days", base.days, "simulated days")->check(CLI::PositiveNumber);
  app.add_option("--interruptions", base.interruptions,
                 "expected job interruptions over --days (sets the per-GPU MTBF)")
      ->check(CLI::PositiveNumber);
  app.add_option("--checkpoint-interval-min", intervals_min, "minutes of work between checkpoints")
      ->delimiter(',')
      ->check(CLI::PositiveNumber);
  app.add_option("--checkpoint-cost-s", cost_s, "seconds the job stalls to write a checkpoint")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--restart-min", restarts_min, "restart latency after a failure, minutes")
      ->delimiter(',')
      ->check(CLI::NonNegativeNumber);
  app.add_option("--spares", spares, "spare nodes in the fleet")
      ->delimiter(',')
      ->check(CLI::NonNegativeNumber);
  app.add_option("--repair-h", repair_h, "hours until a failed GPU's node is back")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--seeds", seeds, "runs per cell, seeds 1..N; the table gives the median")
      ->check(CLI::PositiveNumber);
  app.add_option("--cycle-interval-s", cycle_s, "scheduling period")->check(CLI::NonNegativeNumber);
  app.add_option("--check-every", base.check_every, "sched::check on every Nth cycle (0: never)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--csv", csv_path, "write every run to this CSV file");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  base.checkpoint_cost = from_s(cost_s);
  base.repair = from_s(repair_h * 3600);
  base.cycle_interval = from_s(cycle_s);

  std::FILE* csv = nullptr;
  if (!csv_path.empty()) {
    csv = std::fopen(csv_path.c_str(), "w");
    if (csv == nullptr) {
      std::fprintf(stderr, "corral-sim-reliability: --csv: cannot write %s\n", csv_path.c_str());
      return 1;
    }
    std::fprintf(csv,
                 "restart_min,spares,interval_min,seed,effective,productive_s,lost_s,"
                 "checkpoint_s,restart_s,waiting_s,wall_s,interruptions,gpu_failures\n");
  }
  const double mtbi_s = base.days * 86400.0 / base.interruptions;
  std::printf(
      "| restart (min) | spares (nodes) | interval (min) | effective, median [min, max] | "
      "lost | checkpoint | restart | waiting | interruptions | Young/Daly |\n"
      "| ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  for (const double restart_min : restarts_min) {
    for (const std::int32_t spare : spares) {
      for (const double interval_min : intervals_min) {
        sim::LlmReliabilitySetup s = base;
        s.restart = from_s(restart_min * 60);
        s.spares = spare;
        s.checkpoint_interval = from_s(interval_min * 60);
        std::vector<double> eff, lost, ckpt, rst, wait, intr;
        for (std::int32_t seed = 1; seed <= seeds; ++seed) {
          s.seed = static_cast<std::uint64_t>(seed);
          auto r = sim::run_llm_reliability(s);
          if (!r.ok()) {
            std::fprintf(stderr, "corral-sim-reliability: %s\n", r.status().to_string().c_str());
            return 1;
          }
          eff.push_back(r->effective());
          lost.push_back(r->lost_s / r->wall_s);
          ckpt.push_back(r->checkpoint_s / r->wall_s);
          rst.push_back(r->restart_s / r->wall_s);
          wait.push_back(r->waiting_s / r->wall_s);
          intr.push_back(static_cast<double>(r->interruptions));
          if (csv != nullptr) {
            std::fprintf(csv, "%g,%d,%g,%d,%.5f,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,%lld,%lld\n",
                         restart_min, spare, interval_min, seed, r->effective(), r->productive_s,
                         r->lost_s, r->checkpoint_s, r->restart_s, r->waiting_s, r->wall_s,
                         static_cast<long long>(r->interruptions),
                         static_cast<long long>(r->gpu_failures));
          }
        }
        const double yd =
            sim::young_daly_efficiency(interval_min * 60, cost_s, restart_min * 60, mtbi_s);
        const auto pct = [](double x) { return fmt::format("{:.1f}%", 100 * x); };
        std::printf("| %g | %d | %g | **%s** [%s, %s] | %s | %s | %s | %s | %.0f | %s |\n",
                    restart_min, spare, interval_min, pct(median(eff)).c_str(),
                    pct(*std::min_element(eff.begin(), eff.end())).c_str(),
                    pct(*std::max_element(eff.begin(), eff.end())).c_str(),
                    pct(median(lost)).c_str(), pct(median(ckpt)).c_str(), pct(median(rst)).c_str(),
                    pct(median(wait)).c_str(), median(intr), pct(yd).c_str());
        std::fflush(stdout);
      }
    }
  }
  if (csv != nullptr) std::fclose(csv);
  std::printf(
      "\nMean time between interruptions %.1f min; Young/Daly optimal interval at a %g-s "
      "checkpoint: %.1f min.\n",
      mtbi_s / 60, cost_s, sim::young_daly_interval_s(cost_s, mtbi_s) / 60);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "corral-sim-reliability: internal error: %s\n", e.what());
    return 1;
  }
}
