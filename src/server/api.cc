#include "server/api.h"

#include <atomic>
#include <httplib.h>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/gpu_type.h"
#include "core/job_phase.h"
#include "core/job_spec_parse.h"
#include "core/json_object.h"
#include "core/priority.h"
#include "core/utf8.h"
#include "server/audit.h"
#include "server/crypto.h"
#include "server/http_status.h"
#include "server/list_page.h"
#include "server/model_json.h"

namespace corral::server {

using core::JobPhase;
using core::Result;
using core::Status;
using core::StatusCode;
using nlohmann::json;

namespace {

// What a handler answers. Errors travel as a Status instead.
struct Reply {
  int status = 200;
  std::string body;
  bool wake_scheduler = false;
  Effects effects;                 // applied after the commit (agents' desired workers)
  std::int64_t submitted_job = 0;  // a new pending job: the scheduler reads just it
};

Reply ok_json(const json& body, int status = 200) { return Reply{status, json_text(body), false}; }

Status forbidden(std::string m) { return Status(StatusCode::kPermissionDenied, std::move(m)); }

// An Idempotency-Key is stored and compared as bytes: printable ASCII only (an sf-string,
// as the IETF draft has it), so every store holds it as sent and no answer quotes a byte
// that is not UTF-8.
Status check_idempotency_key(const std::string& key) {
  if (key.size() > 255) {
    return core::invalid_argument("Idempotency-Key", "must be at most 255 characters");
  }
  for (const char c : key) {
    if (c < 0x20 || c > 0x7e) {
      return core::invalid_argument("Idempotency-Key", "must be printable ASCII");
    }
  }
  return Status();
}

json parse_or_null(const std::string& text) {
  json j = json::parse(text, nullptr, false);
  return j.is_discarded() ? json(nullptr) : j;
}

// A job as the API shows it. A pending job's position comes from `positions`, the queue
// order of the scheduler's last cycle (one consistent order; sched_loop.h), when this
// corrald schedules; else from the stored row.
json job_json(const store::JobRow& j, const SchedLoop::QueuePositions* positions) {
  const bool pending = j.phase == JobPhase::kPending;
  const std::int32_t position = !pending    ? 0
                                : positions ? SchedLoop::queue_position(positions, j.id)
                                            : j.queue_position;
  json planned = nullptr;
  if (pending && core::to_ms(j.planned_latest) > 0) {
    planned = {{"atMs", core::to_ms(j.planned_start)},
               {"latestAtMs", core::to_ms(j.planned_latest)}};
  }
  return {{"id", j.id.value},
          {"name", j.name},
          {"tenant", j.tenant.value},
          {"priorityClass", j.priority_class},
          {"gpus", j.gpus},
          {"phase", std::string(core::to_string(j.phase))},
          {"reason", j.reason},
          {"pendingKind", j.pending_kind},
          {"queuePosition", position},
          {"plannedStart", planned},
          {"preemptions", j.preemptions},
          {"attempt", j.attempt},
          {"createdAtMs", core::to_ms(j.created_at)},
          {"updatedAtMs", core::to_ms(j.updated_at)},
          {"queuedAtMs", core::to_ms(j.queued_at)},
          {"spec", parse_or_null(j.spec_json)}};
}

// Allocation rows of one attempt, as {attempt, gpuType, epoch, gpus: [{node, index}]}.
// True when a job view asks for `gpu_type` (or for any type: an empty gpuTypes).
bool wants_gpu_type(const json& view, const std::string& gpu_type) {
  const json types = view["spec"].is_object() && view["spec"].contains("resources")
                         ? view["spec"]["resources"].value("gpuTypes", json::array())
                         : json::array();
  bool match = types.empty();
  for (const auto& t : types) match = match || (t.is_string() && t == gpu_type);
  return match;
}

// A list's `limit` and `cursor` (list_page.h).
Result<PageRequest> page_params(const httplib::Request& req) {
  const auto param = [&](const char* key) {
    return req.has_param(key) ? std::optional<std::string>(req.get_param_value(key)) : std::nullopt;
  };
  return read_page_request(param("limit"), param("cursor"));
}

json allocation_json(const std::vector<store::AllocationRow>& rows) {
  json gpus = json::array();
  for (const auto& a : rows) gpus.push_back({{"node", a.node.value}, {"index", a.gpu_index}});
  const auto& first = rows.front();
  return {{"job", first.job.value},
          {"attempt", first.attempt},
          {"gpuType", first.gpu_type.value},
          {"epoch", first.epoch},
          {"borrowed", first.borrowed},
          {"active", first.active},
          {"createdAtMs", core::to_ms(first.created_at)},
          {"gpus", gpus}};
}

bool can_see_tenant(const Principal& p, const std::string& tenant) {
  return p.role == Role::kAdmin || (p.role == Role::kMember && p.tenant == tenant);
}

Status require_role(const Principal& p, std::initializer_list<Role> roles) {
  for (const Role r : roles) {
    if (p.role == r) return Status();
  }
  return forbidden("role " + std::string(to_string(p.role)) + " may not do this");
}

std::string summary(const store::JobRow& j) {
  return "phase=" + std::string(core::to_string(j.phase)) + " tenant=" + j.tenant.value +
         " gpus=" + std::to_string(j.gpus) + " attempt=" + std::to_string(j.attempt);
}

// A job visible to `p`, or NotFound (also for other tenants' jobs: their ids leak nothing).
Result<store::JobRow> visible_job(store::Tx& tx, const Principal& p, const std::string& id_text) {
  const auto id = parse_decimal(id_text);
  if (!id) return core::not_found("job " + id_text.substr(0, 32) + " not found");
  CORRAL_ASSIGN_OR_RETURN(auto job, tx.get_job(core::JobId(*id)));
  if (!job || !can_see_tenant(p, job->tenant.value)) {
    return core::not_found("job " + std::to_string(*id) + " not found");
  }
  return *job;
}

Result<TenantConfig> load_tenant(store::Tx& tx, const std::string& name) {
  CORRAL_ASSIGN_OR_RETURN(auto row, tx.get_tenant(core::TenantId(name)));
  if (!row) return core::not_found("tenant " + name + " not found");
  return tenant_config_from_json(name, row->config_json);
}

}  // namespace

// The route table and the request wrapper. A struct so the handlers can reach Api's
// private members without each being a member function.
struct ApiRoutes {
  explicit ApiRoutes(Api& a) : api(a) {}
  Api& api;
  std::atomic<std::int64_t> next_request{0};
  std::string request_prefix = new_token().substr(4, 8);

  using Read = std::function<Result<Reply>(const httplib::Request&, const Principal&, store::Tx&)>;
  using Write = std::function<Result<Reply>(const httplib::Request&, const Principal&, store::Tx&,
                                            const std::string& request_id)>;
  // Runs after authentication, before the transaction: a refusal costs no commit slot.
  using Precheck = std::function<Status(const httplib::Request&, const Principal&)>;

  void send(httplib::Response& res, const std::string& request_id, int status,
            const std::string& body) {
    res.status = status;
    res.set_header("X-Request-Id", request_id);
    res.set_content(body, "application/json");
    const int cls = status / 100 - 2;
    if (cls >= 0 && cls < 4) ++api.metrics_.http_responses[static_cast<std::size_t>(cls)];
  }

  void fail(httplib::Response& res, const std::string& request_id, const Status& s) {
    if (s.code() == StatusCode::kInternal || s.code() == StatusCode::kUnavailable ||
        s.code() == StatusCode::kDataLoss) {
      ++api.metrics_.store_errors;
      std::fprintf(stderr, "corrald: request %s failed: %s\n", request_id.c_str(),
                   log_text(s.to_string()).c_str());
    }
    if (s.code() == StatusCode::kResourceExhausted) {
      res.set_header("Retry-After", std::to_string(retry_after_s(s)));
    }
    send(res, request_id, http_status(s.code()), error_json(s));
  }

  std::string new_request_id() { return request_prefix + "-" + std::to_string(++next_request); }

  Result<Principal> auth(const httplib::Request& req) {
    CORRAL_ASSIGN_OR_RETURN(auto p, api.auth_.authenticate(req.get_header_value("Authorization")));
    if (p.role == Role::kJoin) return forbidden("a join token may only call POST /v1/agents/join");
    return p;
  }

  LifecycleContext lifecycle(Effects& fx) const {
    return LifecycleContext{api.board_, api.agent_settings_, api.clock_.now(), fx, api.specs_};
  }

  // A read: authenticated, run in one transaction.
  httplib::Server::Handler read(Read fn) {
    return [this, fn = std::move(fn)](const httplib::Request& req, httplib::Response& res) {
      const std::string rid = new_request_id();
      auto p = auth(req);
      if (!p.ok()) return fail(res, rid, p.status());
      Reply reply;
      const Status s = api.store_.read([&](store::Tx& tx) {
        CORRAL_ASSIGN_OR_RETURN(reply, fn(req, *p, tx));
        return Status();
      });
      if (!s.ok()) return fail(res, rid, s);
      send(res, rid, reply.status, reply.body);
    };
  }

  // A change: authenticated, one transaction with its audit entry and idempotency row.
  httplib::Server::Handler write(Write fn, Precheck precheck = nullptr) {
    return [this, fn = std::move(fn), precheck = std::move(precheck)](const httplib::Request& req,
                                                                      httplib::Response& res) {
      const std::string rid = new_request_id();
      auto p = auth(req);
      if (!p.ok()) return fail(res, rid, p.status());
      if (precheck) {
        if (const Status s = precheck(req, *p); !s.ok()) return fail(res, rid, s);
      }
      const std::string key = req.get_header_value("Idempotency-Key");
      if (const Status s = check_idempotency_key(key); !s.ok()) return fail(res, rid, s);
      const std::string request_hash = sha256_hex(req.method + " " + req.path + "\n" + req.body);
      Reply reply;
      bool replayed = false;
      const Status s = api.store_.transact([&](store::Tx& tx) {
        replayed = false;
        if (!key.empty()) {
          CORRAL_ASSIGN_OR_RETURN(auto seen, tx.get_idempotency(p->id, key));
          if (seen) {
            if (seen->request_hash != request_hash) {
              return core::invalid_argument("Idempotency-Key",
                                            "was already used for a different request");
            }
            reply = Reply{seen->status, seen->response_body, false, {}};
            replayed = true;
            return Status();
          }
        }
        CORRAL_ASSIGN_OR_RETURN(reply, fn(req, *p, tx, rid));
        if (!key.empty()) {
          const Status put = tx.put_idempotency({.scope = p->id,
                                                 .key = key,
                                                 .request_hash = request_hash,
                                                 .status = reply.status,
                                                 .response_body = reply.body,
                                                 .created_at = api.clock_.now()});
          // A concurrent first attempt with the same key committed meanwhile: run again
          // from the start (transact retries Aborted), which finds its answer.
          if (put.code() == StatusCode::kAlreadyExists) return core::raced("idempotency key raced");
          CORRAL_RETURN_IF_ERROR(put);
        }
        return Status();
      });
      if (!s.ok()) return fail(res, rid, s);
      if (replayed) {
        ++api.metrics_.idempotent_replays;
        res.set_header("Idempotent-Replayed", "true");
      }
      if (!replayed) apply_effects(reply.effects, api.board_);
      if ((reply.wake_scheduler || reply.effects.wake_scheduler) && !replayed) {
        // A submission alone only adds one pending job: the loop reads just it. Anything
        // else may have changed what the loop keeps in memory: a full re-read.
        if (reply.submitted_job != 0 && !reply.effects.wake_scheduler) {
          api.loop_.job_submitted(core::JobId(reply.submitted_job));
        } else {
          api.loop_.wake();
        }
      }
      send(res, rid, reply.status, reply.body);
    };
  }

  Status audit(store::Tx& tx, const Principal& p, const std::string& rid, std::string action,
               std::string target, std::string before, std::string after) {
    return append_audit(tx, {.actor = p.id + "(" + std::string(to_string(p.role)) +
                                      (p.tenant.empty() ? "" : ":") + p.tenant + ")",
                             .action = std::move(action),
                             .target = std::move(target),
                             .before = std::move(before),
                             .after = std::move(after),
                             .request_id = rid,
                             .time = api.clock_.now()});
  }

  // ---- jobs ---------------------------------------------------------------------------

  // A tenant already over its submit rate is answered 429 here, outside the store: a
  // flood of refused calls then never waits in (or slows) the group commit that other
  // tenants' submissions go through. The bucket is the one submit() fills; a tenant it
  // has not seen yet, or a YAML body, goes on to submit(), which checks again.
  Status submit_precheck(const httplib::Request& req, const Principal& p) {
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
    const int wait_s = api.admission_.over_limit(tenant, &limit);
    if (wait_s == 0) return Status();
    ++api.metrics_.admission_rejections;
    return core::resource_exhausted("tenant " + tenant + " is over its submit rate of " +
                                        std::to_string(limit.rate_per_second) + "/s",
                                    core::seconds(wait_s));
  }

  Result<Reply> submit(const httplib::Request& req, const Principal& p, store::Tx& tx,
                       const std::string& rid) {
    CORRAL_RETURN_IF_ERROR(require_role(p, {Role::kAdmin, Role::kMember}));
    const std::string type = req.get_header_value("Content-Type");
    core::SpecFormat format = core::SpecFormat::kJson;
    if (type.starts_with("application/yaml") || type.starts_with("application/x-yaml") ||
        type.starts_with("text/yaml")) {
      format = core::SpecFormat::kYaml;
    } else if (!type.empty() && !type.starts_with("application/json")) {
      return core::invalid_argument("Content-Type", "must be application/json or application/yaml");
    }
    const core::ParseOutcome parsed = core::parse_job_spec(req.body, format);
    if (!parsed.ok()) return core::invalid_fields(parsed.errors);
    const core::JobSpec& spec = *parsed.spec;
    if (p.role == Role::kMember && spec.tenant.value != p.tenant) {
      return forbidden("a member of tenant " + p.tenant + " may not submit to tenant " +
                       spec.tenant.value);
    }
    auto tenant = load_tenant(tx, spec.tenant.value);
    if (!tenant.ok()) {
      if (tenant.status().code() == StatusCode::kNotFound) {
        return core::invalid_argument("tenant", "unknown tenant \"" + spec.tenant.value + "\"");
      }
      return tenant.status();
    }
    if (const int wait_s = api.admission_.try_admit(spec.tenant.value, tenant->submit);
        wait_s > 0) {
      ++api.metrics_.admission_rejections;
      return core::resource_exhausted("tenant " + spec.tenant.value +
                                          " is over its submit rate of " +
                                          std::to_string(tenant->submit.rate_per_second) + "/s",
                                      core::seconds(wait_s));
    }
    CORRAL_ASSIGN_OR_RETURN(const std::int64_t pending, tx.count_pending_jobs(spec.tenant));
    if (pending >= tenant->max_pending_jobs) {
      ++api.metrics_.admission_rejections;
      return core::resource_exhausted("tenant " + spec.tenant.value + " has " +
                                          std::to_string(pending) +
                                          " pending jobs, the most it may have",
                                      core::seconds(10));
    }
    json secrets = json::object();
    for (const auto& [k, v] : spec.secret_env) secrets[k] = v;
    CORRAL_ASSIGN_OR_RETURN(auto row, tx.insert_job({.tenant = spec.tenant,
                                                     .name = spec.name,
                                                     .priority_class = spec.priority_class,
                                                     .tier = core::tier_of(spec.priority_class),
                                                     .gpus = spec.resources.gpus,
                                                     .spec_json = core::job_spec_to_json(spec),
                                                     .secret_env_json = secrets.dump(),
                                                     .now = api.clock_.now()}));
    CORRAL_RETURN_IF_ERROR(tx.append_job_event(
        {.job = row.id, .time = row.created_at, .kind = "submitted", .message = "by " + p.id}));
    CORRAL_RETURN_IF_ERROR(
        audit(tx, p, rid, "job.submit", "job/" + std::to_string(row.id.value), "", summary(row)));
    ++api.metrics_.jobs_submitted;
    Reply reply = ok_json(job_json(row, api.loop_.queue_positions().get()), 201);
    reply.wake_scheduler = true;
    reply.submitted_job = row.id.value;
    return reply;
  }

  Result<Reply> get_job(const httplib::Request& req, const Principal& p, store::Tx& tx) {
    CORRAL_ASSIGN_OR_RETURN(auto job, visible_job(tx, p, req.matches[1]));
    json out = job_json(job, api.loop_.queue_positions().get());
    CORRAL_ASSIGN_OR_RETURN(auto allocs, tx.list_allocations(job.id));
    std::map<std::int32_t, std::vector<store::AllocationRow>> by_attempt;
    for (auto& a : allocs) by_attempt[a.attempt].push_back(std::move(a));
    json attempts = json::array();
    out["allocation"] = nullptr;
    for (const auto& [attempt, rows] : by_attempt) {
      json a = allocation_json(rows);
      attempts.push_back(a);
      if (rows.front().active) out["allocation"] = a;
    }
    out["attempts"] = attempts;
    CORRAL_ASSIGN_OR_RETURN(auto ckpt, tx.latest_checkpoint(job.id));
    out["lastCheckpoint"] =
        ckpt ? json{{"attempt", ckpt->attempt},   {"step", ckpt->step},
                    {"uri", ckpt->uri},           {"bytes", ckpt->bytes},
                    {"checksum", ckpt->checksum}, {"timeMs", core::to_ms(ckpt->time)}}
             : json(nullptr);
    return ok_json(out);
  }

  Result<Reply> list_jobs(const httplib::Request& req, const Principal& p, store::Tx& tx) {
    CORRAL_RETURN_IF_ERROR(require_role(p, {Role::kAdmin, Role::kMember}));
    store::JobFilter filter;
    if (req.has_param("tenant")) {
      const std::string t = req.get_param_value("tenant");
      if (!valid_name(t)) return core::invalid_argument("tenant", "must be a tenant name");
      if (!can_see_tenant(p, t)) return forbidden("may not list tenant " + t);
      filter.tenant = core::TenantId(t);
    } else if (p.role == Role::kMember) {
      filter.tenant = core::TenantId(p.tenant);
    }
    if (req.has_param("phase")) {
      const auto phase = core::job_phase_from_string(req.get_param_value("phase"));
      if (!phase) return core::invalid_argument("phase", "unknown phase");
      filter.phases.push_back(*phase);
    }
    if (req.has_param("after")) {
      const auto after = parse_decimal(req.get_param_value("after"));
      if (!after) return core::invalid_argument("after", "must be a job id");
      filter.after_id = *after;
    }
    CORRAL_ASSIGN_OR_RETURN(const PageRequest page, page_params(req));
    if (page.cursor) {
      CORRAL_ASSIGN_OR_RETURN(filter.after_id, id_cursor(page));
    }
    const std::string gpu_type = req.has_param("gpuType") ? req.get_param_value("gpuType") : "";
    if (req.has_param("gpuType") && !core::find_builtin_gpu_type(gpu_type)) {
      return core::invalid_argument("gpuType", "unknown gpu type");
    }
    // The store filters by tenant and phase; the GPU type is read from the spec here, so
    // the store is read on until the page is full: a filter never shortens a page.
    const auto positions = api.loop_.queue_positions();
    std::vector<json> items;
    std::vector<std::int64_t> ids;
    filter.limit = page.limit + 1;
    for (;;) {
      CORRAL_ASSIGN_OR_RETURN(auto jobs, tx.list_jobs(filter));
      for (const auto& j : jobs) {
        json view = job_json(j, positions.get());
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
    return ok_json(page_answer("jobs", std::move(items), page,
                               [&](std::size_t i) { return std::to_string(ids[i]); }));
  }

  Result<Reply> job_events(const httplib::Request& req, const Principal& p, store::Tx& tx) {
    CORRAL_ASSIGN_OR_RETURN(auto job, visible_job(tx, p, req.matches[1]));
    CORRAL_ASSIGN_OR_RETURN(const PageRequest page, page_params(req));
    CORRAL_ASSIGN_OR_RETURN(const std::int64_t after, id_cursor(page));
    CORRAL_ASSIGN_OR_RETURN(auto events, tx.list_job_events(job.id));
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
    return ok_json(out);
  }

  Result<Reply> cancel(const httplib::Request& req, const Principal& p, store::Tx& tx,
                       const std::string& rid) {
    CORRAL_RETURN_IF_ERROR(require_role(p, {Role::kAdmin, Role::kMember}));
    std::string note = "cancelled by " + p.id;
    if (!req.body.empty()) {
      CORRAL_ASSIGN_OR_RETURN(const json body, core::parse_json_object(req.body));
      for (const auto& [k, v] : body.items()) {
        if (k != "reason") return core::invalid_argument(k, "unknown field");
        if (!v.is_string() || v.get<std::string>().size() > 1024 ||
            core::has_control_chars(v.get<std::string>())) {
          return core::invalid_argument(
              "reason", "must be a string of at most 1024 bytes, without control characters");
        }
        note += ": " + v.get<std::string>();
      }
    }
    CORRAL_ASSIGN_OR_RETURN(auto job, visible_job(tx, p, req.matches[1]));
    auto next_phase = core::next_phase(job.phase, core::JobEvent::kCancel);
    if (!next_phase.ok()) {
      return core::failed_precondition("job " + std::to_string(job.id.value) + " is " +
                                       std::string(core::to_string(job.phase)) +
                                       "; only a job that has not ended can be cancelled");
    }
    store::JobRow next = job;
    next.phase = *next_phase;
    next.reason = note;
    next.pending_kind.clear();
    next.queue_position = 0;
    next.updated_at = api.clock_.now();
    CORRAL_ASSIGN_OR_RETURN(const bool won, tx.update_job(next, job.phase));
    if (!won) return core::raced("job changed while cancelling");
    CORRAL_RETURN_IF_ERROR(tx.append_job_event(
        {.job = job.id, .time = next.updated_at, .kind = "cancelled", .message = note}));
    Effects fx;
    CORRAL_ASSIGN_OR_RETURN(auto allocs, tx.list_allocations(job.id));
    std::erase_if(allocs, [](const store::AllocationRow& a) { return !a.active; });
    CORRAL_ASSIGN_OR_RETURN(const bool managed, is_managed(tx, allocs));
    if (managed) {
      // Agents run it: its GPUs stay allocated until they confirm every rank is gone
      // (lifecycle.h); the agents see `desired: stop` now.
      for (const auto& a : allocs) fx.stops.insert({job.id.value, a.node.value});
      CORRAL_RETURN_IF_ERROR(reconcile_job(tx, lifecycle(fx), job.id));
    } else {
      // No agent ever ran it (agent-less nodes): nothing to wait for.
      CORRAL_RETURN_IF_ERROR(tx.release_allocations(job.id, next.updated_at).status());
      for (const auto& a : allocs) fx.bump.insert(a.node.value);
      fx.released.insert(job.id.value);
    }
    CORRAL_RETURN_IF_ERROR(audit(tx, p, rid, "job.cancel", "job/" + std::to_string(job.id.value),
                                 summary(job), summary(next)));
    ++api.metrics_.jobs_cancelled;
    Reply reply = ok_json(job_json(next, nullptr));
    reply.wake_scheduler = true;
    reply.effects = fx;
    return reply;
  }

  Result<Reply> queue(const httplib::Request& req, const Principal& p, store::Tx& tx) {
    CORRAL_RETURN_IF_ERROR(require_role(p, {Role::kAdmin, Role::kMember}));
    CORRAL_ASSIGN_OR_RETURN(const PageRequest page, page_params(req));
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
    CORRAL_ASSIGN_OR_RETURN(auto jobs, tx.list_jobs(filter));
    // One order for every reader: the scheduler's last cycle's (sched_loop.h) when this
    // corrald schedules, else the stored one. Jobs the scheduler has not seen yet
    // (position 0) go last, in submission order.
    const auto positions = api.loop_.queue_positions();
    const auto position = [&](const store::JobRow& j) {
      return positions ? SchedLoop::queue_position(positions.get(), j.id) : j.queue_position;
    };
    const auto sort_key = [](std::int32_t pos) -> std::int64_t {
      return pos == 0 ? INT32_MAX : pos;
    };
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
                       {"reason", j.reason.empty() ? "waiting for the scheduler" : j.reason}});
    }
    return ok_json(page_answer("queue", std::move(items), page, [&](std::size_t i) {
      return std::to_string(keys[i].first) + "." + std::to_string(keys[i].second);
    }));
  }

  // ---- nodes ----------------------------------------------------------------------------

  Result<json> node_view(store::Tx& tx, const store::NodeRow& row,
                         const std::vector<store::AllocationRow>& active) {
    json out = parse_or_null(row.spec_json);
    CORRAL_ASSIGN_OR_RETURN(auto inv, tx.get_inventory(row.id));
    if (inv) {
      const json observed = parse_or_null(inv->inventory_json);
      if (observed.is_object() && observed.contains("gpus")) out["gpus"] = observed["gpus"];
      out["heartbeatAtMs"] = core::to_ms(inv->heartbeat_at);
      if (observed.is_object() && observed.contains("observed")) {
        out["observed"] = observed["observed"];
      }
    }
    out["admin"] = std::string(core::to_string(row.admin));
    out["adminReason"] = row.admin_reason;
    CORRAL_ASSIGN_OR_RETURN(auto session, tx.get_agent_session(row.id));
    // The log key never leaves corrald.
    out["agent"] =
        session ? json{{"url", session->agent_url},
                       {"epoch", session->epoch},
                       {"lost", session->lost},
                       {"joinedAtMs", core::to_ms(session->joined_at)},
                       {"heartbeatAtMs", core::to_ms(session->heartbeat_at)},
                       {"heartbeatAgeMs", core::to_ms(api.clock_.now() - session->heartbeat_at)}}
                : json(nullptr);
    json allocated = json::array();
    for (const auto& a : active) {
      if (a.node == row.id) {
        allocated.push_back({{"index", a.gpu_index}, {"job", a.job.value}});
      }
    }
    out["allocated"] = allocated;
    return out;
  }

  Result<Reply> list_nodes(const httplib::Request& req, const Principal&, store::Tx& tx) {
    CORRAL_ASSIGN_OR_RETURN(const PageRequest page, page_params(req));
    CORRAL_ASSIGN_OR_RETURN(const std::string after, name_cursor(page));
    CORRAL_ASSIGN_OR_RETURN(auto rows, tx.list_nodes());
    CORRAL_ASSIGN_OR_RETURN(auto active, tx.list_active_allocations());
    std::sort(rows.begin(), rows.end(),
              [](const auto& a, const auto& b) { return a.id.value < b.id.value; });
    std::vector<json> items;
    std::vector<std::string> keys;
    for (const auto& r : rows) {
      if (r.id.value <= after) continue;
      if (items.size() > static_cast<std::size_t>(page.limit)) break;
      CORRAL_ASSIGN_OR_RETURN(auto v, node_view(tx, r, active));
      items.push_back(std::move(v));
      keys.push_back(r.id.value);
    }
    return ok_json(
        page_answer("nodes", std::move(items), page, [&](std::size_t i) { return keys[i]; }));
  }

  Result<Reply> get_node(const httplib::Request& req, const Principal&, store::Tx& tx) {
    const std::string id = req.matches[1];
    if (!valid_name(id)) return core::not_found("node not found");
    CORRAL_ASSIGN_OR_RETURN(auto row, tx.get_node(core::NodeId(id)));
    if (!row) return core::not_found("node " + id + " not found");
    CORRAL_ASSIGN_OR_RETURN(auto active, tx.list_active_allocations());
    CORRAL_ASSIGN_OR_RETURN(auto v, node_view(tx, *row, active));
    return ok_json(v);
  }

  Result<Reply> register_node(const httplib::Request& req, const Principal& p, store::Tx& tx,
                              const std::string& rid) {
    CORRAL_RETURN_IF_ERROR(require_role(p, {Role::kAdmin, Role::kAgent}));
    CORRAL_ASSIGN_OR_RETURN(const core::Node node, node_from_json(req.body));
    if (p.role == Role::kAgent && p.node != node.id.value) {
      return forbidden("an agent of node " + p.node + " may not report for node " + node.id.value);
    }
    const core::Time now = api.clock_.now();
    CORRAL_ASSIGN_OR_RETURN(auto existing, tx.get_node(node.id));
    // The registration's labels are desired state; its GPUs and health are observed.
    // Re-registering keeps the admin state an operator set.
    const std::string spec = node_to_json(node);
    CORRAL_RETURN_IF_ERROR(
        tx.upsert_node({.id = node.id,
                        .spec_json = spec,
                        .admin = existing ? existing->admin : core::NodeAdminState::kActive,
                        .created_at = existing ? existing->created_at : now,
                        .updated_at = now}));
    CORRAL_RETURN_IF_ERROR(
        tx.upsert_inventory({.node = node.id, .inventory_json = spec, .heartbeat_at = now}));
    CORRAL_RETURN_IF_ERROR(audit(tx, p, rid, existing ? "node.update" : "node.register",
                                 "node/" + node.id.value, existing ? "registered" : "",
                                 std::to_string(node.gpus.size()) + " gpus"));
    CORRAL_ASSIGN_OR_RETURN(auto row, tx.get_node(node.id));
    CORRAL_ASSIGN_OR_RETURN(auto active, tx.list_active_allocations());
    CORRAL_ASSIGN_OR_RETURN(auto v, node_view(tx, *row, active));
    Reply reply = ok_json(v, existing ? 200 : 201);
    reply.wake_scheduler = true;
    return reply;
  }

  Result<Reply> set_admin(const httplib::Request& req, const Principal& p, store::Tx& tx,
                          const std::string& rid) {
    CORRAL_RETURN_IF_ERROR(require_role(p, {Role::kAdmin}));
    const std::string id = req.matches[1];
    const std::string verb = req.matches[2];
    if (!valid_name(id)) return core::not_found("node not found");
    CORRAL_ASSIGN_OR_RETURN(auto row, tx.get_node(core::NodeId(id)));
    if (!row) return core::not_found("node " + id + " not found");
    const core::NodeAdminState before = row->admin;
    if (verb == "undrain") {
      // A node the health controller drained comes back only once its GPUs report healthy.
      CORRAL_ASSIGN_OR_RETURN(auto inv, tx.get_inventory(row->id));
      const json observed = inv ? parse_or_null(inv->inventory_json) : json();
      if (observed.is_object() && observed.contains("observed") &&
          observed["observed"].contains("gpus")) {
        for (const auto& g : observed["observed"]["gpus"]) {
          if (g.value("health", "ok") == "unhealthy") {
            return core::failed_precondition(
                "node " + id + " gpu " + std::to_string(g.value("index", -1)) + " still reports " +
                g.value("problem", "a fault") + "; undrain once it reports healthy");
          }
        }
      }
    }
    row->admin = verb == "cordon"  ? core::NodeAdminState::kCordoned
                 : verb == "drain" ? core::NodeAdminState::kDraining
                                   : core::NodeAdminState::kActive;
    row->admin_reason = verb == "undrain" ? "" : verb + " by " + p.id;
    row->updated_at = api.clock_.now();
    CORRAL_RETURN_IF_ERROR(tx.upsert_node(*row));
    Effects fx;
    if (verb == "drain") {
      // Draining asks running work to checkpoint and leave (preempt -> requeue).
      CORRAL_RETURN_IF_ERROR(drain_jobs_on(tx, lifecycle(fx), row->id, row->admin_reason));
    }
    CORRAL_RETURN_IF_ERROR(audit(tx, p, rid, "node." + verb, "node/" + id,
                                 std::string(core::to_string(before)),
                                 std::string(core::to_string(row->admin))));
    CORRAL_ASSIGN_OR_RETURN(auto active, tx.list_active_allocations());
    CORRAL_ASSIGN_OR_RETURN(auto v, node_view(tx, *row, active));
    Reply reply = ok_json(v);
    reply.wake_scheduler = true;
    reply.effects = fx;
    return reply;
  }

  // ---- tenants, reservations, allocations -------------------------------------------------

  Result<Reply> list_tenants(const httplib::Request& req, const Principal& p, store::Tx& tx) {
    CORRAL_RETURN_IF_ERROR(require_role(p, {Role::kAdmin, Role::kMember}));
    CORRAL_ASSIGN_OR_RETURN(const PageRequest page, page_params(req));
    CORRAL_ASSIGN_OR_RETURN(const std::string after, name_cursor(page));
    CORRAL_ASSIGN_OR_RETURN(auto rows, tx.list_tenants());
    std::sort(rows.begin(), rows.end(),
              [](const auto& a, const auto& b) { return a.id.value < b.id.value; });
    std::vector<json> items;
    std::vector<std::string> keys;
    for (const auto& r : rows) {
      if (r.id.value <= after || !can_see_tenant(p, r.id.value)) continue;
      if (items.size() > static_cast<std::size_t>(page.limit)) break;
      items.push_back(parse_or_null(r.config_json));
      keys.push_back(r.id.value);
    }
    return ok_json(
        page_answer("tenants", std::move(items), page, [&](std::size_t i) { return keys[i]; }));
  }

  Result<Reply> get_tenant(const httplib::Request& req, const Principal& p, store::Tx& tx) {
    const std::string name = req.matches[1];
    if (!valid_name(name) || !can_see_tenant(p, name)) return core::not_found("tenant not found");
    CORRAL_ASSIGN_OR_RETURN(auto cfg, load_tenant(tx, name));
    json out = json::parse(tenant_config_to_json(cfg));
    CORRAL_ASSIGN_OR_RETURN(auto pending, tx.count_pending_jobs(cfg.tenant.id));
    out["pendingJobs"] = pending;
    return ok_json(out);
  }

  Result<Reply> put_tenant(const httplib::Request& req, const Principal& p, store::Tx& tx,
                           const std::string& rid) {
    CORRAL_RETURN_IF_ERROR(require_role(p, {Role::kAdmin}));
    const std::string name = req.matches[1];
    CORRAL_ASSIGN_OR_RETURN(auto cfg, tenant_config_from_json(name, req.body));
    CORRAL_ASSIGN_OR_RETURN(auto before, tx.get_tenant(cfg.tenant.id));
    const std::string text = tenant_config_to_json(cfg);
    CORRAL_RETURN_IF_ERROR(
        tx.put_tenant({.id = cfg.tenant.id, .config_json = text, .updated_at = api.clock_.now()}));
    CORRAL_RETURN_IF_ERROR(
        audit(tx, p, rid, "tenant.put", "tenant/" + name, before ? before->config_json : "", text));
    Reply reply = ok_json(json::parse(text), before ? 200 : 201);
    reply.wake_scheduler = true;
    return reply;
  }

  Result<Reply> list_reservations(const httplib::Request& req, const Principal& p, store::Tx& tx) {
    CORRAL_RETURN_IF_ERROR(require_role(p, {Role::kAdmin, Role::kMember}));
    CORRAL_ASSIGN_OR_RETURN(const PageRequest page, page_params(req));
    CORRAL_ASSIGN_OR_RETURN(const std::string after, name_cursor(page));
    CORRAL_ASSIGN_OR_RETURN(auto rows, tx.list_reservations());
    std::sort(rows.begin(), rows.end(),
              [](const auto& a, const auto& b) { return a.id.value < b.id.value; });
    std::vector<json> items;
    std::vector<std::string> keys;
    for (const auto& r : rows) {
      if (r.id.value <= after || !can_see_tenant(p, r.tenant.value)) continue;
      if (items.size() > static_cast<std::size_t>(page.limit)) break;
      items.push_back(parse_or_null(r.spec_json));
      keys.push_back(r.id.value);
    }
    return ok_json(page_answer("reservations", std::move(items), page,
                               [&](std::size_t i) { return keys[i]; }));
  }

  // A reservation the fleet could never honour is refused, not stored: the scheduler
  // would hand it every GPU of the type and still fall short. Counted over the nodes
  // registered now, as registered (every GPU, healthy or not).
  Status check_reservation_fits(store::Tx& tx, const core::Reservation& r) {
    for (std::size_t i = 0; i < r.nodes.size(); ++i) {
      CORRAL_ASSIGN_OR_RETURN(auto row, tx.get_node(r.nodes[i]));
      if (!row) {
        return core::invalid_argument("nodes[" + std::to_string(i) + "]",
                                      "unknown node \"" + r.nodes[i].value + "\"");
      }
    }
    if (!r.gpu_type) return Status();
    CORRAL_ASSIGN_OR_RETURN(auto rows, tx.list_nodes());
    std::int64_t gpus = 0;
    for (const auto& row : rows) {
      auto node = node_from_json(row.spec_json);
      if (!node.ok()) continue;  // stored by this server; a row it cannot read holds none
      for (const auto& g : node->gpus) gpus += g.type == *r.gpu_type ? 1 : 0;
    }
    if (r.count > gpus) {
      return core::invalid_argument("count", "asks for " + std::to_string(r.count) + " " +
                                                 r.gpu_type->value + " but the fleet has " +
                                                 std::to_string(gpus));
    }
    return Status();
  }

  Result<Reply> create_reservation(const httplib::Request& req, const Principal& p, store::Tx& tx,
                                   const std::string& rid) {
    CORRAL_RETURN_IF_ERROR(require_role(p, {Role::kAdmin}));
    CORRAL_ASSIGN_OR_RETURN(const core::Reservation r, reservation_from_json(req.body));
    CORRAL_ASSIGN_OR_RETURN(auto tenant, tx.get_tenant(r.tenant));
    if (!tenant)
      return core::invalid_argument("tenant", "unknown tenant \"" + r.tenant.value + "\"");
    CORRAL_RETURN_IF_ERROR(check_reservation_fits(tx, r));
    const std::string text = reservation_to_json(r);
    const Status inserted = tx.insert_reservation(
        {.id = r.id, .tenant = r.tenant, .spec_json = text, .created_at = api.clock_.now()});
    if (inserted.code() == StatusCode::kAlreadyExists) {
      return Status(StatusCode::kAlreadyExists, "reservation " + r.id.value + " exists");
    }
    CORRAL_RETURN_IF_ERROR(inserted);
    CORRAL_RETURN_IF_ERROR(
        audit(tx, p, rid, "reservation.create", "reservation/" + r.id.value, "", text));
    Reply reply = ok_json(json::parse(text), 201);
    reply.wake_scheduler = true;
    return reply;
  }

  Result<Reply> list_allocations(const httplib::Request& req, const Principal& p, store::Tx& tx) {
    CORRAL_ASSIGN_OR_RETURN(const PageRequest page, page_params(req));
    CORRAL_ASSIGN_OR_RETURN(const std::int64_t after, id_cursor(page));
    CORRAL_ASSIGN_OR_RETURN(auto rows, tx.list_active_allocations());
    std::map<std::int64_t, std::vector<store::AllocationRow>> by_job;
    for (auto& a : rows) {
      if (p.role == Role::kAgent && a.node.value != p.node) continue;
      by_job[a.job.value].push_back(std::move(a));
    }
    std::vector<json> items;
    std::vector<std::int64_t> keys;
    for (auto& [job_id, allocs] : by_job) {
      if (job_id <= after) continue;
      if (p.role == Role::kMember) {
        CORRAL_ASSIGN_OR_RETURN(auto job, tx.get_job(core::JobId(job_id)));
        if (!job || job->tenant.value != p.tenant) continue;
      }
      if (items.size() > static_cast<std::size_t>(page.limit)) break;
      items.push_back(allocation_json(allocs));
      keys.push_back(job_id);
    }
    return ok_json(page_answer("allocations", std::move(items), page,
                               [&](std::size_t i) { return std::to_string(keys[i]); }));
  }

  // ---- admin: tokens and audit -------------------------------------------------------------

  Result<Reply> create_token(const httplib::Request& req, const Principal& p, store::Tx& tx,
                             const std::string& rid) {
    CORRAL_RETURN_IF_ERROR(require_role(p, {Role::kAdmin}));
    CORRAL_ASSIGN_OR_RETURN(const json body, core::parse_json_object(req.body));
    std::string role, tenant, node;
    for (const auto& [k, v] : body.items()) {
      if (k != "role" && k != "tenant" && k != "node")
        return core::invalid_argument(k, "unknown field");
      if (!v.is_string()) return core::invalid_argument(k, "must be a string");
      (k == "role" ? role : k == "tenant" ? tenant : node) = v.get<std::string>();
    }
    const auto parsed = parse_role(role);
    if (!parsed.ok() || *parsed == Role::kJoin) {  // join tokens come only from DATA_DIR
      return core::invalid_argument("role", "must be admin, member or agent");
    }
    if (*parsed == Role::kMember) {
      if (!valid_name(tenant)) return core::invalid_argument("tenant", "a member needs a tenant");
      CORRAL_ASSIGN_OR_RETURN(auto t, tx.get_tenant(core::TenantId(tenant)));
      if (!t) return core::invalid_argument("tenant", "unknown tenant \"" + tenant + "\"");
    } else if (!tenant.empty()) {
      return core::invalid_argument("tenant", "only a member token has a tenant");
    }
    if (*parsed == Role::kAgent) {
      if (!valid_name(node)) return core::invalid_argument("node", "an agent needs a node name");
    } else if (!node.empty()) {
      return core::invalid_argument("node", "only an agent token has a node");
    }
    const std::string token = new_token();
    const std::string hash = sha256_hex(token);
    CORRAL_RETURN_IF_ERROR(tx.insert_token({.hash = hash,
                                            .role = role,
                                            .tenant = tenant,
                                            .node = node,
                                            .created_at = api.clock_.now()}));
    CORRAL_RETURN_IF_ERROR(audit(tx, p, rid, "token.create", "token:" + hash.substr(0, 12), "",
                                 "role=" + role + " tenant=" + tenant + " node=" + node));
    // The token is shown once; the idempotency row keeps this answer so a retry of the
    // same request gets the same token rather than minting a second one.
    return ok_json({{"token", token},
                    {"id", "token:" + hash.substr(0, 12)},
                    {"role", role},
                    {"tenant", tenant},
                    {"node", node}},
                   201);
  }

  Result<Reply> list_audit(const httplib::Request& req, const Principal& p, store::Tx& tx) {
    CORRAL_RETURN_IF_ERROR(require_role(p, {Role::kAdmin}));
    std::int64_t after = 0;
    if (req.has_param("after")) {
      const auto a = parse_decimal(req.get_param_value("after"));
      if (!a) return core::invalid_argument("after", "must be a sequence number");
      after = *a;
    }
    CORRAL_ASSIGN_OR_RETURN(const PageRequest page, page_params(req));
    if (page.cursor) {
      CORRAL_ASSIGN_OR_RETURN(after, id_cursor(page));
    }
    CORRAL_ASSIGN_OR_RETURN(auto rows, tx.list_audit(after, page.limit + 1));
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
    return ok_json(page_answer("entries", std::move(items), page,
                               [&](std::size_t i) { return std::to_string(rows[i].seq); }));
  }

  void install(httplib::Server& http) {
    using R = const httplib::Request&;
    using P = const Principal&;
    using T = store::Tx&;
    using I = const std::string&;
    http.Post("/v1/jobs", write([this](R q, P p, T t, I i) { return submit(q, p, t, i); },
                                [this](R q, P p) { return submit_precheck(q, p); }));
    http.Get("/v1/jobs", read([this](R q, P p, T t) { return list_jobs(q, p, t); }));
    http.Get(R"(/v1/jobs/([^/]+))", read([this](R q, P p, T t) { return get_job(q, p, t); }));
    http.Get(R"(/v1/jobs/([^/]+)/events)",
             read([this](R q, P p, T t) { return job_events(q, p, t); }));
    http.Post(R"(/v1/jobs/([^/]+)/cancel)",
              write([this](R q, P p, T t, I i) { return cancel(q, p, t, i); }));
    http.Get("/v1/queue", read([this](R q, P p, T t) { return queue(q, p, t); }));
    http.Get("/v1/nodes", read([this](R q, P p, T t) { return list_nodes(q, p, t); }));
    http.Post("/v1/nodes", write([this](R q, P p, T t, I i) { return register_node(q, p, t, i); }));
    http.Get(R"(/v1/nodes/([^/]+))", read([this](R q, P p, T t) { return get_node(q, p, t); }));
    http.Post(R"(/v1/nodes/([^/]+)/(cordon|drain|undrain))",
              write([this](R q, P p, T t, I i) { return set_admin(q, p, t, i); }));
    http.Get("/v1/tenants", read([this](R q, P p, T t) { return list_tenants(q, p, t); }));
    http.Get(R"(/v1/tenants/([^/]+))", read([this](R q, P p, T t) { return get_tenant(q, p, t); }));
    http.Put(R"(/v1/tenants/([^/]+))",
             write([this](R q, P p, T t, I i) { return put_tenant(q, p, t, i); }));
    http.Get("/v1/reservations",
             read([this](R q, P p, T t) { return list_reservations(q, p, t); }));
    http.Post("/v1/reservations",
              write([this](R q, P p, T t, I i) { return create_reservation(q, p, t, i); }));
    http.Get("/v1/allocations", read([this](R q, P p, T t) { return list_allocations(q, p, t); }));
    http.Post("/v1/tokens", write([this](R q, P p, T t, I i) { return create_token(q, p, t, i); }));
    http.Get("/v1/audit", read([this](R q, P p, T t) { return list_audit(q, p, t); }));
    http.Get("/v1/audit/verify", [this](const httplib::Request& req, httplib::Response& res) {
      const std::string rid = new_request_id();
      auto p = auth(req);
      if (!p.ok()) return fail(res, rid, p.status());
      if (auto s = require_role(*p, {Role::kAdmin}); !s.ok()) return fail(res, rid, s);
      auto verdict = verify_audit(api.store_);
      if (!verdict.ok()) return fail(res, rid, verdict.status());
      send(res, rid, 200,
           json_text({{"ok", verdict->ok},
                      {"entries", verdict->entries},
                      {"firstBadSeq", verdict->first_bad_seq},
                      {"problem", verdict->problem}}));
    });
    // Captured scheduling cycles (cycle_recorder.h), admins only: the input of a cycle
    // holds every tenant's queue. POST captures the next cycle and answers once it is
    // written (or 503 after 10 s); GET lists them or returns one, for corral-sim replay.
    http.Post("/v1/scheduler/captures",
              [this](const httplib::Request& req, httplib::Response& res) {
                const std::string rid = new_request_id();
                auto p = auth(req);
                if (!p.ok()) return fail(res, rid, p.status());
                if (auto s = require_role(*p, {Role::kAdmin}); !s.ok()) return fail(res, rid, s);
                api.loop_.capacity_changed();  // a cycle soon, whatever else happens
                auto file = api.loop_.recorder().capture_next(std::chrono::seconds(10));
                if (!file.ok()) return fail(res, rid, file.status());
                const Status audited = api.store_.transact([&](store::Tx& tx) {
                  return audit(tx, *p, rid, "scheduler.capture", "capture/" + file->name, "",
                               "bytes=" + std::to_string(file->bytes));
                });
                if (!audited.ok()) return fail(res, rid, audited);
                send(res, rid, 201, json_text({{"file", file->name}, {"bytes", file->bytes}}));
              });
    http.Get("/v1/scheduler/captures", [this](const httplib::Request& req, httplib::Response& res) {
      const std::string rid = new_request_id();
      auto p = auth(req);
      if (!p.ok()) return fail(res, rid, p.status());
      if (auto s = require_role(*p, {Role::kAdmin}); !s.ok()) return fail(res, rid, s);
      auto page = page_params(req);
      if (!page.ok()) return fail(res, rid, page.status());
      auto after = name_cursor(*page);
      if (!after.ok()) return fail(res, rid, after.status());
      std::vector<json> items;
      std::vector<std::string> keys;
      for (const auto& f : api.loop_.recorder().list()) {  // sorted by name
        if (f.name <= *after) continue;
        if (items.size() > static_cast<std::size_t>(page->limit)) break;
        items.push_back({{"file", f.name}, {"bytes", f.bytes}});
        keys.push_back(f.name);
      }
      send(res, rid, 200,
           json_text(page_answer("captures", std::move(items), *page,
                                 [&](std::size_t i) { return keys[i]; })));
    });
    http.Get(R"(/v1/scheduler/captures/([^/]+))",
             [this](const httplib::Request& req, httplib::Response& res) {
               const std::string rid = new_request_id();
               auto p = auth(req);
               if (!p.ok()) return fail(res, rid, p.status());
               if (auto s = require_role(*p, {Role::kAdmin}); !s.ok()) return fail(res, rid, s);
               auto text = api.loop_.recorder().read(req.matches[1]);
               if (!text.ok()) return fail(res, rid, text.status());
               send(res, rid, 200, *text);
             });
    http.Get("/healthz", [this](const httplib::Request&, httplib::Response& res) {
      send(res, new_request_id(), 200, R"({"status":"ok"})");
    });
    http.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
      res.set_content(api.metrics_.render(), "text/plain; version=0.0.4");
    });
    // Routes nobody matched, bodies over the limit and other httplib-level refusals
    // still answer in the API's error format.
    http.set_error_handler(httplib::Server::HandlerWithResponse(
        [this](const httplib::Request&, httplib::Response& res) {
          // Our handlers' errors already carry their JSON body; keep it.
          if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
          const std::string rid = new_request_id();
          Status s(StatusCode::kNotFound, "no such endpoint");
          if (res.status == 413) s = core::invalid_argument("", "request body larger than 1 MiB");
          if (res.status == 400) s = core::invalid_argument("", "malformed request");
          if (res.status == 405) s = core::invalid_argument("", "method not allowed");
          const int status = res.status == 404 || res.status == 0 ? 404 : res.status;
          res.status = status;
          res.set_header("X-Request-Id", rid);
          res.set_content(error_json(s), "application/json");
          return httplib::Server::HandlerResponse::Handled;
        }));
    http.set_exception_handler(
        [this](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
          fail(res, new_request_id(), core::internal_error("unexpected error"));
        });
    http.set_payload_max_length(kMaxBodyBytes);
  }
};

Api::Api(store::Store& store, const core::Clock& clock, SchedLoop& loop, Metrics& metrics,
         AssignmentBoard& board, SpecCache& specs, AgentSettings agent_settings, TokenAuth& auth)
    : store_(store),
      clock_(clock),
      loop_(loop),
      metrics_(metrics),
      board_(board),
      specs_(specs),
      agent_settings_(agent_settings),
      admission_(clock),
      auth_(auth) {}

Api::~Api() = default;

void Api::install(httplib::Server& http) {
  routes_ = std::make_unique<ApiRoutes>(*this);
  routes_->install(http);
}

}  // namespace corral::server
