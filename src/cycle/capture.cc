#include "cycle/capture.h"

#include <fmt/format.h>

#include "core/gpu_type.h"
#include "core/job_spec.h"
#include "core/reservation.h"
#include "core/tenant.h"
#include "core/topology.h"
#include "cycle/field_count.h"
#include "cycle/internal/json_codec.h"
#include "cycle/internal/knobs.h"

namespace corral::cycle {
namespace detail {

// One Fields<T> per struct the file holds, each with the count of T's fields it covers:
// a field added to T breaks the build at its static_assert until it is written and read
// here too (and the count is updated). Keys are camelCase; times and durations end in
// Ms and are integer milliseconds.

#define CORRAL_CYCLE_FIELDS(T, N)                                             \
  static_assert(field_count<T>() == (N), #T                                   \
                " changed: write and read the new field "                     \
                "in cycle/capture.cc (Fields<" #T ">) and update the count"); \
  template <>                                                                 \
  struct Fields<T>

template <>
struct EnumNames<core::NodeAdminState> {
  static constexpr std::array<std::pair<core::NodeAdminState, std::string_view>, 3> kNames = {{
      {core::NodeAdminState::kActive, "active"},
      {core::NodeAdminState::kCordoned, "cordoned"},
      {core::NodeAdminState::kDraining, "draining"},
  }};
};

template <>
struct EnumNames<core::PackLevel> {
  static constexpr std::array<std::pair<core::PackLevel, std::string_view>, 5> kNames = {{
      {core::PackLevel::kNvlink, "nvlink"},
      {core::PackLevel::kNode, "node"},
      {core::PackLevel::kLeaf, "leaf"},
      {core::PackLevel::kSpine, "spine"},
      {core::PackLevel::kNone, "none"},
  }};
};

template <>
struct EnumNames<core::TopologyMode> {
  static constexpr std::array<std::pair<core::TopologyMode, std::string_view>, 2> kNames = {{
      {core::TopologyMode::kPreferred, "preferred"},
      {core::TopologyMode::kRequired, "required"},
  }};
};

template <>
struct EnumNames<core::ElasticStep> {
  static constexpr std::array<std::pair<core::ElasticStep, std::string_view>, 2> kNames = {{
      {core::ElasticStep::kMultiple, "multiple"},
      {core::ElasticStep::kPowerOfTwo, "powerOfTwo"},
  }};
};

CORRAL_CYCLE_FIELDS(core::GpuType, 5){template <typename V, typename T>
                                      static void visit(V & v, T& t){v("id", t.id);
v("memoryMib", t.memory_mib);
v("tdpWatts", t.tdp_watts);
v("generation", t.generation);
v("usageFactor", t.usage_factor);
}  // namespace detail
};  // namespace corral::cycle

CORRAL_CYCLE_FIELDS(core::TopologyLabels, 6){template <typename V, typename T>
                                             static void visit(V & v, T& t){v("region", t.region);
v("cluster", t.cluster);
v("spine", t.spine);
v("leaf", t.leaf);
v("rack", t.rack);
v("nvlinkRack", t.nvlink_rack);
}
}
;

CORRAL_CYCLE_FIELDS(core::Gpu, 7){template <typename V, typename T>
                                  static void visit(V & v, T& t){v("index", t.index);
v("uuid", t.uuid);
v("type", t.type);
v("nvlinkDomain", t.nvlink_domain);
v("numaNode", t.numa_node);
v("healthy", t.healthy);
v("powerLimitWatts", t.power_limit_watts);
}
}
;

CORRAL_CYCLE_FIELDS(core::Node, 7){template <typename V, typename T>
                                   static void visit(V & v, T& t){v("id", t.id);
v("labels", t.labels);
v("gpus", t.gpus);
v("cpus", t.cpus);
v("memoryMib", t.memory_mib);
v("admin", t.admin);
v("lost", t.lost);
}
}
;

CORRAL_CYCLE_FIELDS(core::Rack, 2){template <typename V, typename T>
                                   static void visit(V & v, T& t){v("name", t.name);
v("powerCapWatts", t.power_cap_watts);
}
}
;

CORRAL_CYCLE_FIELDS(core::Quota,
                    2){template <typename V, typename T>
                       static void visit(V & v, T& t){v("guaranteedMilli", t.guaranteed_milli);
v("borrowLimitMilli", t.borrow_limit_milli);
}
}
;

CORRAL_CYCLE_FIELDS(core::Tenant, 6){template <typename V, typename T>
                                     static void visit(V & v, T& t){v("id", t.id);
v("parent", t.parent);
v("weight", t.weight);
v("quotas", t.quotas);
v("defaultQuota", t.default_quota);
v("maxGpusByTier", t.max_gpus_by_tier);
}
}
;

CORRAL_CYCLE_FIELDS(core::Reservation, 7){template <typename V, typename T>
                                          static void visit(V & v, T& t){v("id", t.id);
v("tenant", t.tenant);
v("gpuType", t.gpu_type);
v("count", t.count);
v("nodes", t.nodes);
v("startMs", t.start);
v("endMs", t.end);
}
}
;

CORRAL_CYCLE_FIELDS(core::TopologyConstraint, 2){template <typename V, typename T>
                                                 static void visit(V & v, T& t){v("pack", t.pack);
v("mode", t.mode);
}
}
;

CORRAL_CYCLE_FIELDS(core::ScalingPoint, 2){template <typename V, typename T>
                                           static void visit(V & v, T& t){v("gpus", t.gpus);
v("throughput", t.throughput);
}
}
;

CORRAL_CYCLE_FIELDS(core::ElasticRange, 5){template <typename V, typename T>
                                           static void visit(V & v, T& t){v("minGpus", t.min_gpus);
v("maxGpus", t.max_gpus);
v("step", t.step);
v("stepMultiple", t.step_multiple);
v("scaling", t.scaling);
}
}
;

template <>
struct EnumNames<sched::EstimateBasis> {
  static constexpr std::array<std::pair<sched::EstimateBasis, std::string_view>, 3> kNames = {{
      {sched::EstimateBasis::kMaxRuntime, "maxRuntime"},
      {sched::EstimateBasis::kSpec, "expectedRuntime"},
      {sched::EstimateBasis::kHistory, "history"},
  }};
};

CORRAL_CYCLE_FIELDS(sched::RuntimeEstimate, 3){
    template <typename V, typename T> static void visit(V & v, T& t){v("runtimeMs", t.runtime);
v("basis", t.basis);
v("runs", t.runs);
}
}
;

template <>
struct EnumNames<core::DependencyCondition> {
  static constexpr std::array<std::pair<core::DependencyCondition, std::string_view>, 4> kNames = {{
      {core::DependencyCondition::kSuccess, "success"},
      {core::DependencyCondition::kFailure, "failure"},
      {core::DependencyCondition::kFinish, "finish"},
      {core::DependencyCondition::kStart, "start"},
  }};
};

CORRAL_CYCLE_FIELDS(sched::ArrayLimit, 2){template <typename V, typename T>
                                          static void visit(V & v, T& t){v("array", t.array);
v("maxRunning", t.max_running);
}
}
;

CORRAL_CYCLE_FIELDS(sched::DependencyFact, 7){template <typename V, typename T>
                                              static void visit(V & v, T& t){v("job", t.job);
v("on", t.on);
v("started", t.started);
v("ended", t.ended);
v("succeeded", t.succeeded);
v("startedAtMs", t.started_at);
v("endedAtMs", t.ended_at);
}
}
;

CORRAL_CYCLE_FIELDS(sched::JobRequest, 23){template <typename V, typename T>
                                           static void visit(V & v, T& t){v("id", t.id);
v("tenant", t.tenant);
v("tier", t.tier);
v("gpus", t.gpus);
v("gpuMilli", t.gpu_milli);
v("gpuMemoryMib", t.gpu_memory_mib);
v("gpuTypes", t.gpu_types);
v("gpuSpeed", t.gpu_speed);
v("gpusPerNode", t.gpus_per_node);
v("cpusPerGpu", t.cpus_per_gpu);
v("memoryPerGpuMib", t.memory_per_gpu_mib);
v("region", t.region);
v("topology", t.topology);
v("elastic", t.elastic);
v("scalingByType", t.scaling_by_type);
v("preemptible", t.preemptible);
v("maxRuntimeMs", t.max_runtime);
v("checkpointIntervalMs", t.checkpoint_interval);
v("restoreTimeMs", t.restore_time);
v("reservation", t.reservation);
v("estimate", t.estimate);
v("array", t.array);
v("user", t.user);
}
}
;

CORRAL_CYCLE_FIELDS(sched::GpuRef, 2){template <typename V, typename T>
                                      static void visit(V & v, T& t){v("node", t.node);
v("index", t.index);
}
}
;

CORRAL_CYCLE_FIELDS(sched::PendingJob, 7){template <typename V, typename T>
                                          static void visit(V & v, T& t){v("request", t.request);
v("queuedAtMs", t.queued_at);
v("attempt", t.attempt);
v("preemptions", t.preemptions);
v("attainedGpuSeconds", t.attained_gpu_seconds);
v("resizeTarget", t.resize_target);
v("dependencies", t.dependencies);
}
}
;

CORRAL_CYCLE_FIELDS(sched::RunningJob, 9){template <typename V, typename T>
                                          static void visit(V & v, T& t){v("request", t.request);
v("startedAtMs", t.started_at);
v("lastCheckpointAtMs", t.last_checkpoint_at);
v("preemptions", t.preemptions);
v("gpus", t.gpus);
v("borrowed", t.borrowed);
v("stopping", t.stopping);
v("attainedGpuSeconds", t.attained_gpu_seconds);
v("reservation", t.reservation);
}
}
;

CORRAL_CYCLE_FIELDS(sched::SnapshotInput, 8){
    template <typename V, typename T> static void visit(V & v, T& t){v("gpuTypes", t.gpu_types);
v("nodes", t.nodes);
v("racks", t.racks);
v("tenants", t.tenants);
v("usage", t.usage);
v("reservations", t.reservations);
v("running", t.running);
v("pending", t.pending);
}
}
;

// The file's own keys "format" and "version" are read first, by parse_captured_cycle().
CORRAL_CYCLE_FIELDS(CapturedCycle, 5){template <typename V, typename T>
                                      static void visit(V & v, T& t){v("source", t.source);
v("nowMs", t.now);
v("config", t.config);
v("input", t.input);
v("decisions", t.decisions_json);
}
}
;

#undef CORRAL_CYCLE_FIELDS

constexpr std::string_view kFormat = "corral-cycle";

}  // namespace detail

std::string to_json(const CapturedCycle& cycle) {
  std::string out;
  detail::ObjectWriter writer(out);
  writer("format", std::string(detail::kFormat));
  writer("version", kCaptureFormatVersion);
  detail::Fields<CapturedCycle>::visit(writer, cycle);
  writer.finish();
  out += '\n';
  return out;
}

core::Result<CapturedCycle> parse_captured_cycle(std::string_view text) {
  using detail::Json;
  Json j;
  try {
    j = Json::parse(text);
  } catch (const Json::exception& e) {  // parse_error, or out_of_range for 1e999
    return core::invalid_argument("", fmt::format("not valid JSON: {}", e.what()));
  }
  if (!j.is_object()) {
    return core::invalid_argument("", "must be a JSON object (a corral-cycle file)");
  }
  // 1. What the file is, before any of its fields: a file of another version may use
  // the same keys for other things.
  const auto format = j.find("format");
  if (format == j.end() || !format->is_string() ||
      format->get_ref<const std::string&>() != detail::kFormat) {
    return core::invalid_argument(
        "format", fmt::format("must be \"{}\" (not a captured cycle?), got {}", detail::kFormat,
                              format == j.end() ? "nothing" : detail::describe(*format)));
  }
  const auto version = j.find("version");
  if (version == j.end() || !version->is_number_integer()) {
    return core::invalid_argument(
        "version", fmt::format("must be an integer, got {}",
                               version == j.end() ? "nothing" : detail::describe(*version)));
  }
  if (*version != kCaptureFormatVersion) {
    return core::invalid_argument(
        "version", fmt::format("this build reads version {} only, the file is version {}",
                               kCaptureFormatVersion, detail::describe(*version)));
  }
  // 2. Everything else, field by field.
  CapturedCycle cycle;
  detail::ReadErrors errors;
  static constexpr std::string_view kOwnKeys[] = {"format", "version"};
  detail::read_fields(j, "", cycle, errors, kOwnKeys);
  if (!errors.ok()) return errors.status();
  return cycle;
}

}  // namespace corral::cycle
