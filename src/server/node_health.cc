#include "server/node_health.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <set>

#include "core/job_phase.h"
#include "server/audit.h"

namespace corral::server {
namespace {

using core::JobPhase;
using core::Status;
using nlohmann::json;

std::int64_t int_or(const json& obj, const char* key, std::int64_t fallback) {
  const auto it = obj.find(key);
  return it != obj.end() && it->is_number_integer() ? it->get<std::int64_t>() : fallback;
}

double num_or(const json& obj, const char* key, double fallback) {
  const auto it = obj.find(key);
  return it != obj.end() && it->is_number() ? it->get<double>() : fallback;
}

// True when `v` is an integer in [lo, hi] (an unsigned one past int64 is not).
bool int_in(const json& v, std::int64_t lo, std::int64_t hi) {
  if (!v.is_number_integer()) return false;
  if (v.is_number_unsigned() && v.get<std::uint64_t>() > std::uint64_t{INT64_MAX}) return false;
  const auto n = v.get<std::int64_t>();
  return n >= lo && n <= hi;
}

// One reading of an agent's heartbeat, checked before it is read: every field has its
// type and a range a real GPU can report, so no reading is misread (a float cast to an
// integer, a string where a boolean goes) and a refusal names the field.
Status check_reading(const json& g, const std::string& path) {
  const auto range = [](auto lo, auto hi) {
    return " between " + std::to_string(lo) + " and " + std::to_string(hi);
  };
  const auto integer = [&](const char* key, std::int64_t lo, std::int64_t hi) -> Status {
    const auto it = g.find(key);
    if (it == g.end() || int_in(*it, lo, hi)) return Status();
    return core::invalid_argument(path + "." + key,
                                  "must be an integer" + range(lo, hi) + ", got " + it->dump());
  };
  const auto number = [&](const char* key, std::int64_t lo, std::int64_t hi) -> Status {
    const auto it = g.find(key);
    if (it == g.end()) return Status();
    const double d = it->is_number() ? it->get<double>() : 0;
    if (it->is_number() && d >= static_cast<double>(lo) && d <= static_cast<double>(hi)) {
      return Status();
    }
    return core::invalid_argument(path + "." + key,
                                  "must be a number" + range(lo, hi) + ", got " + it->dump());
  };
  const auto boolean = [&](const char* key) -> Status {
    const auto it = g.find(key);
    if (it == g.end() || it->is_boolean()) return Status();
    return core::invalid_argument(path + "." + key, "must be true or false, got " + it->dump());
  };
  if (!g.contains("index")) return core::invalid_argument(path + ".index", "is required");
  CORRAL_RETURN_IF_ERROR(integer("index", 0, 63));  // at most 64 GPUs a node (model_json.h)
  CORRAL_RETURN_IF_ERROR(boolean("present"));
  CORRAL_RETURN_IF_ERROR(boolean("remapFailed"));
  CORRAL_RETURN_IF_ERROR(integer("eccUncorrectable", 0, INT64_MAX));
  CORRAL_RETURN_IF_ERROR(number("temperatureC", -273, 1000));
  CORRAL_RETURN_IF_ERROR(number("powerW", 0, 100000));
  CORRAL_RETURN_IF_ERROR(number("powerLimitW", 0, 100000));
  if (const auto x = g.find("xidErrors"); x != g.end()) {
    if (!x->is_array()) {
      return core::invalid_argument(path + ".xidErrors", "must be an array of integers");
    }
    for (std::size_t k = 0; k < x->size(); ++k) {
      if (!int_in((*x)[k], 0, 65535)) {
        return core::invalid_argument(
            path + ".xidErrors[" + std::to_string(k) + "]",
            "must be an integer" + range(0, 65535) + ", got " + (*x)[k].dump());
      }
    }
  }
  return Status();
}

}  // namespace

std::string critical_xid_name(std::int64_t xid) {
  static const std::map<std::int64_t, const char*> kCritical = {
      {48, "double-bit ECC error"},
      {62, "internal micro-controller halt"},
      {63, "ECC page retirement or row remap recording event"},
      {64, "ECC page retirement or row remap recording failure"},
      {74, "NVLink error"},
      {79, "fell off the bus"},
      {92, "high single-bit ECC error rate"},
      {94, "contained ECC error"},
      {95, "uncontained ECC error"},
      {119, "GSP RPC timeout"},
      {120, "GSP error"},
  };
  const auto it = kCritical.find(xid);
  return it == kCritical.end() ? std::string() : it->second;
}

core::Result<std::vector<GpuVerdict>> evaluate_gpus(const core::Node& registered, const json& gpus,
                                                    const AgentSettings& settings) {
  if (!gpus.is_array()) return core::invalid_argument("gpus", "must be an array");
  std::map<std::int64_t, const json*> by_index;
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    const json& g = gpus[i];
    const std::string path = "gpus[" + std::to_string(i) + "]";
    if (!g.is_object()) return core::invalid_argument(path, "must be an object");
    CORRAL_RETURN_IF_ERROR(check_reading(g, path));
    by_index[g["index"].get<std::int64_t>()] = &g;
  }
  std::vector<GpuVerdict> out;
  for (const auto& gpu : registered.gpus) {
    GpuVerdict v{.index = gpu.index};
    const auto it = by_index.find(gpu.index);
    if (it == by_index.end() || !it->second->value("present", true)) {
      v.critical = true;
      v.problem = "absent";
      out.push_back(v);
      continue;
    }
    const json& g = *it->second;
    std::vector<std::string> problems;
    for (const auto& x : g.value("xidErrors", json::array())) {
      if (!x.is_number_integer()) continue;
      const std::string name = critical_xid_name(x.get<std::int64_t>());
      if (!name.empty()) {
        problems.push_back("XID " + std::to_string(x.get<std::int64_t>()) + " (" + name + ")");
      }
    }
    if (int_or(g, "eccUncorrectable", 0) > 0) problems.push_back("uncorrectable ECC error");
    if (g.value("remapFailed", false)) problems.push_back("row remap failed");
    if (!problems.empty()) {
      v.critical = true;
      v.problem = problems.front();
      for (std::size_t i = 1; i < problems.size(); ++i) v.problem += ", " + problems[i];
    } else {
      const double temp = num_or(g, "temperatureC", 0);
      const double power = num_or(g, "powerW", 0);
      const double limit = num_or(g, "powerLimitW", 0);
      if (temp > settings.hot_temperature_c) {
        v.hot = true;
        v.problem = "hot: " + std::to_string(static_cast<int>(temp)) + " C above " +
                    std::to_string(settings.hot_temperature_c) + " C";
      } else if (limit > 0 && power > limit) {
        v.hot = true;
        v.problem = "hot: drawing " + std::to_string(static_cast<int>(power)) + " W above " +
                    std::to_string(static_cast<int>(limit)) + " W";
      }
    }
    out.push_back(v);
  }
  return out;
}

Status declare_node_lost(store::Tx& tx, const LifecycleContext& ctx, const core::NodeId& node,
                         const std::string& why) {
  CORRAL_ASSIGN_OR_RETURN(auto session, tx.get_agent_session(node));
  if (!session || session->lost) return Status();
  // The fence: a new epoch refuses every later report of the old agent, which is what
  // makes releasing its GPUs below safe without hearing from it.
  session->epoch += 1;
  session->lost = true;
  CORRAL_RETURN_IF_ERROR(tx.upsert_agent_session(*session));
  CORRAL_ASSIGN_OR_RETURN(auto allocs, tx.list_active_allocations_on(node));
  std::set<std::int64_t> jobs;
  for (const auto& a : allocs) jobs.insert(a.job.value);
  CORRAL_RETURN_IF_ERROR(tx.release_allocations_on(node, ctx.now).status());
  ctx.fx.bump.insert(node.value);
  ctx.fx.wake_scheduler = true;
  CORRAL_RETURN_IF_ERROR(
      append_audit(tx, {.actor = "corrald/health",
                        .action = "node.lost",
                        .target = "node/" + node.value,
                        .before = "epoch=" + std::to_string(session->epoch - 1),
                        .after = "lost epoch=" + std::to_string(session->epoch) + ": " + why,
                        .time = ctx.now}));
  for (const auto id : jobs) {
    CORRAL_ASSIGN_OR_RETURN(auto job, tx.get_job(core::JobId(id)));
    if (!job) continue;
    const std::string lost = "node " + node.value + " lost (" + why + ")";
    CORRAL_RETURN_IF_ERROR(tx.append_job_event(
        {.job = job->id, .time = ctx.now, .kind = "node lost", .message = lost}));
    if (job->phase == JobPhase::kLaunching || job->phase == JobPhase::kRunning) {
      // The attempt is lost: it counts as a restart, and restarts from its checkpoint.
      std::int32_t max_restarts = 3;
      const auto spec = nlohmann::json::parse(job->spec_json, nullptr, false);
      if (spec.is_object())
        max_restarts = static_cast<std::int32_t>(int_or(spec, "maxRestarts", 3));
      store::JobRow next = *job;
      next.updated_at = ctx.now;
      if (job->restarts < max_restarts) {
        next.phase = JobPhase::kPreempting;  // until the other nodes' ranks confirm
        next.restarts = job->restarts + 1;
        next.reason = lost + "; attempt " + std::to_string(job->attempt) + " ended; restart " +
                      std::to_string(next.restarts) + " of " + std::to_string(max_restarts);
      } else {
        next.phase = JobPhase::kFailed;
        next.reason = lost + "; out of restarts (maxRestarts " + std::to_string(max_restarts) + ")";
      }
      CORRAL_ASSIGN_OR_RETURN(const bool won, tx.update_job(next, job->phase));
      if (!won) return Status(core::StatusCode::kAborted, "job changed while losing its node");
      if (next.phase == JobPhase::kFailed) {
        CORRAL_RETURN_IF_ERROR(tx.append_job_event({.job = job->id,
                                                    .time = ctx.now,
                                                    .kind = "finished",
                                                    .message = "failed: " + next.reason}));
      }
    }
    // Other nodes' ranks stop; the job is requeued (or released) once they confirm.
    CORRAL_ASSIGN_OR_RETURN(auto rest, tx.list_allocations(job->id));
    for (const auto& a : rest) {
      if (a.active) ctx.fx.stops.insert({id, a.node.value});
    }
    CORRAL_RETURN_IF_ERROR(reconcile_job(tx, ctx, job->id));
  }
  return Status();
}

NodeHealth::NodeHealth(store::Store& store, const core::Clock& clock, AssignmentBoard& board,
                       SchedLoop& loop, AgentSettings settings)
    : store_(store), clock_(clock), board_(board), loop_(loop), settings_(settings) {}

NodeHealth::~NodeHealth() { stop(); }

void NodeHealth::start() {
  started_at_ = clock_.now();
  thread_ = std::thread([this] {
    const auto period = std::chrono::milliseconds(
        std::clamp<std::int64_t>(settings_.node_lost_after_ms / 4, 20, 1000));
    std::unique_lock lock(mu_);
    while (!stop_) {
      cv_.wait_for(lock, period, [&] { return stop_; });
      if (stop_) break;
      lock.unlock();
      const Status s = check_once();
      if (!s.ok()) std::fprintf(stderr, "corrald: node health: %s\n", s.to_string().c_str());
      lock.lock();
    }
  });
}

void NodeHealth::stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

Status NodeHealth::check_once() {
  const core::Time now = clock_.now();
  // Agents get the full silence allowance from this corrald's start, so a restart of
  // corrald never declares every node lost at once.
  if (now - started_at_ < core::Duration(settings_.node_lost_after_ms)) return Status();
  std::vector<store::AgentSessionRow> sessions;
  CORRAL_RETURN_IF_ERROR(store_.read([&](store::Tx& tx) {
    CORRAL_ASSIGN_OR_RETURN(sessions, tx.list_agent_sessions());
    return Status();
  }));
  for (const auto& s : sessions) {
    const auto silence = core::to_ms(now - s.heartbeat_at);
    if (s.lost || silence <= settings_.node_lost_after_ms) continue;
    Effects fx;
    const Status done = store_.transact([&](store::Tx& tx) {
      fx = Effects();
      // Re-read inside the transaction: a heartbeat may have arrived meanwhile.
      CORRAL_ASSIGN_OR_RETURN(auto fresh, tx.get_agent_session(s.node));
      if (!fresh || fresh->lost ||
          core::to_ms(now - fresh->heartbeat_at) <= settings_.node_lost_after_ms) {
        return Status();
      }
      const LifecycleContext ctx{board_, settings_, now, fx};
      return declare_node_lost(tx, ctx, s.node,
                               "no heartbeat for " + std::to_string(silence) + " ms");
    });
    if (!done.ok()) return done;
    apply_effects(fx, board_);
    wake_loop(fx, loop_);
  }
  return Status();
}

}  // namespace corral::server
