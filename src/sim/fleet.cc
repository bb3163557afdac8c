#include "sim/fleet.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "core/fleet_pools.h"
#include "core/priority.h"
#include "core/yaml_fields.h"

namespace corral::sim {
namespace {

using core::Result;
using core::Status;
using core::YamlFields;

Status expect_map(const YAML::Node& n, const std::string& path) {
  if (!n.IsMap()) return core::invalid_argument(path.empty() ? "(root)" : path, "must be a map");
  return core::ok_status();
}

Result<std::int64_t> usd_to_micro(double usd) { return std::llround(usd * 1e6); }

// `value` is either one number for every GPU type or a map by type.
Result<std::map<std::string, std::int64_t>> per_type_counts(const YAML::Node& value,
                                                            const std::string& path) {
  std::map<std::string, std::int64_t> out;
  std::int64_t v = 0;
  if (value.IsScalar()) {
    if (value.Scalar() == "unlimited") {
      out["*"] = core::kUnlimited;
    } else if (YAML::convert<std::int64_t>::decode(value, v) && v >= 0) {
      out["*"] = v;
    } else {
      return core::invalid_argument(path, fmt::format("must be a count >= 0 or 'unlimited', "
                                                      "got '{}'",
                                                      value.Scalar()));
    }
    return out;
  }
  if (!value.IsMap()) return core::invalid_argument(path, "must be a count or a map by GPU type");
  for (const auto& kv : value) {
    const std::string key = kv.first.Scalar();
    if (kv.second.IsScalar() && kv.second.Scalar() == "unlimited") {
      out[key] = core::kUnlimited;
    } else if (YAML::convert<std::int64_t>::decode(kv.second, v) && v >= 0) {
      out[key] = v;
    } else {
      return core::invalid_argument(fmt::format("{}.{}", path, key),
                                    fmt::format("must be a count >= 0 or 'unlimited', got '{}'",
                                                YamlFields::scalar_text(kv.second)));
    }
  }
  return out;
}

Result<core::Tenant> parse_tenant(YamlFields& f, const std::set<core::GpuTypeId>& types) {
  core::Tenant t;
  CORRAL_ASSIGN_OR_RETURN(const std::string name, f.str("name", std::nullopt));
  if (name.empty()) return core::invalid_argument(f.at("name"), "must not be empty");
  t.id = core::TenantId(name);
  if (f.has("parent")) {
    CORRAL_ASSIGN_OR_RETURN(const std::string parent, f.str("parent", std::nullopt));
    t.parent = core::TenantId(parent);
  }
  CORRAL_ASSIGN_OR_RETURN(t.weight, f.number("weight", 1.0, 1e-6, 1e6));
  std::map<std::string, std::int64_t> guaranteed, borrow;
  if (f.has("guaranteed")) {
    CORRAL_ASSIGN_OR_RETURN(guaranteed, per_type_counts(f.get("guaranteed"), f.at("guaranteed")));
  }
  if (f.has("borrow_limit")) {
    CORRAL_ASSIGN_OR_RETURN(borrow, per_type_counts(f.get("borrow_limit"), f.at("borrow_limit")));
  }
  // The classes the tenant may use and their caps, as corrald's tenant config
  // priorityClasses: {production: 8, standard: unlimited}.
  if (f.has("priority_classes")) {
    CORRAL_ASSIGN_OR_RETURN(const auto classes,
                            per_type_counts(f.get("priority_classes"), f.at("priority_classes")));
    for (const auto& [class_name, cap] : classes) {
      const auto pc = core::find_priority_class(class_name);
      if (!pc) {
        return core::invalid_argument(f.at("priority_classes." + class_name),
                                      "unknown priority class (production, standard or "
                                      "preemptible)");
      }
      t.max_gpus_by_tier[pc->tier] = cap;
    }
  }
  CORRAL_RETURN_IF_ERROR(f.no_unknown());
  const auto lookup = [](const std::map<std::string, std::int64_t>& m, const std::string& key,
                         std::int64_t fallback) {
    if (auto it = m.find(key); it != m.end()) return it->second;
    if (auto it = m.find("*"); it != m.end()) return it->second;
    return fallback;
  };
  for (const auto* m : {&guaranteed, &borrow}) {
    for (const auto& [key, v] : *m) {
      if (key != "*" && !types.count(core::GpuTypeId(key))) {
        return core::invalid_argument(
            f.at(fmt::format("{}.{}", m == &guaranteed ? "guaranteed" : "borrow_limit", key)),
            fmt::format("no pool has GPU type '{}'", key));
      }
    }
  }
  // A tenant with no quota written may use anything (guarantee 0, borrowing unlimited).
  // Fleet files count whole GPUs.
  t.default_quota =
      core::Quota::gpus(lookup(guaranteed, "*", 0), lookup(borrow, "*", core::kUnlimited));
  for (const core::GpuTypeId& type : types) {
    const core::Quota q = core::Quota::gpus(lookup(guaranteed, type.value, 0),
                                            lookup(borrow, type.value, core::kUnlimited));
    if (q != t.default_quota) t.quotas[type] = q;
  }
  return t;
}

// job_regions: {tenants: {TENANT: REGION, ...}, fraction: 0.3}; every region one the
// pools are in (a job bound to any other could never start).
Result<JobRegionRule> parse_job_regions(const YAML::Node& node, const Fleet& fleet) {
  CORRAL_RETURN_IF_ERROR(expect_map(node, "job_regions"));
  YamlFields f(node, "job_regions");
  JobRegionRule rule;
  CORRAL_ASSIGN_OR_RETURN(rule.fraction, f.number("fraction", 0.0, 0, 1));
  const auto regions = fleet.region_gpus();
  std::string known;
  for (const auto& [region, gpus] : regions) known += known.empty() ? region : ", " + region;
  if (f.has("tenants")) {
    const YAML::Node m = f.get("tenants");
    if (!m.IsMap()) return core::invalid_argument("job_regions.tenants", "must be a map");
    for (const auto& kv : m) {
      const std::string tenant = kv.first.Scalar();
      const std::string path = "job_regions.tenants." + tenant;
      if (!kv.second.IsScalar()) return core::invalid_argument(path, "must be a region name");
      const std::string region = kv.second.Scalar();
      if (std::none_of(regions.begin(), regions.end(),
                       [&](const auto& r) { return r.first == region; })) {
        return core::invalid_argument(
            path, fmt::format("no pool is in region '{}' (the pools' regions: {})", region, known));
      }
      rule.tenants[core::TenantId(tenant)] = region;
    }
  }
  CORRAL_RETURN_IF_ERROR(f.no_unknown());
  return rule;
}

// Reads the root map of a fleet file.
Result<Fleet> parse_root(YamlFields& f) {
  Fleet fleet;
  CORRAL_ASSIGN_OR_RETURN(fleet.name, f.str("name", std::string("fleet")));
  // 1. GPU types, 2. the network layout, 3. the pools (core/fleet_pools.h).
  CORRAL_ASSIGN_OR_RETURN(core::FleetPools pools, core::read_fleet_pools(f));
  fleet.region = std::move(pools.region);
  fleet.gpu_types = std::move(pools.gpu_types);
  fleet.nodes = std::move(pools.nodes);
  fleet.racks = std::move(pools.racks);
  const std::map<core::GpuTypeId, core::GpuType>& types = pools.types;
  std::set<core::GpuTypeId> used_types;
  for (const core::GpuType& t : fleet.gpu_types) used_types.insert(t.id);

  // 4. Prices.
  std::int64_t discount = 0;
  std::map<std::string, double> prices;
  if (f.has("prices")) {
    CORRAL_RETURN_IF_ERROR(expect_map(f.get("prices"), "prices"));
    YamlFields pf(f.get("prices"), "prices");
    CORRAL_ASSIGN_OR_RETURN(discount, pf.integer("preemptible_discount_percent", 0, 0, 100));
    if (pf.has("per_gpu_hour_usd")) {
      const YAML::Node m = pf.get("per_gpu_hour_usd");
      if (!m.IsMap()) return core::invalid_argument("prices.per_gpu_hour_usd", "must be a map");
      for (const auto& kv : m) {
        const std::string key = kv.first.Scalar();
        const std::string path = "prices.per_gpu_hour_usd." + key;
        double usd = 0;
        if (!YAML::convert<double>::decode(kv.second, usd) || !(usd >= 0)) {
          return core::invalid_argument(path, "must be a price >= 0 in USD");
        }
        if (!types.count(core::GpuTypeId(key))) {
          return core::invalid_argument(path, fmt::format("unknown GPU type '{}'", key));
        }
        prices[key] = usd;
      }
    }
    CORRAL_RETURN_IF_ERROR(pf.no_unknown());
  }
  fleet.prices = core::PriceBook(static_cast<std::int32_t>(discount));
  for (const auto& [type, usd] : prices) {
    CORRAL_ASSIGN_OR_RETURN(const std::int64_t micro, usd_to_micro(usd));
    fleet.prices.set_price(core::GpuTypeId(type), "*", micro);
  }

  // 5. Failures.
  if (f.has("failures")) {
    CORRAL_RETURN_IF_ERROR(expect_map(f.get("failures"), "failures"));
    YamlFields ff(f.get("failures"), "failures");
    CORRAL_ASSIGN_OR_RETURN(const double mtbf_h, ff.number("mtbf_hours_per_gpu", 0.0, 0, 1e9));
    CORRAL_ASSIGN_OR_RETURN(const double repair_h, ff.number("repair_hours", 4.0, 0, 1e6));
    CORRAL_RETURN_IF_ERROR(ff.no_unknown());
    fleet.failures.mtbf_per_gpu = core::Duration(std::llround(mtbf_h * 3600e3));
    fleet.failures.repair = core::Duration(std::llround(repair_h * 3600e3));
  }

  // 6. Tenants, then the rule for trace tenants.
  if (f.has("tenants")) {
    const YAML::Node list = f.get("tenants");
    if (!list.IsSequence()) return core::invalid_argument("tenants", "must be a list");
    std::set<core::TenantId> names;
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string path = fmt::format("tenants[{}]", i);
      CORRAL_RETURN_IF_ERROR(expect_map(list[i], path));
      YamlFields tf(list[i], path);
      CORRAL_ASSIGN_OR_RETURN(core::Tenant t, parse_tenant(tf, used_types));
      if (!names.insert(t.id).second) {
        return core::invalid_argument(path + ".name",
                                      fmt::format("duplicate tenant '{}'", t.id.value));
      }
      fleet.tenants.push_back(std::move(t));
    }
    for (std::size_t i = 0; i < fleet.tenants.size(); ++i) {
      const auto& parent = fleet.tenants[i].parent;
      if (parent && !names.count(*parent)) {
        return core::invalid_argument(fmt::format("tenants[{}].parent", i),
                                      fmt::format("unknown tenant '{}'", parent->value));
      }
    }
  }
  if (f.has("trace_tenants")) {
    CORRAL_RETURN_IF_ERROR(expect_map(f.get("trace_tenants"), "trace_tenants"));
    YamlFields rf(f.get("trace_tenants"), "trace_tenants");
    TraceTenantRule rule;
    CORRAL_ASSIGN_OR_RETURN(rule.weight, rf.number("weight", 1.0, 1e-6, 1e6));
    CORRAL_ASSIGN_OR_RETURN(const std::string g, rf.str("guarantee", std::string("equal")));
    if (g != "equal" && g != "none") {
      return core::invalid_argument("trace_tenants.guarantee",
                                    fmt::format("must be 'equal' or 'none', got '{}'", g));
    }
    rule.equal_guarantee = g == "equal";
    if (rf.has("borrow_limit")) {
      CORRAL_ASSIGN_OR_RETURN(
          auto b, per_type_counts(rf.get("borrow_limit"), "trace_tenants.borrow_limit"));
      if (!b.count("*")) {
        return core::invalid_argument("trace_tenants.borrow_limit",
                                      "must be one count or 'unlimited'");
      }
      rule.borrow_limit = b["*"];
    }
    CORRAL_RETURN_IF_ERROR(rf.no_unknown());
    fleet.trace_tenants = rule;
  }
  if (f.has("job_regions")) {
    CORRAL_ASSIGN_OR_RETURN(fleet.job_regions, parse_job_regions(f.get("job_regions"), fleet));
  }
  CORRAL_RETURN_IF_ERROR(f.no_unknown());
  return fleet;
}

}  // namespace

std::int64_t Fleet::total_gpus() const {
  std::int64_t n = 0;
  for (const core::Node& node : nodes) n += static_cast<std::int64_t>(node.gpus.size());
  return n;
}

std::vector<std::pair<std::string, std::int64_t>> Fleet::region_gpus() const {
  std::map<std::string, std::int64_t> by_region;
  for (const core::Node& node : nodes) {
    by_region[node.labels.region] += static_cast<std::int64_t>(node.gpus.size());
  }
  return {by_region.begin(), by_region.end()};
}

std::int64_t Fleet::gpus_of_type(const core::GpuTypeId& type) const {
  std::int64_t n = 0;
  for (const core::Node& node : nodes) {
    for (const core::Gpu& g : node.gpus) n += g.type == type ? 1 : 0;
  }
  return n;
}

std::int32_t Fleet::max_nvlink_domain_gpus() const {
  std::map<std::string, std::int32_t> rack_gpus;  // multi-node NVLink racks
  std::int32_t best = 0;
  for (const core::Node& node : nodes) {
    if (!node.labels.nvlink_rack.empty()) {
      rack_gpus[node.labels.nvlink_rack] += static_cast<std::int32_t>(node.gpus.size());
      continue;
    }
    std::map<std::int32_t, std::int32_t> domains;
    for (const core::Gpu& g : node.gpus) best = std::max(best, ++domains[g.nvlink_domain]);
  }
  for (const auto& [rack, n] : rack_gpus) best = std::max(best, n);
  return best;
}

std::int32_t Fleet::max_node_gpus() const {
  std::int32_t best = 0;
  for (const core::Node& node : nodes) {
    best = std::max(best, static_cast<std::int32_t>(node.gpus.size()));
  }
  return best;
}

core::Result<Fleet> parse_fleet(std::string_view yaml, std::string_view source) {
  Fleet fleet;
  CORRAL_RETURN_IF_ERROR(core::read_fleet_file(yaml, source, [&](YamlFields& root) -> Status {
    CORRAL_ASSIGN_OR_RETURN(fleet, parse_root(root));
    return core::ok_status();
  }));
  return fleet;
}

core::Result<Fleet> load_fleet(const std::string& path) {
  std::ifstream in(path);
  if (!in) return core::not_found(fmt::format("cannot open fleet file {}", path));
  std::stringstream text;
  text << in.rdbuf();
  return parse_fleet(text.str(), path);
}

core::Result<std::vector<core::Tenant>> resolve_tenants(const Fleet& fleet,
                                                        const std::vector<core::TenantId>& used) {
  std::map<core::TenantId, core::Tenant> out;
  for (const core::Tenant& t : fleet.tenants) out[t.id] = t;
  std::vector<core::TenantId> missing;
  for (const core::TenantId& id : used) {
    if (!out.count(id)) missing.push_back(id);
  }
  std::sort(missing.begin(), missing.end());
  missing.erase(std::unique(missing.begin(), missing.end()), missing.end());
  if (!missing.empty() && !fleet.trace_tenants) {
    return core::invalid_argument(
        "tenants", fmt::format("the workload names tenant '{}' which the fleet does not list "
                               "(add it, or a trace_tenants rule)",
                               missing.front().value));
  }
  for (const core::TenantId& id : missing) {
    const TraceTenantRule& rule = *fleet.trace_tenants;
    core::Tenant t{.id = id, .weight = rule.weight};
    t.default_quota = core::Quota::gpus(0, rule.borrow_limit);
    if (rule.equal_guarantee) {
      // Equal split of each type's capacity among the trace's own tenants; the remainder
      // GPUs stay unguaranteed (anyone may borrow them).
      const auto n = static_cast<std::int64_t>(missing.size());
      for (const core::GpuType& type : fleet.gpu_types) {
        t.quotas[type.id] = core::Quota::gpus(fleet.gpus_of_type(type.id) / n, rule.borrow_limit);
      }
    }
    out[id] = std::move(t);
  }
  std::vector<core::Tenant> tenants;
  for (auto& [id, t] : out) tenants.push_back(std::move(t));
  return tenants;
}

}  // namespace corral::sim
