#include "server/config.h"

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "core/gpu_type.h"
#include "cycle/scheduler_config.h"

namespace corral::server {
namespace {

core::Result<std::int64_t> int_in_range(const YAML::Node& node, const std::string& field,
                                        std::int64_t lo, std::int64_t hi) {
  std::int64_t v = 0;
  if (!YAML::convert<std::int64_t>::decode(node, v) || v < lo || v > hi) {
    return core::invalid_argument(
        field, "must be an integer from " + std::to_string(lo) + " to " + std::to_string(hi));
  }
  return v;
}

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
    ShardSpec s;
    for (const auto& kv : node[i]) {
      const std::string k = kv.first.as<std::string>();
      const std::string field = at + "." + k;
      if (k == "name" || k == "region") {
        if (!kv.second.IsScalar() || kv.second.as<std::string>().empty()) {
          return core::invalid_argument(field, "must be a non-empty string");
        }
        (k == "name" ? s.name : s.region) = kv.second.as<std::string>();
      } else if (k == "gpuTypes") {
        CORRAL_ASSIGN_OR_RETURN(const auto types, names(kv.second, field));
        for (std::size_t t = 0; t < types.size(); ++t) {
          if (!core::find_builtin_gpu_type(types[t])) {
            return core::invalid_argument(field + "[" + std::to_string(t) + "]",
                                          "unknown GPU type '" + types[t] + "'");
          }
          s.gpu_types.emplace_back(types[t]);
        }
      } else if (k == "leaves") {
        CORRAL_ASSIGN_OR_RETURN(s.leaves, names(kv.second, field));
      } else if (k == "minGpus") {
        CORRAL_ASSIGN_OR_RETURN(const auto n, int_in_range(kv.second, field, 1, 1'000'000));
        s.min_gpus = static_cast<std::int32_t>(n);
      } else {
        return core::invalid_argument(field, "unknown field");
      }
    }
    if (s.name.empty()) return core::invalid_argument(at + ".name", "is required");
    shards.push_back(std::move(s));
  }
  return ShardMap::make(std::move(shards));
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
  for (const auto& s : node) {
    const std::string k = s.first.as<std::string>();
    const auto in_range = [&](std::int64_t lo, std::int64_t hi) {
      return int_in_range(s.second, "scheduler." + k, lo, hi);
    };
    if (k == "batchWindowMs") {
      CORRAL_ASSIGN_OR_RETURN(auto ms, in_range(0, 60'000));
      c.sched.batch_window = core::Duration(ms);
    } else if (k == "tickMs") {
      CORRAL_ASSIGN_OR_RETURN(auto ms, in_range(1, 3'600'000));
      c.sched.tick = core::Duration(ms);
    }
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
    if (!r.second.IsMap() || r.second.size() != 1 || !r.second["powerCapWatts"]) {
      return core::invalid_argument("racks." + name, "must be {powerCapWatts: W}");
    }
    CORRAL_ASSIGN_OR_RETURN(const std::int64_t cap,
                            int_in_range(r.second["powerCapWatts"],
                                         "racks." + name + ".powerCapWatts", 1, 100'000'000));
    c.racks.push_back({.name = name, .power_cap_watts = cap});
  }
  return core::Status();
}

// `agents:` (docs/config.md).
core::Status read_agents(const YAML::Node& node, ServerConfig& c) {
  if (!node.IsMap()) return core::invalid_argument("agents", "must be a map");
  for (const auto& s : node) {
    const std::string k = s.first.as<std::string>();
    const auto in_range = [&](std::int64_t lo, std::int64_t hi) {
      return int_in_range(s.second, "agents." + k, lo, hi);
    };
    AgentSettings& a = c.agents;
    if (k == "nodeLostAfterMs") {
      CORRAL_ASSIGN_OR_RETURN(a.node_lost_after_ms, in_range(50, 3'600'000));
    } else if (k == "stopGraceMs") {
      CORRAL_ASSIGN_OR_RETURN(a.stop_grace_ms, in_range(0, 3'600'000));
    } else if (k == "restartBackoffMs") {
      CORRAL_ASSIGN_OR_RETURN(a.restart_backoff_ms, in_range(0, 3'600'000));
    } else if (k == "restartBackoffMaxMs") {
      CORRAL_ASSIGN_OR_RETURN(a.restart_backoff_max_ms, in_range(0, 86'400'000));
    } else if (k == "hotTemperatureC") {
      CORRAL_ASSIGN_OR_RETURN(auto t, in_range(30, 150));
      a.hot_temperature_c = static_cast<std::int32_t>(t);
    } else if (k == "throttleReasons") {
      if (!s.second.IsSequence()) {
        return core::invalid_argument("agents.throttleReasons", "must be a list of reasons");
      }
      a.throttle_reasons.clear();
      for (std::size_t i = 0; i < s.second.size(); ++i) {
        const std::string field = "agents.throttleReasons[" + std::to_string(i) + "]";
        if (!s.second[i].IsScalar()) return core::invalid_argument(field, "must be a reason");
        const std::string reason = s.second[i].as<std::string>();
        if (!known_throttle_reason(reason)) {
          return core::invalid_argument(field, "unknown throttle reason '" + reason + "'");
        }
        a.throttle_reasons.insert(reason);
      }
    } else if (k == "throttleDrainAfterMs") {
      CORRAL_ASSIGN_OR_RETURN(a.throttle_drain_after_ms, in_range(0, 86'400'000));
    } else {
      return core::invalid_argument("agents." + k, "unknown field");
    }
  }
  return core::Status();
}

// `telemetry:` (docs/config.md).
core::Status read_telemetry(const YAML::Node& node, ServerConfig& c) {
  if (!node.IsMap()) return core::invalid_argument("telemetry", "must be a map");
  TelemetrySettings& t = c.telemetry;
  constexpr std::int64_t kDay = 86'400'000;
  for (const auto& s : node) {
    const std::string k = s.first.as<std::string>();
    const auto in_range = [&](std::int64_t lo, std::int64_t hi) {
      return int_in_range(s.second, "telemetry." + k, lo, hi);
    };
    if (k == "rawRetentionMs") {
      CORRAL_ASSIGN_OR_RETURN(t.raw_retention_ms, in_range(60'000, 3650 * kDay));
    } else if (k == "minuteRetentionMs") {
      CORRAL_ASSIGN_OR_RETURN(t.minute_retention_ms, in_range(60'000, 3650 * kDay));
    } else if (k == "hourRetentionMs") {
      CORRAL_ASSIGN_OR_RETURN(t.hour_retention_ms, in_range(3'600'000, 36500 * kDay));
    } else if (k == "nodePerMinute") {
      CORRAL_ASSIGN_OR_RETURN(t.node_samples_per_minute, in_range(0, 10'000'000));
    } else if (k == "queueSamples") {
      CORRAL_ASSIGN_OR_RETURN(t.queue_samples, in_range(0, 100'000'000));
    } else if (k == "flushMs") {
      CORRAL_ASSIGN_OR_RETURN(t.flush_ms, in_range(1, 60'000));
    } else if (k == "pruneEveryMs") {
      CORRAL_ASSIGN_OR_RETURN(t.prune_every_ms, in_range(1'000, kDay));
    } else {
      return core::invalid_argument("telemetry." + k, "unknown field");
    }
  }
  return core::Status();
}

// `metrics:` (docs/config.md).
core::Status read_metrics(const YAML::Node& node, ServerConfig& c) {
  if (!node.IsMap()) return core::invalid_argument("metrics", "must be a map");
  for (const auto& m : node) {
    const std::string k = m.first.as<std::string>();
    if (k != "refreshMs") return core::invalid_argument("metrics." + k, "unknown field");
    CORRAL_ASSIGN_OR_RETURN(c.metrics.refresh_ms,
                            int_in_range(m.second, "metrics.refreshMs", 10, 3'600'000));
  }
  return core::Status();
}

// `dashboard:` (docs/config.md).
core::Status read_dashboard(const YAML::Node& node, ServerConfig& c) {
  if (!node.IsMap()) return core::invalid_argument("dashboard", "must be a map");
  for (const auto& m : node) {
    const std::string k = m.first.as<std::string>();
    if (k == "historyMs") {
      CORRAL_ASSIGN_OR_RETURN(c.dashboard.history_ms,
                              int_in_range(m.second, "dashboard.historyMs", 100, 86'400'000));
    } else if (k == "historyRetentionDays") {
      CORRAL_ASSIGN_OR_RETURN(c.dashboard.history_retention_days,
                              int_in_range(m.second, "dashboard.historyRetentionDays", 1, 3660));
    } else if (k == "chartJs") {
      if (!m.second.IsScalar() || m.second.as<std::string>().empty()) {
        return core::invalid_argument("dashboard.chartJs", "must be a file path");
      }
      c.dashboard.chart_js = m.second.as<std::string>();
    } else {
      return core::invalid_argument("dashboard." + k, "unknown field");
    }
  }
  return core::Status();
}

// `replica:` (docs/config.md).
core::Status read_replica(const YAML::Node& node, ServerConfig& c) {
  if (!node.IsMap()) return core::invalid_argument("replica", "must be a map");
  for (const auto& m : node) {
    const std::string k = m.first.as<std::string>();
    if (k == "name") {
      if (!m.second.IsScalar() || !valid_name(m.second.as<std::string>())) {
        return core::invalid_argument("replica.name", "must be a name (letters, digits, -_.)");
      }
      c.replica.name = m.second.as<std::string>();
    } else if (k == "leaseMs") {
      CORRAL_ASSIGN_OR_RETURN(const auto ms,
                              int_in_range(m.second, "replica.leaseMs", 300, 600'000));
      c.replica.lease = core::Duration(ms);
    } else {
      return core::invalid_argument("replica." + k, "unknown field");
    }
  }
  return core::Status();
}

// `security:` (docs/config.md).
core::Status read_security(const YAML::Node& node, ServerConfig& c) {
  if (!node.IsMap()) return core::invalid_argument("security", "must be a map");
  for (const auto& m : node) {
    const std::string k = m.first.as<std::string>();
    std::string* file = k == "keyFile"           ? &c.security.key_file
                        : k == "auditAnchorFile" ? &c.security.anchor_file
                                                 : nullptr;
    if (k == "auditAnchorSyslog") {
      if (!m.second.IsScalar())
        return core::invalid_argument("security." + k, "must be true or false");
      c.security.anchor_syslog = m.second.as<bool>();
    } else if (file == nullptr) {
      return core::invalid_argument("security." + k, "unknown field");
    } else if (!m.second.IsScalar() || m.second.as<std::string>().empty()) {
      return core::invalid_argument("security." + k, "must be a file path");
    } else {
      *file = m.second.as<std::string>();
    }
  }
  return core::Status();
}

// `log:` (docs/config.md).
core::Status read_log(const YAML::Node& node, ServerConfig& c) {
  if (!node.IsMap()) return core::invalid_argument("log", "must be a map");
  for (const auto& m : node) {
    const std::string k = m.first.as<std::string>();
    if (k != "format") return core::invalid_argument("log." + k, "unknown field");
    if (!m.second.IsScalar()) return core::invalid_argument("log.format", "must be text or json");
    CORRAL_ASSIGN_OR_RETURN(c.log.format,
                            parse_log_format(m.second.as<std::string>(), "log.format"));
  }
  return core::Status();
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
