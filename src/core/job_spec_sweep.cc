// The job spec's sweep (docs/jobspec.md#sweeps): a parameter space, how trials are drawn
// from it, the metric they report and the early-stopping rule. A sweep is an array of its
// trials, so it also sets the spec's array (its count and maxRunning).
#include <cmath>
#include <cstdint>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/agent_protocol.h"
#include "core/internal/spec_tree.h"
#include "core/internal/spec_validator.h"
#include "core/json_object.h"
#include "core/sweep.h"

namespace corral::core::internal {
namespace {

inline constexpr std::size_t kMaxParameters = 32;
inline constexpr std::size_t kMaxChoices = 1000;
inline constexpr std::size_t kMaxParameterName = 32;
inline constexpr std::int64_t kMaxSteps = 1'000'000'000'000;

bool is_parameter_name(std::string_view s) {
  if (s.empty() || s.size() > kMaxParameterName || s[0] < 'a' || s[0] > 'z') return false;
  for (const char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

// A scalar choice as JSON text; nullopt for a list, a mapping, null or a float that is
// not finite.
std::optional<std::string> choice_text(const TreeNode& n) {
  switch (n.kind) {
    case TreeKind::kBool:
      return n.bool_value ? "true" : "false";
    case TreeKind::kInt:
      if (n.int_overflow) return std::nullopt;
      return std::to_string(n.int_value);
    case TreeKind::kFloat:
      if (!std::isfinite(n.float_value)) return std::nullopt;
      {
        // A float stays one (1.0, not 1) for the worker that reads it.
        std::string text = fmt::format("{}", n.float_value);
        if (text.find_first_of(".eE") == std::string::npos) text += ".0";
        return text;
      }
    case TreeKind::kString:
      return nlohmann::json(n.text).dump();
    default:
      return std::nullopt;
  }
}

}  // namespace

std::optional<double> Validator::read_number(const TreeNode* node, const std::string& path) {
  if (node == nullptr) return std::nullopt;
  if (auto value = number_value(*node)) return value;
  fail(path, fmt::format("must be a finite number, got {}", describe(*node)));
  return std::nullopt;
}

std::optional<SweepParameter> Validator::read_parameter(const std::string& name,
                                                        const TreeNode& node) {
  const std::string path = child_path("sweep.parameters", name);
  if (!is_parameter_name(name)) {
    fail(path, fmt::format("must be a parameter name ([a-z][a-z0-9_]*, at most {} characters), "
                           "got {}",
                           kMaxParameterName, quote(name)));
    return std::nullopt;
  }
  const TreeNode* map = as_map(&node, path);
  if (map == nullptr) return std::nullopt;
  const FieldMap f = fields(*map, path, {"values", "min", "max", "log"});
  SweepParameter p{.name = name};
  const TreeNode* values = f.get("values");
  if (values != nullptr) {
    if (f.get("min") != nullptr || f.get("max") != nullptr || f.get("log") != nullptr) {
      fail(path, "takes values, or a range (min, max, log), not both");
      return std::nullopt;
    }
    const std::string values_path = child_path(path, "values");
    if (values->kind != TreeKind::kList || values->items.empty() ||
        values->items.size() > kMaxChoices) {
      fail(values_path, fmt::format("must be a list of 1 to {} choices, got {}", kMaxChoices,
                                    describe(*values)));
      return std::nullopt;
    }
    for (std::size_t i = 0; i < values->items.size(); ++i) {
      auto text = choice_text(values->items[i]);
      if (!text) {
        fail(
            element_path(values_path, i),
            fmt::format("must be a number, string or boolean, got {}", describe(values->items[i])));
        return std::nullopt;
      }
      p.values.push_back(std::move(*text));
    }
    return p;
  }
  if (f.get("min") == nullptr || f.get("max") == nullptr) {
    fail(path, "needs values: [...], or min and max");
    return std::nullopt;
  }
  const auto lo = read_number(f.get("min"), child_path(path, "min"));
  const auto hi = read_number(f.get("max"), child_path(path, "max"));
  const auto log = read_bool(f.get("log"), child_path(path, "log"));
  if (!lo || !hi) return std::nullopt;
  if (*hi < *lo) {
    fail(child_path(path, "max"), fmt::format("must be at least min ({}), got {}", *lo, *hi));
    return std::nullopt;
  }
  p.min = *lo;
  p.max = *hi;
  p.log = log.value_or(false);
  if (p.log && p.min <= 0) {
    fail(child_path(path, "min"), fmt::format("must be above 0 for log: true, got {}", p.min));
    return std::nullopt;
  }
  return p;
}

void Validator::read_sweep(const TreeNode* node) {
  const TreeNode* map = as_map(node, "sweep");
  if (map == nullptr) return;
  const FieldMap f =
      fields(*map, "sweep",
             {"method", "parameters", "trials", "seed", "maxRunning", "metric", "earlyStopping"});
  SweepSpec sweep;
  bool ok = true;
  if (auto method = read_choice(f.get("method"), "sweep.method", {"grid", "random"})) {
    sweep.method = static_cast<SweepMethod>(*method);
  } else if (f.get("method") != nullptr) {
    ok = false;
  }
  // Parameters, kept by name (their order in the document does not change the trials).
  const TreeNode* params = as_map(f.get("parameters"), "sweep.parameters");
  if (f.get("parameters") == nullptr) fail("sweep.parameters", "is required");
  if (params == nullptr) {
    ok = false;
  } else if (params->entries.empty() || params->entries.size() > kMaxParameters) {
    fail("sweep.parameters", fmt::format("must name 1 to {} parameters, got {}", kMaxParameters,
                                         params->entries.size()));
    ok = false;
  } else {
    std::map<std::string, SweepParameter> by_name;
    for (const auto& [name, value] : params->entries) {
      if (by_name.contains(name)) {
        fail(child_path("sweep.parameters", name), "duplicate key");
        ok = false;
      } else if (auto p = read_parameter(name, value)) {
        by_name.emplace(name, std::move(*p));
      } else {
        ok = false;
      }
    }
    for (auto& [name, p] : by_name) sweep.parameters.push_back(std::move(p));
  }
  const auto trials = read_int(f.get("trials"), "sweep.trials", 1, kMaxArrayCount);
  if (ok && sweep.method == SweepMethod::kGrid) {
    for (const SweepParameter& p : sweep.parameters) {
      if (p.values.empty()) {
        fail(child_path("sweep.parameters", p.name),
             "needs values for method grid (a range is drawn from only by method random)");
        ok = false;
      }
    }
    const std::int64_t points = ok ? grid_points(sweep.parameters, kMaxArrayCount) : 0;
    if (ok && points < 0) {
      fail("sweep.parameters", fmt::format("make a grid of more than {} trials", kMaxArrayCount));
      ok = false;
    }
    if (ok && trials && *trials != points) {
      fail("sweep.trials", fmt::format("is the grid's size for method grid ({}), or left out; "
                                       "got {}",
                                       points, *trials));
      ok = false;
    }
    sweep.trials = static_cast<std::int32_t>(points);
  } else if (sweep.method == SweepMethod::kRandom) {
    if (f.get("trials") == nullptr) fail("sweep.trials", "is required for method random");
    if (!trials) ok = false;
    sweep.trials = static_cast<std::int32_t>(trials.value_or(1));
  }
  if (auto seed = read_int(f.get("seed"), "sweep.seed", 0, INT64_MAX)) {
    sweep.seed = static_cast<std::uint64_t>(*seed);
  }
  if (auto n = read_int(f.get("maxRunning"), "sweep.maxRunning", 0, kMaxArrayCount)) {
    if (ok && *n > sweep.trials) {
      fail("sweep.maxRunning",
           fmt::format("must not exceed the sweep's {} trials, got {}", sweep.trials, *n));
      ok = false;
    }
    sweep.max_running = static_cast<std::int32_t>(*n);
  }
  if (f.get("metric") == nullptr) fail("sweep.metric", "is required");
  if (const TreeNode* metric = as_map(f.get("metric"), "sweep.metric")) {
    const FieldMap m = fields(*metric, "sweep.metric", {"name", "goal"});
    if (m.get("name") == nullptr) fail("sweep.metric.name", "is required");
    if (auto name = read_string(m.get("name"), "sweep.metric.name")) {
      if (!is_metric_name(*name)) {
        fail(
            "sweep.metric.name",
            fmt::format("must be a metric name (1 to 128 of A-Za-z0-9_./-), got {}", quote(*name)));
        ok = false;
      }
      sweep.metric = std::move(*name);
    } else {
      ok = false;
    }
    if (auto goal = read_choice(m.get("goal"), "sweep.metric.goal", {"minimize", "maximize"})) {
      sweep.goal = static_cast<MetricGoal>(*goal);
    } else if (m.get("goal") != nullptr) {
      ok = false;
    }
  } else {
    ok = false;
  }
  if (const TreeNode* stop = as_map(f.get("earlyStopping"), "sweep.earlyStopping")) {
    const std::string path = "sweep.earlyStopping";
    const FieldMap e = fields(*stop, path, {"rule", "minStep", "maxStep", "reductionFactor"});
    read_choice(e.get("rule"), child_path(path, "rule"), {"asha"});
    if (e.get("minStep") == nullptr) fail(child_path(path, "minStep"), "is required");
    if (e.get("maxStep") == nullptr) fail(child_path(path, "maxStep"), "is required");
    const auto lo = read_int(e.get("minStep"), child_path(path, "minStep"), 1, kMaxSteps);
    const auto hi = read_int(e.get("maxStep"), child_path(path, "maxStep"), 1, kMaxSteps);
    const auto eta =
        read_int(e.get("reductionFactor"), child_path(path, "reductionFactor"), 2, 100);
    if (lo && hi && *hi <= *lo) {
      fail(child_path(path, "maxStep"),
           fmt::format("must be above minStep ({}): the first rung is at minStep, got {}", *lo,
                       *hi));
    } else if (lo && hi) {
      sweep.early_stopping =
          AshaRule{.min_step = *lo,
                   .max_step = *hi,
                   .reduction_factor = static_cast<std::int32_t>(eta.value_or(3))};
    }
  }
  if (spec_.array) {
    fail("array",
         "must be left out of a sweep: a sweep is an array of its trials (its "
         "maxRunning is sweep.maxRunning)");
    ok = false;
  }
  if (!ok) return;
  spec_.sweep = sweep;
  spec_.array = ArraySpec{.count = sweep.trials, .max_running = sweep.max_running};
}

}  // namespace corral::core::internal
