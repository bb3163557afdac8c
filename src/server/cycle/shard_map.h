// ShardMap: how scheduling is partitioned among shards (docs/scale-out.md). Each shard
// is declared in corrald's config by what it selects:
//
//   shards:
//     - {name: us-east/H100, region: us-east, gpuTypes: [H100]}
//     - {name: us-east/big, region: us-east, leaves: [l7, l8], minGpus: 64}
//     - {name: eu-west, region: eu-west}
//
// A node belongs to the first shard, in declaration order, whose region, GPU types and
// leaves (each: any when absent) all match it; a large-gang shard (minGpus) takes its
// nodes first, so whole leaves are set apart for large gangs. A job goes to the first
// large-gang shard whose minGpus it reaches and whose region and types it can use, else
// to the first ordinary shard it can use: deterministic, from the spec alone, so every
// replica routes it alike. The other shards it could have used are named in its
// `routed` event. Without a `shards` section there is one shard, `default`, with every
// node and every job.
//
// Thread safety: immutable after construction.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/gpu_type.h"
#include "core/ids.h"
#include "core/result.h"
#include "core/topology.h"
#include "sched/snapshot.h"

namespace corral::server {

struct ShardSpec {
  std::string name;
  std::string region;                      // empty: any
  std::vector<core::GpuTypeId> gpu_types;  // empty: any
  std::vector<std::string> leaves;         // empty: any
  std::int32_t min_gpus = 0;               // > 0: a large-gang shard, for jobs this big
};

// What routing needs of a job.
struct RouteQuery {
  std::int32_t gpus = 1;
  std::vector<core::GpuTypeId> gpu_types;  // acceptable types; empty: any
  std::string region;                      // required region; empty: any
};

// What routing needs of a job request (sched::job_request_from_spec gives the request
// of a spec being submitted): one function for the API and the loops, so they route alike.
RouteQuery route_query(const sched::JobRequest& request);

struct ShardRoute {
  int shard = -1;         // index into shards(); -1: no shard can run it
  std::vector<int> also;  // the other shards it could have gone to
};

class ShardMap {
 public:
  ShardMap();  // one shard, `default`, with everything
  // InvalidArgument (field shards[i]...) for a duplicate or bad name.
  static core::Result<ShardMap> make(std::vector<ShardSpec> shards);

  const std::vector<ShardSpec>& shards() const { return shards_; }
  bool partitioned() const { return shards_.size() > 1; }
  int find(std::string_view name) const;  // -1: none

  // The shard that owns `node` (-1: none selects it; it takes no work then).
  int shard_of(const core::Node& node) const;
  ShardRoute route(const RouteQuery& job) const;
  // "routed to shard us-east/H100 (could also run in eu-west; ...)", for the job's
  // event; a job no shard takes: why.
  std::string describe(const ShardRoute& route, const RouteQuery& job) const;
  // For a submission: OK, or InvalidArgument naming the field no shard can serve
  // (resources.region or resources.gpuTypes).
  core::Status check_routable(const RouteQuery& job) const;

 private:
  explicit ShardMap(std::vector<ShardSpec> shards) : shards_(std::move(shards)) {}
  std::vector<ShardSpec> shards_;
  std::vector<int> node_order_;  // large-gang shards first, then the rest, each as declared
};

}  // namespace corral::server
