#include <algorithm>
#include <httplib.h>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/gpu_type.h"
#include "core/job_phase.h"
#include "core/job_spec_parse.h"
#include "core/json_object.h"
#include "core/priority.h"
#include "core/units.h"
#include "core/utf8.h"
#include "server/api/api_routes.h"
#include "server/api/api_views.h"
#include "server/base/http_status.h"
#include "server/base/model_json.h"
#include "server/base/stored_documents.h"
#include "server/controllers/dataset_gate.h"
#include "server/controllers/job_dependencies.h"
#include "server/controllers/job_secrets.h"
#include "server/http/list_page.h"

namespace corral::server {
namespace {

using core::JobPhase;
using core::Result;
using core::Status;
using core::StatusCode;
using nlohmann::json;

// True when a job view asks for `gpu_type` (or for any type: an empty gpuTypes).
bool wants_gpu_type(const json& view, const std::string& gpu_type) {
  const json types = view["spec"].is_object() && view["spec"].contains("resources")
                         ? view["spec"]["resources"].value("gpuTypes", json::array())
                         : json::array();
  bool match = types.empty();
  for (const auto& t : types) match = match || (t.is_string() && t == gpu_type);
  return match;
}

// A tenant already over its submit rate is answered 429 here, outside the store: a
// flood of refused calls then never waits in (or slows) the group commit that other
// tenants' submissions go through. The bucket is the one submit() fills; a tenant it
// has not seen yet, or a YAML body, goes on to submit(), which checks again.
Status submit_precheck(ApiContext& api, const Call& c) {
  const httplib::Request& req = c.req;
  const Principal& p = c.who;
  std::string tenant = p.tenant;
  if (p.role != Role::kMember) {
    if (req.get_header_value("Content-Type").find("yaml") != std::string::npos) return Status();
    const json body = parse_or_null(req.body);
    tenant = "default";
    if (body.is_object() && body.contains("tenant") && body["tenant"].is_string()) {
      tenant = body["tenant"].get<std::string>();
    }
  }
  RateLimit limit;
  const int wait_s = api.admission.over_limit(tenant, &limit);
  if (wait_s == 0) return Status();
  ++api.metrics.admission_rejections;
  return core::resource_exhausted("tenant " + tenant + " is over its submit rate of " +
                                      std::to_string(limit.rate_per_second) + "/s",
                                  core::seconds(wait_s));
}

}  // namespace

// The tenant's priority classes (its config's priorityClasses): a class it was not given
// is refused, and so is a job that could never fit under its class's cap (the scheduler
// holds the others to it, sched/internal/class_caps.h).
Status check_priority_class(const TenantConfig& tenant, const core::JobSpec& spec) {
  const core::Tenant& t = tenant.tenant;
  const std::int64_t cap = t.max_gpus_at(core::tier_of(spec.priority_class));
  if (cap == 0) {
    std::string allowed;
    for (const core::PriorityClass& pc : core::default_priority_classes()) {
      if (t.max_gpus_at(pc.tier) > 0) allowed += (allowed.empty() ? "" : ", ") + pc.name;
    }
    return core::invalid_argument("priorityClass", "tenant " + t.id.value +
                                                       " may not use priority class " +
                                                       spec.priority_class + "; it may use " +
                                                       (allowed.empty() ? "none" : allowed));
  }
  const std::int64_t least = spec.elastic ? spec.elastic->min_gpus : spec.resources.gpus;
  if (least > cap) {
    return core::invalid_argument("resources.gpus",
                                  "tenant " + t.id.value + "'s " + spec.priority_class +
                                      " jobs may hold at most " + std::to_string(cap) +
                                      " GPUs at once (priorityClasses." + spec.priority_class +
                                      ".maxGpus); this one needs " + std::to_string(least));
  }
  return Status();
}

// An interactive session that could never start is refused, not left pending: one larger
// than a user's session limit, or than its tenant's guarantee of every type it accepts
// (a session never borrows, sched/internal/admit.h).
Status check_session(const sched::SchedulerConfig& config, const TenantConfig& tenant,
                     const core::JobSpec& spec) {
  if (spec.priority_class != core::kInteractiveClass) return Status();
  const std::int32_t gpus = spec.resources.gpus;
  const std::int32_t limit = config.session_gpus_per_user;
  if (limit > 0 && gpus > limit) {
    return core::invalid_argument(
        "resources.gpus", "a user's sessions may hold at most " + std::to_string(limit) +
                              " GPUs at once (scheduler.sessionGpusPerUser); this one asks for " +
                              std::to_string(gpus));
  }
  const core::Tenant& t = tenant.tenant;
  // The largest guarantee of a type it accepts (any type: the default's or a listed one's),
  // in thousandths.
  std::int64_t most = 0;
  if (spec.resources.gpu_types.empty()) {
    most = t.default_quota.guaranteed_milli;
    for (const auto& [type, quota] : t.quotas) most = std::max(most, quota.guaranteed_milli);
  }
  for (const core::GpuTypeId& type : spec.resources.gpu_types) {
    most = std::max(most, t.quota_for(type).guaranteed_milli);
  }
  // A session of shares needs its thousandths inside the guarantee, as admission counts.
  const std::int64_t milli =
      std::int64_t{gpus} * (spec.resources.gpu_milli > 0 ? spec.resources.gpu_milli : 1000);
  if (milli > most) {
    return core::invalid_argument(
        "resources.gpus",
        "a session starts only inside its tenant's guarantee, and tenant " + t.id.value +
            " is guaranteed at most " + core::format_gpu_milli(most) +
            " GPUs of any type this session accepts; it asks for " + core::format_gpu_milli(milli));
  }
  return Status();
}

Result<store::JobRow> admit_job(ApiContext& api, const Call& c, store::Tx& tx,
                                const core::JobSpec& spec, const std::string& sealed_secrets,
                                std::string_view audit_action, bool rate_token) {
  const Principal& p = c.who;
  if (p.role == Role::kMember && spec.tenant.value != p.tenant) {
    return permission_denied("a member of tenant " + p.tenant + " may not submit to tenant " +
                             spec.tenant.value);
  }
  const ShardMap& shards = api.loop.shards();
  const RouteQuery route = route_query(
      sched::job_request_from_spec(core::JobId(), spec, core::tier_of(spec.priority_class)));
  CORRAL_RETURN_IF_ERROR(shards.check_routable(route));
  // The tenant's row, locked until commit: a concurrent write making it a parent (or
  // deleting it) waits for this submission, then sees its job and is refused; or it went
  // first, and the reads below see it (store::TenantRepo::lock_tenants).
  CORRAL_RETURN_IF_ERROR(tx.tenants().lock_tenants({spec.tenant}, store::TenantLock::kSubmit));
  auto tenant = load_tenant(tx.tenants(), spec.tenant.value);
  if (!tenant.ok()) {
    if (tenant.status().code() == StatusCode::kNotFound) {
      return core::invalid_argument("tenant", "unknown tenant \"" + spec.tenant.value + "\"");
    }
    return tenant.status();
  }
  CORRAL_RETURN_IF_ERROR(check_priority_class(*tenant, spec));
  CORRAL_RETURN_IF_ERROR(check_session(api.loop.sched_config(), *tenant, spec));
  // Only a leaf tenant runs jobs (sched/snapshot.h): a job of a parent would fail cycles.
  CORRAL_ASSIGN_OR_RETURN(const auto tenants, tx.tenants().list_tenants());
  for (const TenantConfig& cfg : stored_tenants(tenants)) {
    if (cfg.tenant.parent == spec.tenant) {
      return core::invalid_argument("tenant", "tenant " + spec.tenant.value + " has sub-tenants (" +
                                                  cfg.tenant.id.value +
                                                  "); jobs belong to a leaf tenant");
    }
  }
  CORRAL_ASSIGN_OR_RETURN(
      const int wait_s,
      rate_token ? api.admission.try_admit(tx.tenants(), spec.tenant.value, tenant->submit)
                 : core::Result<int>(0));
  if (wait_s > 0) {
    ++api.metrics.admission_rejections;
    return core::resource_exhausted("tenant " + spec.tenant.value + " is over its submit rate of " +
                                        std::to_string(tenant->submit.rate_per_second) + "/s",
                                    core::seconds(wait_s));
  }
  // An array of N tasks is N pending jobs, counted against the tenant's limit as such.
  const std::int32_t tasks = spec.array ? spec.array->count : 1;
  CORRAL_ASSIGN_OR_RETURN(const std::int64_t pending, tx.jobs().count_pending_jobs(spec.tenant));
  if (pending + tasks > tenant->max_pending_jobs) {
    ++api.metrics.admission_rejections;
    const std::string has =
        "tenant " + spec.tenant.value + " has " + std::to_string(pending) + " pending jobs";
    return core::resource_exhausted(
        spec.array ? has + " and this array adds " + std::to_string(tasks) + ", past the " +
                         std::to_string(tenant->max_pending_jobs) + " it may have"
                   : has + ", the most it may have",
        core::seconds(10));
  }
  CORRAL_ASSIGN_OR_RETURN(const std::string hold,
                          check_job_datasets(tx.datasets(), spec, tenant->datasets));
  core::JobSpec resolved = spec;
  CORRAL_RETURN_IF_ERROR(resolve_dependencies(tx.jobs(), resolved));
  const std::string spec_json = core::job_spec_to_json(resolved);
  // Each task stores its spec: one submission's transaction stays bounded (the writer it
  // holds is every other write's too).
  if (static_cast<std::int64_t>(spec_json.size()) * tasks > kMaxSubmissionBytes) {
    return core::invalid_argument(
        "array.count", std::to_string(tasks) + " tasks of a " +
                           std::to_string(spec_json.size() / 1024) +
                           " KiB spec would store more than the 64 MiB one submission may; "
                           "fewer tasks, or a shorter spec (env, command)");
  }
  std::optional<store::JobRow> first;
  for (std::int32_t index = 0; index < tasks; ++index) {
    CORRAL_ASSIGN_OR_RETURN(
        auto row,
        tx.jobs().insert_job({.tenant = spec.tenant,
                              .name = spec.name,
                              .priority_class = spec.priority_class,
                              .tier = core::tier_of(spec.priority_class),
                              .gpus = spec.resources.gpus,
                              .spec_json = spec_json,
                              .secret_env_json = sealed_secrets,
                              .now = api.now(),
                              .array_index = spec.array ? std::optional(index) : std::nullopt,
                              .array_job = first ? first->id : core::JobId(0),
                              .submitted_by = user_of(p)}));
    CORRAL_RETURN_IF_ERROR(tx.records().append_job_event(
        {.job = row.id,
         .time = row.created_at,
         .kind = "submitted",
         .message = "by " + p.id +
                    (spec.array ? ", task " + std::to_string(index) + " of array " +
                                      std::to_string(row.array_job.value)
                                : "")}));
    CORRAL_RETURN_IF_ERROR(tx.datasets().record_job_datasets(row.id, spec.lineage.datasets));
    if (!hold.empty()) {
      const store::JobRow was = row;
      row.reason = hold;
      row.pending_kind = "held";
      CORRAL_ASSIGN_OR_RETURN(const bool updated, tx.jobs().update_job(row, was.phase));
      if (!updated) return core::raced("job " + std::to_string(row.id.value) + " moved");
      CORRAL_RETURN_IF_ERROR(tx.records().append_job_event(
          {.job = row.id, .time = row.created_at, .kind = "dataset", .message = hold}));
    }
    if (!first) first = row;
  }
  store::JobRow row = std::move(*first);
  if (shards.partitioned()) {
    CORRAL_RETURN_IF_ERROR(
        tx.records().append_job_event({.job = row.id,
                                       .time = row.created_at,
                                       .kind = "routed",
                                       .message = shards.describe(shards.route(route), route)}));
  }
  CORRAL_RETURN_IF_ERROR(api.pipeline.audit(tx, c, std::string(audit_action),
                                            "job/" + std::to_string(row.id.value), "",
                                            audit_summary(row)));
  return row;
}

namespace {

Result<Reply> submit(ApiContext& api, const Call& c, store::Tx& tx) {
  const httplib::Request& req = c.req;
  // Anything else but JSON the pipeline refused (Route::takes_yaml).
  const core::SpecFormat format =
      yaml_body(req) ? core::SpecFormat::kYaml : core::SpecFormat::kJson;
  const core::ParseOutcome parsed = core::parse_job_spec(req.body, format);
  if (!parsed.ok()) return core::invalid_fields(parsed.errors);
  CORRAL_ASSIGN_OR_RETURN(
      store::JobRow row,
      admit_job(api, c, tx, *parsed.spec,
                seal_job_secrets(api.pipeline.keys(), parsed.spec->secret_env), "job.submit"));
  ++api.metrics.jobs_submitted;
  Reply reply =
      json_reply(job_json(row, api.loop.queue_positions().get(), api.loop.degraded()), 201);
  reply.wake_scheduler = true;
  // The loop reads just a lone new job; an array's tasks are many, so it re-reads the queue.
  reply.submitted_job = parsed.spec->array ? 0 : row.id.value;
  return reply;
}

Result<Reply> get_job(ApiContext& api, const Call& c, store::Tx& tx) {
  const httplib::Request& req = c.req;
  const Principal& p = c.who;
  CORRAL_ASSIGN_OR_RETURN(auto job, visible_job(tx.jobs(), p, req.matches[1]));
  json out = job_json(job, api.loop.queue_positions().get(), api.loop.degraded());
  CORRAL_ASSIGN_OR_RETURN(auto allocs, tx.allocations().list_allocations(job.id));
  std::map<std::int32_t, std::vector<store::AllocationRow>> by_attempt;
  for (auto& a : allocs) by_attempt[a.attempt].push_back(std::move(a));
  json attempts = json::array();
  out["allocation"] = nullptr;
  out["heldGpus"] = 0;
  for (const auto& [attempt, rows] : by_attempt) {
    json a = allocation_json(rows);
    attempts.push_back(a);
    if (rows.front().active) {
      out["allocation"] = a;
      out["heldGpus"] = rows.size();
    }
  }
  out["attempts"] = attempts;
  CORRAL_ASSIGN_OR_RETURN(auto ckpt, tx.checkpoints().latest_checkpoint(job.id));
  out["lastCheckpoint"] =
      ckpt ? json{{"attempt", ckpt->attempt},   {"step", ckpt->step},
                  {"uri", ckpt->uri},           {"bytes", ckpt->bytes},
                  {"checksum", ckpt->checksum}, {"timeMs", core::to_ms(ckpt->time)},
                  {"gpus", ckpt->gpus},         {"throughput", ckpt->throughput}}
           // as the worker measured it; 0: none
           : json(nullptr);
  CORRAL_ASSIGN_OR_RETURN(out["cost"], job_cost_json(api, tx, job));
  return json_reply(out);
}

Result<Reply> list_jobs(ApiContext& api, const Call& c, store::Tx& tx) {
  const httplib::Request& req = c.req;
  const Principal& p = c.who;
  store::JobFilter filter;
  if (req.has_param("tenant")) {
    const std::string t = req.get_param_value("tenant");
    if (!valid_name(t)) return core::invalid_argument("tenant", "must be a tenant name");
    if (!can_see_tenant(p, t)) return permission_denied("may not list tenant " + t);
    filter.tenant = core::TenantId(t);
  } else if (p.role == Role::kMember) {
    filter.tenant = core::TenantId(p.tenant);
  }
  if (req.has_param("phase")) {
    // One phase or several, comma separated: `corral jobs` asks for the unfinished ones.
    const std::string phases = req.get_param_value("phase");
    for (std::size_t at = 0; at <= phases.size();) {
      const std::size_t comma = std::min(phases.find(',', at), phases.size());
      const auto phase = core::job_phase_from_string(phases.substr(at, comma - at));
      if (!phase) return core::invalid_argument("phase", "unknown phase");
      if (std::find(filter.phases.begin(), filter.phases.end(), *phase) == filter.phases.end()) {
        filter.phases.push_back(*phase);
      }
      at = comma + 1;
    }
  }
  if (req.has_param("after")) {
    const auto after = parse_decimal(req.get_param_value("after"));
    if (!after) return core::invalid_argument("after", "must be a job id");
    filter.after_id = *after;
  }
  CORRAL_ASSIGN_OR_RETURN(const PageRequest page, c.page());
  if (page.cursor) {
    CORRAL_ASSIGN_OR_RETURN(filter.after_id, id_cursor(page));
  }
  const std::string gpu_type = req.has_param("gpuType") ? req.get_param_value("gpuType") : "";
  if (req.has_param("gpuType") && !core::find_builtin_gpu_type(gpu_type)) {
    return core::invalid_argument("gpuType", "unknown gpu type");
  }
  // The store filters by tenant and phase; the GPU type is read from the spec here, so
  // the store is read on until the page is full: a filter never shortens a page.
  const auto positions = api.loop.queue_positions();
  const std::string failure = api.loop.degraded();
  std::vector<json> items;
  std::vector<std::int64_t> ids;
  filter.limit = page.limit + 1;
  for (;;) {
    CORRAL_ASSIGN_OR_RETURN(auto jobs, tx.jobs().list_jobs(filter));
    for (const auto& j : jobs) {
      json view = job_json(j, positions.get(), failure);
      if (!gpu_type.empty() && !wants_gpu_type(view, gpu_type)) continue;
      items.push_back(std::move(view));
      ids.push_back(j.id.value);
      if (items.size() > static_cast<std::size_t>(page.limit)) break;
    }
    if (items.size() > static_cast<std::size_t>(page.limit) ||
        jobs.size() < static_cast<std::size_t>(filter.limit)) {
      break;
    }
    filter.after_id = jobs.back().id.value;
  }
  // The GPUs each job holds now: an elastic job's size can differ from its spec's.
  std::vector<core::JobId> page_ids;
  for (const std::int64_t id : ids) page_ids.push_back(core::JobId(id));
  CORRAL_ASSIGN_OR_RETURN(const auto held, tx.allocations().list_active_allocations_of(page_ids));
  std::map<std::int64_t, std::int64_t> held_by;
  for (const auto& a : held) ++held_by[a.job.value];
  for (std::size_t i = 0; i < items.size(); ++i) items[i]["heldGpus"] = held_by[ids[i]];
  return json_reply(page_answer("jobs", std::move(items), page,
                                [&](std::size_t i) { return std::to_string(ids[i]); }));
}

Result<Reply> job_events(ApiContext&, const Call& c, store::Tx& tx) {
  const httplib::Request& req = c.req;
  const Principal& p = c.who;
  CORRAL_ASSIGN_OR_RETURN(auto job, visible_job(tx.jobs(), p, req.matches[1]));
  CORRAL_ASSIGN_OR_RETURN(const PageRequest page, c.page());
  CORRAL_ASSIGN_OR_RETURN(const std::int64_t after, id_cursor(page));
  CORRAL_ASSIGN_OR_RETURN(auto events, tx.records().list_job_events(job.id));
  std::vector<json> items;
  std::vector<std::int64_t> ids;
  for (const auto& e : events) {
    if (e.id <= after) continue;
    items.push_back({{"timeMs", core::to_ms(e.time)}, {"kind", e.kind}, {"message", e.message}});
    ids.push_back(e.id);
    if (items.size() > static_cast<std::size_t>(page.limit)) break;
  }
  json out = page_answer("events", std::move(items), page,
                         [&](std::size_t i) { return std::to_string(ids[i]); });
  out["job"] = job.id.value;
  return json_reply(out);
}

Result<Reply> cancel(ApiContext& api, const Call& c, store::Tx& tx) {
  const httplib::Request& req = c.req;
  const Principal& p = c.who;
  CORRAL_ASSIGN_OR_RETURN(const std::string reason, action_reason(req.body));
  const std::string note = "cancelled by " + p.id + (reason.empty() ? "" : ": " + reason);
  CORRAL_ASSIGN_OR_RETURN(auto job, visible_job(tx.jobs(), p, req.matches[1]));
  Effects fx;
  CORRAL_ASSIGN_OR_RETURN(const store::JobRow next, cancel_job(tx, api.lifecycle(fx), job, note));
  CORRAL_RETURN_IF_ERROR(api.pipeline.audit(
      tx, c, "job.cancel", "job/" + std::to_string(job.id.value), audit_summary(job),
      json{{"phase", std::string(core::to_string(next.phase))}, {"reason", reason}}.dump()));
  ++api.metrics.jobs_cancelled;
  Reply reply = json_reply(job_json(next, nullptr, ""));
  reply.wake_scheduler = true;
  reply.effects = fx;
  return reply;
}

Result<Reply> queue(ApiContext& api, const Call& c, store::Tx& tx) {
  const Principal& p = c.who;
  CORRAL_ASSIGN_OR_RETURN(const PageRequest page, c.page());
  // The queue is ordered by position, then id; a cursor is the last item's "KEY.ID".
  std::pair<std::int64_t, std::int64_t> after{-1, 0};
  if (page.cursor) {
    const auto dot = page.cursor->find('.');
    const auto key = parse_decimal(page.cursor->substr(0, dot));
    const auto id =
        dot == std::string::npos ? std::nullopt : parse_decimal(page.cursor->substr(dot + 1));
    if (!key || !id) {
      return core::invalid_argument("cursor", "must be a nextCursor of an earlier answer");
    }
    after = {*key, *id};
  }
  store::JobFilter filter{.phases = {JobPhase::kPending}, .limit = 1'000'000};
  if (p.role == Role::kMember) filter.tenant = core::TenantId(p.tenant);
  CORRAL_ASSIGN_OR_RETURN(auto jobs, tx.jobs().list_jobs(filter));
  // One order for every reader: the scheduler's last cycle's (sched_loop.h) when this
  // corrald schedules, else the stored one. Jobs the scheduler has not seen yet
  // (position 0) go last, in submission order.
  const auto positions = api.loop.queue_positions();
  const std::string failure = api.loop.degraded();
  const auto position = [&](const store::JobRow& j) {
    return positions ? SchedLoop::queue_position(positions.get(), j.id) : j.queue_position;
  };
  const auto sort_key = [](std::int32_t pos) -> std::int64_t { return pos == 0 ? INT32_MAX : pos; };
  std::vector<std::pair<std::int32_t, const store::JobRow*>> order;
  for (const auto& j : jobs) order.emplace_back(position(j), &j);
  std::stable_sort(order.begin(), order.end(), [&](const auto& a, const auto& b) {
    return sort_key(a.first) < sort_key(b.first);
  });
  std::vector<json> items;
  std::vector<std::pair<std::int64_t, std::int64_t>> keys;
  for (const auto& [pos, row] : order) {
    const store::JobRow& j = *row;
    const std::pair<std::int64_t, std::int64_t> key{sort_key(pos), j.id.value};
    if (key <= after) continue;
    if (items.size() > static_cast<std::size_t>(page.limit)) break;
    keys.push_back(key);
    items.push_back({{"job", j.id.value},
                     {"name", j.name},
                     {"tenant", j.tenant.value},
                     {"position", pos},
                     {"kind", j.pending_kind},
                     {"reason", pending_reason(j, failure)},
                     {"gpus", j.gpus},
                     {"priorityClass", j.priority_class},
                     {"queuedAtMs", core::to_ms(j.queued_at)},
                     {"plannedStart", planned_start_json(j)}});
  }
  return json_reply(page_answer("queue", std::move(items), page, [&](std::size_t i) {
    return std::to_string(keys[i].first) + "." + std::to_string(keys[i].second);
  }));
}

}  // namespace

std::vector<Route> job_routes(ApiContext& api) {
  Route submit_route = write_route("POST", "/v1/jobs", kUsers, bind_api(api, submit),
                                   [&api](const Call& c) { return submit_precheck(api, c); });
  submit_route.takes_yaml = true;
  return {
      std::move(submit_route),
      read_route("GET", "/v1/jobs", kUsers, bind_api(api, list_jobs)),
      read_route("GET", R"(/v1/jobs/([^/]+))", kCallers, bind_api(api, get_job)),
      read_route("GET", R"(/v1/jobs/([^/]+)/events)", kCallers, bind_api(api, job_events)),
      write_route("POST", R"(/v1/jobs/([^/]+)/cancel)", kUsers, bind_api(api, cancel)),
      read_route("GET", "/v1/queue", kUsers, bind_api(api, queue)),
  };
}

}  // namespace corral::server
