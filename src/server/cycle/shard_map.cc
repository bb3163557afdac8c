#include "server/cycle/shard_map.h"

#include <algorithm>
#include <set>
#include <utility>

namespace corral::server {
namespace {

bool any_or_has(const std::vector<core::GpuTypeId>& types, const core::GpuTypeId& t) {
  return types.empty() || std::find(types.begin(), types.end(), t) != types.end();
}

// Whether a job that accepts `wanted` (empty: any) can run on some type of `offered`.
bool types_meet(const std::vector<core::GpuTypeId>& offered,
                const std::vector<core::GpuTypeId>& wanted) {
  if (offered.empty() || wanted.empty()) return true;
  return std::any_of(wanted.begin(), wanted.end(),
                     [&](const core::GpuTypeId& t) { return any_or_has(offered, t); });
}

std::vector<int> node_order(const std::vector<ShardSpec>& shards) {
  std::vector<int> order;
  for (int i = 0; i < static_cast<int>(shards.size()); ++i) {
    if (shards[i].min_gpus > 0) order.push_back(i);
  }
  for (int i = 0; i < static_cast<int>(shards.size()); ++i) {
    if (shards[i].min_gpus == 0) order.push_back(i);
  }
  return order;
}

}  // namespace

RouteQuery route_query(const sched::JobRequest& request) {
  // An elastic job routes by the smallest size it may run at.
  return {.gpus = request.elastic ? request.elastic->min_gpus : request.gpus,
          .gpu_types = request.gpu_types,
          .region = request.region};
}

ShardMap::ShardMap() : shards_{{.name = "default"}}, node_order_{0} {}

core::Result<ShardMap> ShardMap::make(std::vector<ShardSpec> shards) {
  if (shards.empty()) return ShardMap();
  std::set<std::string> names;
  for (std::size_t i = 0; i < shards.size(); ++i) {
    const std::string field = "shards[" + std::to_string(i) + "]";
    const std::string& name = shards[i].name;
    if (name.empty() || name.size() > 63 || name.front() == '@' ||
        name.find_first_of(" \t\n,") != std::string::npos) {
      return core::invalid_argument(field + ".name",
                                    "must be 1 to 63 characters without spaces, commas or a "
                                    "leading @");
    }
    if (!names.insert(name).second) {
      return core::invalid_argument(field + ".name", "'" + name + "' is declared twice");
    }
    if (shards[i].min_gpus < 0) {
      return core::invalid_argument(field + ".minGpus", "must be 0 or more");
    }
  }
  ShardMap map(std::move(shards));
  map.node_order_ = node_order(map.shards_);
  return map;
}

int ShardMap::find(std::string_view name) const {
  for (int i = 0; i < static_cast<int>(shards_.size()); ++i) {
    if (shards_[i].name == name) return i;
  }
  return -1;
}

int ShardMap::shard_of(const core::Node& node) const {
  for (const int i : node_order_) {
    const ShardSpec& s = shards_[i];
    if (!s.region.empty() && s.region != node.labels.region) continue;
    if (!s.leaves.empty() &&
        std::find(s.leaves.begin(), s.leaves.end(), node.labels.leaf) == s.leaves.end()) {
      continue;
    }
    if (!s.gpu_types.empty() &&
        (node.gpus.empty() || !any_or_has(s.gpu_types, node.gpus.front().type))) {
      continue;
    }
    return i;
  }
  return -1;
}

ShardRoute ShardMap::route(const RouteQuery& job) const {
  ShardRoute out;
  const auto fits = [&](const ShardSpec& s) {
    return (s.region.empty() || job.region.empty() || s.region == job.region) &&
           types_meet(s.gpu_types, job.gpu_types);
  };
  // Large-gang shards first, for a job big enough; then the ordinary ones.
  for (const bool big : {true, false}) {
    for (int i = 0; i < static_cast<int>(shards_.size()); ++i) {
      const ShardSpec& s = shards_[i];
      if ((s.min_gpus > 0) != big || (big && job.gpus < s.min_gpus) || !fits(s)) continue;
      if (out.shard < 0) {
        out.shard = i;
      } else {
        out.also.push_back(i);
      }
    }
  }
  return out;
}

std::string ShardMap::describe(const ShardRoute& route, const RouteQuery& job) const {
  if (route.shard < 0) {
    std::string types;
    for (const auto& t : job.gpu_types) types += (types.empty() ? "" : ", ") + t.value;
    return "no shard takes " + (types.empty() ? std::string("jobs") : types + " jobs") +
           (job.region.empty() ? std::string() : " in region " + job.region);
  }
  std::string text = "routed to shard " + shards_[route.shard].name;
  if (!route.also.empty()) {
    text += " (could also run in ";
    for (std::size_t i = 0; i < route.also.size(); ++i) {
      text += (i == 0 ? "" : ", ") + shards_[route.also[i]].name;
    }
    text += "; the first declared that fits takes it)";
  }
  return text;
}

core::Status ShardMap::check_routable(const RouteQuery& job) const {
  const ShardRoute r = route(job);
  if (r.shard >= 0) return core::Status();
  std::string names;
  for (const auto& s : shards_) names += (names.empty() ? "" : ", ") + s.name;
  const bool region_served =
      job.region.empty() || std::any_of(shards_.begin(), shards_.end(), [&](const ShardSpec& s) {
        return s.region.empty() || s.region == job.region;
      });
  return core::invalid_argument(region_served ? "resources.gpuTypes" : "resources.region",
                                describe(r, job) + " (shards: " + names + ")");
}

}  // namespace corral::server
