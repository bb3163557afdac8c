// A hyperparameter sweep (docs/jobspec.md#sweeps): trials of one spec over a parameter
// space, run as a job array whose task i is trial i. Trial i's parameters are a pure
// function of the sweep and i (a grid's i-th point, or seeded draws), so corrald, the
// agent's worker environment and corral-sim agree on them without storing them.
//
// Thread safety: value types and pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace corral::core {

// One parameter: a list of choices (grid or random), or a range (random only).
struct SweepParameter {
  std::string name;                 // [a-z][a-z0-9_]*; workers see CORRAL_PARAM_<NAME>
  std::vector<std::string> values;  // the choices, each a JSON scalar's text: 0.01, "adam"
  double min = 0;                   // a range [min, max] when `values` is empty
  double max = 0;
  bool log = false;  // drawn log-uniformly (min > 0): learning rates, weight decay
  friend bool operator==(const SweepParameter&, const SweepParameter&) = default;
};

enum class SweepMethod { kGrid, kRandom };
std::string_view to_string(SweepMethod method);

enum class MetricGoal { kMinimize, kMaximize };
std::string_view to_string(MetricGoal goal);

// Whether `a` is strictly better than `b` for `goal`.
bool better(MetricGoal goal, double a, double b);

// Asynchronous successive halving (ASHA; Li et al., MLSys 2020) in its stopping form:
// rungs at min_step * reduction_factor^k steps, below max_step. A trial that reaches a
// rung goes on only if its metric there is within the best 1/reduction_factor of the
// trials that reached that rung before it (sched/asha.h).
struct AshaRule {
  std::int64_t min_step = 1;
  std::int64_t max_step = 1;  // the step a trial never stopped reaches; not a rung
  std::int32_t reduction_factor = 3;
  friend bool operator==(const AshaRule&, const AshaRule&) = default;
};

struct SweepSpec {
  SweepMethod method = SweepMethod::kRandom;
  std::vector<SweepParameter> parameters;  // by name
  std::int32_t trials = 1;                 // a grid's: the product of its choices
  std::uint64_t seed = 0;                  // random: the same seed, the same trials
  std::int32_t max_running = 0;            // trials holding GPUs at once; 0: no limit
  std::string metric;                      // what trials report through the run API
  MetricGoal goal = MetricGoal::kMinimize;
  std::optional<AshaRule> early_stopping;
  friend bool operator==(const SweepSpec&, const SweepSpec&) = default;
};

// The number of points of a grid over `parameters` (their choices' product), or -1 when
// it passes `cap` (no overflow on the way).
std::int64_t grid_points(const std::vector<SweepParameter>& parameters, std::int64_t cap);

// Trial `index`'s value of each parameter, by name, as JSON scalar text.
// REQUIRES: 0 <= index < sweep.trials, and a grid's parameters all have values.
std::map<std::string, std::string> trial_parameters(const SweepSpec& sweep, std::int32_t index);

// `params` as one JSON object's text: {"lr":0.001,"optimizer":"adam"}.
std::string parameters_json(const std::map<std::string, std::string>& params);

// A parameter's JSON text as a worker's environment shows it: a string unquoted, any
// other scalar as written.
std::string parameter_env_text(std::string_view json_text);

// The rungs' steps, ascending: min_step * reduction_factor^k below max_step.
std::vector<std::int64_t> rung_steps(const AshaRule& rule);

}  // namespace corral::core
