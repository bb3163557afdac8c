#include "server/agent_api.h"

#include <algorithm>
#include <functional>
#include <httplib.h>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include <nlohmann/json.hpp>

#include "core/agent_protocol.h"
#include "core/job_phase.h"
#include "server/assignments.h"
#include "server/audit.h"
#include "server/crypto.h"
#include "server/http_status.h"
#include "server/model_json.h"
#include "server/node_health.h"

namespace corral::server {
namespace {

using core::JobPhase;
using core::Result;
using core::Status;
using core::StatusCode;
using nlohmann::json;

constexpr std::int64_t kMaxWaitMs = 30000;

// Protocol refusals the agent acts on are core::fenced() and core::stale_attempt(): their
// reason gives the body its error code (`fenced`, `stale`; http_status.h).
Status forbidden(const std::string& m) { return Status(StatusCode::kPermissionDenied, m); }

// The node's agent session, with the caller's epoch checked against it.
Result<store::AgentSessionRow> current_session(store::Tx& tx, const std::string& node,
                                               std::int64_t epoch) {
  CORRAL_ASSIGN_OR_RETURN(auto session, tx.get_agent_session(core::NodeId(node)));
  if (!session) return core::fenced("node " + node + " has not joined; join again");
  if (session->lost || epoch != session->epoch) {
    return core::fenced("epoch " + std::to_string(epoch) + " of node " + node +
                        " is stale (current " + std::to_string(session->epoch) +
                        (session->lost ? ", node lost" : "") +
                        "); stop every worker and join again");
  }
  return *session;
}

}  // namespace

struct AgentApi::Handlers {
  AgentApi& a;

  void reply(httplib::Response& res, int status, const std::string& body,
             const char* type = "application/json") {
    res.status = status;
    res.set_content(body, type);
    const int cls = status / 100 - 2;
    if (cls >= 0 && cls < 4) ++a.metrics_.http_responses[static_cast<std::size_t>(cls)];
  }
  void fail(httplib::Response& res, const Status& s) {
    if (s.code() == StatusCode::kInternal) {
      std::fprintf(stderr, "corrald: agent api: %s\n", log_text(s.to_string()).c_str());
    }
    reply(res, http_status(s.code()), error_json(s));
  }

  // An agent token of `node` (the path's), else 401/403.
  Result<Principal> agent_of(const httplib::Request& req, const std::string& node) {
    CORRAL_ASSIGN_OR_RETURN(auto p, a.auth_.authenticate(req.get_header_value("Authorization")));
    if (p.role != Role::kAgent) return forbidden("only an agent token may call this");
    if (p.node != node) {
      return forbidden("an agent of node " + p.node + " may not act for node " + node);
    }
    return p;
  }

  // Runs a change and what it asks for once committed.
  Status change(const std::function<Status(store::Tx&, Effects&)>& fn) {
    Effects fx;
    const Status s = a.store_.transact([&](store::Tx& tx) {
      fx = Effects();
      return fn(tx, fx);
    });
    if (!s.ok()) return s;
    apply_effects(fx, a.board_);
    a.metrics_.jobs_succeeded += fx.succeeded;
    a.metrics_.jobs_failed += fx.failed;
    wake_loop(fx, a.loop_);
    return s;
  }

  // ---- join ---------------------------------------------------------------------------

  void join(const httplib::Request& req, httplib::Response& res) {
    auto p = a.auth_.authenticate(req.get_header_value("Authorization"));
    if (!p.ok()) return fail(res, p.status());
    if (p->role != Role::kJoin) return fail(res, forbidden("only the join token may join a node"));
    auto request = core::decode_join_request(req.body, node_from_json);
    if (!request.ok()) return fail(res, request.status());
    const core::Node& node = request->node;
    const std::string& url = request->agent_url;
    const std::int64_t rack_cap_w = request->rack_power_cap_w;
    const core::Time now = a.clock_.now();
    const std::string token = new_token();
    const std::string log_key = sha256_hex(new_token());
    std::int64_t epoch = 0;
    std::string cluster_id;
    const Status s = change([&](store::Tx& tx, Effects& fx) {
      // The agent keeps its run records under this id: see docs/agent-protocol.md §1.
      CORRAL_ASSIGN_OR_RETURN(cluster_id, tx.cluster_id());
      CORRAL_ASSIGN_OR_RETURN(auto existing, tx.get_node(node.id));
      // Registered exactly as POST /v1/nodes would; the admin state is kept.
      const std::string spec = node_to_json(node);
      CORRAL_RETURN_IF_ERROR(
          tx.upsert_node({.id = node.id,
                          .spec_json = spec,
                          .admin = existing ? existing->admin : core::NodeAdminState::kActive,
                          .admin_reason = existing ? existing->admin_reason : "",
                          .created_at = existing ? existing->created_at : now,
                          .updated_at = now}));
      // The rack's power cap as this node's agent declares it (0: it declares none); the
      // scheduler takes the admin config's cap, else the smallest declared.
      const std::string declared_by = "node/" + node.id.value;
      CORRAL_RETURN_IF_ERROR(tx.delete_rack_caps(declared_by));
      if (rack_cap_w > 0 && !node.labels.rack.empty()) {
        CORRAL_RETURN_IF_ERROR(tx.put_rack_cap({.rack = node.labels.rack,
                                                .declared_by = declared_by,
                                                .power_cap_watts = rack_cap_w,
                                                .updated_at = now}));
      }
      json observed = json::parse(spec);
      observed["observed"] = {
          {"inventory", json::parse(core::encode_observed_inventory(request->inventory))}};
      CORRAL_RETURN_IF_ERROR(tx.upsert_inventory(
          {.node = node.id, .inventory_json = observed.dump(), .heartbeat_at = now}));
      CORRAL_ASSIGN_OR_RETURN(auto session, tx.get_agent_session(node.id));
      // The epoch only moves when the node is lost, so an agent that restarts on a node
      // that was not lost meanwhile gets the same one back.
      store::AgentSessionRow row{.node = node.id,
                                 .epoch = session ? session->epoch : 1,
                                 .agent_url = url,
                                 .log_key = log_key,
                                 .joined_at = now,
                                 .heartbeat_at = now,
                                 .lost = false};
      epoch = row.epoch;
      CORRAL_RETURN_IF_ERROR(tx.upsert_agent_session(row));
      const std::string hash = sha256_hex(token);
      CORRAL_RETURN_IF_ERROR(tx.insert_token({.hash = hash,
                                              .role = std::string(to_string(Role::kAgent)),
                                              .node = node.id.value,
                                              .created_at = now}));
      CORRAL_RETURN_IF_ERROR(
          append_audit(tx, {.actor = p->id + "(join)",
                            .action = "agent.join",
                            .target = "node/" + node.id.value,
                            .before = session ? "epoch=" + std::to_string(session->epoch) +
                                                    (session->lost ? " lost" : "")
                                              : "",
                            .after = "epoch=" + std::to_string(epoch) + " url=" + url +
                                     " token:" + hash.substr(0, 12),
                            .time = now}));
      fx.bump.insert(node.id.value);
      fx.wake_scheduler = true;
      return Status();
    });
    if (!s.ok()) return fail(res, s);
    a.board_.forget_applied(node.id.value);
    reply(res, 200,
          core::encode_join_answer({.node = node.id.value,
                                    .token = token,
                                    .epoch = epoch,
                                    .log_key = log_key,
                                    .cluster_id = cluster_id}));
  }

  // ---- assignments (long poll) ----------------------------------------------------------

  Result<std::string> assignments_of(store::Tx& tx, const std::string& node, std::int64_t version) {
    const core::NodeId id(node);
    CORRAL_ASSIGN_OR_RETURN(auto session, tx.get_agent_session(id));
    CORRAL_ASSIGN_OR_RETURN(
        const auto input, read_node_assignment_input(tx, id, a.specs_, a.settings_.stop_grace_ms));
    return core::encode_assignments({.node = node,
                                     .epoch = session ? session->epoch : 0,
                                     .version = version,
                                     .workers = node_assignments(input)});
  }

  void assignments(const httplib::Request& req, httplib::Response& res) {
    const std::string node = req.matches[1];
    auto p = agent_of(req, node);
    if (!p.ok()) return fail(res, p.status());
    std::int64_t since = 0, wait_ms = 0;
    if (req.has_param("since")) {
      // -1 (an agent's first poll after joining) equals no version: answered at once.
      const std::string text = req.get_param_value("since");
      const auto v = text == "-1" ? std::optional<std::int64_t>(-1) : parse_decimal(text);
      if (!v) {
        return fail(res, core::invalid_argument("since", "must be a version number or -1"));
      }
      since = *v;
    }
    if (req.has_param("waitMs")) {
      const auto v = parse_decimal(req.get_param_value("waitMs"));
      if (!v) return fail(res, core::invalid_argument("waitMs", "must be milliseconds"));
      wait_ms = std::min(*v, kMaxWaitMs);
    }
    // The wait holds no transaction. The version is read BEFORE the state, so the answer
    // is at least as new as the version it carries.
    const std::int64_t version = a.board_.wait(node, since, std::chrono::milliseconds(wait_ms));
    std::string out;
    const Status s = a.store_.read([&](store::Tx& tx) {
      CORRAL_ASSIGN_OR_RETURN(out, assignments_of(tx, node, version));
      return Status();
    });
    if (!s.ok()) return fail(res, s);
    reply(res, 200, out);
  }

  // ---- heartbeat ----------------------------------------------------------------------

  Status record_workers(store::Tx& tx, const std::string& node,
                        const std::vector<core::WorkerStatus>& workers,
                        std::set<std::int64_t>& touched) {
    std::map<std::int64_t, std::vector<store::AllocationRow>> allocs;
    std::map<std::int64_t, std::vector<store::WorkerRow>> known;
    for (const core::WorkerStatus& w : workers) {
      const std::int64_t job = w.key.job;
      // Only workers this node was given count; a worker of another node or of no
      // allocation at all is ignored (never trusted, never an error: agents race).
      if (allocs.count(job) == 0) {
        CORRAL_ASSIGN_OR_RETURN(allocs[job], tx.list_allocations(core::JobId(job)));
        CORRAL_ASSIGN_OR_RETURN(known[job], tx.list_workers(core::JobId(job)));
      }
      const bool ours = std::any_of(allocs[job].begin(), allocs[job].end(), [&](const auto& al) {
        return al.attempt == w.key.attempt && al.node.value == node;
      });
      if (!ours) continue;
      const bool exited = w.state == core::WorkerStatus::State::kExited;
      store::WorkerRow row{.job = core::JobId(job),
                           .attempt = w.key.attempt,
                           .rank = w.key.rank,
                           .node = core::NodeId(node),
                           .pid = w.pid,
                           .state = exited ? "exited" : "running",
                           .exit_code = w.exit_code,
                           .signal = w.signal,
                           .started_at = core::time_from_ms(w.started_at_ms),
                           .exited_at = core::time_from_ms(w.exited_at_ms)};
      const auto& seen = known[job];
      const auto same = std::find_if(seen.begin(), seen.end(), [&](const store::WorkerRow& k) {
        return k.attempt == row.attempt && k.rank == row.rank;
      });
      // An exit is final: a late "running" from before it never undoes it.
      if (same != seen.end() && same->state == "exited") continue;
      if (same != seen.end() && same->state == row.state && same->pid == row.pid) continue;
      CORRAL_RETURN_IF_ERROR(tx.upsert_worker(row));
      touched.insert(job);
    }
    return Status();
  }

  Status health(store::Tx& tx, const std::string& node, const std::vector<core::GpuHealth>& gpus,
                const LifecycleContext& ctx) {
    CORRAL_ASSIGN_OR_RETURN(auto row, tx.get_node(core::NodeId(node)));
    if (!row) return core::not_found("node " + node + " is not registered");
    CORRAL_ASSIGN_OR_RETURN(core::Node registered, node_from_json(row->spec_json));
    const auto verdicts = evaluate_gpus(registered, gpus, a.settings_);
    json observed = json::array();
    std::string critical;
    for (auto& g : registered.gpus) {
      const auto v = std::find_if(verdicts.begin(), verdicts.end(),
                                  [&](const GpuVerdict& x) { return x.index == g.index; });
      g.healthy = v == verdicts.end() || (!v->critical && !v->hot);
      if (v != verdicts.end() && v->critical && critical.empty()) {
        critical = "gpu " + std::to_string(g.index) + ": " + v->problem;
      }
      observed.push_back(
          {{"index", g.index},
           {"health",
            v == verdicts.end() || v->problem.empty() ? "ok" : (v->critical ? "unhealthy" : "hot")},
           {"problem", v == verdicts.end() ? "" : v->problem}});
    }
    json inv = json::parse(node_to_json(registered));
    inv["observed"] = {{"gpus", observed},
                       {"readings", json::parse(core::encode_gpu_health(gpus))}};
    CORRAL_RETURN_IF_ERROR(tx.upsert_inventory(
        {.node = registered.id, .inventory_json = inv.dump(), .heartbeat_at = ctx.now}));
    ctx.fx.wake_scheduler = ctx.fx.wake_scheduler || !critical.empty();
    if (critical.empty() || row->admin == core::NodeAdminState::kDraining) return Status();
    // A failing GPU: cordon and drain the node, with the reason recorded and audited.
    const core::NodeAdminState before = row->admin;
    row->admin = core::NodeAdminState::kDraining;
    row->admin_reason = critical;
    row->updated_at = ctx.now;
    CORRAL_RETURN_IF_ERROR(tx.upsert_node(*row));
    CORRAL_RETURN_IF_ERROR(append_audit(tx, {.actor = "corrald/health",
                                             .action = "node.drain",
                                             .target = "node/" + node,
                                             .before = std::string(core::to_string(before)),
                                             .after = "draining: " + critical,
                                             .time = ctx.now}));
    return drain_jobs_on(tx, ctx, row->id, critical);
  }

  void heartbeat(const httplib::Request& req, httplib::Response& res) {
    const std::string node = req.matches[1];
    auto p = agent_of(req, node);
    if (!p.ok()) return fail(res, p.status());
    auto body = core::decode_heartbeat(req.body);
    if (!body.ok()) return fail(res, body.status());
    const core::Heartbeat& beat = *body;
    const core::Time now = a.clock_.now();
    const Status s = change([&](store::Tx& tx, Effects& fx) {
      CORRAL_ASSIGN_OR_RETURN(auto session, current_session(tx, node, beat.epoch));
      // Claims of an agent are believed only once its epoch is known current.
      if (beat.applied_version.value_or(0) > 0) a.board_.set_applied(node, *beat.applied_version);
      session.heartbeat_at = now;
      if (beat.agent_url) session.agent_url = *beat.agent_url;
      CORRAL_RETURN_IF_ERROR(tx.upsert_agent_session(session));
      const LifecycleContext ctx{a.board_, a.settings_, now, fx, a.specs_};
      if (beat.gpus) CORRAL_RETURN_IF_ERROR(health(tx, node, *beat.gpus, ctx));
      std::set<std::int64_t> jobs;
      CORRAL_RETURN_IF_ERROR(record_workers(tx, node, beat.workers, jobs));
      // Every job holding GPUs here too: a stop may be confirmed by absence.
      CORRAL_ASSIGN_OR_RETURN(auto here, tx.list_active_allocations_on(core::NodeId(node)));
      for (const auto& al : here) jobs.insert(al.job.value);
      for (const auto id : jobs) CORRAL_RETURN_IF_ERROR(reconcile_job(tx, ctx, core::JobId(id)));
      return Status();
    });
    if (!s.ok()) return fail(res, s);
    reply(res, 200,
          core::encode_heartbeat_answer({.epoch = beat.epoch, .version = a.board_.version(node)}));
  }

  // ---- checkpoints --------------------------------------------------------------------

  void checkpoint(const httplib::Request& req, httplib::Response& res) {
    const std::string node = req.matches[1];
    auto p = agent_of(req, node);
    if (!p.ok()) return fail(res, p.status());
    auto body = core::decode_worker_checkpoint(req.body);
    if (!body.ok()) return fail(res, body.status());
    const core::WorkerCheckpoint& c = *body;
    const std::int64_t job_id = c.key.job;
    const std::int32_t attempt = c.key.attempt;
    const std::int64_t step = c.report.step;
    const std::string& path = c.report.path;
    int status = 201;
    const core::Time now = a.clock_.now();
    const Status s = change([&](store::Tx& tx, Effects&) {
      status = 201;
      CORRAL_RETURN_IF_ERROR(current_session(tx, node, c.epoch).status());
      CORRAL_ASSIGN_OR_RETURN(auto job, tx.get_job(core::JobId(job_id)));
      if (!job) return core::not_found("job " + std::to_string(job_id) + " not found");
      if (attempt != job->attempt) {
        return core::stale_attempt("attempt " + std::to_string(attempt) + " of job " +
                                   std::to_string(job_id) + " is not its current attempt (" +
                                   std::to_string(job->attempt) + ")");
      }
      CORRAL_ASSIGN_OR_RETURN(auto allocs, tx.list_allocations(job->id));
      const bool ours = std::any_of(allocs.begin(), allocs.end(), [&](const auto& al) {
        return al.attempt == attempt && al.node.value == node;
      });
      if (!ours) {
        return forbidden("job " + std::to_string(job_id) + " attempt " + std::to_string(attempt) +
                         " does not run on node " + node);
      }
      CORRAL_ASSIGN_OR_RETURN(auto existing, tx.list_checkpoints(job->id));
      for (const auto& known : existing) {
        if (known.attempt == attempt && known.step == step) {
          status = 200;  // already recorded: a retry of the agent's forward
          return Status();
        }
      }
      CORRAL_RETURN_IF_ERROR(tx.insert_checkpoint({.job = job->id,
                                                   .attempt = attempt,
                                                   .step = step,
                                                   .uri = path,
                                                   .bytes = c.report.bytes,
                                                   .checksum = c.report.checksum,
                                                   .time = now}));
      return tx.append_job_event({.job = job->id,
                                  .time = now,
                                  .kind = "checkpointed",
                                  .message = "attempt " + std::to_string(attempt) + " step " +
                                             std::to_string(step) + " at " + path});
    });
    if (!s.ok()) return fail(res, s);
    reply(res, status,
          json{{"job", job_id}, {"attempt", attempt}, {"step", step}, {"path", path}}.dump());
  }

  // ---- logs ---------------------------------------------------------------------------

  void logs(const httplib::Request& req, httplib::Response& res) {
    auto p = a.auth_.authenticate(req.get_header_value("Authorization"));
    if (!p.ok()) return fail(res, p.status());
    if (p->role != Role::kAdmin && p->role != Role::kMember) {
      return fail(res, forbidden("role " + std::string(to_string(p->role)) + " may not read logs"));
    }
    const std::string id_text = req.matches[1];
    const auto id = parse_decimal(id_text);
    std::int64_t rank = 0, attempt = -1, tail = 1 << 20;
    for (const auto& [name, out] : {std::pair<const char*, std::int64_t*>{"rank", &rank},
                                    {"attempt", &attempt},
                                    {"tailBytes", &tail}}) {
      if (!req.has_param(name)) continue;
      const auto v = parse_decimal(req.get_param_value(name));
      if (!v) return fail(res, core::invalid_argument(name, "must be a non-negative integer"));
      *out = *v;
    }
    std::string url, key, where;
    const Status s = a.store_.read([&](store::Tx& tx) {
      const Status missing = core::not_found("job " + id_text.substr(0, 32) + " not found");
      if (!id) return missing;
      CORRAL_ASSIGN_OR_RETURN(auto job, tx.get_job(core::JobId(*id)));
      if (!job || (p->role == Role::kMember && job->tenant.value != p->tenant)) return missing;
      if (attempt < 0) attempt = job->attempt;
      where = "job " + std::to_string(*id) + " attempt " + std::to_string(attempt) + " rank " +
              std::to_string(rank);
      std::optional<core::NodeId> node;
      CORRAL_ASSIGN_OR_RETURN(auto workers, tx.list_workers(job->id));
      for (const auto& w : workers) {
        if (w.attempt == attempt && w.rank == rank) node = w.node;
      }
      if (!node) {
        // Not reported yet: the placement says where the rank runs.
        CORRAL_ASSIGN_OR_RETURN(const auto all, tx.list_allocations(job->id));
        const auto spec = a.specs_.get(job->id, job->spec_json);
        if (spec.ok() && attempt <= INT32_MAX) {
          const auto placement = attempt_placement(all, static_cast<std::int32_t>(attempt));
          for (const auto& slot : rank_layout(placement, (*spec)->processes)) {
            if (slot.rank == rank) node = slot.node;
          }
        }
      }
      if (!node) return core::not_found(where + " never ran");
      CORRAL_ASSIGN_OR_RETURN(auto session, tx.get_agent_session(*node));
      if (!session)
        return core::not_found(where + " ran on node " + node->value + " with no agent");
      url = session->agent_url;
      key = session->log_key;
      return Status();
    });
    if (!s.ok()) return fail(res, s);
    httplib::Client agent(url);
    agent.set_connection_timeout(3, 0);
    agent.set_read_timeout(10, 0);
    const std::string path = "/local/logs/" + std::to_string(*id) + "/" + std::to_string(attempt) +
                             "/" + std::to_string(rank) + "?tailBytes=" + std::to_string(tail);
    auto r = agent.Get(path, httplib::Headers{{"Authorization", "Bearer " + key}});
    if (!r)
      return fail(res, Status(StatusCode::kUnavailable, "the agent at " + url + " did not answer"));
    if (r->status == 404) return fail(res, core::not_found("no log for " + where));
    if (r->status != 200) {
      return fail(res, Status(StatusCode::kUnavailable,
                              "the agent answered " + std::to_string(r->status) + " for " + where));
    }
    reply(res, 200, r->body, "text/plain; charset=utf-8");
  }
};

AgentApi::AgentApi(store::Store& store, const core::Clock& clock, SchedulerSignals& loop,
                   Metrics& metrics, AssignmentBoard& board, SpecCache& specs,
                   AgentSettings settings, TokenAuth& auth)
    : store_(store),
      clock_(clock),
      loop_(loop),
      metrics_(metrics),
      board_(board),
      specs_(specs),
      settings_(settings),
      auth_(auth) {}

void AgentApi::install(httplib::Server& http) {
  // The handlers live as long as the server: AgentApi outlives it in run_corrald.
  auto h = std::make_shared<Handlers>(Handlers{*this});
  using Q = const httplib::Request&;
  using S = httplib::Response&;
  http.Post("/v1/agents/join", [h](Q q, S s) { h->join(q, s); });
  http.Get(R"(/v1/agents/([^/]+)/assignments)", [h](Q q, S s) { h->assignments(q, s); });
  http.Post(R"(/v1/agents/([^/]+)/heartbeat)", [h](Q q, S s) { h->heartbeat(q, s); });
  http.Post(R"(/v1/agents/([^/]+)/checkpoints)", [h](Q q, S s) { h->checkpoint(q, s); });
  http.Get(R"(/v1/jobs/([^/]+)/logs)", [h](Q q, S s) { h->logs(q, s); });
}

}  // namespace corral::server
