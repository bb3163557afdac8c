#include "core/agent_protocol.h"

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <limits>
#include <regex>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/job_spec.h"
#include "core/json_object.h"
#include "core/utf8.h"

namespace corral::core {
namespace {

using nlohmann::json;

// Limits on what a peer may send: wide enough for any real value, narrow enough that
// nothing overflows once read.
constexpr std::int64_t kMaxRank = 1 << 20;
constexpr std::int64_t kMaxGpuIndex = 63;  // at most 64 GPUs a node, as registered nodes
constexpr std::int64_t kMaxRackPowerCapW = 10'000'000;
constexpr std::int64_t kMaxTimeMs = std::int64_t{1} << 50;  // ms since the epoch: year 37,648
constexpr std::size_t kMaxUrlBytes = 256;
constexpr std::size_t kMaxPathBytes = 4096;
constexpr std::size_t kMaxChecksumBytes = 256;
constexpr std::size_t kMaxStateBytes = 16;
constexpr std::size_t kMaxTextBytes = 1 << 16;

// Bodies carry user bytes (env values, paths): invalid UTF-8 is replaced, never thrown.
std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

Status only_keys(const json& obj, const std::string& path,
                 std::initializer_list<std::string_view> keys) {
  for (const auto& [key, value] : obj.items()) {
    bool known = false;
    for (const std::string_view k : keys) known = known || k == key;
    if (!known) return invalid_argument(child_path(path, key), "unknown field");
  }
  return Status();
}

// The value at obj[key], or null when it is absent (absent and null read the same).
const json* find(const json& obj, std::string_view key) {
  const auto it = obj.find(key);
  return it == obj.end() || it->is_null() ? nullptr : &*it;
}

// The readers below fill `out` from obj[key] when it is present and leave it otherwise;
// `required` makes absence an error. Each error names the field.
struct Field {
  const json& obj;
  const std::string& path;
  std::string_view key;
  bool required = false;

  std::string name() const { return child_path(path, key); }
  Status missing() const { return invalid_argument(name(), "is required"); }
};

template <typename Int>
Status read_int(const Field& f, std::int64_t lo, std::int64_t hi, Int& out) {
  const json* v = find(f.obj, f.key);
  if (v == nullptr) return f.required ? f.missing() : Status();
  CORRAL_ASSIGN_OR_RETURN(const std::int64_t n, integer_in(*v, f.name(), lo, hi));
  out = static_cast<Int>(n);
  return Status();
}

Status read_double(const Field& f, double lo, double hi, double& out) {
  const json* v = find(f.obj, f.key);
  if (v == nullptr) return f.required ? f.missing() : Status();
  if (!v->is_number()) return invalid_argument(f.name(), "must be a number");
  const double d = v->get<double>();
  if (!(d >= lo && d <= hi)) {
    return invalid_argument(f.name(), fmt::format("must be between {} and {}, got {}", lo, hi, d));
  }
  out = d;
  return Status();
}

Status read_bool(const Field& f, bool& out) {
  const json* v = find(f.obj, f.key);
  if (v == nullptr) return f.required ? f.missing() : Status();
  if (!v->is_boolean()) return invalid_argument(f.name(), "must be true or false");
  out = v->get<bool>();
  return Status();
}

// `plain`: no control characters (names, paths, URLs, uuids reach log lines and paths);
// environment values may hold any text.
Status string_value(const json& v, const std::string& name, std::size_t max, std::string& out,
                    bool plain = true) {
  if (!v.is_string()) return invalid_argument(name, "must be a string");
  const auto& s = v.get_ref<const std::string&>();
  if (s.size() > max) {
    return invalid_argument(name, "must be at most " + std::to_string(max) + " bytes");
  }
  if (plain && has_control_chars(s)) {
    return invalid_argument(name, "must not contain control characters");
  }
  out = s;
  return Status();
}

Status read_string(const Field& f, std::size_t max, std::string& out) {
  const json* v = find(f.obj, f.key);
  if (v == nullptr) return f.required ? f.missing() : Status();
  return string_value(*v, f.name(), max, out);
}

const json* array_at(const Field& f, Status& error) {
  const json* v = find(f.obj, f.key);
  if (v == nullptr) {
    if (f.required) error = f.missing();
    return nullptr;
  }
  if (!v->is_array()) {
    error = invalid_argument(f.name(), "must be an array");
    return nullptr;
  }
  return v;
}

template <typename Int>
Status read_int_array(const Field& f, std::int64_t lo, std::int64_t hi, std::vector<Int>& out) {
  Status error;
  const json* a = array_at(f, error);
  if (a == nullptr) return error;
  std::vector<Int> values;
  for (std::size_t i = 0; i < a->size(); ++i) {
    CORRAL_ASSIGN_OR_RETURN(const std::int64_t n,
                            integer_in((*a)[i], element_path(f.name(), i), lo, hi));
    values.push_back(static_cast<Int>(n));
  }
  out = std::move(values);
  return Status();
}

Status read_string_array(const Field& f, std::size_t max, std::vector<std::string>& out) {
  Status error;
  const json* a = array_at(f, error);
  if (a == nullptr) return error;
  std::vector<std::string> values(a->size());
  for (std::size_t i = 0; i < a->size(); ++i) {
    CORRAL_RETURN_IF_ERROR(string_value((*a)[i], element_path(f.name(), i), max, values[i]));
  }
  out = std::move(values);
  return Status();
}

Status read_string_map(const Field& f, std::map<std::string, std::string>& out) {
  const json* v = find(f.obj, f.key);
  if (v == nullptr) return f.required ? f.missing() : Status();
  if (!v->is_object()) return invalid_argument(f.name(), "must be an object of strings");
  std::map<std::string, std::string> values;
  for (const auto& [key, value] : v->items()) {
    CORRAL_RETURN_IF_ERROR(string_value(value, child_path(f.name(), key), kMaxTextBytes,
                                        values[key], /*plain=*/false));
  }
  out = std::move(values);
  return Status();
}

// The objects of the array at obj[key], each handed to `read` with its path.
template <typename T, typename Read>
Status read_objects(const Field& f, std::vector<T>& out, Read read) {
  Status error;
  const json* a = array_at(f, error);
  if (a == nullptr) return error;
  std::vector<T> values(a->size());
  for (std::size_t i = 0; i < a->size(); ++i) {
    const std::string path = element_path(f.name(), i);
    if (!(*a)[i].is_object()) return invalid_argument(path, "must be an object");
    CORRAL_RETURN_IF_ERROR(read((*a)[i], path, values[i]));
  }
  out = std::move(values);
  return Status();
}

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
          {"command", s.command},
          {"env", s.env},
          {"masterAddr", s.master_addr},
          {"masterPort", s.master_port},
          {"checkpointDir", s.checkpoint_dir},
          {"restoreFrom", s.restore_from},
          {"desired", d.run ? "run" : "stop"},
          {"graceMs", s.grace_ms}};
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
  CORRAL_RETURN_IF_ERROR(
      read_string_array(Field{w, path, "command", true}, kMaxTextBytes, s.command));
  CORRAL_RETURN_IF_ERROR(read_string_map(Field{w, path, "env"}, s.env));
  CORRAL_RETURN_IF_ERROR(read_string(Field{w, path, "masterAddr"}, kMaxUrlBytes, s.master_addr));
  CORRAL_RETURN_IF_ERROR(read_int(Field{w, path, "masterPort"}, 0, 65535, s.master_port));
  CORRAL_RETURN_IF_ERROR(
      read_string(Field{w, path, "checkpointDir"}, kMaxPathBytes, s.checkpoint_dir));
  CORRAL_RETURN_IF_ERROR(read_string(Field{w, path, "restoreFrom"}, kMaxPathBytes, s.restore_from));
  CORRAL_RETURN_IF_ERROR(read_int(Field{w, path, "graceMs"}, 0, INT64_MAX, s.grace_ms));
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

Status read_checkpoint_path(const Field& f, std::string& out) {
  CORRAL_RETURN_IF_ERROR(read_string(f, kMaxPathBytes, out));
  if (out.empty() || out.front() != '/')
    return invalid_argument(f.name(), "must be an absolute path");
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
  CORRAL_RETURN_IF_ERROR(only_keys(j, root, {"agentUrl", "rackPowerCapW", "node", "inventory"}));
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

// ---- §3b ------------------------------------------------------------------------------

namespace {

json telemetry_sample_json(const TelemetrySample& s) {
  json out = {{"gpu", s.gpu},
              {"timeMs", s.time_ms},
              {"utilization", s.utilization},
              {"memoryUsedMib", s.memory_used_mib},
              {"powerW", s.power_w},
              {"temperatureC", s.temperature_c}};
  if (!s.throttle.empty()) out["throttle"] = s.throttle;
  if (s.ecc_corrected > 0) out["eccCorrected"] = s.ecc_corrected;
  if (s.ecc_uncorrected > 0) out["eccUncorrected"] = s.ecc_uncorrected;
  return out;
}

Status read_telemetry_sample(const json& g, const std::string& path, TelemetrySample& out) {
  CORRAL_RETURN_IF_ERROR(read_int(Field{g, path, "gpu", true}, 0, kMaxGpuIndex, out.gpu));
  CORRAL_RETURN_IF_ERROR(read_int(Field{g, path, "timeMs", true}, 0, kMaxTimeMs, out.time_ms));
  CORRAL_RETURN_IF_ERROR(read_double(Field{g, path, "utilization"}, 0, 1, out.utilization));
  CORRAL_RETURN_IF_ERROR(
      read_int(Field{g, path, "memoryUsedMib"}, 0, std::int64_t{1} << 40, out.memory_used_mib));
  CORRAL_RETURN_IF_ERROR(read_double(Field{g, path, "powerW"}, 0, 100000, out.power_w));
  CORRAL_RETURN_IF_ERROR(read_int(Field{g, path, "temperatureC"}, -273, 1000, out.temperature_c));
  CORRAL_RETURN_IF_ERROR(read_string_array(Field{g, path, "throttle"}, 64, out.throttle));
  if (out.throttle.size() > 16) {
    return invalid_argument(child_path(path, "throttle"), "must have at most 16 reasons");
  }
  CORRAL_RETURN_IF_ERROR(read_int(Field{g, path, "eccCorrected"}, 0, INT64_MAX, out.ecc_corrected));
  return read_int(Field{g, path, "eccUncorrected"}, 0, INT64_MAX, out.ecc_uncorrected);
}

}  // namespace

std::string encode_telemetry_batch(const TelemetryBatch& batch) {
  json samples = json::array();
  for (const TelemetrySample& s : batch.samples) samples.push_back(telemetry_sample_json(s));
  return dump({{"samples", std::move(samples)}});
}

Result<TelemetryBatch> decode_telemetry_batch(std::string_view body) {
  CORRAL_ASSIGN_OR_RETURN(const json j, parse_json_object(body));
  const std::string root;
  TelemetryBatch batch;
  if (const json* a = find(j, "samples");
      a != nullptr && a->is_array() && a->size() > kMaxTelemetryBatch) {
    return invalid_argument("samples",
                            "must have at most " + std::to_string(kMaxTelemetryBatch) + " samples");
  }
  CORRAL_RETURN_IF_ERROR(
      read_objects(Field{j, root, "samples", true}, batch.samples, read_telemetry_sample));
  return batch;
}

// ---- §4 -------------------------------------------------------------------------------

std::string encode_checkpoint_report(const CheckpointReport& r) {
  json j = {{"step", r.step}, {"path", r.path}, {"bytes", r.bytes}, {"checksum", r.checksum}};
  // Absent when not measured, so a corrald older than the field still reads the report.
  if (r.throughput > 0) j["throughput"] = r.throughput;
  return dump(j);
}

Result<CheckpointReport> decode_checkpoint_report(std::string_view body) {
  CORRAL_ASSIGN_OR_RETURN(const json j, parse_json_object(body));
  const std::string root;
  CheckpointReport r;
  CORRAL_RETURN_IF_ERROR(read_int(Field{j, root, "step", true}, 0, INT64_MAX, r.step));
  CORRAL_RETURN_IF_ERROR(read_checkpoint_path(Field{j, root, "path", true}, r.path));
  CORRAL_RETURN_IF_ERROR(read_int(Field{j, root, "bytes"}, 0, INT64_MAX, r.bytes));
  CORRAL_RETURN_IF_ERROR(read_string(Field{j, root, "checksum"}, kMaxChecksumBytes, r.checksum));
  CORRAL_RETURN_IF_ERROR(
      read_double(Field{j, root, "throughput"}, 0, kMaxThroughput, r.throughput));
  return r;
}

std::string encode_worker_checkpoint(const WorkerCheckpoint& c) {
  json j = {{"epoch", c.epoch},         {"job", c.key.job},
            {"attempt", c.key.attempt}, {"rank", c.key.rank},
            {"step", c.report.step},    {"path", c.report.path},
            {"bytes", c.report.bytes},  {"checksum", c.report.checksum}};
  if (c.report.throughput > 0) j["throughput"] = c.report.throughput;  // as above
  return dump(j);
}

Result<WorkerCheckpoint> decode_worker_checkpoint(std::string_view body) {
  CORRAL_ASSIGN_OR_RETURN(const json j, parse_json_object(body));
  const std::string root;
  CORRAL_RETURN_IF_ERROR(only_keys(
      j, root,
      {"epoch", "job", "attempt", "rank", "step", "path", "bytes", "checksum", "throughput"}));
  WorkerCheckpoint c;
  CORRAL_RETURN_IF_ERROR(read_int(Field{j, root, "epoch", true}, 1, INT64_MAX, c.epoch));
  CORRAL_RETURN_IF_ERROR(read_int(Field{j, root, "job", true}, 1, INT64_MAX, c.key.job));
  CORRAL_RETURN_IF_ERROR(read_int(Field{j, root, "attempt", true}, 1, INT32_MAX, c.key.attempt));
  CORRAL_RETURN_IF_ERROR(read_int(Field{j, root, "rank"}, 0, kMaxRank, c.key.rank));
  CORRAL_RETURN_IF_ERROR(read_int(Field{j, root, "step", true}, 0, INT64_MAX, c.report.step));
  CORRAL_RETURN_IF_ERROR(read_checkpoint_path(Field{j, root, "path", true}, c.report.path));
  CORRAL_RETURN_IF_ERROR(read_int(Field{j, root, "bytes", true}, 0, INT64_MAX, c.report.bytes));
  CORRAL_RETURN_IF_ERROR(
      read_string(Field{j, root, "checksum", true}, kMaxChecksumBytes, c.report.checksum));
  CORRAL_RETURN_IF_ERROR(
      read_double(Field{j, root, "throughput"}, 0, kMaxThroughput, c.report.throughput));
  return c;
}

// ---- §5 -------------------------------------------------------------------------------

bool is_metric_name(std::string_view name) {
  if (name.empty() || name.size() > 128) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '/' ||
           c == '-';
  });
}

namespace {

Status read_metric_name(const Field& f, std::string& out) {
  CORRAL_RETURN_IF_ERROR(read_string(f, 128, out));
  if (!is_metric_name(out)) {
    return invalid_argument(f.name(), "must be 1 to 128 of letters, digits, '_', '.', '/', '-'");
  }
  return Status();
}

Status read_metric_point(const json& p, const std::string& path, MetricPoint& out) {
  CORRAL_RETURN_IF_ERROR(only_keys(p, path, {"name", "step", "value"}));
  CORRAL_RETURN_IF_ERROR(read_metric_name(Field{p, path, "name", true}, out.name));
  CORRAL_RETURN_IF_ERROR(read_int(Field{p, path, "step", true}, 0, INT64_MAX, out.step));
  constexpr double kMax = std::numeric_limits<double>::max();  // finite: NaN and inf fail
  return read_double(Field{p, path, "value", true}, -kMax, kMax, out.value);
}

Status read_artifact(const json& a, const std::string& path, ArtifactReport& out) {
  CORRAL_RETURN_IF_ERROR(only_keys(a, path, {"name", "uri", "digest", "bytes"}));
  CORRAL_RETURN_IF_ERROR(read_metric_name(Field{a, path, "name", true}, out.name));
  const Field uri{a, path, "uri", true};
  CORRAL_RETURN_IF_ERROR(read_string(uri, kMaxPathBytes, out.uri));
  static const std::regex kUri(R"(^(/|[a-z][a-z0-9+.-]*://).+)");
  if (!std::regex_match(out.uri, kUri)) {
    return invalid_argument(uri.name(), "must be an absolute path or SCHEME://...");
  }
  const Field digest{a, path, "digest", true};
  CORRAL_RETURN_IF_ERROR(read_string(digest, kMaxChecksumBytes, out.digest));
  static const std::regex kDigest("^sha256:[0-9a-f]{64}$");
  if (!std::regex_match(out.digest, kDigest)) {
    return invalid_argument(digest.name(), "must be sha256: and 64 lowercase hex digits");
  }
  return read_int(Field{a, path, "bytes", true}, 0, INT64_MAX, out.bytes);
}

// The batch's two lists, each bounded before a single element is read.
Status read_run_report(const json& j, RunReport& out) {
  const std::string root;
  for (const auto& [key, max] : {std::pair<const char*, std::size_t>{"metrics", kMaxMetricBatch},
                                 {"artifacts", kMaxArtifactBatch}}) {
    if (const json* a = find(j, key); a != nullptr && a->is_array() && a->size() > max) {
      return invalid_argument(key, "must have at most " + std::to_string(max) + " entries");
    }
  }
  CORRAL_RETURN_IF_ERROR(read_objects(Field{j, root, "metrics"}, out.metrics, read_metric_point));
  CORRAL_RETURN_IF_ERROR(read_objects(Field{j, root, "artifacts"}, out.artifacts, read_artifact));
  if (out.metrics.empty() && out.artifacts.empty()) {
    return invalid_argument("metrics", "a report needs at least one metric point or artifact");
  }
  return Status();
}

json run_report_json(const RunReport& r) {
  json metrics = json::array(), artifacts = json::array();
  for (const MetricPoint& p : r.metrics) {
    metrics.push_back({{"name", p.name}, {"step", p.step}, {"value", p.value}});
  }
  for (const ArtifactReport& a : r.artifacts) {
    artifacts.push_back(
        {{"name", a.name}, {"uri", a.uri}, {"digest", a.digest}, {"bytes", a.bytes}});
  }
  return {{"metrics", std::move(metrics)}, {"artifacts", std::move(artifacts)}};
}

}  // namespace

std::string encode_run_report(const RunReport& report) { return dump(run_report_json(report)); }

Result<RunReport> decode_run_report(std::string_view body) {
  CORRAL_ASSIGN_OR_RETURN(const json j, parse_json_object(body));
  CORRAL_RETURN_IF_ERROR(only_keys(j, "", {"metrics", "artifacts"}));
  RunReport r;
  CORRAL_RETURN_IF_ERROR(read_run_report(j, r));
  return r;
}

std::string encode_worker_run_report(const WorkerRunReport& r) {
  json j = run_report_json(r.report);
  j["epoch"] = r.epoch;
  j["job"] = r.key.job;
  j["attempt"] = r.key.attempt;
  j["rank"] = r.key.rank;
  return dump(j);
}

Result<WorkerRunReport> decode_worker_run_report(std::string_view body) {
  CORRAL_ASSIGN_OR_RETURN(const json j, parse_json_object(body));
  const std::string root;
  CORRAL_RETURN_IF_ERROR(
      only_keys(j, root, {"epoch", "job", "attempt", "rank", "metrics", "artifacts"}));
  WorkerRunReport r;
  CORRAL_RETURN_IF_ERROR(read_int(Field{j, root, "epoch", true}, 1, INT64_MAX, r.epoch));
  CORRAL_RETURN_IF_ERROR(read_int(Field{j, root, "job", true}, 1, INT64_MAX, r.key.job));
  CORRAL_RETURN_IF_ERROR(read_int(Field{j, root, "attempt", true}, 1, INT32_MAX, r.key.attempt));
  CORRAL_RETURN_IF_ERROR(read_int(Field{j, root, "rank"}, 0, kMaxRank, r.key.rank));
  CORRAL_RETURN_IF_ERROR(read_run_report(j, r.report));
  return r;
}

// ---- §5 feature lookups -----------------------------------------------------------------

namespace {

// Splits `j` into its `set` and the rest, which corrald's lookup parser reads.
Status read_feature_lookup(json j, FeatureLookupRequest& out) {
  const std::string root;
  CORRAL_RETURN_IF_ERROR(read_string(Field{j, root, "set", true}, kMaxFeatureSetRefBytes, out.set));
  if (out.set.find('@') == std::string::npos) {
    return invalid_argument("set", "must be NAME@VERSION");
  }
  j.erase("set");
  out.lookup = dump(j);
  return Status();
}

}  // namespace

Result<FeatureLookupRequest> decode_feature_lookup_request(std::string_view body) {
  CORRAL_ASSIGN_OR_RETURN(json j, parse_json_object(body));
  FeatureLookupRequest r;
  CORRAL_RETURN_IF_ERROR(read_feature_lookup(std::move(j), r));
  return r;
}

std::string encode_worker_feature_lookup(const WorkerFeatureLookup& l) {
  json j = json::parse(l.request.lookup, nullptr, false);
  if (!j.is_object()) j = json::object();
  j["set"] = l.request.set;
  j["epoch"] = l.epoch;
  j["job"] = l.key.job;
  j["attempt"] = l.key.attempt;
  j["rank"] = l.key.rank;
  return dump(j);
}

Result<WorkerFeatureLookup> decode_worker_feature_lookup(std::string_view body) {
  CORRAL_ASSIGN_OR_RETURN(json j, parse_json_object(body));
  const std::string root;
  WorkerFeatureLookup l;
  CORRAL_RETURN_IF_ERROR(read_int(Field{j, root, "epoch", true}, 1, INT64_MAX, l.epoch));
  CORRAL_RETURN_IF_ERROR(read_int(Field{j, root, "job", true}, 1, INT64_MAX, l.key.job));
  CORRAL_RETURN_IF_ERROR(read_int(Field{j, root, "attempt", true}, 1, INT32_MAX, l.key.attempt));
  CORRAL_RETURN_IF_ERROR(read_int(Field{j, root, "rank"}, 0, kMaxRank, l.key.rank));
  for (const char* key : {"epoch", "job", "attempt", "rank"}) j.erase(key);
  CORRAL_RETURN_IF_ERROR(read_feature_lookup(std::move(j), l.request));
  return l;
}

}  // namespace corral::core
