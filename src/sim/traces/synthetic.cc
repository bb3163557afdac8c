#include "sim/traces/synthetic.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "core/check.h"
#include "core/yaml_fields.h"
#include "sim/rng.h"

namespace corral::sim {
namespace {

core::Status read_sizes(const YAML::Node& sizes, const std::string& key,
                        std::vector<std::pair<std::int32_t, double>>& out) {
  if (!sizes.IsMap() || sizes.size() == 0) {
    return core::invalid_argument(key, "must be a map of GPUs to weight");
  }
  out.clear();
  for (const auto& kv : sizes) {
    std::int32_t gpus = 0;
    double weight = 0;
    if (!YAML::convert<std::int32_t>::decode(kv.first, gpus) || gpus < 1 ||
        !YAML::convert<double>::decode(kv.second, weight) || !(weight > 0)) {
      return core::invalid_argument(fmt::format("{}.{}", key, kv.first.Scalar()),
                                    "keys must be GPU counts >= 1 and values weights > 0");
    }
    out.emplace_back(gpus, weight);
  }
  return core::ok_status();
}

// One entry of `groups`; what it leaves out comes from the top level (parsed before it).
core::Result<SyntheticGroup> read_group(const YAML::Node& node, const std::string& path,
                                        const SyntheticSpec& top) {
  if (!node.IsMap()) return core::invalid_argument(path, "must be a map");
  core::YamlFields f(node, path);
  CORRAL_RETURN_IF_ERROR(
      f.only({"tenants", "jobs_share", "sizes", "duration_median_s", "duration_sigma",
              "tenant_zipf", "array_count", "array_max_running", "chain_length", "sweep_steps",
              "asha_min_step", "asha_reduction_factor"}));
  SyntheticGroup g{.sizes = top.sizes,
                   .duration_median_s = top.duration_median_s,
                   .duration_sigma = top.duration_sigma,
                   .tenant_zipf = top.tenant_zipf};
  double tenants = g.tenants;
  CORRAL_RETURN_IF_ERROR(f.read_number("tenants", 1, 1e5, tenants));
  CORRAL_RETURN_IF_ERROR(f.read_number("jobs_share", 1e-9, 1e9, g.jobs_share));
  CORRAL_RETURN_IF_ERROR(f.read_number("duration_median_s", 1, 1e9, g.duration_median_s));
  CORRAL_RETURN_IF_ERROR(f.read_number("duration_sigma", 0, 10, g.duration_sigma));
  CORRAL_RETURN_IF_ERROR(f.read_number("tenant_zipf", 0, 10, g.tenant_zipf));
  double array_count = 1, array_max_running = 0, chain_length = 1;
  CORRAL_RETURN_IF_ERROR(f.read_number("array_count", 1, 10000, array_count));
  CORRAL_RETURN_IF_ERROR(f.read_number("array_max_running", 0, 10000, array_max_running));
  CORRAL_RETURN_IF_ERROR(f.read_number("chain_length", 1, 256, chain_length));
  if (array_count > 1 && chain_length > 1) {
    return core::invalid_argument(path + ".chain_length",
                                  "a group's submissions are arrays or chains, not both");
  }
  g.array_count = static_cast<std::int32_t>(std::lround(array_count));
  g.array_max_running = static_cast<std::int32_t>(std::lround(array_max_running));
  g.chain_length = static_cast<std::int32_t>(std::lround(chain_length));
  g.tenants = static_cast<std::int32_t>(std::lround(tenants));
  double sweep_steps = 0, asha_min_step = 0, asha_reduction_factor = 3;
  CORRAL_RETURN_IF_ERROR(f.read_number("sweep_steps", 0, 1e12, sweep_steps));
  CORRAL_RETURN_IF_ERROR(f.read_number("asha_min_step", 0, 1e12, asha_min_step));
  CORRAL_RETURN_IF_ERROR(f.read_number("asha_reduction_factor", 2, 100, asha_reduction_factor));
  if (sweep_steps > 0 && array_count < 2) {
    return core::invalid_argument(path + ".sweep_steps", "needs array_count: a sweep's trials");
  }
  if (asha_min_step > 0 && asha_min_step >= sweep_steps) {
    return core::invalid_argument(path + ".asha_min_step",
                                  "must be below sweep_steps: the first rung is at asha_min_step");
  }
  g.sweep_steps = std::llround(sweep_steps);
  g.asha_min_step = std::llround(asha_min_step);
  g.asha_reduction_factor = static_cast<std::int32_t>(std::lround(asha_reduction_factor));
  if (const YAML::Node sizes = node["sizes"]; sizes.IsDefined()) {
    CORRAL_RETURN_IF_ERROR(read_sizes(sizes, path + ".sizes", g.sizes));
  }
  return g;
}

}  // namespace

core::Result<SyntheticSpec> parse_synthetic_spec(std::string_view yaml, std::string_view source) {
  SyntheticSpec spec;
  const auto fail = [&](const core::Status& s) {
    return core::invalid_argument(s.field(), fmt::format("{}: {}", source, s.message()));
  };
  try {
    const YAML::Node root = YAML::Load(std::string(yaml));
    if (!root.IsMap())
      return core::invalid_argument("(root)", fmt::format("{}: must be a map", source));
    core::YamlFields f(root, "");
    if (const core::Status s = f.only({"jobs", "tenants", "seed", "load_factor", "sizes",
                                       "duration_median_s", "duration_sigma", "duration_min_s",
                                       "duration_max_s", "tenant_zipf", "gpu_type", "groups"});
        !s.ok()) {
      return fail(s);
    }
    double jobs = static_cast<double>(spec.jobs), tenants = spec.tenants,
           seed = static_cast<double>(spec.seed);
    for (const core::Status& s :
         {f.read_number("jobs", 1, 1e8, jobs), f.read_number("tenants", 1, 1e5, tenants),
          f.read_number("seed", 0, 9e15, seed),
          f.read_number("load_factor", 1e-3, 100, spec.load_factor),
          f.read_number("duration_median_s", 1, 1e9, spec.duration_median_s),
          f.read_number("duration_sigma", 0, 10, spec.duration_sigma),
          f.read_number("duration_min_s", 0.001, 1e9, spec.duration_min_s),
          f.read_number("duration_max_s", 0.001, 1e9, spec.duration_max_s),
          f.read_number("tenant_zipf", 0, 10, spec.tenant_zipf)}) {
      if (!s.ok()) return fail(s);
    }
    spec.jobs = std::llround(jobs);
    spec.tenants = static_cast<std::int32_t>(std::lround(tenants));
    spec.seed = static_cast<std::uint64_t>(std::llround(seed));
    if (spec.duration_min_s > spec.duration_max_s) {
      return fail(core::invalid_argument("duration_min_s", "must be <= duration_max_s"));
    }
    if (root["gpu_type"].IsDefined()) spec.gpu_type = root["gpu_type"].Scalar();
    if (const YAML::Node sizes = root["sizes"]; sizes.IsDefined()) {
      if (const core::Status s = read_sizes(sizes, "sizes", spec.sizes); !s.ok()) return fail(s);
    }
    if (const YAML::Node groups = root["groups"]; groups.IsDefined()) {
      if (!groups.IsSequence() || groups.size() == 0) {
        return fail(core::invalid_argument("groups", "must be a non-empty list of groups"));
      }
      for (std::size_t i = 0; i < groups.size(); ++i) {
        auto group = read_group(groups[i], fmt::format("groups[{}]", i), spec);
        if (!group.ok()) return fail(group.status());
        spec.groups.push_back(*group);
      }
    }
  } catch (const YAML::Exception& e) {
    return core::invalid_argument("(yaml)",
                                  fmt::format("{}: line {}: {}", source, e.mark.line + 1, e.msg));
  }
  return spec;
}

core::Result<SyntheticSpec> load_synthetic_spec(const std::string& path) {
  std::ifstream in(path);
  if (!in) return core::not_found(fmt::format("cannot open workload file {}", path));
  std::stringstream text;
  text << in.rdbuf();
  return parse_synthetic_spec(text.str(), path);
}

Workload generate_synthetic(const SyntheticSpec& spec, std::int64_t fleet_gpus) {
  CORRAL_CHECK(fleet_gpus > 0);
  Rng rng(spec.seed);
  Workload w{.source = "synthetic"};
  w.jobs.resize(static_cast<std::size_t>(spec.jobs));

  // One group of every tenant with the top-level mix unless the spec has groups.
  const std::vector<SyntheticGroup> groups =
      !spec.groups.empty()
          ? spec.groups
          : std::vector<SyntheticGroup>{{.tenants = spec.tenants,
                                         .sizes = spec.sizes,
                                         .duration_median_s = spec.duration_median_s,
                                         .duration_sigma = spec.duration_sigma,
                                         .tenant_zipf = spec.tenant_zipf}};
  const auto cdf_of = [](const auto& weights) {
    std::vector<double> cdf;
    double sum = 0;
    for (const double weight : weights) cdf.push_back(sum += weight);
    return cdf;
  };
  // Cumulative tables per group for the size mix and the Zipf tenant popularity, and the
  // groups' first tenant numbers.
  std::vector<std::vector<double>> size_cdf, tenant_cdf;
  std::vector<double> group_weights;
  std::vector<std::int32_t> first_tenant;
  std::int32_t tenants = 0;
  for (const SyntheticGroup& g : groups) {
    std::vector<double> sizes, popularity;
    for (const auto& [gpus, weight] : g.sizes) sizes.push_back(weight);
    for (std::int32_t t = 0; t < g.tenants; ++t) {
      popularity.push_back(1.0 / std::pow(t + 1.0, g.tenant_zipf));
    }
    size_cdf.push_back(cdf_of(sizes));
    tenant_cdf.push_back(cdf_of(popularity));
    group_weights.push_back(g.jobs_share);
    first_tenant.push_back(tenants);
    tenants += g.tenants;
  }
  const std::vector<double> group_cdf = cdf_of(group_weights);
  const auto pick = [&](const std::vector<double>& cdf) {
    const double u = rng.uniform() * cdf.back();
    return std::min(
        static_cast<std::size_t>(std::lower_bound(cdf.begin(), cdf.end(), u) - cdf.begin()),
        cdf.size() - 1);
  };

  // 1. Sizes, durations and tenants, a submission (one job, an array's tasks or a
  //    chain's steps) at a time; 2. arrivals at the rate that offers the load.
  double gpu_seconds = 0;
  std::vector<std::size_t> submission_size(w.jobs.size(), 0);  // at its first job
  for (std::size_t i = 0; i < w.jobs.size();) {
    // Without groups no draw picks the group, so such a spec gives the jobs it always gave.
    const std::size_t gi = groups.size() > 1 ? pick(group_cdf) : 0;
    const SyntheticGroup& g = groups[gi];
    const std::size_t n = std::min(
        w.jobs.size() - i, static_cast<std::size_t>(std::max(g.array_count, g.chain_length)));
    submission_size[i] = n;
    // Draws in the order a spec without workflows always made them: size, duration, tenant.
    const std::int32_t gpus = g.sizes[pick(size_cdf[gi])].first;
    core::TenantId tenant;
    double d = 0;
    for (std::size_t k = 0; k < n; ++k, ++i) {
      TraceJob& job = w.jobs[i];
      job.name = fmt::format("syn-{:07}", i);
      job.gpus = gpus;
      // A sweep's trials train the same model for the same steps: one duration for all.
      if (k == 0 || g.sweep_steps == 0) {
        d = std::clamp(g.duration_median_s * std::exp(g.duration_sigma * rng.normal()),
                       spec.duration_min_s, spec.duration_max_s);
      }
      job.duration_ms = std::max<std::int64_t>(1, std::llround(d * 1000));
      if (k == 0) {
        tenant = core::TenantId(fmt::format(
            "t{:02}", first_tenant[gi] + static_cast<std::int32_t>(pick(tenant_cdf[gi]))));
      }
      job.tenant = tenant;
      job.gpu_type = spec.gpu_type;
      if (g.array_count > 1) {
        job.array_index = static_cast<std::int32_t>(k);
        job.array_max_running = g.array_max_running;
      }
      if (g.chain_length > 1 && k > 0) job.after = 1;
      if (g.sweep_steps > 0) {
        auto trial = std::make_shared<SweepTrial>(SweepTrial{.steps = g.sweep_steps});
        trial->final_value = 1.0 + 0.3 * rng.normal();
        trial->speed = std::exp(0.5 * rng.normal());
        if (g.asha_min_step > 0) {
          trial->asha = core::AshaRule{.min_step = g.asha_min_step,
                                       .max_step = g.sweep_steps,
                                       .reduction_factor = g.asha_reduction_factor};
        }
        job.trial = std::move(trial);
      }
      gpu_seconds += job.gpus * d;
    }
  }
  // load = (gpu_seconds / jobs) * rate / fleet_gpus  =>  mean gap = 1 / rate; a
  // submission of n jobs is n jobs' worth of gap.
  const double mean_gap_s =
      gpu_seconds / static_cast<double>(w.jobs.size()) / (spec.load_factor * fleet_gpus);
  double t = 0;
  for (std::size_t i = 0; i < w.jobs.size(); ++i) {
    if (submission_size[i] > 0) {
      t += rng.exponential(mean_gap_s * static_cast<double>(submission_size[i]));
    }
    w.jobs[i].submit_ms = std::llround(t * 1000);
  }
  return w;
}

}  // namespace corral::sim
