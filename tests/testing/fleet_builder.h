// Fluent builders for scheduler inputs, shared by tests and benchmarks (never linked
// into a shipped binary). Clusters in tests are tiny and hand-drawn, so the reader can
// see the right answer:
//
//   auto s = FleetBuilder()
//                .dgx("n1", "H100", {.leaf = "l1"})
//                .dgx("n2", "H100", {.leaf = "l1"})
//                .unhealthy("n1", 3)
//                .pending(JobBuilder(1).tenant("nlp").gpus(8))
//                .build();
//
// Tenants named by jobs are added on first use with weight 1 and no quota limit.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/check.h"
#include "core/gpu_type.h"
#include "sched/snapshot.h"

namespace corral::testing {

struct Where {
  std::string leaf = "l1";
  std::string spine = "s1";
  std::string rack = "r1";
  std::string nvl_rack;
  std::string cluster = "c1";
  std::string region = "local";
};

class JobBuilder {
 public:
  explicit JobBuilder(std::int64_t id) {
    r_.id = core::JobId(id);
    r_.tenant = core::TenantId("t1");
  }

  JobBuilder& tenant(const std::string& t) {
    r_.tenant = core::TenantId(t);
    return *this;
  }
  JobBuilder& tier(std::int32_t tier) {
    r_.tier = tier;
    return *this;
  }
  JobBuilder& gpus(std::int32_t n) {
    r_.gpus = n;
    return *this;
  }
  // A share of one GPU: `milli` thousandths of it and `memory_mib` of its memory (gpus(n)
  // after it: n such shares, each on a GPU of its own).
  JobBuilder& share(std::int32_t milli, std::int64_t memory_mib = 0) {
    r_.gpus = 1;
    r_.gpu_milli = milli;
    r_.gpu_memory_mib = memory_mib;
    return *this;
  }
  JobBuilder& types(std::initializer_list<const char*> names) {
    r_.gpu_types.clear();
    for (const char* n : names) r_.gpu_types.emplace_back(n);
    return *this;
  }
  JobBuilder& per_node(std::int32_t n) {
    r_.gpus_per_node = n;
    return *this;
  }
  JobBuilder& cpus_per_gpu(std::int32_t n) {
    r_.cpus_per_gpu = n;
    return *this;
  }
  JobBuilder& memory_per_gpu_mib(std::int64_t n) {
    r_.memory_per_gpu_mib = n;
    return *this;
  }
  JobBuilder& pack(core::PackLevel level, core::TopologyMode mode = core::TopologyMode::kRequired) {
    r_.topology = {level, mode};
    return *this;
  }
  JobBuilder& preemptible(bool p = true) {
    r_.preemptible = p;
    return *this;
  }
  JobBuilder& max_runtime(core::Duration d) {
    r_.max_runtime = d;
    return *this;
  }
  JobBuilder& queued_at(std::int64_t ms) {
    queued_at_ = core::time_from_ms(ms);
    return *this;
  }
  // Pending: requeued by a resize to `gpus` (sched::PendingJob::resize_target), its
  // elastic range capped there as corrald caps it.
  JobBuilder& resize_target(std::int32_t gpus) {
    resize_target_ = gpus;
    r_.elastic->max_gpus = std::min(r_.elastic->max_gpus, gpus);
    r_.gpus = r_.elastic->max_gpus;
    return *this;
  }
  JobBuilder& elastic(std::int32_t min_gpus, std::int32_t max_gpus, std::int32_t step = 1) {
    r_.elastic = core::ElasticRange{.min_gpus = min_gpus,
                                    .max_gpus = max_gpus,
                                    .step = core::ElasticStep::kMultiple,
                                    .step_multiple = step};
    return *this;
  }
  // The elastic job's scaling curve (JobBuilder::elastic first).
  JobBuilder& scaling(std::vector<core::ScalingPoint> curve) {
    r_.elastic->scaling = std::move(curve);
    return *this;
  }
  // Its curve as measured on `type` (sched::JobRequest::scaling_by_type).
  JobBuilder& scaling_on(const char* type, std::vector<core::ScalingPoint> curve) {
    r_.scaling_by_type[core::GpuTypeId(type)] = std::move(curve);
    return *this;
  }
  // The job's speed per GPU by type (JobRequest::gpu_speed).
  JobBuilder& speed(std::initializer_list<std::pair<const char*, double>> by_type) {
    for (const auto& [type, v] : by_type) r_.gpu_speed[core::GpuTypeId(type)] = v;
    return *this;
  }
  JobBuilder& checkpoint(core::Duration interval, core::Duration restore) {
    r_.checkpoint_interval = interval;
    r_.restore_time = restore;
    return *this;
  }
  JobBuilder& estimate(core::Duration runtime, sched::EstimateBasis basis, std::int32_t runs = 0) {
    r_.estimate = {.runtime = runtime, .basis = basis, .runs = runs};
    return *this;
  }
  JobBuilder& reservation(const std::string& name) {
    r_.reservation = core::ReservationId(name);
    return *this;
  }
  // The region the job must run in (nodes' Where::region).
  JobBuilder& region(const std::string& name) {
    r_.region = name;
    return *this;
  }

  // A task of array `array` (its first task's id), at most `max_running` tasks running.
  JobBuilder& array(std::int64_t array, std::int32_t max_running) {
    r_.array = sched::ArrayLimit{core::JobId(array), max_running};
    return *this;
  }
  // An interactive session (core::kInteractiveTier) of `user`, not preemptible.
  JobBuilder& session(const std::string& user) {
    r_.tier = core::kInteractiveTier;
    r_.preemptible = false;
    r_.user = user;
    return *this;
  }
  // Pending: a dependency on `job` for `on`, with what the adapter found of it.
  JobBuilder& depends(sched::DependencyFact fact) {
    dependencies_.push_back(fact);
    return *this;
  }

  const sched::JobRequest& request() const { return r_; }
  sched::PendingJob pending() const {
    return {.request = r_,
            .queued_at = queued_at_,
            .resize_target = resize_target_,
            .dependencies = dependencies_};
  }

 private:
  std::vector<sched::DependencyFact> dependencies_;
  sched::JobRequest r_;
  core::Time queued_at_{};
  std::int32_t resize_target_ = 0;
};

class FleetBuilder {
 public:
  // A node of `gpus` GPUs of `type`, in NVLink domains of `domain_size` consecutive GPUs.
  FleetBuilder& node(const std::string& name, const std::string& type, std::int32_t gpus,
                     std::int32_t domain_size, const Where& where = {});
  // DGX-style: 8 GPUs on one NVSwitch.
  FleetBuilder& dgx(const std::string& name, const std::string& type = "H100",
                    const Where& where = {}) {
    return node(name, type, 8, 8, where);
  }
  // An 8-GPU PCIe server whose GPUs are bridged in NVLink pairs.
  FleetBuilder& pcie_pairs(const std::string& name, const std::string& type = "L40S",
                           const Where& where = {}) {
    return node(name, type, 8, 2, where);
  }
  // A GB200 NVL72-style rack: `trays` nodes of 4 GPUs in one rack-wide NVLink domain.
  FleetBuilder& nvl_rack(const std::string& rack, std::int32_t trays = 18, const Where& where = {});

  FleetBuilder& unhealthy(const std::string& node, std::int32_t gpu);
  FleetBuilder& admin(const std::string& node, core::NodeAdminState state);
  FleetBuilder& lost(const std::string& node);  // its agent stopped answering
  FleetBuilder& cpus(const std::string& node, std::int32_t cpus, std::int64_t memory_mib);
  FleetBuilder& rack_cap(const std::string& rack, std::int64_t watts);
  // Every GPU of `node` reports a board power limit of `watts` (core::Gpu::power_limit_watts).
  FleetBuilder& power_limit(const std::string& node, std::int32_t watts);

  FleetBuilder& tenant(const std::string& name, double weight = 1.0,
                       std::optional<std::string> parent = std::nullopt);
  FleetBuilder& quota(const std::string& tenant, const std::string& type, std::int64_t guaranteed,
                      std::int64_t borrow_limit);
  // A quota in thousandths of a GPU (a guarantee of 1.5 GPUs: 1500).
  FleetBuilder& quota_milli(const std::string& tenant, const std::string& type,
                            std::int64_t guaranteed_milli, std::int64_t borrow_limit_milli);
  FleetBuilder& default_quota(const std::string& tenant, std::int64_t guaranteed,
                              std::int64_t borrow_limit);
  FleetBuilder& usage(const std::string& tenant, double weighted_gpu_seconds);
  // The most GPUs `tenant`'s jobs of `tier` may hold (core::Tenant::max_gpus_by_tier).
  FleetBuilder& class_cap(const std::string& tenant, std::int32_t tier, std::int64_t max_gpus);

  FleetBuilder& reservation(const std::string& name, const std::string& tenant,
                            const std::string& type, std::int32_t count, std::int64_t start_ms,
                            std::int64_t end_ms);
  FleetBuilder& reservation_nodes(const std::string& name, const std::string& tenant,
                                  std::vector<std::string> nodes, std::int64_t start_ms,
                                  std::int64_t end_ms);

  FleetBuilder& pending(const JobBuilder& job);
  // A running job holding `gpus` ({node, index} pairs).
  FleetBuilder& running(const JobBuilder& job,
                        std::vector<std::pair<std::string, std::int32_t>> gpus,
                        bool borrowed = false);

  // Sets how the running job `id` has run so far.
  struct RunState {
    std::int64_t started_ms = 0;
    std::optional<std::int64_t> checkpoint_ms;
    std::int32_t preemptions = 0;
    bool stopping = false;
  };
  FleetBuilder& run_state(std::int64_t id, const RunState& state);

  sched::SnapshotInput input() const;
  // CHECKs that the snapshot is valid: builders are for inputs tests know to be good.
  sched::ClusterSnapshot build() const;

 private:
  void ensure_tenant(const core::TenantId& id);
  core::Node& find(const std::string& name);

  std::vector<core::Node> nodes_;
  std::map<std::string, core::Rack> racks_;
  std::map<core::TenantId, core::Tenant> tenants_;
  std::map<core::TenantId, double> usage_;
  std::vector<sched::PendingJob> pending_;
  std::vector<sched::RunningJob> running_;
  std::vector<core::Reservation> reservations_;
};

// GPUs 0..gpus-1 of `node`: the {node, index} pairs of FleetBuilder::running() for a job
// that holds a whole node.
inline std::vector<std::pair<std::string, std::int32_t>> whole(const std::string& node,
                                                               int gpus = 8) {
  std::vector<std::pair<std::string, std::int32_t>> out;
  for (int i = 0; i < gpus; ++i) out.push_back({node, i});
  return out;
}

}  // namespace corral::testing
