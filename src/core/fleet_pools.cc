#include "core/fleet_pools.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "core/job_spec_parse.h"

namespace corral::core {
namespace {

Status expect_fleet_map(const YAML::Node& n, const std::string& path) {
  if (!n.IsMap()) return invalid_argument(path.empty() ? "(root)" : path, "must be a map");
  return ok_status();
}

// A region name: what a job spec's resources.region may name (a DNS label).
Status check_fleet_region(const std::string& region, const std::string& path) {
  if (region.size() > 63 || !is_dns_label(region)) {
    return invalid_argument(
        path, fmt::format("must be a DNS label (lowercase letters, digits and '-', as a job's "
                          "resources.region), got '{}'",
                          region));
  }
  return ok_status();
}

struct FleetLayout {
  std::int64_t nodes_per_leaf = 8;
  std::int64_t leaves_per_spine = 8;
};

// Expands one pool into nodes; `leaf_seq` numbers leaves across pools (each pool starts
// a new leaf, so a leaf never mixes pools). Returns the pool's name.
Result<std::string> expand_fleet_pool(YamlFields& f, const FleetLayout& layout, FleetPools& fleet,
                                      std::int64_t& leaf_seq, std::set<GpuTypeId>& used_types) {
  CORRAL_ASSIGN_OR_RETURN(const std::string name, f.str("name", std::nullopt));
  if (name.empty() || name.find_first_of(" /") != std::string::npos) {
    return invalid_argument(f.at("name"), "must be non-empty without spaces or '/'");
  }
  CORRAL_ASSIGN_OR_RETURN(const std::string type_name, f.str("gpu_type", std::nullopt));
  const GpuTypeId type(type_name);
  if (!fleet.types.count(type)) {
    return invalid_argument(f.at("gpu_type"), fmt::format("unknown GPU type '{}' (not built in and "
                                                          "not listed under gpu_types)",
                                                          type_name));
  }
  used_types.insert(type);
  CORRAL_ASSIGN_OR_RETURN(const std::int64_t nodes, f.integer("nodes", std::nullopt, 1, 100000));
  CORRAL_ASSIGN_OR_RETURN(const std::int64_t per_node,
                          f.integer("gpus_per_node", std::nullopt, 1, 64));
  CORRAL_ASSIGN_OR_RETURN(const std::int64_t domain,
                          f.integer("nvlink_domain_gpus", per_node, 1, per_node));
  if (per_node % domain != 0) {
    return invalid_argument(
        f.at("nvlink_domain_gpus"),
        fmt::format("must divide gpus_per_node ({}), got {}", per_node, domain));
  }
  CORRAL_ASSIGN_OR_RETURN(const std::int64_t trays, f.integer("nvl_rack_trays", 0, 0, 1000));
  CORRAL_ASSIGN_OR_RETURN(
      const std::int64_t per_rack,
      f.integer("nodes_per_rack", trays > 0 ? trays : layout.nodes_per_leaf, 1, 100000));
  if (trays > 0 && per_rack != trays) {
    return invalid_argument(f.at("nodes_per_rack"),
                            "must equal nvl_rack_trays (an NVLink rack is one power rack)");
  }
  CORRAL_ASSIGN_OR_RETURN(const std::int64_t cap,
                          f.integer("rack_power_cap_watts", 0, 0, std::int64_t{1} << 40));
  CORRAL_ASSIGN_OR_RETURN(const std::int64_t cpus, f.integer("cpus", 0, 0, 1 << 20));
  CORRAL_ASSIGN_OR_RETURN(const std::int64_t mem_gib, f.integer("memory_gib", 0, 0, 1 << 24));
  CORRAL_ASSIGN_OR_RETURN(const std::string region, f.str("region", fleet.region));
  CORRAL_RETURN_IF_ERROR(check_fleet_region(region, f.at("region")));
  CORRAL_RETURN_IF_ERROR(f.no_unknown());

  const std::int64_t first_leaf = leaf_seq;
  for (std::int64_t i = 0; i < nodes; ++i) {
    Node n;
    n.id = NodeId(fmt::format("{}-{:05}", name, i));
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
  return name;
}

// gpu_types: the built-in catalog, plus (or overridden by) the file's.
Status read_fleet_gpu_types(YamlFields& f, FleetPools& fleet) {
  for (const GpuType& t : builtin_gpu_types()) fleet.types[t.id] = t;
  if (!f.has("gpu_types")) return ok_status();
  const YAML::Node list = f.get("gpu_types");
  if (!list.IsSequence()) return invalid_argument("gpu_types", "must be a list");
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string path = fmt::format("gpu_types[{}]", i);
    CORRAL_RETURN_IF_ERROR(expect_fleet_map(list[i], path));
    YamlFields tf(list[i], path);
    GpuType t;
    CORRAL_ASSIGN_OR_RETURN(const std::string id, tf.str("id", std::nullopt));
    t.id = GpuTypeId(id);
    CORRAL_ASSIGN_OR_RETURN(const std::int64_t mem, tf.integer("memory_gib", 16, 1, 1 << 20));
    t.memory_mib = mem * 1024;
    CORRAL_ASSIGN_OR_RETURN(const std::int64_t tdp, tf.integer("tdp_watts", 300, 1, 100000));
    t.tdp_watts = static_cast<std::int32_t>(tdp);
    CORRAL_ASSIGN_OR_RETURN(const std::int64_t gen, tf.integer("generation", 0, 0, 100));
    t.generation = static_cast<std::int32_t>(gen);
    CORRAL_ASSIGN_OR_RETURN(t.usage_factor, tf.number("usage_factor", 1.0, 1e-6, 1e6));
    CORRAL_RETURN_IF_ERROR(tf.no_unknown());
    fleet.types[t.id] = t;
  }
  return ok_status();
}

}  // namespace

Result<FleetPools> read_fleet_pools(YamlFields& f) {
  FleetPools fleet;
  CORRAL_ASSIGN_OR_RETURN(fleet.region, f.str("region", std::string("local")));
  CORRAL_RETURN_IF_ERROR(check_fleet_region(fleet.region, "region"));
  // 1. GPU types, 2. the network layout, 3. the pools in file order.
  CORRAL_RETURN_IF_ERROR(read_fleet_gpu_types(f, fleet));
  FleetLayout layout;
  if (f.has("network")) {
    CORRAL_RETURN_IF_ERROR(expect_fleet_map(f.get("network"), "network"));
    YamlFields nf(f.get("network"), "network");
    CORRAL_ASSIGN_OR_RETURN(layout.nodes_per_leaf, nf.integer("nodes_per_leaf", 8, 1, 100000));
    CORRAL_ASSIGN_OR_RETURN(layout.leaves_per_spine, nf.integer("leaves_per_spine", 8, 1, 100000));
    CORRAL_RETURN_IF_ERROR(nf.no_unknown());
  }
  if (!f.has("pools")) return invalid_argument("pools", "is required");
  const YAML::Node pools = f.get("pools");
  if (!pools.IsSequence() || pools.size() == 0) {
    return invalid_argument("pools", "must be a non-empty list");
  }
  std::int64_t leaf_seq = 0;
  std::set<GpuTypeId> used_types;
  std::set<std::string> pool_names;
  for (std::size_t i = 0; i < pools.size(); ++i) {
    const std::string path = fmt::format("pools[{}]", i);
    CORRAL_RETURN_IF_ERROR(expect_fleet_map(pools[i], path));
    YamlFields pf(pools[i], path);
    CORRAL_ASSIGN_OR_RETURN(const std::string pool,
                            expand_fleet_pool(pf, layout, fleet, leaf_seq, used_types));
    if (!pool_names.insert(pool).second) {
      return invalid_argument(path + ".name", fmt::format("duplicate pool '{}'", pool));
    }
  }
  std::sort(fleet.nodes.begin(), fleet.nodes.end(),
            [](const Node& a, const Node& b) { return a.id < b.id; });
  for (const GpuTypeId& t : used_types) fleet.gpu_types.push_back(fleet.types.at(t));
  return fleet;
}

Status read_fleet_file(std::string_view yaml, std::string_view source,
                       const std::function<Status(YamlFields&)>& read) {
  Status s;
  try {
    const YAML::Node root = YAML::Load(std::string(yaml));
    s = expect_fleet_map(root, "");
    if (s.ok()) {
      YamlFields f(root, "");
      s = read(f);
    }
  } catch (const YAML::Exception& e) {
    return invalid_argument("(yaml)",
                            fmt::format("{}: line {}: {}", source, e.mark.line + 1, e.msg));
  }
  if (s.ok()) return s;
  return invalid_argument(s.field(), fmt::format("{}: {}", source, s.message()));
}

Result<FleetPools> parse_fleet_pools(std::string_view yaml, std::string_view source) {
  FleetPools pools;
  CORRAL_RETURN_IF_ERROR(read_fleet_file(yaml, source, [&](YamlFields& f) -> Status {
    CORRAL_ASSIGN_OR_RETURN(pools, read_fleet_pools(f));
    // corral-sim's sections: allowed here, read there (sim/fleet.cc).
    for (const char* section :
         {"name", "prices", "failures", "tenants", "trace_tenants", "job_regions"}) {
      (void)f.has(section);
    }
    return f.no_unknown();
  }));
  return pools;
}

}  // namespace corral::core
