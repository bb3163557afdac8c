#include "server/config.h"

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "core/gpu_type.h"
#include "core/yaml_fields.h"
#include "cycle/scheduler_config.h"

namespace corral::server {
namespace {

core::Result<std::vector<std::string>> names(const YAML::Node& node, const std::string& field) {
  if (!node.IsSequence()) return core::invalid_argument(field, "must be a list of names");
  std::vector<std::string> out;
  for (std::size_t i = 0; i < node.size(); ++i) {
    if (!node[i].IsScalar() || node[i].as<std::string>().empty()) {
      return core::invalid_argument(field + "[" + std::to_string(i) + "]", "must be a name");
    }
    out.push_back(node[i].as<std::string>());
  }
  return out;
}

core::Result<ShardMap> parse_shards(const YAML::Node& node) {
  if (!node.IsSequence()) return core::invalid_argument("shards", "must be a list of shards");
  std::vector<ShardSpec> shards;
  for (std::size_t i = 0; i < node.size(); ++i) {
    const std::string at = "shards[" + std::to_string(i) + "]";
    if (!node[i].IsMap()) return core::invalid_argument(at, "must be a map");
    core::YamlFields f(node[i], at);
    ShardSpec s;
    CORRAL_RETURN_IF_ERROR(f.read_string("name", s.name));
    CORRAL_RETURN_IF_ERROR(f.read_string("region", s.region));
    if (f.has("region") && s.region.empty()) {
      return core::invalid_argument(f.at("region"), "must be a non-empty string");
    }
    if (f.has("gpuTypes")) {
      CORRAL_ASSIGN_OR_RETURN(const auto types, names(f.get("gpuTypes"), f.at("gpuTypes")));
      for (std::size_t t = 0; t < types.size(); ++t) {
        if (!core::find_builtin_gpu_type(types[t])) {
          return core::invalid_argument(f.at("gpuTypes") + "[" + std::to_string(t) + "]",
                                        "unknown GPU type '" + types[t] + "'");
        }
        s.gpu_types.emplace_back(types[t]);
      }
    }
    if (f.has("leaves")) {
      CORRAL_ASSIGN_OR_RETURN(s.leaves, names(f.get("leaves"), f.at("leaves")));
    }
    CORRAL_RETURN_IF_ERROR(f.read_int("minGpus", 1, 1'000'000, s.min_gpus));
    CORRAL_RETURN_IF_ERROR(f.no_unknown());
    if (s.name.empty()) return core::invalid_argument(at + ".name", "is required");
    shards.push_back(std::move(s));
  }
  return ShardMap::make(std::move(shards));
}

// An optional file path into `out`: a string, and not an empty one.
core::Status read_path(core::YamlFields& f, std::string_view key, std::string& out) {
  if (!f.has(key)) return core::Status();
  CORRAL_RETURN_IF_ERROR(f.read_string(key, out));
  if (out.empty()) return core::invalid_argument(f.at(key), "must be a file path");
  return core::Status();
}

// `tenants:` (docs/config.md).
core::Status read_tenants(const YAML::Node& node, ServerConfig& c) {
  if (!node.IsMap()) return core::invalid_argument("tenants", "must be a map");
  for (const auto& t : node) {
    const std::string name = t.first.as<std::string>();
    const nlohmann::json body =
        t.second.IsNull() ? nlohmann::json::object() : cycle::yaml_to_json(t.second);
    auto cfg = tenant_config_from_json(name, body.dump());
    if (!cfg.ok()) {
      return core::invalid_argument("tenants." + name + "." + cfg.status().field(),
                                    cfg.status().message());
    }
    std::erase_if(c.tenants, [&](const TenantConfig& x) { return x.tenant.id.value == name; });
    c.tenants.push_back(std::move(*cfg));
  }
  return core::Status();
}

// `scheduler:` (docs/config.md).
core::Status read_scheduler(const YAML::Node& node, ServerConfig& c) {
  // decide()'s knobs are read where corral-sim replay reads them too; the loop's
  // own knobs (cycle::kSchedulerLoopKeys) are read here.
  CORRAL_ASSIGN_OR_RETURN(c.sched.config, cycle::apply_scheduler_section(node, c.sched.config));
  core::YamlFields f(node, "scheduler");
  if (f.has("batchWindowMs")) {
    CORRAL_ASSIGN_OR_RETURN(const auto ms, f.integer("batchWindowMs", std::nullopt, 0, 60'000));
    c.sched.batch_window = core::Duration(ms);
  }
  if (f.has("tickMs")) {
    CORRAL_ASSIGN_OR_RETURN(const auto ms, f.integer("tickMs", std::nullopt, 1, 3'600'000));
    c.sched.tick = core::Duration(ms);
  }
  return core::Status();
}

// `racks:` (docs/config.md).
core::Status read_racks(const YAML::Node& node, ServerConfig& c) {
  if (!node.IsMap()) return core::invalid_argument("racks", "must be a map");
  for (const auto& r : node) {
    const std::string name = r.first.as<std::string>();
    if (!valid_name(name)) {
      return core::invalid_argument("racks." + name, "is not a valid rack name");
    }
    if (!r.second.IsMap()) {
      return core::invalid_argument("racks." + name, "must be {powerCapWatts: W}");
    }
    core::YamlFields f(r.second, "racks." + name);
    CORRAL_RETURN_IF_ERROR(f.only({"powerCapWatts"}));
    CORRAL_ASSIGN_OR_RETURN(const std::int64_t cap,
                            f.integer("powerCapWatts", std::nullopt, 1, 100'000'000));
    c.racks.push_back({.name = name, .power_cap_watts = cap});
  }
  return core::Status();
}

// `agents:` (docs/config.md).
core::Status read_agents(const YAML::Node& node, ServerConfig& c) {
  if (!node.IsMap()) return core::invalid_argument("agents", "must be a map");
  core::YamlFields f(node, "agents");
  AgentSettings& a = c.agents;
  CORRAL_RETURN_IF_ERROR(f.read_int("nodeLostAfterMs", 50, 3'600'000, a.node_lost_after_ms));
  CORRAL_RETURN_IF_ERROR(f.read_int("stopGraceMs", 0, 3'600'000, a.stop_grace_ms));
  CORRAL_RETURN_IF_ERROR(f.read_int("restartBackoffMs", 0, 3'600'000, a.restart_backoff_ms));
  CORRAL_RETURN_IF_ERROR(
      f.read_int("restartBackoffMaxMs", 0, 86'400'000, a.restart_backoff_max_ms));
  CORRAL_RETURN_IF_ERROR(f.read_int("hotTemperatureC", 30, 150, a.hot_temperature_c));
  if (f.has("throttleReasons")) {
    const YAML::Node list = f.get("throttleReasons");
    if (!list.IsSequence()) {
      return core::invalid_argument("agents.throttleReasons", "must be a list of reasons");
    }
    a.throttle_reasons.clear();
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string field = "agents.throttleReasons[" + std::to_string(i) + "]";
      if (!list[i].IsScalar()) return core::invalid_argument(field, "must be a reason");
      const std::string reason = list[i].Scalar();
      if (!known_throttle_reason(reason)) {
        return core::invalid_argument(field, "unknown throttle reason '" + reason + "'");
      }
      a.throttle_reasons.insert(reason);
    }
  }
  CORRAL_RETURN_IF_ERROR(
      f.read_int("throttleDrainAfterMs", 0, 86'400'000, a.throttle_drain_after_ms));
  return f.no_unknown();
}

// `telemetry:` (docs/config.md).
core::Status read_telemetry(const YAML::Node& node, ServerConfig& c) {
  if (!node.IsMap()) return core::invalid_argument("telemetry", "must be a map");
  core::YamlFields f(node, "telemetry");
  TelemetrySettings& t = c.telemetry;
  constexpr std::int64_t kDay = 86'400'000;
  CORRAL_RETURN_IF_ERROR(f.read_int("rawRetentionMs", 60'000, 3650 * kDay, t.raw_retention_ms));
  CORRAL_RETURN_IF_ERROR(
      f.read_int("minuteRetentionMs", 60'000, 3650 * kDay, t.minute_retention_ms));
  CORRAL_RETURN_IF_ERROR(
      f.read_int("hourRetentionMs", 3'600'000, 36500 * kDay, t.hour_retention_ms));
  CORRAL_RETURN_IF_ERROR(f.read_int("nodePerMinute", 0, 10'000'000, t.node_samples_per_minute));
  CORRAL_RETURN_IF_ERROR(f.read_int("queueSamples", 0, 100'000'000, t.queue_samples));
  CORRAL_RETURN_IF_ERROR(f.read_int("flushMs", 1, 60'000, t.flush_ms));
  CORRAL_RETURN_IF_ERROR(f.read_int("pruneEveryMs", 1'000, kDay, t.prune_every_ms));
  return f.no_unknown();
}

// `sessions:` (docs/config.md).
core::Status read_sessions(const YAML::Node& node, ServerConfig& c) {
  if (!node.IsMap()) return core::invalid_argument("sessions", "must be a map");
  core::YamlFields f(node, "sessions");
  SessionSettings& s = c.sessions;
  constexpr std::int64_t kWeek = 7 * 86'400'000LL;
  CORRAL_RETURN_IF_ERROR(f.read_int("idleTimeoutMs", 60'000, kWeek, s.idle_timeout_ms));
  CORRAL_RETURN_IF_ERROR(f.read_int("graceMs", 0, kWeek, s.grace_ms));
  CORRAL_RETURN_IF_ERROR(f.read_int("checkEveryMs", 1'000, 3'600'000, s.check_every_ms));
  CORRAL_RETURN_IF_ERROR(f.read_number("idleBelow", 0.0, 1.0, s.idle_below));
  return f.no_unknown();
}

// `metrics:` (docs/config.md).
core::Status read_metrics(const YAML::Node& node, ServerConfig& c) {
  if (!node.IsMap()) return core::invalid_argument("metrics", "must be a map");
  core::YamlFields f(node, "metrics");
  CORRAL_RETURN_IF_ERROR(f.read_int("refreshMs", 10, 3'600'000, c.metrics.refresh_ms));
  return f.no_unknown();
}

// `dashboard:` (docs/config.md).
core::Status read_dashboard(const YAML::Node& node, ServerConfig& c) {
  if (!node.IsMap()) return core::invalid_argument("dashboard", "must be a map");
  core::YamlFields f(node, "dashboard");
  CORRAL_RETURN_IF_ERROR(f.read_int("historyMs", 100, 86'400'000, c.dashboard.history_ms));
  CORRAL_RETURN_IF_ERROR(
      f.read_int("historyRetentionDays", 1, 3660, c.dashboard.history_retention_days));
  CORRAL_RETURN_IF_ERROR(read_path(f, "chartJs", c.dashboard.chart_js));
  return f.no_unknown();
}

// `replica:` (docs/config.md).
core::Status read_replica(const YAML::Node& node, ServerConfig& c) {
  if (!node.IsMap()) return core::invalid_argument("replica", "must be a map");
  core::YamlFields f(node, "replica");
  CORRAL_RETURN_IF_ERROR(f.read_string("name", c.replica.name));
  if (f.has("name") && !valid_name(c.replica.name)) {
    return core::invalid_argument("replica.name", "must be a name (letters, digits, -_.)");
  }
  if (f.has("leaseMs")) {
    CORRAL_ASSIGN_OR_RETURN(const auto ms, f.integer("leaseMs", std::nullopt, 300, 600'000));
    c.replica.lease = core::Duration(ms);
  }
  return f.no_unknown();
}

// `security:` (docs/config.md).
core::Status read_security(const YAML::Node& node, ServerConfig& c) {
  if (!node.IsMap()) return core::invalid_argument("security", "must be a map");
  core::YamlFields f(node, "security");
  CORRAL_RETURN_IF_ERROR(read_path(f, "keyFile", c.security.key_file));
  CORRAL_RETURN_IF_ERROR(read_path(f, "auditAnchorFile", c.security.anchor_file));
  CORRAL_RETURN_IF_ERROR(f.read_bool("auditAnchorSyslog", c.security.anchor_syslog));
  return f.no_unknown();
}

// `log:` (docs/config.md).
core::Status read_log(const YAML::Node& node, ServerConfig& c) {
  if (!node.IsMap()) return core::invalid_argument("log", "must be a map");
  core::YamlFields f(node, "log");
  if (f.has("format")) {
    const YAML::Node v = f.get("format");
    if (!v.IsScalar()) return core::invalid_argument("log.format", "must be text or json");
    CORRAL_ASSIGN_OR_RETURN(c.log.format, parse_log_format(v.Scalar(), "log.format"));
  }
  return f.no_unknown();
}

}  // namespace

ServerConfig default_server_config() {
  ServerConfig c;
  c.tenants.push_back(default_tenant_config(core::TenantId("default")));
  return c;
}

core::Result<ServerConfig> load_server_config(const std::string& path) {
  ServerConfig c = default_server_config();
  std::ifstream in(path);
  if (!in) return core::invalid_argument("--config", "cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  try {
    const YAML::Node root = YAML::Load(text.str());
    if (!root.IsDefined() || root.IsNull()) return c;
    if (!root.IsMap()) return core::invalid_argument("", "the config must be a map");
    for (const auto& kv : root) {
      const std::string key = kv.first.as<std::string>();
      if (key == "billing") {
        CORRAL_ASSIGN_OR_RETURN(c.billing, parse_billing_section(kv.second));
      } else if (key == "shards") {
        CORRAL_ASSIGN_OR_RETURN(c.shards, parse_shards(kv.second));
      } else if (key == "tenants") {
        CORRAL_RETURN_IF_ERROR(read_tenants(kv.second, c));
      } else if (key == "scheduler") {
        CORRAL_RETURN_IF_ERROR(read_scheduler(kv.second, c));
      } else if (key == "racks") {
        CORRAL_RETURN_IF_ERROR(read_racks(kv.second, c));
      } else if (key == "agents") {
        CORRAL_RETURN_IF_ERROR(read_agents(kv.second, c));
      } else if (key == "telemetry") {
        CORRAL_RETURN_IF_ERROR(read_telemetry(kv.second, c));
      } else if (key == "sessions") {
        CORRAL_RETURN_IF_ERROR(read_sessions(kv.second, c));
      } else if (key == "metrics") {
        CORRAL_RETURN_IF_ERROR(read_metrics(kv.second, c));
      } else if (key == "dashboard") {
        CORRAL_RETURN_IF_ERROR(read_dashboard(kv.second, c));
      } else if (key == "replica") {
        CORRAL_RETURN_IF_ERROR(read_replica(kv.second, c));
      } else if (key == "security") {
        CORRAL_RETURN_IF_ERROR(read_security(kv.second, c));
      } else if (key == "log") {
        CORRAL_RETURN_IF_ERROR(read_log(kv.second, c));
      } else {
        return core::invalid_argument(key, "unknown field");
      }
    }
  } catch (const YAML::Exception& e) {
    return core::invalid_argument("", std::string("config is not valid YAML: ") + e.what());
  }
  return c;
}

}  // namespace corral::server
