// job_spec_to_json: the normalized JSON form of a JobSpec (see job_spec_parse.h).
#include <string>

#include <nlohmann/json.hpp>

#include "core/job_spec_parse.h"
#include "core/units.h"

namespace corral::core {
namespace {

// ordered_json keeps keys in schema order, so the output reads like the docs.
using Json = nlohmann::ordered_json;

Json string_map(const std::map<std::string, std::string>& m) {
  Json out = Json::object();
  for (const auto& [key, value] : m) {
    out[key] = value;
  }
  return out;
}

Json sweep_json(const SweepSpec& s) {
  Json params = Json::object();
  for (const SweepParameter& p : s.parameters) {
    if (p.values.empty()) {
      params[p.name] = {{"min", p.min}, {"max", p.max}, {"log", p.log}};
    } else {
      Json values = Json::array();
      for (const std::string& v : p.values) values.push_back(Json::parse(v));
      params[p.name] = {{"values", std::move(values)}};
    }
  }
  Json out = {{"method", to_string(s.method)}, {"parameters", std::move(params)}};
  out["trials"] = s.trials;
  out["seed"] = s.seed;
  out["maxRunning"] = s.max_running;
  out["metric"] = {{"name", s.metric}, {"goal", to_string(s.goal)}};
  if (s.early_stopping) {
    out["earlyStopping"] = {{"rule", "asha"},
                            {"minStep", s.early_stopping->min_step},
                            {"maxStep", s.early_stopping->max_step},
                            {"reductionFactor", s.early_stopping->reduction_factor}};
  }
  return out;
}

}  // namespace

std::string job_spec_to_json(const JobSpec& spec) {
  Json out = Json::object();
  out["name"] = spec.name;
  out["tenant"] = spec.tenant.value;
  out["priorityClass"] = spec.priority_class;

  Json resources = Json::object();
  resources["gpus"] = spec.resources.gpus;
  if (spec.resources.gpu_milli > 0) {  // whole GPUs: written as absent
    resources["gpuShare"] = spec.resources.gpu_milli / 1000.0;
  }
  if (spec.resources.gpu_memory_mib > 0) {
    resources["gpuMemoryGiB"] = static_cast<double>(spec.resources.gpu_memory_mib) / 1024.0;
  }
  Json types = Json::array();
  for (const auto& type : spec.resources.gpu_types) {
    types.push_back(type.value);
  }
  resources["gpuTypes"] = std::move(types);
  if (!spec.resources.gpu_speed.empty()) {
    Json speed = Json::object();
    for (const auto& [type, value] : spec.resources.gpu_speed) speed[type.value] = value;
    resources["gpuSpeed"] = std::move(speed);
  }
  if (spec.resources.gpus_per_node > 0) {  // 0: the scheduler chooses, written as absent
    resources["gpusPerNode"] = spec.resources.gpus_per_node;
  }
  resources["cpusPerGpu"] = spec.resources.cpus_per_gpu;
  resources["memoryPerGpu"] = format_memory_mib(spec.resources.memory_per_gpu_mib);
  if (!spec.resources.region.empty()) {  // empty: any region, written as absent
    resources["region"] = spec.resources.region;
  }
  out["resources"] = std::move(resources);

  out["topology"] = {{"pack", to_string(spec.topology.pack)},
                     {"mode", to_string(spec.topology.mode)}};
  if (spec.elastic) {
    Json elastic = {{"minGpus", spec.elastic->min_gpus}, {"maxGpus", spec.elastic->max_gpus}};
    if (spec.elastic->step == ElasticStep::kPowerOfTwo) {
      elastic["step"] = "pow2";
    } else {
      elastic["step"] = spec.elastic->step_multiple;
    }
    if (!spec.elastic->scaling.empty()) {
      Json curve = Json::array();
      for (const ScalingPoint& p : spec.elastic->scaling) {
        curve.push_back({{"gpus", p.gpus}, {"throughput", p.throughput}});
      }
      elastic["scaling"] = std::move(curve);
    }
    out["elastic"] = std::move(elastic);
  }
  out["preemptible"] = spec.preemptible;
  if (spec.checkpoint) {
    // The schema counts whole seconds; the parser only produces whole seconds.
    out["checkpoint"] = {{"dir", spec.checkpoint->dir},
                         {"intervalSeconds", to_ms(spec.checkpoint->interval) / 1000},
                         {"restoreSeconds", to_ms(spec.checkpoint->restore_time) / 1000}};
  }
  out["maxRuntime"] = format_duration(spec.max_runtime);
  if (spec.expected_runtime.count() > 0) {
    out["expectedRuntime"] = format_duration(spec.expected_runtime);
  }
  if (spec.reservation) {
    out["reservation"] = spec.reservation->value;
  }
  out["processes"] = to_string(spec.processes);
  out["maxRestarts"] = spec.max_restarts;
  out["command"] = spec.command;
  out["env"] = string_map(spec.env);
  Json secrets = Json::object();
  // Secrets are never echoed: only their names leave the process.
  for (const auto& [key, value] : spec.secret_env) {
    secrets[key] = kSecretMask;
  }
  out["secretEnv"] = std::move(secrets);
  Json datasets = Json::array();
  for (const DatasetRef& d : spec.lineage.datasets) datasets.push_back(d.text());
  out["lineage"] = {
      {"datasets", std::move(datasets)},
      {"code", {{"repo", spec.lineage.code.repo}, {"commit", spec.lineage.code.commit}}},
      {"image", spec.lineage.image},
      {"dataset", spec.lineage.dataset}};
  out["labels"] = string_map(spec.labels);
  // A sweep's array is the sweep's own (written as the sweep's trials and maxRunning).
  if (spec.array && !spec.sweep) {
    out["array"] = {{"count", spec.array->count}, {"maxRunning", spec.array->max_running}};
  }
  if (!spec.depends_on.empty()) {
    Json deps = Json::array();
    for (const Dependency& d : spec.depends_on) {
      Json job = d.id ? Json(d.id->value) : Json(d.name);
      deps.push_back(
          {{"job", std::move(job)}, {"on", to_string(d.on)}, {"elementwise", d.elementwise}});
    }
    out["dependsOn"] = std::move(deps);
  }
  if (spec.retry) {
    const RetryPolicy& r = *spec.retry;
    Json retry = Json::object();
    if (!r.on_exit_codes.empty()) retry["onExitCodes"] = r.on_exit_codes;
    if (r.on_node_failure >= 0) retry["onNodeFailure"] = r.on_node_failure;
    if (r.on_out_of_memory >= 0) retry["onOutOfMemory"] = r.on_out_of_memory;
    if (r.on_preemption == 0) retry["onPreemption"] = "never";
    if (r.on_preemption > 0) retry["onPreemption"] = r.on_preemption;
    retry["expedite"] = r.expedite;
    Json backoff = Json::object();  // 0 (corrald's) written as absent
    if (r.backoff_initial.count() > 0) backoff["initialSeconds"] = to_ms(r.backoff_initial) / 1000;
    if (r.backoff_max.count() > 0) backoff["maxSeconds"] = to_ms(r.backoff_max) / 1000;
    if (!backoff.empty()) retry["backoff"] = std::move(backoff);
    out["retry"] = std::move(retry);
  }
  if (spec.sweep) out["sweep"] = sweep_json(*spec.sweep);
  if (spec.session) {
    Json session = Json::object();  // 0 (corrald's) written as absent
    if (spec.session->idle_timeout.count() > 0) {
      session["idleTimeout"] = format_duration(spec.session->idle_timeout);
    }
    out["session"] = std::move(session);
  }
  // A spec built in code may hold bytes that are not UTF-8; replace them rather than
  // throw (parsed specs are always valid UTF-8, so they round-trip exactly).
  return out.dump(2, ' ', false, Json::error_handler_t::replace);
}

}  // namespace corral::core
