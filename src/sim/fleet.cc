#include "sim/fleet.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "core/job_spec_parse.h"
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

// A region name: what a job spec's resources.region may name (a DNS label).
Status check_region_name(const std::string& region, const std::string& path) {
  if (region.size() > 63 || !core::is_dns_label(region)) {
    return core::invalid_argument(
        path, fmt::format("must be a DNS label (lowercase letters, digits and '-', as a job's "
                          "resources.region), got '{}'",
                          region));
  }
  return core::ok_status();
}

struct Layout {
  std::int64_t nodes_per_leaf = 8;
  std::int64_t leaves_per_spine = 8;
};

// Expands one pool into nodes; `leaf_seq` numbers leaves across pools (each pool starts
// a new leaf, so a leaf never mixes pools).
Status expand_pool(YamlFields& f, const std::string& path, const Layout& layout,
                   const std::map<core::GpuTypeId, core::GpuType>& types, Fleet& fleet,
                   std::int64_t& leaf_seq, std::set<core::GpuTypeId>& used_types) {
  CORRAL_ASSIGN_OR_RETURN(const std::string name, f.str("name", std::nullopt));
  if (name.empty() || name.find_first_of(" /") != std::string::npos) {
    return core::invalid_argument(f.at("name"), "must be non-empty without spaces or '/'");
  }
  CORRAL_ASSIGN_OR_RETURN(const std::string type_name, f.str("gpu_type", std::nullopt));
  const core::GpuTypeId type(type_name);
  if (!types.count(type)) {
    return core::invalid_argument(f.at("gpu_type"),
                                  fmt::format("unknown GPU type '{}' (not built in and not "
                                              "listed under gpu_types)",
                                              type_name));
  }
  used_types.insert(type);
  CORRAL_ASSIGN_OR_RETURN(const std::int64_t nodes, f.integer("nodes", std::nullopt, 1, 100000));
  CORRAL_ASSIGN_OR_RETURN(const std::int64_t per_node,
                          f.integer("gpus_per_node", std::nullopt, 1, 64));
  CORRAL_ASSIGN_OR_RETURN(const std::int64_t domain,
                          f.integer("nvlink_domain_gpus", per_node, 1, per_node));
  if (per_node % domain != 0) {
    return core::invalid_argument(
        f.at("nvlink_domain_gpus"),
        fmt::format("must divide gpus_per_node ({}), got {}", per_node, domain));
  }
  CORRAL_ASSIGN_OR_RETURN(const std::int64_t trays, f.integer("nvl_rack_trays", 0, 0, 1000));
  CORRAL_ASSIGN_OR_RETURN(
      const std::int64_t per_rack,
      f.integer("nodes_per_rack", trays > 0 ? trays : layout.nodes_per_leaf, 1, 100000));
  if (trays > 0 && per_rack != trays) {
    return core::invalid_argument(f.at("nodes_per_rack"),
                                  "must equal nvl_rack_trays (an NVLink rack is one power rack)");
  }
  CORRAL_ASSIGN_OR_RETURN(const std::int64_t cap,
                          f.integer("rack_power_cap_watts", 0, 0, std::int64_t{1} << 40));
  CORRAL_ASSIGN_OR_RETURN(const std::int64_t cpus, f.integer("cpus", 0, 0, 1 << 20));
  CORRAL_ASSIGN_OR_RETURN(const std::int64_t mem_gib, f.integer("memory_gib", 0, 0, 1 << 24));
  CORRAL_ASSIGN_OR_RETURN(const std::string region, f.str("region", fleet.region));
  CORRAL_RETURN_IF_ERROR(check_region_name(region, f.at("region")));
  CORRAL_RETURN_IF_ERROR(f.no_unknown());
  (void)path;

  const std::int64_t first_leaf = leaf_seq;
  for (std::int64_t i = 0; i < nodes; ++i) {
    core::Node n;
    n.id = core::NodeId(fmt::format("{}-{:05}", name, i));
    const std::int64_t leaf = first_leaf + i / layout.nodes_per_leaf;
    leaf_seq = leaf + 1;
    n.labels = {.region = region,
                .cluster = "c1",
                .spine = fmt::format("spine-{:03}", leaf / layout.leaves_per_spine),
                .leaf = fmt::format("leaf-{:04}", leaf),
                .rack = fmt::format("{}-r{:04}", name, i / per_rack)};
    if (trays > 0) n.labels.nvlink_rack = n.labels.rack;
    n.cpus = static_cast<std::int32_t>(cpus);
    n.memory_mib = mem_gib * 1024;
    for (std::int32_t g = 0; g < per_node; ++g) {
      n.gpus.push_back({.index = g,
                        .type = type,
                        .nvlink_domain = static_cast<std::int32_t>(g / domain),
                        .numa_node = static_cast<std::int32_t>(g * 2 / per_node)});
    }
    if (i % per_rack == 0) fleet.racks.push_back({.name = n.labels.rack, .power_cap_watts = cap});
    fleet.nodes.push_back(std::move(n));
  }
  return core::ok_status();
}

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
  t.default_quota = {.guaranteed = lookup(guaranteed, "*", 0),
                     .borrow_limit = lookup(borrow, "*", core::kUnlimited)};
  for (const core::GpuTypeId& type : types) {
    const core::Quota q{.guaranteed = lookup(guaranteed, type.value, 0),
                        .borrow_limit = lookup(borrow, type.value, core::kUnlimited)};
    if (q.guaranteed != t.default_quota.guaranteed ||
        q.borrow_limit != t.default_quota.borrow_limit) {
      t.quotas[type] = q;
    }
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

Result<Fleet> parse_root(const YAML::Node& root) {
  CORRAL_RETURN_IF_ERROR(expect_map(root, ""));
  YamlFields f(root, "");
  Fleet fleet;
  CORRAL_ASSIGN_OR_RETURN(fleet.name, f.str("name", std::string("fleet")));
  CORRAL_ASSIGN_OR_RETURN(fleet.region, f.str("region", std::string("local")));
  CORRAL_RETURN_IF_ERROR(check_region_name(fleet.region, "region"));

  // 1. GPU types: the built-in catalog, plus (or overridden by) the file's.
  std::map<core::GpuTypeId, core::GpuType> types;
  for (const core::GpuType& t : core::builtin_gpu_types()) types[t.id] = t;
  if (f.has("gpu_types")) {
    const YAML::Node list = f.get("gpu_types");
    if (!list.IsSequence()) return core::invalid_argument("gpu_types", "must be a list");
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string path = fmt::format("gpu_types[{}]", i);
      CORRAL_RETURN_IF_ERROR(expect_map(list[i], path));
      YamlFields tf(list[i], path);
      core::GpuType t;
      CORRAL_ASSIGN_OR_RETURN(const std::string id, tf.str("id", std::nullopt));
      t.id = core::GpuTypeId(id);
      CORRAL_ASSIGN_OR_RETURN(const std::int64_t mem, tf.integer("memory_gib", 16, 1, 1 << 20));
      t.memory_mib = mem * 1024;
      CORRAL_ASSIGN_OR_RETURN(const std::int64_t tdp, tf.integer("tdp_watts", 300, 1, 100000));
      t.tdp_watts = static_cast<std::int32_t>(tdp);
      CORRAL_ASSIGN_OR_RETURN(const std::int64_t gen, tf.integer("generation", 0, 0, 100));
      t.generation = static_cast<std::int32_t>(gen);
      CORRAL_ASSIGN_OR_RETURN(t.usage_factor, tf.number("usage_factor", 1.0, 1e-6, 1e6));
      CORRAL_RETURN_IF_ERROR(tf.no_unknown());
      types[t.id] = t;
    }
  }

  // 2. Network layout, then the pools in file order.
  Layout layout;
  if (f.has("network")) {
    CORRAL_RETURN_IF_ERROR(expect_map(f.get("network"), "network"));
    YamlFields nf(f.get("network"), "network");
    CORRAL_ASSIGN_OR_RETURN(layout.nodes_per_leaf, nf.integer("nodes_per_leaf", 8, 1, 100000));
    CORRAL_ASSIGN_OR_RETURN(layout.leaves_per_spine, nf.integer("leaves_per_spine", 8, 1, 100000));
    CORRAL_RETURN_IF_ERROR(nf.no_unknown());
  }
  if (!f.has("pools")) return core::invalid_argument("pools", "is required");
  const YAML::Node pools = f.get("pools");
  if (!pools.IsSequence() || pools.size() == 0) {
    return core::invalid_argument("pools", "must be a non-empty list");
  }
  std::int64_t leaf_seq = 0;
  std::set<core::GpuTypeId> used_types;
  std::set<std::string> pool_names;
  for (std::size_t i = 0; i < pools.size(); ++i) {
    const std::string path = fmt::format("pools[{}]", i);
    CORRAL_RETURN_IF_ERROR(expect_map(pools[i], path));
    YamlFields pf(pools[i], path);
    const std::size_t before = fleet.nodes.size();
    CORRAL_RETURN_IF_ERROR(expand_pool(pf, path, layout, types, fleet, leaf_seq, used_types));
    const std::string pool =
        fleet.nodes[before].id.value.substr(0, fleet.nodes[before].id.value.rfind('-'));
    if (!pool_names.insert(pool).second) {
      return core::invalid_argument(path + ".name", fmt::format("duplicate pool '{}'", pool));
    }
  }
  std::sort(fleet.nodes.begin(), fleet.nodes.end(),
            [](const core::Node& a, const core::Node& b) { return a.id < b.id; });
  for (const core::GpuTypeId& t : used_types) fleet.gpu_types.push_back(types.at(t));

  // 3. Prices.
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

  // 4. Failures.
  if (f.has("failures")) {
    CORRAL_RETURN_IF_ERROR(expect_map(f.get("failures"), "failures"));
    YamlFields ff(f.get("failures"), "failures");
    CORRAL_ASSIGN_OR_RETURN(const double mtbf_h, ff.number("mtbf_hours_per_gpu", 0.0, 0, 1e9));
    CORRAL_ASSIGN_OR_RETURN(const double repair_h, ff.number("repair_hours", 4.0, 0, 1e6));
    CORRAL_RETURN_IF_ERROR(ff.no_unknown());
    fleet.failures.mtbf_per_gpu = core::Duration(std::llround(mtbf_h * 3600e3));
    fleet.failures.repair = core::Duration(std::llround(repair_h * 3600e3));
  }

  // 5. Tenants, then the rule for trace tenants.
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
  try {
    const YAML::Node root = YAML::Load(std::string(yaml));
    auto fleet = parse_root(root);
    if (!fleet.ok()) {
      const Status& s = fleet.status();
      return core::invalid_argument(s.field(), fmt::format("{}: {}", source, s.message()));
    }
    return fleet;
  } catch (const YAML::Exception& e) {
    return core::invalid_argument("(yaml)",
                                  fmt::format("{}: line {}: {}", source, e.mark.line + 1, e.msg));
  }
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
    t.default_quota = {.guaranteed = 0, .borrow_limit = rule.borrow_limit};
    if (rule.equal_guarantee) {
      // Equal split of each type's capacity among the trace's own tenants; the remainder
      // GPUs stay unguaranteed (anyone may borrow them).
      const auto n = static_cast<std::int64_t>(missing.size());
      for (const core::GpuType& type : fleet.gpu_types) {
        t.quotas[type.id] = {.guaranteed = fleet.gpus_of_type(type.id) / n,
                             .borrow_limit = rule.borrow_limit};
      }
    }
    out[id] = std::move(t);
  }
  std::vector<core::Tenant> tenants;
  for (auto& [id, t] : out) tenants.push_back(std::move(t));
  return tenants;
}

}  // namespace corral::sim
