#include "server/controllers/assignments.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include <nlohmann/json.hpp>

#include "core/check.h"
#include "core/job_phase.h"
#include "sched/snapshot.h"
#include "server/controllers/job_secrets.h"
#include "server/controllers/runs.h"

namespace corral::server {
namespace {

static_assert(kMasterPortBase + sched::kMaxGpusPerNode <= 65535);

std::string visible_devices(const std::vector<std::int32_t>& gpus) {
  std::string out;
  for (const auto g : gpus) out += (out.empty() ? "" : ",") + std::to_string(g);
  return out;
}

}  // namespace

std::vector<RankSlot> rank_layout(const std::vector<store::AllocationRow>& allocs,
                                  core::ProcessMode mode) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<std::int32_t>> gpus;
  for (const auto& a : allocs) {
    if (gpus.count(a.node.value) == 0) order.push_back(a.node.value);
    gpus[a.node.value].push_back(a.gpu_index);
  }
  std::vector<RankSlot> out;
  std::int32_t rank = 0;
  for (std::size_t n = 0; n < order.size(); ++n) {
    auto& g = gpus[order[n]];
    std::sort(g.begin(), g.end());
    const auto node_rank = static_cast<std::int32_t>(n);
    if (mode == core::ProcessMode::kPerNode) {
      out.push_back({.rank = rank++,
                     .local_rank = 0,
                     .node_rank = node_rank,
                     .node = core::NodeId(order[n]),
                     .gpus = g});
      continue;
    }
    for (std::size_t i = 0; i < g.size(); ++i) {
      out.push_back({.rank = rank++,
                     .local_rank = static_cast<std::int32_t>(i),
                     .node_rank = node_rank,
                     .node = core::NodeId(order[n]),
                     .gpus = {g[i]}});
    }
  }
  return out;
}

std::vector<store::AllocationRow> attempt_placement(const std::vector<store::AllocationRow>& every,
                                                    std::int32_t attempt) {
  std::vector<store::AllocationRow> out;
  for (const auto& a : every) {
    if (a.attempt == attempt) out.push_back(a);
  }
  return out;
}

std::int32_t master_port(const std::vector<RankSlot>& slots) {
  CORRAL_CHECK(!slots.empty() && !slots.front().gpus.empty());
  // Rank 0 holds the lowest GPU of its node (perGpu), or all of them in order (perNode).
  return kMasterPortBase + slots.front().gpus.front();
}

std::vector<core::DesiredWorker> node_assignments(const NodeAssignmentInput& input) {
  std::vector<const AssignedJob*> jobs;
  for (const auto& j : input.jobs) jobs.push_back(&j);
  std::sort(jobs.begin(), jobs.end(),
            [](const AssignedJob* a, const AssignedJob* b) { return a->job.id < b->job.id; });
  std::vector<core::DesiredWorker> out;
  for (const AssignedJob* j : jobs) {
    // 1. The current attempt: the one its active rows belong to, if any is here.
    const auto& rows = j->allocations;
    const auto active =
        std::find_if(rows.begin(), rows.end(), [](const auto& a) { return a.active; });
    const bool here = std::any_of(rows.begin(), rows.end(), [&](const store::AllocationRow& a) {
      return a.active && a.node == input.node;
    });
    if (active == rows.end() || !here || j->spec == nullptr) continue;
    const std::int32_t attempt = active->attempt;
    const core::JobSpec& spec = *j->spec;

    // 2. Ranks from the attempt's whole placement, released rows included.
    const auto slots = rank_layout(attempt_placement(rows, attempt), spec.processes);
    const auto url = input.agent_urls.find(slots.front().node);
    const std::string master_addr = url == input.agent_urls.end()
                                        ? "127.0.0.1"
                                        : core::agent_url_host(url->second).value_or("127.0.0.1");

    // 3. What every rank of the attempt shares.
    const core::Checkpoint* restore = restore_point(j->checkpoints, attempt);
    core::WorkerSpec shared{
        .world_size = static_cast<std::int32_t>(slots.size()),
        // A share of a GPU: MPS's limits for it (core/worker_env.h), the same on each GPU.
        .gpu_share_milli = spec.resources.gpu_milli,
        .gpu_memory_mib = spec.resources.gpu_memory_mib,
        .command = spec.command,
        .env = spec.env,
        .master_addr = master_addr,
        .master_port = master_port(slots),
        .checkpoint_dir = spec.checkpoint ? spec.checkpoint->dir : "",
        .restore_from = restore ? restore->uri : "",
        // A preemption's stop has the decision's grace; others the default.
        .grace_ms = j->job.stop_grace_ms > 0 ? j->job.stop_grace_ms : input.default_grace_ms,
        .array_job = j->job.array_job.value,
        .array_index = j->job.array_index,
        .array_count = spec.array ? spec.array->count : 0,
        .sweep_params = spec.sweep ? core::trial_parameters(*spec.sweep, j->job.array_index)
                                   : std::map<std::string, std::string>{}};
    for (const auto& [k, v] : j->secret_env) shared.env[k] = v;
    const bool run =
        j->job.phase == core::JobPhase::kLaunching || j->job.phase == core::JobPhase::kRunning;

    // 4. This node's ranks.
    const auto here_ranks = std::count_if(slots.begin(), slots.end(),
                                          [&](const RankSlot& s) { return s.node == input.node; });
    for (const RankSlot& s : slots) {
      if (s.node != input.node) continue;
      core::DesiredWorker w{.spec = shared, .run = run};
      w.spec.key = {.job = j->job.id.value, .attempt = attempt, .rank = s.rank};
      w.spec.local_rank = s.local_rank;
      w.spec.node_rank = s.node_rank;
      w.spec.local_world_size = static_cast<std::int32_t>(here_ranks);
      w.spec.per_node = spec.processes == core::ProcessMode::kPerNode;
      w.spec.gpus = s.gpus;
      w.spec.visible_devices = visible_devices(s.gpus);
      out.push_back(std::move(w));
    }
  }
  return out;
}

core::Result<NodeAssignmentInput> read_node_assignment_input(store::Tx& tx,
                                                             const core::NodeId& node,
                                                             SpecCache& specs, const KeyRing& keys,
                                                             std::int64_t default_grace_ms) {
  NodeAssignmentInput in{.node = node, .default_grace_ms = default_grace_ms};
  CORRAL_ASSIGN_OR_RETURN(auto on_node, tx.allocations().list_active_allocations_on(node));
  std::set<std::int64_t> ids;
  for (const auto& a : on_node) ids.insert(a.job.value);
  for (const auto id : ids) {
    CORRAL_ASSIGN_OR_RETURN(auto job, tx.jobs().get_job(core::JobId(id)));
    if (!job) continue;
    auto spec = specs.get(job->id, job->spec_json);
    if (!spec.ok()) continue;
    AssignedJob j{.job = std::move(*job), .spec = std::move(*spec)};
    CORRAL_ASSIGN_OR_RETURN(j.allocations, tx.allocations().list_allocations(j.job.id));
    // A job whose spec names no secretEnv has none to open: no key can hold it back,
    // whatever its row holds (stores from before data keys sealed "{}" for every job).
    if (!j.spec->secret_env.empty()) {
      CORRAL_ASSIGN_OR_RETURN(const std::string secrets, tx.jobs().get_job_secrets(j.job.id));
      // Workers without their secrets would start wrong: the job waits, the node's others run.
      auto opened = open_job_secrets(keys, secrets);
      if (!opened.ok()) {
        std::fprintf(stderr, "corrald: job %lld not assigned: its secrets: %s\n",
                     static_cast<long long>(id), opened.status().to_string().c_str());
        continue;
      }
      j.secret_env = std::move(*opened);
    }
    CORRAL_ASSIGN_OR_RETURN(j.checkpoints, tx.checkpoints().list_checkpoints(j.job.id));
    // Rank 0 runs on the first row's node of the current attempt: its agent's URL.
    const auto active = std::find_if(j.allocations.begin(), j.allocations.end(),
                                     [](const auto& a) { return a.active; });
    if (active != j.allocations.end()) {
      const auto placement = attempt_placement(j.allocations, active->attempt);
      const core::NodeId& master = placement.front().node;
      if (in.agent_urls.count(master) == 0) {
        CORRAL_ASSIGN_OR_RETURN(auto session, tx.agents().get_agent_session(master));
        if (session) in.agent_urls[master] = session->agent_url;
      }
    }
    in.jobs.push_back(std::move(j));
  }
  return in;
}

}  // namespace corral::server
