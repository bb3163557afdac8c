#include "cli/views/nodes_view.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "cli/format/units_text.h"
#include "core/gpu_type.h"

namespace corral::cli {
namespace {

using nlohmann::json;

const json& readings_of(const json& node) { return field(field(node, "observed"), "readings"); }

// "ok", or the GPUs that are not: "1 unhealthy, 2 hot". The agent's observation when
// there is one, else the registration's healthy flags.
std::string health_text(const json& node) {
  std::map<std::string, int> count;
  const json& observed = field(field(node, "observed"), "gpus");
  if (observed.is_array() && !observed.empty()) {
    for (const auto& g : observed) ++count[g.value("health", "ok")];
  } else {
    for (const auto& g : field(node, "gpus"))
      ++count[g.value("healthy", true) ? "ok" : "unhealthy"];
  }
  std::string out;
  for (const char* bad : {"unhealthy", "hot"}) {
    if (count[bad] > 0) out += fmt::format("{}{} {}", out.empty() ? "" : ", ", count[bad], bad);
  }
  for (const auto& [name, n] : count) {
    if (name != "ok" && name != "unhealthy" && name != "hot") {
      out += fmt::format("{}{} {}", out.empty() ? "" : ", ", n, name);
    }
  }
  return out.empty() ? "ok" : out;
}

std::string heartbeat_text(const json& node) {
  const json& agent = field(node, "agent");
  if (!agent.is_object()) return "";  // no agent ever joined
  const std::int64_t age_ms = agent.value("heartbeatAgeMs", std::int64_t{0});
  const std::string ago = short_duration_text(core::Duration(age_ms)) + " ago";
  return agent.value("lost", false) ? "lost " + ago : ago;
}

std::string reason_of(const json& node, const std::string& state, const TimeStyle& style) {
  const std::string reason = reason_text(node.value("adminReason", ""), style);
  if (!reason.empty()) return reason;
  return state == "lost" ? "agent lost" : "";
}

// Mean utilization, hottest GPU and total power over the GPUs the agent reads.
struct Telemetry {
  std::string util, temp, power;
};
Telemetry telemetry_of(const json& node) {
  double util = 0, power = 0;
  std::int64_t hottest = 0;
  int n = 0;
  for (const auto& r : readings_of(node)) {
    if (!r.value("present", true)) continue;
    util += r.value("smPercent", 0.0);
    power += r.value("powerW", 0.0);
    hottest = std::max(hottest, r.value("temperatureC", std::int64_t{0}));
    ++n;
  }
  if (n == 0) return {};
  return {percent_text(util / n), celsius_text(hottest), power_text(power)};
}

std::string topology_labels_text(const json& labels) {
  std::string out;
  for (const char* key : {"region", "cluster", "spine", "leaf", "rack", "nvlinkRack"}) {
    const std::string v = text(field(labels, key));
    if (!v.empty()) out += (out.empty() ? "" : " ") + std::string(key) + "=" + v;
  }
  return out;
}

}  // namespace

std::string node_state(const json& node) {
  if (field(node, "state").is_string()) return field(node, "state").get<std::string>();
  if (field(field(node, "agent"), "lost") == true) return "lost";
  const std::string admin = node.value("admin", "active");
  if (admin == "draining" && field(node, "allocated").empty()) return "drained";
  return admin;
}

Table nodes_table(const json& nodes, const TimeStyle& style, bool wide) {
  Table t{.headers = {"NODE", "STATE", "GPU", "GPUS", "ALLOC", "RACK", "LEAF"}};
  if (wide) t.headers.push_back("SPINE");
  t.headers.insert(t.headers.end(), {"HEALTH", "HEARTBEAT"});
  if (wide) t.headers.insert(t.headers.end(), {"UTIL", "TEMP", "POWER"});
  t.headers.push_back("REASON");
  for (const auto& n : nodes) {
    const json& gpus = field(n, "gpus");
    std::set<std::int64_t> allocated;
    for (const auto& a : field(n, "allocated")) allocated.insert(a.value("index", 0));
    const std::string state = node_state(n);
    const json& labels = field(n, "labels");
    std::vector<std::string> row = {text(field(n, "id")),
                                    state,
                                    gpus.empty() ? "" : text(field(gpus[0], "type")),
                                    std::to_string(gpus.size()),
                                    std::to_string(allocated.size()),
                                    text(field(labels, "rack")),
                                    text(field(labels, "leaf"))};
    if (wide) row.push_back(text(field(labels, "spine")));
    row.insert(row.end(), {health_text(n), heartbeat_text(n)});
    if (wide) {
      const Telemetry tm = telemetry_of(n);
      row.insert(row.end(), {tm.util, tm.temp, tm.power});
    }
    row.push_back(reason_of(n, state, style));
    t.rows.push_back(std::move(row));
  }
  return t;
}

std::string node_text(const json& n, const TimeStyle& style, bool wide) {
  std::ostringstream out;
  const auto line = [&](const char* key, const std::string& value) {
    if (!value.empty()) out << fmt::format("{:<11}{}\n", std::string(key) + ":", value);
  };
  const json& gpus = field(n, "gpus");
  const std::string type = gpus.empty() ? "" : text(field(gpus[0], "type"));
  const auto spec = core::find_builtin_gpu_type(type);
  const std::string state = node_state(n);
  out << "node " << text(field(n, "id")) << "\n";
  line("state", state);
  line("reason", reason_of(n, state, style));
  std::set<std::int64_t> allocated;
  std::map<std::int64_t, std::string> job_of;
  for (const auto& a : field(n, "allocated")) {
    allocated.insert(a.value("index", 0));
    // Another tenant's job shows as held, without its id (corrald leaves the id out).
    job_of[a.value("index", 0)] = a.contains("job") ? text(field(a, "job")) : "held";
  }
  line("gpus", fmt::format("{} x {}{}, {} allocated", gpus.size(), type,
                           spec ? " (" + gib_text(spec->memory_mib) + ")" : "", allocated.size()));
  line("labels", topology_labels_text(field(n, "labels")));
  if (field(n, "cpus").is_number()) {
    line("host", fmt::format("{} CPUs, {}", n.value("cpus", 0),
                             gib_text(n.value("memoryMib", std::int64_t{0}))));
  }
  const json& agent = field(n, "agent");
  if (agent.is_object()) {
    line("agent", text(field(agent, "url")) + ", epoch " + text(field(agent, "epoch")) +
                      ", joined " + when_text(field(agent, "joinedAtMs"), style));
    line("heartbeat", heartbeat_text(n));
  } else {
    line("agent", "none has joined");
  }
  std::map<std::int64_t, const json*> health, reading;
  for (const auto& g : field(field(n, "observed"), "gpus")) health[g.value("index", 0)] = &g;
  for (const auto& r : readings_of(n)) reading[r.value("index", 0)] = &r;
  Table t{.headers = {"GPU", "HEALTH", "PROBLEM", "UTIL", "TEMP", "POWER", "MEMORY", "THROTTLE",
                      "JOB"}};
  if (wide) t.headers.insert(t.headers.end(), {"NVLINK", "UUID"});
  for (const auto& g : gpus) {
    const std::int64_t ix = g.value("index", 0);
    const json* h = health.contains(ix) ? health[ix] : nullptr;
    const json* r =
        reading.contains(ix) && (*reading[ix]).value("present", true) ? reading[ix] : nullptr;
    std::string throttle;
    if (r != nullptr) {
      for (const auto& why : field(*r, "throttle"))
        throttle += (throttle.empty() ? "" : ",") + text(why);
    }
    std::string memory;
    if (r != nullptr) {
      memory = gib_text(r->value("memoryUsedMib", std::int64_t{0}));
      if (spec) memory += " / " + gib_text(spec->memory_mib);
    }
    std::vector<std::string> row = {
        std::to_string(ix),
        h != nullptr ? h->value("health", "ok") : (g.value("healthy", true) ? "ok" : "unhealthy"),
        h != nullptr ? h->value("problem", "") : "",
        r != nullptr ? percent_text(r->value("smPercent", 0.0)) : "",
        r != nullptr ? celsius_text(r->value("temperatureC", std::int64_t{0})) : "",
        r != nullptr ? power_text(r->value("powerW", 0.0)) : "",
        memory,
        throttle,
        job_of.contains(ix) ? job_of[ix] : ""};
    if (wide) row.insert(row.end(), {text(field(g, "nvlinkDomain")), text(field(g, "uuid"))});
    t.rows.push_back(std::move(row));
  }
  out << "\n" << table_text(t);
  return out.str();
}

}  // namespace corral::cli
