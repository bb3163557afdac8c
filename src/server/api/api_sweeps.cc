// /v1/sweeps: a sweep seen as one (docs/jobspec.md#sweeps). A sweep is the array of its
// trials, named by its first trial's id: listed and cancelled under /v1/arrays, each trial
// a job and a run of its own. This answers what only a sweep has: each trial's parameters,
// its metric and its verdicts at the rungs of ASHA, and the best trial with its run
// (manifest, attempts, metrics, artifacts) in the same answer.
#include <algorithm>
#include <httplib.h>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/job_phase.h"
#include "core/job_spec_parse.h"
#include "server/api/api_routes.h"
#include "server/api/api_views.h"
#include "server/base/http_status.h"

namespace corral::server {
namespace {

using core::Result;
using nlohmann::json;

// Each trial's verdicts: how many rungs it passed, and the one that stopped it.
struct TrialRungs {
  std::int32_t passed = 0;
  std::optional<std::int32_t> stopped_at;
};

// The GPU time `trial` has held: its ended attempts' (store-maintained) and its current
// attempt's GPUs so far.
Result<std::int64_t> held_gpu_ms(store::Tx& tx, const store::JobRow& trial, core::Time now) {
  std::int64_t ms = trial.attained_gpu_ms;
  if (core::is_terminal(trial.phase) || trial.attempt == 0) return ms;
  CORRAL_ASSIGN_OR_RETURN(const auto allocs, tx.allocations().list_allocations(trial.id));
  for (const store::AllocationRow& a : allocs) {
    if (a.active) ms += std::max<std::int64_t>(0, core::to_ms(now - a.created_at));
  }
  return ms;
}

Result<Reply> get_sweep(ApiContext& api, const Call& c, store::Tx& tx) {
  CORRAL_ASSIGN_OR_RETURN(const auto trials, visible_array(tx.jobs(), c.who, c.path_param(1)));
  const store::JobRow& first = trials.front();
  const core::ParseOutcome parsed = core::parse_job_spec(first.spec_json, core::SpecFormat::kJson);
  if (!parsed.ok()) {
    return core::internal_error("the stored spec of job " + c.path_param(1) + " does not parse");
  }
  if (!parsed.spec->sweep) {
    return core::not_found("array " + c.path_param(1) + " is not a sweep (its spec has no sweep)");
  }
  const core::SweepSpec& sweep = *parsed.spec->sweep;

  std::map<std::int64_t, TrialRungs> rungs;
  CORRAL_ASSIGN_OR_RETURN(const auto verdicts, tx.runs().list_sweep_rungs(first.id, std::nullopt));
  for (const auto& v : verdicts) {
    TrialRungs& t = rungs[v.trial.value];
    if (v.continued) {
      ++t.passed;
    } else {
      t.stopped_at = v.rung;
    }
  }
  std::map<std::int64_t, store::MetricRow> last;
  CORRAL_ASSIGN_OR_RETURN(const auto points, tx.runs().list_last_metric(first.id, sweep.metric));
  for (const auto& [trial, point] : points) last.emplace(trial.value, point);

  json items = json::array();
  std::map<std::string, std::int64_t> phases;
  std::int64_t gpu_ms = 0, stopped = 0;
  const store::JobRow* best = nullptr;
  for (const store::JobRow& t : trials) {
    ++phases[std::string(core::to_string(t.phase))];
    CORRAL_ASSIGN_OR_RETURN(const std::int64_t held, held_gpu_ms(tx, t, api.now()));
    gpu_ms += held;
    const TrialRungs r = rungs.count(t.id.value) ? rungs.at(t.id.value) : TrialRungs{};
    if (r.stopped_at) ++stopped;
    const auto point = last.find(t.id.value);
    json item = {{"index", t.array_index},
                 {"job", t.id.value},
                 {"phase", std::string(core::to_string(t.phase))},
                 {"parameters",
                  json::parse(core::parameters_json(core::trial_parameters(sweep, t.array_index)))},
                 {"lastStep", point == last.end() ? json(nullptr) : json(point->second.step)},
                 {"lastValue", point == last.end() ? json(nullptr) : json(point->second.value)},
                 {"rungsPassed", r.passed},
                 {"stoppedAtRung", r.stopped_at ? json(*r.stopped_at) : json(nullptr)},
                 {"gpuMs", held}};
    items.push_back(std::move(item));
    // The best trial: the best last value among the trials that ran to their end (a
    // stopped trial's value is from early in its training), the lower index on a tie.
    if (t.phase == core::JobPhase::kSucceeded && point != last.end() &&
        (best == nullptr ||
         core::better(sweep.goal, point->second.value, last.at(best->id.value).value))) {
      best = &t;
    }
  }
  json early = nullptr;
  if (sweep.early_stopping) {
    early = {{"rule", "asha"},
             {"minStep", sweep.early_stopping->min_step},
             {"maxStep", sweep.early_stopping->max_step},
             {"reductionFactor", sweep.early_stopping->reduction_factor},
             {"rungSteps", core::rung_steps(*sweep.early_stopping)}};
  }
  json best_json = nullptr;
  if (best != nullptr) {
    const store::MetricRow& point = last.at(best->id.value);
    CORRAL_ASSIGN_OR_RETURN(json run, run_json(tx, *best));
    best_json = {
        {"index", best->array_index},
        {"job", best->id.value},
        {"parameters",
         json::parse(core::parameters_json(core::trial_parameters(sweep, best->array_index)))},
        {"step", point.step},
        {"value", point.value},
        {"run", std::move(run)}};
  }
  return json_reply(
      {{"id", first.id.value},
       {"name", first.name},
       {"tenant", first.tenant.value},
       {"method", std::string(core::to_string(sweep.method))},
       {"trials", trials.size()},
       {"maxRunning", sweep.max_running},
       {"metric", {{"name", sweep.metric}, {"goal", std::string(core::to_string(sweep.goal))}}},
       {"earlyStopping", std::move(early)},
       {"phases", phases},
       {"stoppedEarly", stopped},
       {"gpuMs", gpu_ms},
       {"best", std::move(best_json)},
       {"trialList", std::move(items)}});
}

}  // namespace

std::vector<Route> sweep_routes(ApiContext& api) {
  return {read_route("GET", R"(/v1/sweeps/([^/]+))", kUsers, bind_api(api, get_sweep))};
}

}  // namespace corral::server
