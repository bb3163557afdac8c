// What the Pollux and Sia workload readers (traces/pollux.cc) use of the artifact's
// application profiles and goodput model (traces/pollux_apps.cc).
//
// Thread safety: an App is immutable once loaded and shared between the jobs that use it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/gpu_type.h"
#include "core/result.h"
#include "sim/traces/pollux.h"

namespace corral::sim::pollux {

// The artifact's cap on an elastic (Pollux) job's replicas: "simulator can't handle more".
inline constexpr std::int32_t kMaxElasticGpus = 64;

// The cells of one line of the artifact's CSV files, which quote nothing.
std::vector<std::string> csv_cells(const std::string& line);

// One application's profiles (pollux_apps.cc).
class App;
using Apps = std::map<std::string, std::shared_ptr<const App>>;

// One application's profiles by the fleet's GPU type; for Pollux one entry under the
// empty id, which stands for every type.
using AppByType = std::map<core::GpuTypeId, std::shared_ptr<const App>>;

// A rigid job's model on one GPU type.
struct TypedModel {
  std::shared_ptr<const App> app;
  PolluxJobModel m;
};

// Every application's profiles in `dir`; `suffix`: "" for the Pollux files, "-<cluster>"
// for one GPU type's Sia files.
core::Result<Apps> load_apps(const std::filesystem::path& dir, const std::string& suffix);

// A job of `app` on `gpus` GPUs at global `batch`: its per-GPU batch, accumulation and
// work in steps; InvalidArgument when the batch leaves no per-GPU batch.
core::Result<PolluxJobModel> model_for(const App& app, std::int32_t gpus, std::int32_t batch);

// One step's seconds of `m` at a placement (GPUs per node).
double step_seconds(const App& app, const PolluxJobModel& m,
                    std::span<const std::int32_t> gpus_per_node);

// The most replicas the artifact gives an elastic job of `app`: its largest batch over
// its smallest per-GPU batch.
std::int32_t most_replicas(const App& app);

// A rigid job's run time at any placement, by GPU type.
std::shared_ptr<const RuntimeProfile> rigid_profile(std::map<core::GpuTypeId, TypedModel> models);

// An elastic job's run time at any size: the batch split its oracle picks there.
std::shared_ptr<const RuntimeProfile> elastic_profile(AppByType apps, std::int32_t batch);

}  // namespace corral::sim::pollux
