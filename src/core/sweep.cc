#include "core/sweep.h"

#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/splitmix.h"

namespace corral::core {
namespace {

// A uniform draw in [0, 1) for parameter `p` of trial `trial`: it depends only on (seed,
// trial, parameter), the same on every platform.
double unit(std::uint64_t seed, std::int32_t trial, std::size_t p) {
  return unit_interval(
      splitmix64(splitmix64(splitmix64(seed) ^ static_cast<std::uint64_t>(trial)) ^ p));
}

std::string number_text(double x) { return fmt::format("{:.6g}", x); }

}  // namespace

std::string_view to_string(SweepMethod method) {
  return method == SweepMethod::kGrid ? "grid" : "random";
}

std::string_view to_string(MetricGoal goal) {
  return goal == MetricGoal::kMinimize ? "minimize" : "maximize";
}

bool better(MetricGoal goal, double a, double b) {
  return goal == MetricGoal::kMinimize ? a < b : a > b;
}

std::int64_t grid_points(const std::vector<SweepParameter>& parameters, std::int64_t cap) {
  std::int64_t n = 1;
  for (const SweepParameter& p : parameters) {
    const auto choices = static_cast<std::int64_t>(p.values.size());
    if (choices == 0 || n > cap / choices) return -1;
    n *= choices;
  }
  return n;
}

std::map<std::string, std::string> trial_parameters(const SweepSpec& sweep, std::int32_t index) {
  std::map<std::string, std::string> out;
  if (sweep.method == SweepMethod::kGrid) {
    // Mixed radix, the last parameter (by name) changing fastest.
    std::int64_t rest = index;
    for (auto p = sweep.parameters.rbegin(); p != sweep.parameters.rend(); ++p) {
      const auto choices = static_cast<std::int64_t>(p->values.size());
      out[p->name] = p->values[static_cast<std::size_t>(rest % choices)];
      rest /= choices;
    }
    return out;
  }
  for (std::size_t i = 0; i < sweep.parameters.size(); ++i) {
    const SweepParameter& p = sweep.parameters[i];
    const double u = unit(sweep.seed, index, i);
    if (!p.values.empty()) {
      const auto pick = std::min(static_cast<std::size_t>(u * static_cast<double>(p.values.size())),
                                 p.values.size() - 1);
      out[p.name] = p.values[pick];
    } else if (p.log) {
      out[p.name] =
          number_text(std::exp(std::log(p.min) + u * (std::log(p.max) - std::log(p.min))));
    } else {
      out[p.name] = number_text(p.min + u * (p.max - p.min));
    }
  }
  return out;
}

std::string parameters_json(const std::map<std::string, std::string>& params) {
  std::string out = "{";
  for (const auto& [name, value] : params) {
    if (out.size() > 1) out += ',';
    out += nlohmann::json(name).dump() + ':' + value;
  }
  return out + '}';
}

std::string parameter_env_text(std::string_view json_text) {
  if (!json_text.starts_with('"')) return std::string(json_text);
  const auto value = nlohmann::json::parse(json_text, nullptr, false);
  return value.is_string() ? value.get<std::string>() : std::string(json_text);
}

std::vector<std::int64_t> rung_steps(const AshaRule& rule) {
  std::vector<std::int64_t> out;
  for (std::int64_t step = rule.min_step; step < rule.max_step; step *= rule.reduction_factor) {
    out.push_back(step);
    if (step > rule.max_step / rule.reduction_factor) break;  // the next would overflow past max
  }
  return out;
}

}  // namespace corral::core
