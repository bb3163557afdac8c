#include <httplib.h>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/api/api_routes.h"
#include "server/base/http_status.h"
#include "server/base/model_json.h"
#include "server/controllers/audit_anchor.h"
#include "server/http/list_page.h"

namespace corral::server {
namespace {

using core::Result;
using core::Status;
using nlohmann::json;

Result<Reply> list_audit(ApiContext&, const Call& c, store::Tx& tx) {
  const httplib::Request& req = c.req;
  std::int64_t after = 0;
  if (req.has_param("after")) {
    const auto a = parse_decimal(req.get_param_value("after"));
    if (!a) return core::invalid_argument("after", "must be a sequence number");
    after = *a;
  }
  CORRAL_ASSIGN_OR_RETURN(const PageRequest page, c.page());
  if (page.cursor) {
    CORRAL_ASSIGN_OR_RETURN(after, id_cursor(page));
  }
  CORRAL_ASSIGN_OR_RETURN(auto rows, tx.audit().list_audit(after, page.limit + 1));
  std::vector<json> items;
  for (const auto& r : rows) {
    items.push_back({{"seq", r.seq},
                     {"timeMs", core::to_ms(r.time)},
                     {"actor", r.actor},
                     {"action", r.action},
                     {"target", r.target},
                     {"before", r.before},
                     {"after", r.after},
                     {"requestId", r.request_id},
                     {"prevHash", r.prev_hash},
                     {"hash", r.hash}});
  }
  return json_reply(page_answer("entries", std::move(items), page,
                                [&](std::size_t i) { return std::to_string(rows[i].seq); }));
}

// Replays the audit chain from its first entry (audit.h), then checks this replica's
// anchor file against it (audit_anchor.h).
Result<Reply> verify(ApiContext& api, const Call&) {
  CORRAL_ASSIGN_OR_RETURN(const auto verdict,
                          verify_audit_anchored(api.pipeline.store(), api.pipeline.audit_anchor(),
                                                api.pipeline.keys()));
  return json_reply({{"ok", verdict.ok},
                     {"entries", verdict.entries},
                     {"anchors", verdict.anchors},
                     {"firstBadSeq", verdict.first_bad_seq},
                     {"problem", verdict.problem}});
}

// Captured scheduling cycles (cycle_recorder.h), admins only: the input of a cycle holds
// every tenant's queue. POST captures the next cycle and answers once it is written (or
// 503 after 10 s); GET lists them or returns one, for corral-sim replay.
Result<Reply> capture(ApiContext& api, const Call& c) {
  api.loop.capacity_changed();  // a cycle soon, whatever else happens
  CORRAL_ASSIGN_OR_RETURN(const auto file,
                          api.loop.recorder().capture_next(std::chrono::seconds(10)));
  CORRAL_RETURN_IF_ERROR(api.pipeline.change([&](store::Tx& tx, Effects&) {
    return api.pipeline.audit(tx, c, "scheduler.capture", "capture/" + file.name, "",
                              "bytes=" + std::to_string(file.bytes));
  }));
  return json_reply({{"file", file.name}, {"bytes", file.bytes}}, 201);
}

Result<Reply> list_captures(ApiContext& api, const Call& c) {
  CORRAL_ASSIGN_OR_RETURN(const PageRequest page, c.page());
  CORRAL_ASSIGN_OR_RETURN(const std::string after, name_cursor(page));
  std::vector<json> items;
  std::vector<std::string> keys;
  for (const auto& f : api.loop.recorder().list()) {  // sorted by name
    if (f.name <= after) continue;
    if (items.size() > static_cast<std::size_t>(page.limit)) break;
    items.push_back({{"file", f.name}, {"bytes", f.bytes}});
    keys.push_back(f.name);
  }
  return json_reply(
      page_answer("captures", std::move(items), page, [&](std::size_t i) { return keys[i]; }));
}

Result<Reply> get_capture(ApiContext& api, const Call& c) {
  Reply reply;
  CORRAL_ASSIGN_OR_RETURN(reply.body, api.loop.recorder().read(c.path_param(1)));
  return reply;
}

// The shards, who holds each lease and until when, and the replicas alive
// (docs/scale-out.md). Any replica answers alike: it reads the lease rows.
Result<Reply> shards(ApiContext& api, const Call&) {
  CORRAL_ASSIGN_OR_RETURN(const auto leases, api.loop.leases());
  CORRAL_ASSIGN_OR_RETURN(const auto replicas, api.loop.replicas());
  const core::Time now = api.now();
  const auto& specs = api.loop.shards().shards();
  json items = json::array();
  for (const auto& l : leases) {
    json one = {{"name", l.shard},
                {"holder", l.holder},
                {"epoch", l.epoch},
                {"expiresAtMs", core::to_ms(l.expires_at)},
                {"live", l.expires_at > now},
                {"servedHere", l.mine}};
    for (const auto& s : specs) {
      if (s.name != l.shard) continue;
      json types = json::array();
      for (const auto& t : s.gpu_types) types.push_back(t.value);
      one["region"] = s.region;
      one["gpuTypes"] = types;
      one["leaves"] = s.leaves;
      one["minGpus"] = s.min_gpus;
    }
    items.push_back(std::move(one));
  }
  json reps = json::array();
  for (const auto& r : replicas) {
    reps.push_back({{"name", r.name},
                    {"address", r.address},
                    {"startedAtMs", core::to_ms(r.started_at)},
                    {"expiresAtMs", core::to_ms(r.expires_at)},
                    {"live", r.expires_at > now},
                    {"configFingerprint", r.config_fingerprint}});
  }
  // This replica's scheduling config against the one the replicas agree on
  // (config_agreement.h): a replica that differs holds no lease, and says why here.
  const auto& mine = api.loop.config_identity();
  const auto stored = api.loop.stored_config();
  const std::string problem = api.loop.config_problem();
  json config = {{"fingerprint", mine.fingerprint},
                 {"summary", mine.summary},
                 {"agreed", stored ? json(stored->fingerprint) : json()},
                 {"agreedSummary", stored ? json(stored->summary) : json()},
                 {"agreedBy", stored ? json(stored->set_by) : json()},
                 {"agrees", problem.empty()},
                 {"problem", problem}};
  return json_reply({{"replica", api.loop.replica().name},
                     {"leaseMs", core::to_ms(api.loop.replica().lease)},
                     {"config", std::move(config)},
                     {"shards", std::move(items)},
                     {"replicas", std::move(reps)}});
}

Result<Reply> metrics(ApiContext& api, const Call&) {
  Reply reply;
  reply.body = api.metrics.render();
  reply.content_type = "text/plain; version=0.0.4";
  return reply;
}

using DirectHandler = Result<Reply> (*)(ApiContext&, const Call&);
Route direct(const char* method, std::string pattern, RoleSet roles, ApiContext& api,
             DirectHandler fn) {
  return call_route(method, std::move(pattern), roles,
                    [&api, fn](const Call& c) { return fn(api, c); });
}

}  // namespace

std::vector<Route> admin_routes(ApiContext& api) {
  return {
      read_route("GET", "/v1/audit", kAdmins, bind_api(api, list_audit)),
      direct("GET", "/v1/audit/verify", kAdmins, api, verify),
      direct("GET", "/v1/shards", kAdmins, api, shards),
      direct("POST", "/v1/scheduler/captures", kAdmins, api, capture),
      direct("GET", "/v1/scheduler/captures", kAdmins, api, list_captures),
      direct("GET", R"(/v1/scheduler/captures/([^/]+))", kAdmins, api, get_capture),
      // Degraded, not down: the API still serves, but the reason (a scheduling config
      // that differs from the other replicas', a scheduling cycle that fails, say on a
      // tenant tree an older corrald let through) is where people look.
      public_route("GET", "/healthz",
                   [&api](const Call&) -> Result<Reply> {
                     std::string reason = api.loop.config_problem();
                     if (reason.empty()) reason = api.loop.degraded();
                     if (reason.empty()) return json_reply({{"status", "ok"}});
                     return json_reply({{"status", "degraded"}, {"reason", reason}});
                   }),
      // Per-tenant and per-GPU series say who runs what: a scraper needs a token of role
      // metrics (or admin), docs/metrics.md.
      direct("GET", "/metrics", {Role::kAdmin, Role::kMetrics}, api, metrics),
  };
}

}  // namespace corral::server
