// The dashboard (docs/dashboard.md): its page and files at / and /ui/*, and the four
// read calls made for it that the rest of the API lacked: GET /v1/fleet (every GPU in
// one compact answer, for the heatmap, with each rack's power cap and use), GET /v1/shares (each
// tenant's guarantee, fair share, use, borrowed and lent GPUs), GET /v1/history (the usage history,
// usage_history.h) and GET /v1/whoami (the token's role and tenant). The page itself holds no data:
// it is public, and every call it makes carries the token its user signed in with, so it shows what
// that token may see.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <httplib.h>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/api/api_routes.h"
#include "server/api/api_views.h"
#include "server/base/log.h"
#include "server/base/model_json.h"
#include "server/base/stored_documents.h"
#include "server/controllers/metrics_refresher.h"
#include "server/controllers/node_health.h"
#include "server/reports/rack_power.h"
#include "server/web/web_assets.h"

namespace corral::server {
namespace {

using core::Result;
using core::Status;
using nlohmann::json;

// The page runs only its own scripts and talks only to this server. Inline style
// attributes are allowed for the widths of drawn bars; inline scripts are not.
const std::vector<std::pair<std::string, std::string>> kPageHeaders = {
    {"Content-Security-Policy",
     "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
     "object-src 'none'; frame-ancestors 'none'; "
     "base-uri 'none'"},
    {"X-Content-Type-Options", "nosniff"},
    {"Referrer-Policy", "no-referrer"},
    {"Cache-Control", "no-cache"},
};

Reply asset_reply(std::string_view content_type, std::string body) {
  Reply r;
  r.body = std::move(body);
  r.content_type = content_type.data();  // the generated table's literals end in NUL
  r.headers = kPageHeaders;
  return r;
}

Result<Reply> page(const Call&) {
  for (const WebAsset& a : web_assets()) {
    if (a.name == "index.html") return asset_reply(a.content_type, std::string(a.body));
  }
  return core::not_found("this corrald was built without its dashboard");
}

Result<Reply> asset(const Call& c) {
  const std::string name = c.path_param(1);
  for (const WebAsset& a : web_assets()) {
    if (a.name == name) return asset_reply(a.content_type, std::string(a.body));
  }
  return core::not_found("no dashboard file " + name.substr(0, 64));
}

// Chart.js from Debian's libjs-chart.js (dashboard.chartJs), read once at start.
std::shared_ptr<const std::string> read_chart_js(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    process_log().write(LogEvent("dashboard_no_chart_js", LogLevel::kWarn)
                            .add("path", path)
                            .add("reason", "no file there; the dashboard's charts stay empty"));
    return nullptr;
  }
  std::ostringstream body;
  body << in.rdbuf();
  return std::make_shared<const std::string>(body.str());
}

// Who the token is, so the page shows its user the views their role has.
Result<Reply> whoami(const Call& c) {
  json out = {{"id", c.who.id}, {"role", std::string(to_string(c.who.role))}};
  if (!c.who.tenant.empty()) out["tenant"] = c.who.tenant;
  if (!c.who.node.empty()) out["node"] = c.who.node;
  return json_reply(out);
}

// ---- GET /v1/fleet ----------------------------------------------------------------

// The allocations on one GPU: a whole GPU's one, or its shares.
using HeldGpus =
    std::map<std::pair<std::string, std::int32_t>, std::vector<const store::AllocationRow*>>;

json gpu_json(const core::Gpu& gpu, const store::ObservedNode* observed, const HeldGpus& held,
              const std::map<std::int64_t, std::string>& tenant_of, const Principal& who,
              const std::string& node) {
  json g = {{"i", gpu.index},           {"type", gpu.type.value}, {"nvlink", gpu.nvlink_domain},
            {"health", "ok"},           {"problem", ""},          {"util", nullptr},
            {"power", nullptr},         {"temp", nullptr},        {"memMib", nullptr},
            {"throttle", json::array()}};
  if (!gpu.healthy) g["health"] = "unhealthy";
  if (observed != nullptr) {
    for (const auto& o : observed->gpus) {
      if (o.index != gpu.index) continue;
      g["health"] = std::string(core::to_string(o.condition));
      g["problem"] = o.problem;
    }
    for (const auto& r : observed->readings) {
      if (r.index != gpu.index || !r.present) continue;
      g["util"] = r.sm_percent;
      g["power"] = std::round(r.power_w * 10) / 10;
      g["temp"] = r.temperature_c;
      g["memMib"] = r.memory_used_mib;
      g["throttle"] = r.throttle;
    }
  }
  g["job"] = nullptr;
  g["tenant"] = nullptr;
  g["held"] = false;
  g["heldMilli"] = 0;           // thousandths held: 1000 for a whole GPU, a sum of shares
  g["shares"] = json::array();  // a GPU of shares: each share, {job, tenant, milli}
  const auto h = held.find({node, gpu.index});
  if (h == held.end()) return g;
  g["held"] = true;
  std::int64_t milli = 0;
  for (const store::AllocationRow* a : h->second) {
    milli += a->milli();
    const auto t = tenant_of.find(a->job.value);
    const std::string tenant = t == tenant_of.end() ? "" : t->second;
    // Another tenant's job is held GPU time and nothing more.
    const bool visible = can_see_tenant(who, tenant);
    if (a->share_milli > 0) {
      g["shares"].push_back({{"job", visible ? json(a->job.value) : json(nullptr)},
                             {"tenant", visible ? json(tenant) : json(nullptr)},
                             {"milli", a->share_milli}});
    } else if (visible) {
      g["job"] = a->job.value;
      g["tenant"] = tenant;
    }
  }
  g["heldMilli"] = milli;
  return g;
}

Result<Reply> fleet(ApiContext& api, const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(const auto rows, tx.nodes().list_nodes());
  CORRAL_ASSIGN_OR_RETURN(const auto observed, tx.nodes().list_observed());
  CORRAL_ASSIGN_OR_RETURN(const auto sessions, tx.agents().list_agent_sessions());
  CORRAL_ASSIGN_OR_RETURN(const auto allocs, tx.allocations().list_active_allocations());
  CORRAL_ASSIGN_OR_RETURN(const auto holders, tx.jobs().list_jobs_holding_gpus());
  CORRAL_ASSIGN_OR_RETURN(const auto caps, tx.rack_caps().list_rack_caps());
  std::map<std::string, const store::ObservedNode*> observed_of;
  for (const auto& o : observed) observed_of[o.node.value] = &o;
  std::map<std::string, const store::AgentSessionRow*> session_of;
  for (const auto& s : sessions) session_of[s.node.value] = &s;
  HeldGpus held;
  for (const auto& a : allocs) held[{a.node.value, a.gpu_index}].push_back(&a);
  std::map<std::int64_t, std::string> tenant_of;
  for (const auto& j : holders) tenant_of[j.id.value] = j.tenant.value;

  std::vector<StoredNode> stored = stored_nodes(rows);
  json nodes = json::array();
  for (const auto& [row, node] : stored) {
    const auto o = observed_of.find(row->id.value);
    const store::ObservedNode* obs = o == observed_of.end() ? nullptr : o->second;
    json gpus = json::array();
    for (const core::Gpu& g : node.gpus) {
      gpus.push_back(gpu_json(g, obs, held, tenant_of, c.who, row->id.value));
    }
    json n = {{"id", row->id.value},
              {"region", node.labels.region},
              {"spine", node.labels.spine},
              {"leaf", node.labels.leaf},
              {"rack", node.labels.rack},
              {"nvlinkRack", node.labels.nvlink_rack},
              {"admin", std::string(core::to_string(row->admin))},
              {"adminReason", row->admin_reason},
              {"agent", "none"},
              {"heartbeatAgeMs", nullptr},
              {"gpus", std::move(gpus)}};
    if (const auto s = session_of.find(row->id.value); s != session_of.end()) {
      n["agent"] = s->second->lost ? "lost" : "connected";
      n["heartbeatAgeMs"] = core::to_ms(api.now() - s->second->heartbeat_at);
    }
    nodes.push_back(std::move(n));
  }
  return json_reply(
      {{"atMs", core::to_ms(api.now())},
       {"nodes", std::move(nodes)},
       {"racks", rack_power_json(rack_power(std::move(stored), observed, caps, allocs))}});
}

// ---- GET /v1/shares ---------------------------------------------------------------

// Lent GPUs of one type: the guarantees idle now that other tenants' borrowing uses,
// spread over the idle guarantees in proportion (borrowing does not name a lender).
double lent_gpus(double idle, double idle_total, double borrowed_total) {
  if (idle_total <= 0 || borrowed_total <= 0) return 0;
  const double used = std::min(1.0, borrowed_total / idle_total);
  return std::round(idle * used * 10) / 10;
}

Result<Reply> shares(ApiContext& api, const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(const RefreshedState state, read_refreshed_state(tx, api.now()));
  CORRAL_ASSIGN_OR_RETURN(const auto tenant_rows, tx.tenants().list_tenants());
  std::map<std::string, TenantConfig> configs;
  for (TenantConfig& cfg : stored_tenants(tenant_rows)) {
    configs.emplace(cfg.tenant.id.value, std::move(cfg));
  }
  // Per type: the fleet's GPUs, the guarantees idle now, and what is borrowed.
  struct TypeTotals {
    std::int64_t gpus = 0;
    double allocated = 0, idle_guarantee = 0, borrowed = 0;  // GPUs, shares as fractions
  };
  std::map<std::string, TypeTotals> types;
  CORRAL_ASSIGN_OR_RETURN(const auto node_rows, tx.nodes().list_nodes());
  for (const auto& [row, node] : stored_nodes(node_rows)) {
    for (const auto& g : node.gpus) ++types[g.type.value].gpus;
  }
  for (const TenantGpuGauge& g : state.tenant_gpus) {
    TypeTotals& t = types[g.gpu_type];
    t.allocated += g.allocated;
    t.borrowed += g.borrowed;
    t.idle_guarantee += std::max(0.0, g.guaranteed - g.allocated);
  }
  std::map<std::string, const sched::TenantShare*> share_of;
  const auto loop_shares = api.loop.tenant_shares();
  if (loop_shares) {
    for (const auto& s : *loop_shares) share_of[s.tenant.value] = &s;
  }
  std::map<std::string, std::int64_t> pending(state.pending.begin(), state.pending.end());

  std::map<std::string, json> out;  // by tenant
  const auto entry = [&](const std::string& tenant) -> json& {
    auto [it, added] = out.try_emplace(tenant);
    if (!added) return it->second;
    json& t = it->second;
    t = {{"tenant", tenant},
         {"parent", nullptr},
         {"weight", 1.0},
         {"share", nullptr},
         {"usageGpus", nullptr},
         {"active", false},
         {"pendingJobs", pending[tenant]},
         {"gpus", json::array()}};
    if (const auto cfg = configs.find(tenant); cfg != configs.end()) {
      const core::Tenant& spec = cfg->second.tenant;
      if (spec.parent) t["parent"] = spec.parent->value;
      t["weight"] = spec.weight;
    }
    if (const auto s = share_of.find(tenant); s != share_of.end()) {
      t["share"] = s->second->share;
      t["usageGpus"] = std::round(s->second->usage_gpus * 100) / 100;
      t["active"] = s->second->active;
    }
    return t;
  };
  for (const TenantGpuGauge& g : state.tenant_gpus) {
    if (!can_see_tenant(c.who, g.tenant)) continue;
    json limit = nullptr;  // unlimited
    if (const auto cfg = configs.find(g.tenant); cfg != configs.end()) {
      const core::Quota& q = cfg->second.tenant.quota_for(core::GpuTypeId(g.gpu_type));
      if (q.borrow_limit_milli != core::kUnlimitedMilli) limit = gpus_json(q.borrow_limit_milli);
    }
    const TypeTotals& t = types[g.gpu_type];
    entry(g.tenant)["gpus"].push_back({{"type", g.gpu_type},
                                       {"guaranteed", g.guaranteed},
                                       {"borrowLimit", limit},
                                       {"allocated", g.allocated},
                                       {"borrowed", g.borrowed},
                                       {"lent", lent_gpus(std::max(0.0, g.guaranteed - g.allocated),
                                                          t.idle_guarantee, t.borrowed)}});
  }
  for (const auto& [tenant, cfg] : configs) {
    if (can_see_tenant(c.who, tenant)) entry(tenant);
  }
  json tenants = json::array();
  for (auto& [name, t] : out) tenants.push_back(std::move(t));
  json fleet = json::array();
  for (const auto& [type, t] : types) {
    fleet.push_back({{"type", type}, {"gpus", t.gpus}, {"allocated", t.allocated}});
  }
  return json_reply({{"atMs", core::to_ms(api.now())},
                     {"sharesAtCycle", loop_shares != nullptr},
                     {"fleet", std::move(fleet)},
                     {"tenants", std::move(tenants)}});
}

// ---- GET /v1/history --------------------------------------------------------------

constexpr core::Duration kDefaultHistory = core::seconds(6 * 3600);
constexpr std::size_t kMaxHistoryRows = 200'000;

Result<Reply> history(ApiContext& api, const Call& c, store::Tx& tx) {
  for (const auto& [name, value] : c.req.params) {
    if (name != "from" && name != "to" && name != "tenant") {
      return core::invalid_argument(name, "unknown parameter (from, to, tenant)");
    }
  }
  core::Time to = api.now() + core::Duration(1);
  if (const auto v = c.query("to")) {
    CORRAL_ASSIGN_OR_RETURN(to, time_param("to", *v));
  }
  core::Time from = to - kDefaultHistory;
  if (const auto v = c.query("from")) {
    CORRAL_ASSIGN_OR_RETURN(from, time_param("from", *v));
  }
  if (from >= to) return core::invalid_argument("from", "must be before to");
  std::optional<std::string> only;
  if (c.who.role != Role::kAdmin) only = c.who.tenant;  // and never the cluster's "*"
  if (const auto v = c.query("tenant")) {
    if (*v != "*" && !valid_name(*v)) {
      return core::invalid_argument("tenant", "must be a tenant name or *");
    }
    if (!can_see_tenant(c.who, *v)) return permission_denied("may not see tenant " + *v);
    only = *v;
  }
  CORRAL_ASSIGN_OR_RETURN(const auto rows, tx.records().list_usage_samples(from, to, only));
  if (rows.size() > kMaxHistoryRows) {
    return core::invalid_argument("from", "asks for " + std::to_string(rows.size()) +
                                              " samples; narrow the window or the tenant");
  }
  json samples = json::array();
  for (const auto& r : rows) {
    samples.push_back({{"atMs", core::to_ms(r.time)},
                       {"tenant", r.tenant},
                       {"gpus", r.gpus},
                       {"allocated", r.allocated},
                       {"borrowed", r.borrowed},
                       {"utilization", r.utilization},
                       {"share", r.share},
                       {"usageGpus", r.usage_gpus},
                       {"pending", r.pending},
                       {"preemptions", r.preemptions},
                       {"restarts", r.restarts},
                       {"placed", r.placed},
                       {"waitMsSum", r.wait_ms_sum}});
  }
  return json_reply({{"fromMs", core::to_ms(from)},
                     {"toMs", core::to_ms(to)},
                     {"intervalMs", api.dashboard.history_ms},
                     {"samples", std::move(samples)}});
}

}  // namespace

std::vector<Route> dashboard_routes(ApiContext& api) {
  const std::string path = api.dashboard.chart_js;
  const auto chart = read_chart_js(path);
  const auto chart_js = [chart, path](const Call&) -> Result<Reply> {
    if (chart == nullptr) {
      return core::not_found("Chart.js is not at " + path +
                             " (scripts/setup.sh installs libjs-chart.js; dashboard.chartJs)");
    }
    return asset_reply("text/javascript; charset=utf-8", *chart);
  };
  return {
      public_route("GET", "/", page),
      public_route("GET", "/ui/chart.js", chart_js),
      public_route("GET", R"(/ui/([A-Za-z0-9_.-]+))", asset),
      call_route("GET", "/v1/whoami", kCallers, whoami),
      read_route("GET", "/v1/fleet", kUsers, bind_api(api, fleet)),
      read_route("GET", "/v1/shares", kUsers, bind_api(api, shares)),
      read_route("GET", "/v1/history", kUsers, bind_api(api, history)),
  };
}

}  // namespace corral::server
