#include "sim/traces/pollux.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <map>
#include <set>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "sim/internal/pollux_apps.h"

namespace corral::sim {
namespace {

namespace fs = std::filesystem;
using pollux::AppByType;
using pollux::Apps;
using pollux::csv_cells;
using pollux::kMaxElasticGpus;
using pollux::load_apps;
using pollux::model_for;
using pollux::step_seconds;
using pollux::TypedModel;

constexpr std::int32_t kGpusPerNode = 4;  // the Pollux testbed

// Each GPU type's profiles and its GPUs per node (for Pollux: the empty type, 4).
struct TypedApps {
  std::map<core::GpuTypeId, Apps> apps;
  std::map<core::GpuTypeId, std::int32_t> node_gpus;
};

// The profile folder: `profiles_dir`, else the first `traces/` beside the workload's
// folder or the one above it (Pollux: workload/x.csv; Sia: workloads/saturn/x.csv).
fs::path profiles_for(const std::string& path, const std::string& profiles_dir) {
  if (!profiles_dir.empty()) return profiles_dir;
  const fs::path dir = fs::path(path).parent_path();
  for (const fs::path& up : {dir.parent_path(), dir.parent_path().parent_path()}) {
    if (fs::is_directory(up / "traces")) return up / "traces";
  }
  return dir.parent_path() / "traces";
}

// One job of a workload CSV: its rigid profile (the trace's GPUs and batch on every
// type), its elastic one, and its duration at its tightest placement on its fastest type.
core::Result<TraceJob> make_job(const TypedApps& typed, const std::string& app_name,
                                std::int32_t gpus, std::int32_t batch) {
  std::map<core::GpuTypeId, TypedModel> models;
  AppByType apps;
  double ideal = std::numeric_limits<double>::infinity();
  std::int32_t most = kMaxElasticGpus;
  for (const auto& [type, by_name] : typed.apps) {
    const std::shared_ptr<const pollux::App>& app = by_name.at(app_name);
    CORRAL_ASSIGN_OR_RETURN(PolluxJobModel m, model_for(*app, gpus, batch));
    models[type] = {.app = app, .m = m};
    apps[type] = app;
    const std::vector<std::int32_t> tight = whole_nodes(gpus, typed.node_gpus.at(type));
    ideal = std::min(ideal, m.work_steps * step_seconds(*app, m, tight));
    // The artifact's elastic (Pollux) limits, simulator.py get_pollux_job_info(): at
    // most min(64, max batch / smallest per-GPU batch) replicas, on every type.
    most = std::min(most, pollux::most_replicas(*app));
  }
  TraceJob job{.tenant = core::TenantId("default"),
               .gpus = gpus,
               .duration_ms = std::max<std::int64_t>(1, std::llround(ideal * 1000)),
               .profile = pollux::rigid_profile(std::move(models))};
  // ncf stays at 1 GPU and a fixed batch. min_replicas 0 (suspended) is a stop here, so
  // the least is 1.
  if (app_name != "ncf") {
    job.elastic_profile = pollux::elastic_profile(std::move(apps), batch);
    job.elastic_min_gpus = 1;
    job.elastic_max_gpus = std::max(gpus, most);
  }
  return job;
}

core::Result<Workload> load_workload(const std::string& path, const TypedApps& typed) {
  std::ifstream in(path);
  if (!in) return core::invalid_argument("workload", fmt::format("cannot open {}", path));
  const Apps& names = typed.apps.begin()->second;
  Workload w{.source = path};
  std::string line;
  std::size_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();  // CRLF files
    if (line.empty()) continue;
    const std::vector<std::string> cells = csv_cells(line);
    if (line_no == 1) {
      if (line != "name,time,application,num_replicas,batch_size") {
        return core::invalid_argument("workload",
                                      fmt::format("{}:1: header must be "
                                                  "name,time,application,num_replicas,batch_size",
                                                  path));
      }
      continue;
    }
    const auto bad = [&](int column, const std::string& why) {
      return core::invalid_argument(
          "workload", fmt::format("{}:{}: column {}: {}", path, line_no, column, why));
    };
    if (cells.size() != 5) return bad(0, fmt::format("expected 5 columns, got {}", cells.size()));
    if (!names.contains(cells[2])) return bad(3, fmt::format("unknown application '{}'", cells[2]));
    double time_s = 0;  // Pollux writes whole seconds, Sia "401.0"
    std::int32_t gpus = 0, batch = 0;
    const auto num = [](const std::string& s, auto& v) {
      const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
      return ec == std::errc() && ptr == s.data() + s.size();
    };
    if (!num(cells[1], time_s) || !(time_s >= 0 && time_s < 1e12)) {
      return bad(2, "time must be seconds >= 0");
    }
    if (!num(cells[3], gpus) || gpus < 1 || gpus > 1024) return bad(4, "num_replicas: 1..1024");
    if (!num(cells[4], batch) || batch < 1) return bad(5, "batch_size must be >= 1");
    CORRAL_ASSIGN_OR_RETURN(TraceJob job, make_job(typed, cells[2], gpus, batch));
    job.name = cells[0];
    job.submit_ms = std::llround(time_s * 1000);
    w.jobs.push_back(std::move(job));
  }
  std::stable_sort(w.jobs.begin(), w.jobs.end(),
                   [](const TraceJob& a, const TraceJob& b) { return a.submit_ms < b.submit_ms; });
  return w;
}

// The artifact's simulator_config.py clusters, by the fleet type each one's GPUs are.
// "dgx-ext" is the artifact's default A100 cluster; it does not say which A100 memory
// size, so it is taken as the 40 GB part. Its "dgx" (also A100) is not mapped.
constexpr SiaGpuType kSiaTypes[] = {{"T4", "aws", 4},
                                    {"V100", "azure", 8},
                                    {"A100-40GB", "dgx-ext", 8},
                                    {"RTX6000", "quad", 4},
                                    {"RTX2080Ti", "rtx", 8}};

}  // namespace

core::Result<PolluxJobModel> pollux_job_model(const std::string& profiles_dir,
                                              const std::string& application, std::int32_t gpus,
                                              std::int32_t batch_size,
                                              std::span<const std::int32_t> gpus_per_node) {
  CORRAL_ASSIGN_OR_RETURN(Apps apps, load_apps(profiles_dir, ""));
  const auto it = apps.find(application);
  if (it == apps.end()) {
    return core::invalid_argument("application", fmt::format("unknown '{}'", application));
  }
  CORRAL_ASSIGN_OR_RETURN(PolluxJobModel m, model_for(*it->second, gpus, batch_size));
  m.step_seconds = step_seconds(*it->second, m, gpus_per_node);
  return m;
}

core::Result<Workload> load_pollux_workload(const std::string& path,
                                            const std::string& profiles_dir) {
  TypedApps typed;
  CORRAL_ASSIGN_OR_RETURN(typed.apps[core::GpuTypeId("")],
                          load_apps(profiles_for(path, profiles_dir), ""));
  typed.node_gpus[core::GpuTypeId("")] = kGpusPerNode;
  return load_workload(path, typed);
}

std::span<const SiaGpuType> sia_gpu_types() { return kSiaTypes; }

std::vector<std::int32_t> whole_nodes(std::int32_t gpus, std::int32_t node_gpus) {
  std::vector<std::int32_t> per_node(static_cast<std::size_t>(gpus / node_gpus), node_gpus);
  if (gpus % node_gpus != 0) per_node.push_back(gpus % node_gpus);
  return per_node;
}

core::Result<Workload> load_sia_workload(const std::string& path, const std::string& profiles_dir) {
  const fs::path dir = profiles_for(path, profiles_dir);
  TypedApps typed;
  for (const SiaGpuType& t : kSiaTypes) {
    const core::GpuTypeId type(t.gpu_type);
    CORRAL_ASSIGN_OR_RETURN(typed.apps[type], load_apps(dir, std::string("-") + t.cluster));
    typed.node_gpus[type] = t.node_gpus;
  }
  return load_workload(path, typed);
}

std::vector<core::ScalingPoint> scaling_curve(const RuntimeProfile& profile,
                                              const core::GpuTypeId& gpu_type,
                                              std::int32_t min_gpus, std::int32_t max_gpus,
                                              std::int32_t node_gpus) {
  std::vector<core::ScalingPoint> curve;
  const auto add = [&](std::int32_t n) {
    curve.push_back(
        {.gpus = n, .throughput = 1.0 / profile.seconds(gpu_type, whole_nodes(n, node_gpus))});
  };
  for (std::int32_t n = std::max(min_gpus, 1); n < max_gpus; n *= 2) add(n);
  add(max_gpus);
  return curve;
}

}  // namespace corral::sim
