#include "agent/protocol_json.h"

#include "agent/cluster_scope.h"
#include "agent/topology.h"

namespace corral::agent {

using nlohmann::json;

json join_body(const std::string& node, const std::string& agent_url,
               const core::TopologyLabels& labels, std::int64_t rack_power_cap_w,
               const NodeInventory& inventory) {
  const std::vector<std::int32_t> domains = nvlink_domains(inventory.gpus);
  json gpus = json::array(), observed = json::array();
  for (std::size_t i = 0; i < inventory.gpus.size(); ++i) {
    const GpuInfo& g = inventory.gpus[i];
    gpus.push_back({{"index", g.index},
                    {"uuid", g.uuid},
                    {"type", g.type},
                    {"nvlinkDomain", domains[i]},
                    {"numaNode", g.numa_node}});
    observed.push_back({{"index", g.index},
                        {"uuid", g.uuid},
                        {"model", g.model},
                        {"memoryMib", g.memory_mib},
                        {"powerLimitW", g.power_limit_w},
                        {"pciBusId", g.pci_bus_id},
                        {"numaNode", g.numa_node},
                        {"nvlinkPeers", g.nvlink_peers}});
  }
  return {{"agentUrl", agent_url},
          {"rackPowerCapW", rack_power_cap_w},
          {"node",
           {{"id", node},
            {"labels",
             {{"region", labels.region},
              {"cluster", labels.cluster},
              {"spine", labels.spine},
              {"leaf", labels.leaf},
              {"rack", labels.rack},
              {"nvlinkRack", labels.nvlink_rack}}},
            {"cpus", inventory.cpus},
            {"memoryMib", inventory.memory_mib},
            {"gpus", gpus}}},
          {"inventory", {{"source", inventory.source}, {"gpus", observed}}}};
}

core::Result<JoinAnswer> parse_join_answer(const std::string& body) {
  try {
    const json j = json::parse(body);
    JoinAnswer answer{.node = j.at("node").get<std::string>(),
                      .token = j.at("token").get<std::string>(),
                      .epoch = j.at("epoch").get<std::int64_t>(),
                      .log_key = j.at("logKey").get<std::string>(),
                      .cluster_id = j.at("clusterId").get<std::string>()};
    // It names a directory of the state dir: never trust it as a path.
    if (!valid_cluster_id(answer.cluster_id)) {
      return core::invalid_argument(
          "clusterId", "bad answer from corrald: must be 1..64 letters, digits or '-', got '" +
                           answer.cluster_id.substr(0, 80) + "'");
    }
    return answer;
  } catch (const json::exception& e) {
    return core::invalid_argument("join", std::string("bad answer from corrald: ") + e.what());
  }
}

core::Result<Assignments> parse_assignments(const std::string& body) {
  try {
    const json j = json::parse(body);
    Assignments a{.node = j.value("node", std::string()),
                  .epoch = j.at("epoch").get<std::int64_t>(),
                  .version = j.at("version").get<std::int64_t>()};
    for (const json& w : j.at("workers")) {
      DesiredWorker d;
      WorkerSpec& s = d.spec;
      s.key = WorkerKey{.job = w.at("job").get<std::int64_t>(),
                        .attempt = w.at("attempt").get<std::int32_t>(),
                        .rank = w.at("rank").get<std::int32_t>()};
      s.local_rank = w.value("localRank", 0);
      s.node_rank = w.value("nodeRank", 0);
      s.world_size = w.value("worldSize", 1);
      s.gpus = w.value("gpus", std::vector<std::int32_t>{});
      s.visible_devices = w.value("visibleDevices", std::string());
      s.command = w.at("command").get<std::vector<std::string>>();
      if (w.contains("env") && !w["env"].is_null()) {
        s.env = w["env"].get<std::map<std::string, std::string>>();
      }
      s.master_addr = w.value("masterAddr", std::string());
      s.master_port = w.value("masterPort", 0);
      s.checkpoint_dir = w.value("checkpointDir", std::string());
      s.restore_from = w.contains("restoreFrom") && w["restoreFrom"].is_string()
                           ? w["restoreFrom"].get<std::string>()
                           : std::string();
      s.grace_ms = w.value("graceMs", std::int64_t{30000});
      const std::string desired = w.value("desired", std::string("run"));
      if (desired != "run" && desired != "stop") {
        return core::invalid_argument("workers.desired", "must be run or stop, got " + desired);
      }
      d.run = desired == "run";
      a.workers.push_back(std::move(d));
    }
    return a;
  } catch (const json::exception& e) {
    // Never echo the body: it carries secret env values.
    return core::invalid_argument("assignments",
                                  std::string("bad answer from corrald: ") + e.what());
  }
}

json heartbeat_body(std::int64_t epoch, const std::string& agent_url,
                    const std::vector<GpuHealth>& gpus, const std::vector<WorkerStatus>& workers,
                    std::int64_t applied_version) {
  json g = json::array(), w = json::array();
  for (const GpuHealth& h : gpus) {
    g.push_back({{"index", h.index},
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
                 {"memoryUsedMib", h.memory_used_mib}});
  }
  for (const WorkerStatus& s : workers) {
    json one = {{"job", s.key.job},
                {"attempt", s.key.attempt},
                {"rank", s.key.rank},
                {"pid", s.pid},
                {"startedAtMs", s.started_at_ms}};
    if (s.state == WorkerStatus::State::kRunning) {
      one["state"] = "running";
    } else {
      one["state"] = "exited";
      one["exitCode"] = s.exit_code;
      one["signal"] = s.signal;
      one["exitedAtMs"] = s.exited_at_ms;
    }
    w.push_back(std::move(one));
  }
  json out = {{"epoch", epoch}, {"agentUrl", agent_url}, {"gpus", g}, {"workers", w}};
  if (applied_version >= 0) out["appliedVersion"] = applied_version;
  return out;
}

core::Result<CheckpointReport> parse_checkpoint_report(const std::string& body) {
  json j;
  try {
    j = json::parse(body);
  } catch (const json::exception&) {
    return core::invalid_argument("", "body must be JSON");
  }
  if (!j.is_object()) return core::invalid_argument("", "body must be an object");
  CheckpointReport r;
  if (!j.contains("step") || !j["step"].is_number_integer() || j["step"].get<std::int64_t>() < 0) {
    return core::invalid_argument("step", "must be a non-negative integer");
  }
  r.step = j["step"].get<std::int64_t>();
  if (!j.contains("path") || !j["path"].is_string() || j["path"].get<std::string>().empty() ||
      j["path"].get<std::string>()[0] != '/') {
    return core::invalid_argument("path", "must be an absolute path");
  }
  r.path = j["path"].get<std::string>();
  if (j.contains("bytes")) {
    if (!j["bytes"].is_number_integer() || j["bytes"].get<std::int64_t>() < 0) {
      return core::invalid_argument("bytes", "must be a non-negative integer");
    }
    r.bytes = j["bytes"].get<std::int64_t>();
  }
  if (j.contains("checksum")) {
    if (!j["checksum"].is_string()) return core::invalid_argument("checksum", "must be a string");
    r.checksum = j["checksum"].get<std::string>();
  }
  return r;
}

}  // namespace corral::agent
