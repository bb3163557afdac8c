#include "sim/fill_cli.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "cycle/scheduler_config.h"
#include "sim/fill.h"

namespace corral::sim {
namespace {

int fail(const core::Status& s) {
  std::fprintf(stderr, "corral-sim fill: %s\n", s.to_string().c_str());
  return 1;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The run's unallocated share at `percent` of capacity arrived, or its last.
double at_percent(const FillRun& run, std::size_t percent) {
  return run.unallocated.at(std::min(percent, run.unallocated.size() - 1));
}

}  // namespace

int fill_command(int argc, char** argv) {
  CLI::App app{
      "corral-sim fill: GPU-sharing pods placed until the fleet is full (FGD's experiment)",
      "corral-sim fill"};
  std::string nodes, pods, out_dir;
  std::vector<std::string> placements = {"fragmentation", "bestFit", "packing", "random"};
  std::int32_t seeds = 1;
  FillOptions options;
  app.add_option("--nodes", nodes, "node list (openb_node_list_gpu_node.csv)")->required();
  app.add_option("--pods", pods, "pod list (openb_pod_list_default.csv)")->required();
  app.add_option("--placement", placements, "sharePlacement values to run (default: all)");
  app.add_option("--seeds", seeds, "runs per rule, seeds 42, 43, ... (the median is shown)")
      ->check(CLI::Range(1, 100));
  app.add_flag("--shuffle", options.shuffle,
               "the pod list in a seeded random order (the artifact's), not creation order");
  app.add_option("--inflate", options.inflate,
                 "arrivals stop past this multiple of the fleet's GPU capacity")
      ->check(CLI::Range(0.1, 10.0));
  app.add_option("--check-every", options.check_every,
                 "run sched::check on every Nth decision (0: never)");
  app.add_option("--out", out_dir, "directory for fill.csv (each run's curve)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  auto trace = load_fill_trace(nodes, pods);
  if (!trace.ok()) return fail(trace.status());
  std::printf("%zu GPU nodes, %lld GPUs; %zu GPU pods (%lld asking for no GPU left out)\n",
              trace->nodes.size(), static_cast<long long>(trace->capacity_milli() / 1000),
              trace->pods.size(), static_cast<long long>(trace->cpu_only_pods));
  std::printf("%-14s %20s %16s %22s %8s %8s\n", "placement", "unallocated at 100%",
              fmt::format("at {:.0f}% (end)", options.inflate * 100).c_str(),
              "of it on shared GPUs", "placed", "dropped");
  std::vector<FillRun> runs;
  for (const std::string& name : placements) {
    auto config = cycle::apply_scheduler_section(
        YAML::Load(fmt::format("sharePlacement: {}", name)), sched::SchedulerConfig{});
    if (!config.ok()) return fail(config.status());
    std::vector<double> at_100, at_end, leftover, placed, dropped;
    for (std::int32_t i = 0; i < seeds; ++i) {
      options.seed = 42 + static_cast<std::uint64_t>(i);
      auto run = run_fill(*trace, *config, name, options);
      if (!run.ok()) return fail(run.status());
      at_100.push_back(at_percent(*run, 100));
      at_end.push_back(run->unallocated.back());
      leftover.push_back(run->leftover_on_shared);
      placed.push_back(static_cast<double>(run->placed));
      dropped.push_back(static_cast<double>(run->dropped));
      runs.push_back(std::move(*run));
    }
    std::printf("%-14s %19.2f%% %15.2f%% %21.2f%% %8.0f %8.0f\n", name.c_str(),
                100 * median(at_100), 100 * median(at_end), 100 * median(leftover), median(placed),
                median(dropped));
  }
  if (!out_dir.empty()) {
    std::filesystem::create_directories(out_dir);
    std::ofstream csv(std::filesystem::path(out_dir) / "fill.csv");
    csv << "placement,seed,arrived_percent,unallocated\n";
    for (const FillRun& run : runs) {
      for (std::size_t p = 0; p < run.unallocated.size(); ++p) {
        csv << fmt::format("{},{},{},{:.6f}\n", run.placement, run.seed, p, run.unallocated[p]);
      }
    }
    if (!csv) return fail(core::invalid_argument("--out", "cannot write fill.csv"));
  }
  return 0;
}

}  // namespace corral::sim
