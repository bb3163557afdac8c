// The node pools of a fleet file (examples/fleets/*.yaml; the schema is in
// docs/evaluation.md): its `region`, `gpu_types`, `network` and `pools`, expanded into
// core::Node values with their topology labels. This is the one expansion of pools:
// corral-sim's fleet (sim/fleet.h) and the agent's fleet emulator (`corral-agent
// --emulate N --fleet FILE`, docs/agent.md) both take their nodes from it, so an
// emulated fleet is the simulated one, node for node.
//
// Expansion. Pool `NAME` of `nodes` nodes gives NAME-00000, NAME-00001, ... Each pool
// starts a new leaf switch (a leaf never mixes pools): `network.nodes_per_leaf` nodes to
// a leaf (leaf-0000, numbered across pools in file order), `network.leaves_per_spine`
// leaves to a spine (spine-000); `nodes_per_rack` nodes to a power rack (NAME-r0000,
// capped at `rack_power_cap_watts`); an NVLink rack (`nvl_rack_trays` > 0) is one power
// rack whose trays carry its name as their `nvlink_rack` label. GPU g of a node of P GPUs
// is in NVLink domain g / nvlink_domain_gpus and on NUMA node 2g / P. Every node is in
// cluster "c1" and its pool's region (the file's unless the pool names one).
//
// Thread safety: pure functions over values.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/gpu_type.h"
#include "core/ids.h"
#include "core/result.h"
#include "core/status.h"
#include "core/topology.h"
#include "core/yaml_fields.h"

namespace corral::core {

struct FleetPools {
  std::string region = "local";  // the file's: every pool's unless it names its own
  // Every type the file may name: the built-in catalog, with the file's gpu_types added
  // (or replacing a built-in type of the same id).
  std::map<GpuTypeId, GpuType> types;
  std::vector<GpuType> gpu_types;  // the types the pools use, sorted by id
  std::vector<Node> nodes;         // sorted by id
  std::vector<Rack> racks;         // in pool order, then node order
};

// Reads `region`, `gpu_types`, `network` and `pools` from the fleet file's root map and
// expands the pools. The caller reads the file's other sections through the same
// `root` and calls root.no_unknown() last. InvalidArgument with the field's path, e.g.
// `pools[1].gpus_per_node: must be between 1 and 64, got 0`.
Result<FleetPools> read_fleet_pools(YamlFields& root);

// Parses fleet file text and hands its root map to `read`. Every error (YAML syntax, a
// root that is no map, what `read` returns or throws from yaml-cpp) is InvalidArgument
// with the field's path and a message that starts with `source`: "f.yaml: must be ...".
Status read_fleet_file(std::string_view yaml, std::string_view source,
                       const std::function<Status(YamlFields&)>& read);

// The pools of a whole fleet file, for a reader that needs nothing else of it (the
// agent's emulator). The sections corral-sim reads besides the pools (`name`, `prices`,
// `failures`, `tenants`, `trace_tenants`, `job_regions`) are allowed and not checked;
// any other key is refused, so a typo never becomes a default. Errors as
// read_fleet_file()'s.
Result<FleetPools> parse_fleet_pools(std::string_view yaml, std::string_view source);

}  // namespace corral::core
