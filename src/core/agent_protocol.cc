#include "core/agent_protocol.h"

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <limits>
#include <regex>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/internal/protocol_fields.h"
#include "core/job_spec.h"
#include "core/json_fields.h"
#include "core/json_object.h"
#include "core/utf8.h"

namespace corral::core {

namespace detail {

Status read_checkpoint_path(const Field& f, std::string& out) {
  CORRAL_RETURN_IF_ERROR(read_string(f, kMaxPathBytes, out));
  if (out.empty() || out.front() != '/')
    return invalid_argument(f.name(), "must be an absolute path");
  return Status();
}

}  // namespace detail

namespace {

using namespace detail;  // NOLINT: the limits and readers both files share

// ---- pieces ---------------------------------------------------------------------------

json labels_json(const TopologyLabels& l) {
  return {{"region", l.region}, {"cluster", l.cluster}, {"spine", l.spine},
          {"leaf", l.leaf},     {"rack", l.rack},       {"nvlinkRack", l.nvlink_rack}};
}

json node_json(const Node& node) {
  json gpus = json::array();
  for (const Gpu& g : node.gpus) {
    gpus.push_back({{"index", g.index},
                    {"uuid", g.uuid},
                    {"type", g.type.value},
                    {"nvlinkDomain", g.nvlink_domain},
                    {"numaNode", g.numa_node}});
  }
  return {{"id", node.id.value},
          {"labels", labels_json(node.labels)},
          {"cpus", node.cpus},
          {"memoryMib", node.memory_mib},
          {"gpus", std::move(gpus)}};
}

json inventory_json(const ObservedInventory& inventory) {
  json gpus = json::array();
  for (const ObservedGpu& g : inventory.gpus) {
    gpus.push_back({{"index", g.index},
                    {"uuid", g.uuid},
                    {"model", g.model},
                    {"memoryMib", g.memory_mib},
                    {"powerLimitW", g.power_limit_w},
                    {"pciBusId", g.pci_bus_id},
                    {"numaNode", g.numa_node},
                    {"nvlinkPeers", g.nvlink_peers}});
  }
  return {{"source", inventory.source}, {"gpus", std::move(gpus)}};
}

Status read_observed_gpu(const json& g, const std::string& path, ObservedGpu& out) {
  CORRAL_RETURN_IF_ERROR(read_int(Field{g, path, "index", true}, 0, kMaxGpuIndex, out.index));
  CORRAL_RETURN_IF_ERROR(read_string(Field{g, path, "uuid"}, kMaxUrlBytes, out.uuid));
  CORRAL_RETURN_IF_ERROR(read_string(Field{g, path, "model"}, kMaxUrlBytes, out.model));
  CORRAL_RETURN_IF_ERROR(
      read_int(Field{g, path, "memoryMib"}, 0, std::int64_t{1} << 40, out.memory_mib));
  CORRAL_RETURN_IF_ERROR(read_int(Field{g, path, "powerLimitW"}, 0, 100000, out.power_limit_w));
  CORRAL_RETURN_IF_ERROR(read_string(Field{g, path, "pciBusId"}, kMaxUrlBytes, out.pci_bus_id));
  CORRAL_RETURN_IF_ERROR(read_int(Field{g, path, "numaNode"}, 0, 1024, out.numa_node));
  return read_int_array(Field{g, path, "nvlinkPeers"}, 0, kMaxGpuIndex, out.nvlink_peers);
}

Status read_inventory(const json& inv, const std::string& path, ObservedInventory& out) {
  CORRAL_RETURN_IF_ERROR(read_string(Field{inv, path, "source"}, kMaxUrlBytes, out.source));
  return read_objects(Field{inv, path, "gpus"}, out.gpus, read_observed_gpu);
}

json gpu_health_json(const GpuHealth& h) {
  return {{"index", h.index},
          {"uuid", h.uuid},
          {"present", h.present},
          {"xidErrors", h.xid_errors},
          {"eccUncorrectable", h.ecc_uncorrectable},
          {"retiredPagesPending", h.retired_pages_pending},
          {"remapFailed", h.remap_failed},
          {"temperatureC", h.temperature_c},
          {"powerW", h.power_w},
          {"powerLimitW", h.power_limit_w},
          {"throttle", h.throttle},
          {"nvlinkErrors", h.nvlink_errors},
          {"smPercent", h.sm_percent},
          {"memoryUsedMib", h.memory_used_mib}};
}

json gpu_health_array(const std::vector<GpuHealth>& gpus) {
  json out = json::array();
  for (const GpuHealth& h : gpus) out.push_back(gpu_health_json(h));
  return out;
}

Status read_gpu_health(const json& g, const std::string& path, GpuHealth& out) {
  CORRAL_RETURN_IF_ERROR(read_int(Field{g, path, "index", true}, 0, kMaxGpuIndex, out.index));
  CORRAL_RETURN_IF_ERROR(read_string(Field{g, path, "uuid"}, kMaxUrlBytes, out.uuid));
  CORRAL_RETURN_IF_ERROR(read_bool(Field{g, path, "present"}, out.present));
  CORRAL_RETURN_IF_ERROR(read_int_array(Field{g, path, "xidErrors"}, 0, 65535, out.xid_errors));
  CORRAL_RETURN_IF_ERROR(
      read_int(Field{g, path, "eccUncorrectable"}, 0, INT64_MAX, out.ecc_uncorrectable));
  CORRAL_RETURN_IF_ERROR(
      read_bool(Field{g, path, "retiredPagesPending"}, out.retired_pages_pending));
  CORRAL_RETURN_IF_ERROR(read_bool(Field{g, path, "remapFailed"}, out.remap_failed));
  CORRAL_RETURN_IF_ERROR(read_int(Field{g, path, "temperatureC"}, -273, 1000, out.temperature_c));
  CORRAL_RETURN_IF_ERROR(read_double(Field{g, path, "powerW"}, 0, 100000, out.power_w));
  CORRAL_RETURN_IF_ERROR(read_int(Field{g, path, "powerLimitW"}, 0, 100000, out.power_limit_w));
  CORRAL_RETURN_IF_ERROR(read_string_array(Field{g, path, "throttle"}, 64, out.throttle));
  CORRAL_RETURN_IF_ERROR(read_int(Field{g, path, "nvlinkErrors"}, 0, INT64_MAX, out.nvlink_errors));
  CORRAL_RETURN_IF_ERROR(read_int(Field{g, path, "smPercent"}, 0, 100, out.sm_percent));
  return read_int(Field{g, path, "memoryUsedMib"}, 0, std::int64_t{1} << 40, out.memory_used_mib);
}

json worker_status_json(const WorkerStatus& s) {
  json one = {{"job", s.key.job},
              {"attempt", s.key.attempt},
              {"rank", s.key.rank},
              {"pid", s.pid},
              {"startedAtMs", s.started_at_ms}};
  one["state"] = std::string(to_string(s.state));
  if (s.state == WorkerStatus::State::kExited) {
    one["exitCode"] = s.exit_code;
    one["signal"] = s.signal;
    one["exitedAtMs"] = s.exited_at_ms;
  }
  return one;
}

Status read_worker_key(const json& w, const std::string& path, WorkerKey& out) {
  CORRAL_RETURN_IF_ERROR(read_int(Field{w, path, "job", true}, 1, INT64_MAX, out.job));
  CORRAL_RETURN_IF_ERROR(read_int(Field{w, path, "attempt", true}, 1, INT32_MAX, out.attempt));
  return read_int(Field{w, path, "rank", true}, 0, kMaxRank, out.rank);
}

Status read_worker_status(const json& w, const std::string& path, WorkerStatus& out) {
  CORRAL_RETURN_IF_ERROR(read_worker_key(w, path, out.key));
  std::string state;
  CORRAL_RETURN_IF_ERROR(read_string(Field{w, path, "state", true}, kMaxStateBytes, state));
  if (state != to_string(WorkerStatus::State::kRunning) &&
      state != to_string(WorkerStatus::State::kExited)) {
    return invalid_argument(child_path(path, "state"), "must be running or exited");
  }
  out.state = state == to_string(WorkerStatus::State::kRunning) ? WorkerStatus::State::kRunning
                                                                : WorkerStatus::State::kExited;
  CORRAL_RETURN_IF_ERROR(read_int(Field{w, path, "pid"}, 0, INT32_MAX, out.pid));
  CORRAL_RETURN_IF_ERROR(read_int(Field{w, path, "startedAtMs"}, 0, kMaxTimeMs, out.started_at_ms));
  CORRAL_RETURN_IF_ERROR(read_int(Field{w, path, "exitCode"}, -1, 255, out.exit_code));
  CORRAL_RETURN_IF_ERROR(read_int(Field{w, path, "signal"}, 0, 128, out.signal));
  return read_int(Field{w, path, "exitedAtMs"}, 0, kMaxTimeMs, out.exited_at_ms);
}

json desired_worker_json(const DesiredWorker& d) {
  const WorkerSpec& s = d.spec;
  return {{"job", s.key.job},
          {"attempt", s.key.attempt},
          {"rank", s.key.rank},
          {"localRank", s.local_rank},
          {"nodeRank", s.node_rank},
          {"worldSize", s.world_size},
          {"localWorldSize", s.local_world_size},
          {"processes", s.per_node ? "perNode" : "perGpu"},
          {"gpus", s.gpus},
          {"visibleDevices", s.visible_devices},
          {"gpuShareMilli", s.gpu_share_milli},
          {"gpuMemoryMib", s.gpu_memory_mib},
          {"command", s.command},
          {"env", s.env},
          {"masterAddr", s.master_addr},
          {"masterPort", s.master_port},
          {"checkpointDir", s.checkpoint_dir},
          {"restoreFrom", s.restore_from},
          {"desired", d.run ? "run" : "stop"},
          {"graceMs", s.grace_ms},
          {"arrayJob", s.array_job},
          {"arrayIndex", s.array_index},
          {"arrayCount", s.array_count},
          {"sweepParams", s.sweep_params}};
}

Status read_desired_worker(const json& w, const std::string& path, DesiredWorker& out) {
  WorkerSpec& s = out.spec;
  CORRAL_RETURN_IF_ERROR(read_worker_key(w, path, s.key));
  CORRAL_RETURN_IF_ERROR(read_int(Field{w, path, "localRank"}, 0, kMaxRank, s.local_rank));
  CORRAL_RETURN_IF_ERROR(read_int(Field{w, path, "nodeRank"}, 0, kMaxRank, s.node_rank));
  CORRAL_RETURN_IF_ERROR(read_int(Field{w, path, "worldSize"}, 1, kMaxRank + 1, s.world_size));
  // Both absent from a corrald older than them, which knew neither: 1 and perGpu.
  CORRAL_RETURN_IF_ERROR(
      read_int(Field{w, path, "localWorldSize"}, 1, kMaxRank + 1, s.local_world_size));
  std::string processes = "perGpu";
  CORRAL_RETURN_IF_ERROR(read_string(Field{w, path, "processes"}, kMaxStateBytes, processes));
  if (processes != "perGpu" && processes != "perNode") {
    return invalid_argument(child_path(path, "processes"), "must be perGpu or perNode");
  }
  s.per_node = processes == "perNode";
  CORRAL_RETURN_IF_ERROR(read_int_array(Field{w, path, "gpus"}, 0, kMaxGpuIndex, s.gpus));
  CORRAL_RETURN_IF_ERROR(
      read_string(Field{w, path, "visibleDevices"}, kMaxTextBytes, s.visible_devices));
  // Both absent from a corrald older than shares: whole GPUs, no memory limit.
  CORRAL_RETURN_IF_ERROR(
      read_int(Field{w, path, "gpuShareMilli"}, 0, kMaxGpuShareMilli, s.gpu_share_milli));
  CORRAL_RETURN_IF_ERROR(
      read_int(Field{w, path, "gpuMemoryMib"}, 0, kMaxGpuMemoryMib, s.gpu_memory_mib));
  CORRAL_RETURN_IF_ERROR(
      read_string_array(Field{w, path, "command", true}, kMaxTextBytes, s.command));
  CORRAL_RETURN_IF_ERROR(read_string_map(Field{w, path, "env"}, kMaxTextBytes, s.env));
  CORRAL_RETURN_IF_ERROR(read_string(Field{w, path, "masterAddr"}, kMaxUrlBytes, s.master_addr));
  CORRAL_RETURN_IF_ERROR(read_int(Field{w, path, "masterPort"}, 0, 65535, s.master_port));
  CORRAL_RETURN_IF_ERROR(
      read_string(Field{w, path, "checkpointDir"}, kMaxPathBytes, s.checkpoint_dir));
  CORRAL_RETURN_IF_ERROR(read_string(Field{w, path, "restoreFrom"}, kMaxPathBytes, s.restore_from));
  CORRAL_RETURN_IF_ERROR(read_int(Field{w, path, "graceMs"}, 0, INT64_MAX, s.grace_ms));
  // Absent from a corrald older than arrays: not in an array.
  CORRAL_RETURN_IF_ERROR(read_int(Field{w, path, "arrayJob"}, 0, INT64_MAX, s.array_job));
  CORRAL_RETURN_IF_ERROR(read_int(Field{w, path, "arrayIndex"}, 0, 1 << 20, s.array_index));
  CORRAL_RETURN_IF_ERROR(read_int(Field{w, path, "arrayCount"}, 0, 1 << 20, s.array_count));
  // Absent from a corrald older than sweeps: not a trial.
  CORRAL_RETURN_IF_ERROR(
      read_string_map(Field{w, path, "sweepParams"}, kMaxTextBytes, s.sweep_params));
  std::string desired = "run";
  CORRAL_RETURN_IF_ERROR(read_string(Field{w, path, "desired"}, kMaxStateBytes, desired));
  if (desired != "run" && desired != "stop") {
    return invalid_argument(child_path(path, "desired"), "must be run or stop");
  }
  out.run = desired == "run";
  return Status();
}

Status read_agent_url(const Field& f, std::string& out) {
  std::string url;
  CORRAL_RETURN_IF_ERROR(read_string(f, kMaxUrlBytes, url));
  if (find(f.obj, f.key) == nullptr) return Status();
  if (!agent_url_host(url)) return invalid_argument(f.name(), "must be http://HOST:PORT");
  out = std::move(url);
  return Status();
}

}  // namespace

std::string_view to_string(WorkerStatus::State state) {
  return state == WorkerStatus::State::kRunning ? "running" : "exited";
}

std::string WorkerKey::name() const {
  return std::to_string(job) + "-" + std::to_string(attempt) + "-" + std::to_string(rank);
}

std::optional<std::string> agent_url_host(std::string_view url) {
  constexpr std::string_view kHttp = "http://";
  if (!url.starts_with(kHttp) || url.find_first_of(" \t") != std::string_view::npos) {
    return std::nullopt;
  }
  std::string_view rest = url.substr(kHttp.size());
  rest = rest.substr(0, rest.find('/'));
  if (rest.empty()) return std::nullopt;
  if (rest.front() == '[') {
    const auto close = rest.find(']');
    if (close == std::string_view::npos || close == 1) return std::nullopt;
    return std::string(rest.substr(1, close - 1));
  }
  const auto colon = rest.rfind(':');
  const std::string_view host = colon == std::string_view::npos ? rest : rest.substr(0, colon);
  if (host.empty()) return std::nullopt;
  return std::string(host);
}

// ---- §1 -------------------------------------------------------------------------------

std::string encode_join_request(const JoinRequest& r) {
  return dump({{"agentUrl", r.agent_url},
               {"rackPowerCapW", r.rack_power_cap_w},
               {"node", node_json(r.node)},
               {"inventory", inventory_json(r.inventory)}});
}

Result<JoinRequest> decode_join_request(std::string_view body, const NodeDecoder& decode_node) {
  CORRAL_ASSIGN_OR_RETURN(const json j, parse_json_object(body));
  const std::string root;
  CORRAL_RETURN_IF_ERROR(only_fields(j, root, {"agentUrl", "rackPowerCapW", "node", "inventory"}));
  JoinRequest r;
  CORRAL_RETURN_IF_ERROR(read_agent_url(Field{j, root, "agentUrl", true}, r.agent_url));
  CORRAL_RETURN_IF_ERROR(
      read_int(Field{j, root, "rackPowerCapW"}, 0, kMaxRackPowerCapW, r.rack_power_cap_w));
  const json* node = find(j, "node");
  if (node == nullptr || !node->is_object()) {
    return invalid_argument("node", "is required and must be an object");
  }
  auto decoded = decode_node(dump(*node));
  if (!decoded.ok()) {
    const Status& s = decoded.status();
    return Status(s.code(), s.message(), child_path("node", s.field()));
  }
  r.node = std::move(*decoded);
  if (const json* inv = find(j, "inventory")) {
    if (!inv->is_object()) return invalid_argument("inventory", "must be an object");
    CORRAL_RETURN_IF_ERROR(read_inventory(*inv, "inventory", r.inventory));
  }
  return r;
}

std::string encode_join_answer(const JoinAnswer& a) {
  return dump({{"node", a.node},
               {"token", a.token},
               {"epoch", a.epoch},
               {"logKey", a.log_key},
               {"clusterId", a.cluster_id}});
}

Result<JoinAnswer> decode_join_answer(std::string_view body) {
  CORRAL_ASSIGN_OR_RETURN(const json j, parse_json_object(body));
  const std::string root;
  JoinAnswer a;
  CORRAL_RETURN_IF_ERROR(read_string(Field{j, root, "node", true}, kMaxUrlBytes, a.node));
  CORRAL_RETURN_IF_ERROR(read_string(Field{j, root, "token", true}, kMaxUrlBytes, a.token));
  CORRAL_RETURN_IF_ERROR(read_int(Field{j, root, "epoch", true}, 0, INT64_MAX, a.epoch));
  CORRAL_RETURN_IF_ERROR(read_string(Field{j, root, "logKey", true}, kMaxUrlBytes, a.log_key));
  CORRAL_RETURN_IF_ERROR(
      read_string(Field{j, root, "clusterId", true}, kMaxUrlBytes, a.cluster_id));
  return a;
}

// ---- §2 -------------------------------------------------------------------------------

std::string encode_assignments(const Assignments& a) {
  json workers = json::array();
  for (const DesiredWorker& d : a.workers) workers.push_back(desired_worker_json(d));
  return dump({{"node", a.node}, {"epoch", a.epoch}, {"version", a.version}, {"workers", workers}});
}

Result<Assignments> decode_assignments(std::string_view body) {
  CORRAL_ASSIGN_OR_RETURN(const json j, parse_json_object(body));
  const std::string root;
  Assignments a;
  CORRAL_RETURN_IF_ERROR(read_string(Field{j, root, "node"}, kMaxUrlBytes, a.node));
  CORRAL_RETURN_IF_ERROR(read_int(Field{j, root, "epoch", true}, 0, INT64_MAX, a.epoch));
  CORRAL_RETURN_IF_ERROR(
      read_int(Field{j, root, "version", true}, INT64_MIN, INT64_MAX, a.version));
  CORRAL_RETURN_IF_ERROR(
      read_objects(Field{j, root, "workers", true}, a.workers, read_desired_worker));
  return a;
}

// ---- §3 -------------------------------------------------------------------------------

std::string encode_heartbeat(const Heartbeat& h) {
  json workers = json::array();
  for (const WorkerStatus& s : h.workers) workers.push_back(worker_status_json(s));
  json out = {{"epoch", h.epoch}, {"workers", std::move(workers)}};
  if (h.applied_version) out["appliedVersion"] = *h.applied_version;
  if (h.agent_url) out["agentUrl"] = *h.agent_url;
  if (h.gpus) out["gpus"] = gpu_health_array(*h.gpus);
  return dump(out);
}

Result<Heartbeat> decode_heartbeat(std::string_view body) {
  CORRAL_ASSIGN_OR_RETURN(const json j, parse_json_object(body));
  const std::string root;
  Heartbeat h;
  CORRAL_RETURN_IF_ERROR(read_int(Field{j, root, "epoch", true}, 1, INT64_MAX, h.epoch));
  if (find(j, "appliedVersion") != nullptr) {
    h.applied_version = 0;
    CORRAL_RETURN_IF_ERROR(
        read_int(Field{j, root, "appliedVersion"}, 0, INT64_MAX, *h.applied_version));
  }
  if (find(j, "agentUrl") != nullptr) {
    h.agent_url.emplace();
    CORRAL_RETURN_IF_ERROR(read_agent_url(Field{j, root, "agentUrl"}, *h.agent_url));
  }
  if (find(j, "gpus") != nullptr) {
    h.gpus.emplace();
    CORRAL_RETURN_IF_ERROR(read_objects(Field{j, root, "gpus"}, *h.gpus, read_gpu_health));
  }
  CORRAL_RETURN_IF_ERROR(read_objects(Field{j, root, "workers"}, h.workers, read_worker_status));
  return h;
}

std::string encode_observed_inventory(const ObservedInventory& inventory) {
  return dump(inventory_json(inventory));
}

std::string encode_gpu_health(const std::vector<GpuHealth>& gpus) {
  return dump(gpu_health_array(gpus));
}

Result<ObservedInventory> decode_observed_inventory(std::string_view text) {
  CORRAL_ASSIGN_OR_RETURN(const json j, parse_json_object(text));
  const std::string root;
  ObservedInventory out;
  CORRAL_RETURN_IF_ERROR(read_inventory(j, root, out));
  return out;
}

Result<std::vector<GpuHealth>> decode_gpu_health(std::string_view text) {
  json holder = {{"gpus", json::parse(text, nullptr, false)}};
  if (holder["gpus"].is_discarded()) return invalid_argument("gpus", "is not JSON");
  const std::string root;
  std::vector<GpuHealth> out;
  CORRAL_RETURN_IF_ERROR(read_objects(Field{holder, root, "gpus", true}, out, read_gpu_health));
  return out;
}

std::string encode_heartbeat_answer(const HeartbeatAnswer& a) {
  return dump({{"epoch", a.epoch}, {"version", a.version}});
}

Result<HeartbeatAnswer> decode_heartbeat_answer(std::string_view body) {
  CORRAL_ASSIGN_OR_RETURN(const json j, parse_json_object(body));
  const std::string root;
  HeartbeatAnswer a;
  CORRAL_RETURN_IF_ERROR(read_int(Field{j, root, "epoch", true}, 0, INT64_MAX, a.epoch));
  CORRAL_RETURN_IF_ERROR(
      read_int(Field{j, root, "version", true}, INT64_MIN, INT64_MAX, a.version));
  return a;
}

}  // namespace corral::core
