#include "server/base/model_json.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/gpu_type.h"
#include "core/json_object.h"
#include "core/priority.h"
#include "core/units.h"
#include "core/utf8.h"

namespace corral::server {

std::optional<std::int64_t> parse_decimal(const std::string& s) {
  if (s.empty() || s.size() > 18) return std::nullopt;
  std::int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

using core::Result;
using core::Status;
using nlohmann::json;

namespace {

std::string join(std::string_view path, std::string_view key) {
  return path.empty() ? std::string(key) : std::string(path) + "." + std::string(key);
}

// Reads an integer in [lo, hi] at obj[key] into `out` when present. A float (1.5, 1e3),
// a string ("8") or an integer past int64 is refused like any other out-of-range value.
Status read_int(const json& obj, std::string_view path, const char* key, std::int64_t lo,
                std::int64_t hi, std::int64_t& out) {
  if (!obj.contains(key) || obj[key].is_null()) return Status();
  CORRAL_ASSIGN_OR_RETURN(out, core::integer_in(obj[key], join(path, key), lo, hi));
  return Status();
}

// A number in [lo, hi]; 1e400 reads as infinity and is refused with the rest.
Status read_double(const json& obj, std::string_view path, const char* key, double lo, double hi,
                   double& out) {
  if (!obj.contains(key) || obj[key].is_null()) return Status();
  const json& v = obj[key];
  if (!v.is_number())
    return core::invalid_argument(join(path, key),
                                  "must be a number, got " + core::json_excerpt(v));
  const double d = v.get<double>();
  if (!(d >= lo && d <= hi)) {
    return core::invalid_argument(join(path, key),
                                  fmt::format("must be between {} and {}, got {}", lo, hi, d));
  }
  out = d;
  return Status();
}

Status read_string(const json& obj, std::string_view path, const char* key, std::string& out,
                   bool name = false) {
  if (!obj.contains(key) || obj[key].is_null()) return Status();
  const json& v = obj[key];
  if (!v.is_string()) return core::invalid_argument(join(path, key), "must be a string");
  out = v.get<std::string>();
  if (out.size() > 256) return core::invalid_argument(join(path, key), "is longer than 256");
  if (core::has_control_chars(out)) {
    return core::invalid_argument(join(path, key), "must not contain control characters");
  }
  if (name && !out.empty() && !valid_name(out)) {  // empty: unset
    return core::invalid_argument(
        join(path, key), "must be a name of [A-Za-z0-9._-], got \"" + out.substr(0, 64) + "\"");
  }
  return Status();
}

Status read_bool(const json& obj, std::string_view path, const char* key, bool& out) {
  if (!obj.contains(key) || obj[key].is_null()) return Status();
  if (!obj[key].is_boolean()) return core::invalid_argument(join(path, key), "must be a boolean");
  out = obj[key].get<bool>();
  return Status();
}

// A number of GPUs, whole or with a fraction in thousandths (3.5: a guarantee shares of a
// GPU fill exactly), into thousandths.
Status read_gpus(const json& obj, std::string_view path, const char* key, std::int64_t& milli) {
  if (!obj.contains(key) || obj[key].is_null()) return Status();
  const json& v = obj[key];
  const double gpus = v.is_number() ? v.get<double>() : -1;
  const double thousandths = std::round(gpus * 1000);
  if (!(gpus >= 0 && gpus <= static_cast<double>(core::kUnlimited))) {
    return core::invalid_argument(join(path, key), "must be a number of GPUs between 0 and " +
                                                       std::to_string(core::kUnlimited) + ", got " +
                                                       v.dump());
  }
  if (std::abs(gpus * 1000 - thousandths) > 1e-6) {
    return core::invalid_argument(join(path, key),
                                  "must be a multiple of 0.001 GPUs, got " + v.dump());
  }
  milli = static_cast<std::int64_t>(thousandths);
  return Status();
}

Status read_quota(const json& obj, const std::string& path, core::Quota& q) {
  if (!obj.is_object()) return core::invalid_argument(path, "must be an object");
  CORRAL_RETURN_IF_ERROR(core::only_fields(obj, path, {"guaranteed", "borrowLimit"}));
  CORRAL_RETURN_IF_ERROR(read_gpus(obj, path, "guaranteed", q.guaranteed_milli));
  CORRAL_RETURN_IF_ERROR(read_gpus(obj, path, "borrowLimit", q.borrow_limit_milli));
  return Status();
}

// {CLASS: {"maxGpus": N or null}, ...}: the classes the tenant may use, each with the
// most GPUs its jobs of that class may hold at once (null or absent: no cap). Null or
// absent as a whole: every class, without a cap.
Status read_priority_classes(const json& doc, core::Tenant& t) {
  if (!doc.contains("priorityClasses") || doc["priorityClasses"].is_null()) return Status();
  const json& pcs = doc["priorityClasses"];
  if (!pcs.is_object() || pcs.empty()) {
    return core::invalid_argument("priorityClasses",
                                  "must be an object naming at least one priority class");
  }
  for (const auto& [name, v] : pcs.items()) {
    const std::string path = "priorityClasses." + name;
    const auto pc = core::find_priority_class(name);
    if (!pc) {
      return core::invalid_argument(path,
                                    "unknown priority class (production, standard or "
                                    "preemptible)");
    }
    if (!v.is_object()) return core::invalid_argument(path, "must be an object");
    CORRAL_RETURN_IF_ERROR(core::only_fields(v, path, {"maxGpus"}));
    std::int64_t cap = core::kUnlimited;
    if (v.contains("maxGpus") && !v["maxGpus"].is_null()) {
      CORRAL_RETURN_IF_ERROR(read_int(v, path, "maxGpus", 0, 1'000'000, cap));
    }
    t.max_gpus_by_tier[pc->tier] = cap;
  }
  return Status();
}

// {"maxGpus", "gpuHours", "period"}: a cap absent or null is no cap.
Result<registry::RetrainingBudget> read_retraining(const json& r) {
  if (!r.is_object()) return core::invalid_argument("retraining", "must be an object");
  CORRAL_RETURN_IF_ERROR(core::only_fields(r, "retraining", {"maxGpus", "gpuHours", "period"}));
  registry::RetrainingBudget b;
  if (r.contains("maxGpus") && !r["maxGpus"].is_null()) {
    std::int64_t gpus = 0;
    CORRAL_RETURN_IF_ERROR(read_int(r, "retraining", "maxGpus", 0, 1'000'000, gpus));
    b.max_gpus = gpus;
  }
  if (r.contains("gpuHours") && !r["gpuHours"].is_null()) {
    double hours = 0;
    CORRAL_RETURN_IF_ERROR(read_double(r, "retraining", "gpuHours", 0, 1e9, hours));
    b.gpu_hours = hours;
  }
  std::string period;
  CORRAL_RETURN_IF_ERROR(read_string(r, "retraining", "period", period));
  if (!period.empty()) {
    auto d = core::parse_duration(period);
    if (!d.ok() || *d < core::Duration(3600 * 1000) || *d > core::Duration(366LL * 86400 * 1000)) {
      return core::invalid_argument(
          "retraining.period", "must be a duration from 1h to 366d, such as \"24h\" or \"7d\"");
    }
    b.period = *d;
  }
  return b;
}

json quota_json(const core::Quota& q) {
  return {{"guaranteed", gpus_json(q.guaranteed_milli)},
          {"borrowLimit", gpus_json(q.borrow_limit_milli)}};
}

}  // namespace

json gpus_json(std::int64_t milli) {
  if (milli % 1000 == 0) return milli / 1000;
  return static_cast<double>(milli) / 1000;
}

bool valid_name(std::string_view name) {
  if (name.empty() || name.size() > 63) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return name.front() != '.' && name.front() != '-' && name.find("..") == std::string_view::npos;
}

TenantConfig default_tenant_config(const core::TenantId& id) {
  TenantConfig c;
  c.tenant.id = id;
  c.tenant.default_quota = core::Quota::gpus(0);
  return c;
}

Result<TenantConfig> tenant_config_from_json(std::string_view name, std::string_view text) {
  if (!valid_name(name)) return core::invalid_argument("name", "must be a name of [A-Za-z0-9._-]");
  CORRAL_ASSIGN_OR_RETURN(json doc, core::parse_json_object(text));
  CORRAL_RETURN_IF_ERROR(core::only_fields(
      doc, "",
      {"name", "weight", "parent", "quotas", "defaultQuota", "maxPendingJobs",
       "submitRatePerSecond", "submitBurst", "datasets", "retraining", "priorityClasses"}));
  TenantConfig c = default_tenant_config(core::TenantId(std::string(name)));
  std::string named;
  CORRAL_RETURN_IF_ERROR(read_string(doc, "", "name", named, true));
  if (!named.empty() && named != name) {
    return core::invalid_argument("name", "must match the tenant in the path");
  }
  CORRAL_RETURN_IF_ERROR(read_double(doc, "", "weight", 1e-6, 1e6, c.tenant.weight));
  std::string parent;
  CORRAL_RETURN_IF_ERROR(read_string(doc, "", "parent", parent, true));
  if (!parent.empty()) {
    if (parent == name)
      return core::invalid_argument("parent", "a tenant cannot be its own parent");
    c.tenant.parent = core::TenantId(parent);
  }
  if (doc.contains("quotas") && !doc["quotas"].is_null()) {
    if (!doc["quotas"].is_object()) return core::invalid_argument("quotas", "must be an object");
    for (const auto& [type, q] : doc["quotas"].items()) {
      if (!core::find_builtin_gpu_type(type)) {
        return core::invalid_argument("quotas." + type, "unknown gpu type");
      }
      core::Quota quota;
      CORRAL_RETURN_IF_ERROR(read_quota(q, "quotas." + type, quota));
      c.tenant.quotas[core::GpuTypeId(type)] = quota;
    }
  }
  if (doc.contains("defaultQuota") && !doc["defaultQuota"].is_null()) {
    CORRAL_RETURN_IF_ERROR(read_quota(doc["defaultQuota"], "defaultQuota", c.tenant.default_quota));
  }
  CORRAL_RETURN_IF_ERROR(read_int(doc, "", "maxPendingJobs", 0, 10'000'000, c.max_pending_jobs));
  CORRAL_RETURN_IF_ERROR(
      read_double(doc, "", "submitRatePerSecond", 0, 1e6, c.submit.rate_per_second));
  CORRAL_RETURN_IF_ERROR(read_double(doc, "", "submitBurst", 1, 1e7, c.submit.burst));
  if (doc.contains("datasets") && !doc["datasets"].is_null()) {
    const json& d = doc["datasets"];
    if (!d.is_object()) return core::invalid_argument("datasets", "must be an object");
    CORRAL_RETURN_IF_ERROR(core::only_fields(d, "datasets", {"allowPending", "stopOnQuarantine"}));
    CORRAL_RETURN_IF_ERROR(read_bool(d, "datasets", "allowPending", c.datasets.allow_pending));
    CORRAL_RETURN_IF_ERROR(
        read_bool(d, "datasets", "stopOnQuarantine", c.datasets.stop_on_quarantine));
  }
  if (doc.contains("retraining") && !doc["retraining"].is_null()) {
    CORRAL_ASSIGN_OR_RETURN(c.retraining, read_retraining(doc["retraining"]));
  }
  CORRAL_RETURN_IF_ERROR(read_priority_classes(doc, c.tenant));
  return c;
}

std::string tenant_config_to_json(const TenantConfig& c) {
  json quotas = json::object();
  for (const auto& [type, q] : c.tenant.quotas) quotas[type.value] = quota_json(q);
  json out = {
      {"name", c.tenant.id.value},
      {"weight", c.tenant.weight},
      {"parent", c.tenant.parent ? json(c.tenant.parent->value) : json(nullptr)},
      {"quotas", quotas},
      {"defaultQuota", quota_json(c.tenant.default_quota)},
      {"maxPendingJobs", c.max_pending_jobs},
      {"submitRatePerSecond", c.submit.rate_per_second},
      {"submitBurst", c.submit.burst},
      {"datasets",
       {{"allowPending", c.datasets.allow_pending},
        {"stopOnQuarantine", c.datasets.stop_on_quarantine}}},
      {"retraining",
       {{"maxGpus", c.retraining.max_gpus ? json(*c.retraining.max_gpus) : json(nullptr)},
        {"gpuHours", c.retraining.gpu_hours ? json(*c.retraining.gpu_hours) : json(nullptr)},
        {"period", core::format_duration(c.retraining.period)}}}};
  out["priorityClasses"] = nullptr;
  if (!c.tenant.max_gpus_by_tier.empty()) {
    out["priorityClasses"] = json::object();
    for (const core::PriorityClass& pc : core::default_priority_classes()) {
      const auto it = c.tenant.max_gpus_by_tier.find(pc.tier);
      if (it == c.tenant.max_gpus_by_tier.end()) continue;
      out["priorityClasses"][pc.name] = {
          {"maxGpus", it->second >= core::kUnlimited ? json(nullptr) : json(it->second)}};
    }
  }
  return out.dump();
}

Result<core::Node> node_from_json(std::string_view text) {
  CORRAL_ASSIGN_OR_RETURN(json doc, core::parse_json_object(text));
  CORRAL_RETURN_IF_ERROR(core::only_fields(
      doc, "", {"id", "labels", "cpus", "memoryMib", "gpus", "gpuType", "gpuCount"}));
  core::Node node;
  std::string id;
  CORRAL_RETURN_IF_ERROR(read_string(doc, "", "id", id, true));
  if (id.empty()) return core::invalid_argument("id", "is required");
  node.id = core::NodeId(id);
  if (doc.contains("labels") && !doc["labels"].is_null()) {
    const json& l = doc["labels"];
    if (!l.is_object()) return core::invalid_argument("labels", "must be an object");
    CORRAL_RETURN_IF_ERROR(core::only_fields(
        l, "labels", {"region", "cluster", "spine", "leaf", "rack", "nvlinkRack"}));
    CORRAL_RETURN_IF_ERROR(read_string(l, "labels", "region", node.labels.region, true));
    CORRAL_RETURN_IF_ERROR(read_string(l, "labels", "cluster", node.labels.cluster, true));
    CORRAL_RETURN_IF_ERROR(read_string(l, "labels", "spine", node.labels.spine, true));
    CORRAL_RETURN_IF_ERROR(read_string(l, "labels", "leaf", node.labels.leaf, true));
    CORRAL_RETURN_IF_ERROR(read_string(l, "labels", "rack", node.labels.rack, true));
    CORRAL_RETURN_IF_ERROR(read_string(l, "labels", "nvlinkRack", node.labels.nvlink_rack, true));
  }
  std::int64_t cpus = 64, mem = 1024 * 1024;
  CORRAL_RETURN_IF_ERROR(read_int(doc, "", "cpus", 0, 1 << 20, cpus));
  CORRAL_RETURN_IF_ERROR(read_int(doc, "", "memoryMib", 0, std::int64_t{1} << 40, mem));
  node.cpus = static_cast<std::int32_t>(cpus);
  node.memory_mib = mem;
  const bool has_gpus = doc.contains("gpus") && !doc["gpus"].is_null();
  const bool has_shortcut = doc.contains("gpuType") || doc.contains("gpuCount");
  if (has_gpus && has_shortcut) {
    return core::invalid_argument("gpus", "give either gpus or gpuType and gpuCount, not both");
  }
  constexpr std::int64_t kMaxGpus = 64;  // sched::kMaxGpusPerNode
  if (has_shortcut) {
    std::string type;
    std::int64_t count = 0;
    CORRAL_RETURN_IF_ERROR(read_string(doc, "", "gpuType", type));
    // A node of no GPUs says so with "gpus": []; the shortcut is for GPUs.
    if (!doc.contains("gpuCount"))
      return core::invalid_argument("gpuCount", "is required with gpuType");
    CORRAL_RETURN_IF_ERROR(read_int(doc, "", "gpuCount", 1, kMaxGpus, count));
    if (!core::find_builtin_gpu_type(type)) {
      return core::invalid_argument("gpuType", "unknown gpu type \"" + type.substr(0, 64) + "\"");
    }
    for (std::int32_t i = 0; i < count; ++i) {
      node.gpus.push_back({.index = i,
                           .uuid = "GPU-" + id + "-" + std::to_string(i),
                           .type = core::GpuTypeId(type)});
    }
  } else if (has_gpus) {
    const json& gpus = doc["gpus"];
    if (!gpus.is_array()) return core::invalid_argument("gpus", "must be an array");
    if (gpus.size() > kMaxGpus) return core::invalid_argument("gpus", "at most 64 gpus a node");
    std::set<std::int64_t> seen;
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      const std::string path = "gpus[" + std::to_string(i) + "]";
      const json& g = gpus[i];
      if (!g.is_object()) return core::invalid_argument(path, "must be an object");
      CORRAL_RETURN_IF_ERROR(core::only_fields(
          g, path, {"index", "uuid", "type", "nvlinkDomain", "numaNode", "healthy"}));
      core::Gpu gpu;
      std::int64_t index = static_cast<std::int64_t>(i), domain = 0, numa = 0;
      CORRAL_RETURN_IF_ERROR(read_int(g, path, "index", 0, kMaxGpus - 1, index));
      CORRAL_RETURN_IF_ERROR(read_int(g, path, "nvlinkDomain", 0, kMaxGpus - 1, domain));
      CORRAL_RETURN_IF_ERROR(read_int(g, path, "numaNode", 0, 1024, numa));
      std::string type;
      CORRAL_RETURN_IF_ERROR(read_string(g, path, "type", type));
      if (!core::find_builtin_gpu_type(type)) {
        return core::invalid_argument(path + ".type", "unknown gpu type");
      }
      CORRAL_RETURN_IF_ERROR(read_string(g, path, "uuid", gpu.uuid));
      CORRAL_RETURN_IF_ERROR(read_bool(g, path, "healthy", gpu.healthy));
      if (!seen.insert(index).second) {
        return core::invalid_argument(path + ".index", "duplicate gpu index");
      }
      gpu.index = static_cast<std::int32_t>(index);
      gpu.nvlink_domain = static_cast<std::int32_t>(domain);
      gpu.numa_node = static_cast<std::int32_t>(numa);
      gpu.type = core::GpuTypeId(type);
      if (!node.gpus.empty() && node.gpus.front().type != gpu.type) {
        return core::invalid_argument(path + ".type", "a node's gpus must all be one type");
      }
      node.gpus.push_back(std::move(gpu));
    }
    std::sort(node.gpus.begin(), node.gpus.end(),
              [](const core::Gpu& a, const core::Gpu& b) { return a.index < b.index; });
  }
  return node;
}

std::string node_to_json(const core::Node& node) {
  json gpus = json::array();
  for (const auto& g : node.gpus) {
    gpus.push_back({{"index", g.index},
                    {"uuid", g.uuid},
                    {"type", g.type.value},
                    {"nvlinkDomain", g.nvlink_domain},
                    {"numaNode", g.numa_node},
                    {"healthy", g.healthy}});
  }
  json out = {{"id", node.id.value},
              {"labels",
               {{"region", node.labels.region},
                {"cluster", node.labels.cluster},
                {"spine", node.labels.spine},
                {"leaf", node.labels.leaf},
                {"rack", node.labels.rack},
                {"nvlinkRack", node.labels.nvlink_rack}}},
              {"cpus", node.cpus},
              {"memoryMib", node.memory_mib},
              {"gpus", gpus}};
  return out.dump();
}

Result<core::Reservation> reservation_from_json(std::string_view text) {
  CORRAL_ASSIGN_OR_RETURN(json doc, core::parse_json_object(text));
  CORRAL_RETURN_IF_ERROR(core::only_fields(
      doc, "", {"id", "tenant", "gpuType", "count", "nodes", "startMs", "endMs"}));
  core::Reservation r;
  std::string id, tenant, type;
  CORRAL_RETURN_IF_ERROR(read_string(doc, "", "id", id, true));
  if (id.empty()) return core::invalid_argument("id", "is required");
  CORRAL_RETURN_IF_ERROR(read_string(doc, "", "tenant", tenant, true));
  if (tenant.empty()) return core::invalid_argument("tenant", "is required");
  CORRAL_RETURN_IF_ERROR(read_string(doc, "", "gpuType", type));
  std::int64_t count = 0, start = 0, end = 0;
  CORRAL_RETURN_IF_ERROR(read_int(doc, "", "count", 0, 1 << 20, count));
  CORRAL_RETURN_IF_ERROR(read_int(doc, "", "startMs", 0, std::int64_t{1} << 50, start));
  CORRAL_RETURN_IF_ERROR(read_int(doc, "", "endMs", 0, std::int64_t{1} << 50, end));
  if (end <= start) return core::invalid_argument("endMs", "must be after startMs");
  r.id = core::ReservationId(id);
  r.tenant = core::TenantId(tenant);
  if (!type.empty()) {
    if (!core::find_builtin_gpu_type(type)) {
      return core::invalid_argument("gpuType", "unknown gpu type");
    }
    r.gpu_type = core::GpuTypeId(type);
  }
  r.count = static_cast<std::int32_t>(count);
  if (doc.contains("nodes") && !doc["nodes"].is_null()) {
    if (!doc["nodes"].is_array()) return core::invalid_argument("nodes", "must be an array");
    for (std::size_t i = 0; i < doc["nodes"].size(); ++i) {
      const json& n = doc["nodes"][i];
      if (!n.is_string() || !valid_name(n.get<std::string>())) {
        return core::invalid_argument("nodes[" + std::to_string(i) + "]", "must be a node name");
      }
      r.nodes.emplace_back(n.get<std::string>());
    }
  }
  if (r.gpu_type.has_value() && !r.nodes.empty()) {
    return core::invalid_argument("nodes", "give either gpuType and count, or nodes");
  }
  if (!r.nodes.empty() && doc.contains("count") && !doc["count"].is_null()) {
    return core::invalid_argument("count", "give either gpuType and count, or nodes");
  }
  if (!r.gpu_type.has_value() && r.nodes.empty()) {
    return core::invalid_argument("gpuType", "give either gpuType and count, or nodes");
  }
  if (r.gpu_type.has_value() && r.count < 1) {
    return core::invalid_argument("count", "must be at least 1 with gpuType");
  }
  r.start = core::time_from_ms(start);
  r.end = core::time_from_ms(end);
  return r;
}

std::string reservation_to_json(const core::Reservation& r) {
  json nodes = json::array();
  for (const auto& n : r.nodes) nodes.push_back(n.value);
  json out = {{"id", r.id.value},
              {"tenant", r.tenant.value},
              {"gpuType", r.gpu_type ? json(r.gpu_type->value) : json(nullptr)},
              {"nodes", nodes},
              {"startMs", core::to_ms(r.start)},
              {"endMs", core::to_ms(r.end)}};
  // A reservation of nodes has no count: reservation_from_json refuses one beside nodes,
  // and a stored node reservation must read back.
  if (r.gpu_type) out["count"] = r.count;
  return out.dump();
}

}  // namespace corral::server
