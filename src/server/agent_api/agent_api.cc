#include "server/agent_api/agent_api.h"

#include <algorithm>
#include <atomic>
#include <httplib.h>
#include <optional>

#include <nlohmann/json.hpp>

#include "core/agent_protocol.h"
#include "server/agent_api/agent_reports.h"
#include "server/base/crypto.h"
#include "server/base/model_json.h"
#include "server/controllers/assignments.h"

namespace corral::server {

using core::Result;
using core::Status;
using core::StatusCode;
using nlohmann::json;

namespace {
constexpr std::int64_t kMaxWaitMs = 30000;
}  // namespace

AgentApi::AgentApi(RequestPipeline& pipeline, AssignmentBoard& board, SpecCache& specs,
                   AgentSettings settings, TelemetrySink* telemetry)
    : pipeline_(pipeline),
      board_(board),
      specs_(specs),
      settings_(settings),
      telemetry_(telemetry) {}

LifecycleContext AgentApi::lifecycle(Effects& fx) const {
  return LifecycleContext{board_, settings_, pipeline_.clock().now(), fx, specs_};
}

Result<Reply> AgentApi::join(const Call& c) {
  CORRAL_ASSIGN_OR_RETURN(const auto request, core::decode_join_request(c.body(), node_from_json));
  const JoinGrant grant{
      .token = new_token(), .log_key = sha256_hex(new_token()), .joiner = c.who.id};
  core::JoinAnswer answer;
  CORRAL_RETURN_IF_ERROR(pipeline_.change([&](store::Tx& tx, Effects& fx) {
    CORRAL_ASSIGN_OR_RETURN(answer, join_node(tx, lifecycle(fx), request, grant));
    return Status();
  }));
  Reply reply;
  reply.body = core::encode_join_answer(answer);
  return reply;
}

Result<Reply> AgentApi::assignments(const Call& c) {
  const std::string node = c.path_param(1);
  std::int64_t since = 0, wait_ms = 0;
  if (const auto text = c.query("since")) {
    // -1 (an agent's first poll after joining) equals no version: answered at once.
    const auto v = *text == "-1" ? std::optional<std::int64_t>(-1) : parse_decimal(*text);
    if (!v) return core::invalid_argument("since", "must be a version number or -1");
    since = *v;
  }
  if (const auto text = c.query("waitMs")) {
    const auto v = parse_decimal(*text);
    if (!v) return core::invalid_argument("waitMs", "must be milliseconds");
    wait_ms = std::min(*v, kMaxWaitMs);
  }
  // The wait holds no transaction. The version is read BEFORE the state, so the answer
  // is at least as new as the version it carries.
  std::atomic<std::int64_t>& waiting = pipeline_.metrics().polls_waiting;
  ++waiting;
  const std::int64_t version = board_.wait(node, since, std::chrono::milliseconds(wait_ms));
  --waiting;
  Reply reply;
  CORRAL_RETURN_IF_ERROR(pipeline_.store().read([&](store::Tx& tx) {
    const core::NodeId id(node);
    CORRAL_ASSIGN_OR_RETURN(auto session, tx.agents().get_agent_session(id));
    CORRAL_ASSIGN_OR_RETURN(
        const auto input,
        read_node_assignment_input(tx, id, specs_, pipeline_.keys(), settings_.stop_grace_ms));
    reply.body = core::encode_assignments({.node = node,
                                           .epoch = session ? session->epoch : 0,
                                           .version = version,
                                           .workers = node_assignments(input)});
    return Status();
  }));
  return reply;
}

Result<Reply> AgentApi::heartbeat(const Call& c) {
  const std::string node = c.path_param(1);
  CORRAL_ASSIGN_OR_RETURN(const core::Heartbeat beat, core::decode_heartbeat(c.body()));
  CORRAL_RETURN_IF_ERROR(pipeline_.change(
      [&](store::Tx& tx, Effects& fx) { return record_heartbeat(tx, lifecycle(fx), node, beat); }));
  // Read after the commit applied its bumps: the agent learns of new work at once.
  Reply reply;
  reply.body =
      core::encode_heartbeat_answer({.epoch = beat.epoch, .version = board_.version(node)});
  return reply;
}

Result<Reply> AgentApi::checkpoint(const Call& c) {
  const std::string node = c.path_param(1);
  CORRAL_ASSIGN_OR_RETURN(const core::WorkerCheckpoint ck,
                          core::decode_worker_checkpoint(c.body()));
  bool created = false;
  CORRAL_RETURN_IF_ERROR(pipeline_.change([&](store::Tx& tx, Effects& fx) {
    CORRAL_ASSIGN_OR_RETURN(created, record_checkpoint(tx, lifecycle(fx), node, ck));
    return Status();
  }));
  return json_reply({{"job", ck.key.job},
                     {"attempt", ck.key.attempt},
                     {"step", ck.report.step},
                     {"path", ck.report.path}},
                    created ? 201 : 200);
}

// Metric points and artifacts of one worker's run (runs.h); the answer counts what was new.
Result<Reply> AgentApi::run_report(const Call& c) {
  const std::string node = c.path_param(1);
  CORRAL_ASSIGN_OR_RETURN(const core::WorkerRunReport report,
                          core::decode_worker_run_report(c.body()));
  RunReportTaken taken;
  CORRAL_RETURN_IF_ERROR(pipeline_.change([&](store::Tx& tx, Effects& fx) {
    CORRAL_ASSIGN_OR_RETURN(taken, record_worker_run_report(tx, lifecycle(fx), node, report));
    return Status();
  }));
  return json_reply({{"job", report.key.job},
                     {"points", taken.points},
                     {"artifacts", static_cast<std::int64_t>(taken.artifacts.size())}});
}

// A worker's point-in-time lookup through its agent: the member endpoint's answer, and
// the run records what it read (agent_reports.h).
Result<Reply> AgentApi::feature_lookup(const Call& c) {
  const std::string node = c.path_param(1);
  CORRAL_ASSIGN_OR_RETURN(const core::WorkerFeatureLookup lookup,
                          core::decode_worker_feature_lookup(c.body()));
  json answer;
  CORRAL_RETURN_IF_ERROR(pipeline_.change([&](store::Tx& tx, Effects& fx) {
    CORRAL_ASSIGN_OR_RETURN(answer, lookup_worker_features(tx, lifecycle(fx), node, lookup));
    return Status();
  }));
  return json_reply(answer);
}

// Best effort (telemetry_sink.h): queued, answered at once, never a store transaction here.
// The answer says how many samples were taken; the rest went to the caps.
Result<Reply> AgentApi::telemetry(const Call& c) {
  const std::string node = c.path_param(1);
  CORRAL_ASSIGN_OR_RETURN(const core::TelemetryBatch batch, core::decode_telemetry_batch(c.body()));
  if (telemetry_ == nullptr) {
    return Status(StatusCode::kUnavailable, "telemetry is not taken by this corrald");
  }
  const TelemetryOffer taken = telemetry_->offer(node, batch.samples);
  return json_reply({{"accepted", taken.accepted}, {"dropped", taken.dropped}}, 202);
}

// A rank's log, fetched from the agent of the node it ran on.
Result<Reply> AgentApi::logs(const Call& c) {
  const Principal* p = &c.who;
  const std::string id_text = c.path_param(1);
  const auto id = parse_decimal(id_text);
  std::int64_t rank = 0, attempt = -1, tail = 1 << 20;
  for (const auto& [name, out] : {std::pair<const char*, std::int64_t*>{"rank", &rank},
                                  {"attempt", &attempt},
                                  {"tailBytes", &tail}}) {
    const auto text = c.query(name);
    if (!text) continue;
    const auto v = parse_decimal(*text);
    if (!v) return core::invalid_argument(name, "must be a non-negative integer");
    *out = *v;
  }
  std::string url, key, where;
  CORRAL_RETURN_IF_ERROR(pipeline_.store().read([&](store::Tx& tx) {
    const Status missing = core::not_found("job " + id_text.substr(0, 32) + " not found");
    if (!id) return missing;
    CORRAL_ASSIGN_OR_RETURN(auto job, tx.jobs().get_job(core::JobId(*id)));
    if (!job || (p->role == Role::kMember && job->tenant.value != p->tenant)) return missing;
    if (attempt < 0) attempt = job->attempt;
    where = "job " + std::to_string(*id) + " attempt " + std::to_string(attempt) + " rank " +
            std::to_string(rank);
    std::optional<core::NodeId> node;
    CORRAL_ASSIGN_OR_RETURN(auto workers, tx.agents().list_workers(job->id));
    for (const auto& w : workers) {
      if (w.attempt == attempt && w.rank == rank) node = w.node;
    }
    if (!node) {
      // Not reported yet: the placement says where the rank runs.
      CORRAL_ASSIGN_OR_RETURN(const auto all, tx.allocations().list_allocations(job->id));
      const auto spec = specs_.get(job->id, job->spec_json);
      if (spec.ok() && attempt <= INT32_MAX) {
        const auto placement = attempt_placement(all, static_cast<std::int32_t>(attempt));
        for (const auto& slot : rank_layout(placement, (*spec)->processes)) {
          if (slot.rank == rank) node = slot.node;
        }
      }
    }
    if (!node) return core::not_found(where + " never ran");
    CORRAL_ASSIGN_OR_RETURN(auto session, tx.agents().get_agent_session(*node));
    if (!session) return core::not_found(where + " ran on node " + node->value + " with no agent");
    url = session->agent_url;
    key = session->log_key;
    return Status();
  }));
  httplib::Client agent(url);
  agent.set_connection_timeout(3, 0);
  agent.set_read_timeout(10, 0);
  const std::string path = "/local/logs/" + std::to_string(*id) + "/" + std::to_string(attempt) +
                           "/" + std::to_string(rank) + "?tailBytes=" + std::to_string(tail);
  auto r = agent.Get(path, httplib::Headers{{"Authorization", "Bearer " + key}});
  if (!r) return Status(StatusCode::kUnavailable, "the agent at " + url + " did not answer");
  if (r->status == 404) return core::not_found("no log for " + where);
  if (r->status != 200) {
    return Status(StatusCode::kUnavailable,
                  "the agent answered " + std::to_string(r->status) + " for " + where);
  }
  Reply reply;
  reply.body = r->body;
  reply.content_type = "text/plain; charset=utf-8";
  return reply;
}

void AgentApi::install(httplib::Server& http) {
  const auto bound = [this](Result<Reply> (AgentApi::*fn)(const Call&)) {
    return [this, fn](const Call& c) { return (this->*fn)(c); };
  };
  const RoleSet agents{Role::kAgent};
  pipeline_.install(
      http,
      {
          call_route("POST", "/v1/agents/join", {Role::kJoin}, bound(&AgentApi::join)),
          node_route("GET", R"(/v1/agents/([^/]+)/assignments)", agents,
                     bound(&AgentApi::assignments)),
          node_route("POST", R"(/v1/agents/([^/]+)/heartbeat)", agents,
                     bound(&AgentApi::heartbeat)),
          node_route("POST", R"(/v1/agents/([^/]+)/checkpoints)", agents,
                     bound(&AgentApi::checkpoint)),
          node_route("POST", R"(/v1/agents/([^/]+)/runs)", agents, bound(&AgentApi::run_report)),
          node_route("POST", R"(/v1/agents/([^/]+)/features/lookup)", agents,
                     bound(&AgentApi::feature_lookup)),
          node_route("POST", R"(/v1/agents/([^/]+)/telemetry)", agents,
                     bound(&AgentApi::telemetry)),
          call_route("GET", R"(/v1/jobs/([^/]+)/logs)", kUsers, bound(&AgentApi::logs)),
      });
}

}  // namespace corral::server
