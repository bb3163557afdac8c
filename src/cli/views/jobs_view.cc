#include "cli/views/jobs_view.h"

#include <map>
#include <sstream>

#include <fmt/format.h>

#include "cli/format/node_list.h"
#include "cli/format/units_text.h"
#include "core/job_phase.h"
#include "core/units.h"

namespace corral::cli {
namespace {

using nlohmann::json;

bool phase_in(const json& job, std::initializer_list<core::JobPhase> phases) {
  const auto p = core::job_phase_from_string(job.value("phase", ""));
  for (const auto q : phases) {
    if (p == q) return true;
  }
  return false;
}

std::vector<std::string> node_names(const json& allocation) {
  std::vector<std::string> nodes;
  if (!allocation.is_object()) return nodes;
  for (const auto& g : allocation.value("gpus", json::array()))
    nodes.push_back(text(field(g, "node")));
  return nodes;
}

// How long it has waited (queued, not placed) or run (placed), from the times it has.
std::string wait_run_text(const json& job, const json& allocation, const TimeStyle& style) {
  using P = core::JobPhase;
  if (phase_in(job, {P::kPending, P::kAdmitted, P::kRequeued})) {
    const auto since = ms_time(field(job, "queuedAtMs")) ? ms_time(field(job, "queuedAtMs"))
                                                         : ms_time(field(job, "createdAtMs"));
    return since ? "wait " + duration_text(style.now - *since) : "-";
  }
  if (phase_in(job, {P::kLaunching, P::kRunning, P::kPreempting})) {
    const json at =
        allocation.is_object() ? field(allocation, "createdAtMs") : field(job, "updatedAtMs");
    const auto since = ms_time(at);
    return since ? "run " + duration_text(style.now - *since) : "-";
  }
  return "-";
}

// The GPU types it runs on, else those it accepts ("any": the spec names none).
std::string gpu_type_text(const json& job, const json& allocation) {
  if (allocation.is_object()) return text(field(allocation, "gpuType"));
  const json& spec = field(job, "spec");
  if (!spec.is_object() || !spec.contains("resources")) return "";
  std::string out;
  for (const auto& t : field(spec, "resources").value("gpuTypes", json::array())) {
    out += (out.empty() ? "" : "|") + text(t);
  }
  return out.empty() ? "any" : out;
}

// "0-3,6": GPU indices folded into ranges.
std::string index_list_text(std::vector<std::int64_t> ix) {
  std::sort(ix.begin(), ix.end());
  std::string out;
  for (std::size_t i = 0; i < ix.size();) {
    std::size_t j = i;
    while (j + 1 < ix.size() && ix[j + 1] == ix[j] + 1) ++j;
    out += (out.empty() ? "" : ",") + std::to_string(ix[i]);
    if (j > i) out += "-" + std::to_string(ix[j]);
    i = j + 1;
  }
  return out;
}

std::string spec_labels_text(const json& job) {
  const json& spec = field(job, "spec");
  std::string out;
  if (!spec.is_object()) return out;
  const json& labels = field(spec, "labels");
  if (!labels.is_object()) return out;
  for (const auto& [k, v] : labels.items()) {
    out += (out.empty() ? "" : ", ") + k + "=" + text(v);
  }
  return out;
}

}  // namespace

std::string phase_counts_text(const std::map<std::string, std::int64_t>& counts) {
  std::string out;
  for (const core::JobPhase phase :
       {core::JobPhase::kRunning, core::JobPhase::kLaunching, core::JobPhase::kPreempting,
        core::JobPhase::kRequeued, core::JobPhase::kAdmitted, core::JobPhase::kPending,
        core::JobPhase::kSucceeded, core::JobPhase::kFailed, core::JobPhase::kCancelled}) {
    const auto it = counts.find(std::string(core::to_string(phase)));
    if (it == counts.end() || it->second == 0) continue;
    out += fmt::format("{}{} {}", out.empty() ? "" : ", ", it->second, it->first);
  }
  return out;
}

Table jobs_table(const json& jobs, const json& allocations, const TimeStyle& style, bool wide) {
  std::map<std::int64_t, const json*> allocation_of;
  for (const auto& a : allocations) allocation_of[a.value("job", std::int64_t{0})] = &a;
  // An array's tasks fold into one row, where its first listed task is: "42[200]", its
  // tasks' states counted, the reason of its first task still waiting.
  std::map<std::int64_t, std::vector<const json*>> tasks_of;
  for (const auto& j : jobs) {
    const json& array = field(j, "array");
    if (array.is_object()) tasks_of[array.value("job", std::int64_t{0})].push_back(&j);
  }
  Table t{.headers = {"ID", "NAME", "TENANT", "STATE", "GPUS", "NODES"}};
  if (wide) t.headers.insert(t.headers.end(), {"SIZE", "GPU TYPE", "CLASS", "ATTEMPT"});
  t.headers.insert(t.headers.end(), {"AGE", "WAIT/RUN", "REASON"});
  for (const auto& j : jobs) {
    const json& array = field(j, "array");
    if (array.is_object()) {
      const auto tasks = tasks_of.find(array.value("job", std::int64_t{0}));
      if (tasks == tasks_of.end()) continue;  // folded into the row already printed
      std::map<std::string, std::int64_t> counts;
      std::string reason;
      for (const json* task : tasks->second) {
        ++counts[task->value("phase", "")];
        if (reason.empty() && task->value("phase", "") == "pending") {
          reason = reason_text(task->value("reason", ""), style);
        }
      }
      std::vector<std::string> row = {fmt::format("{}[{}]", tasks->first, tasks->second.size()),
                                      text(field(j, "name")),
                                      text(field(j, "tenant")),
                                      phase_counts_text(counts),
                                      text(field(j, "gpus")) + " each",
                                      ""};
      if (wide) row.insert(row.end(), {"", "", text(field(j, "priorityClass")), ""});
      row.insert(row.end(), {age_text(field(j, "createdAtMs"), style), "", reason});
      t.rows.push_back(std::move(row));
      tasks_of.erase(tasks);
      continue;
    }
    const auto it = allocation_of.find(j.value("id", std::int64_t{0}));
    const json alloc = it == allocation_of.end() ? json(nullptr) : *it->second;
    std::vector<std::string> row = {text(field(j, "id")),     text(field(j, "name")),
                                    text(field(j, "tenant")), text(field(j, "phase")),
                                    text(field(j, "gpus")),   node_list_text(node_names(alloc))};
    if (wide) {
      const std::int64_t held = j.value("heldGpus", std::int64_t{0});
      row.insert(row.end(), {held > 0 ? std::to_string(held) : "", gpu_type_text(j, alloc),
                             text(field(j, "priorityClass")), text(field(j, "attempt"))});
    }
    row.insert(row.end(), {age_text(field(j, "createdAtMs"), style), wait_run_text(j, alloc, style),
                           reason_text(j.value("reason", ""), style)});
    t.rows.push_back(std::move(row));
  }
  return t;
}

std::string array_text(const json& array, const TimeStyle& style) {
  std::ostringstream out;
  std::map<std::string, std::int64_t> counts;
  for (const auto& [phase, n] : field(array, "phases").items())
    counts[phase] = n.get<std::int64_t>();
  const json& cost = field(array, "cost");
  out << fmt::format("\narray {} of {} tasks (maxRunning {}): {}\n", text(field(array, "id")),
                     text(field(array, "count")),
                     array.value("maxRunning", 0) > 0 ? text(field(array, "maxRunning")) : "none",
                     phase_counts_text(counts));
  if (cost.is_object()) {
    out << fmt::format("array cost: {:.2f} GPU-hours, {} {} so far\n", cost.value("gpuHours", 0.0),
                       money_text(cost.value("amountMicros", std::int64_t{0})),
                       text(field(cost, "currency")));
  }
  Table t{.headers = {"INDEX", "JOB", "STATE", "ATTEMPT", "GPU-HOURS", "REASON"}};
  for (const auto& task : field(array, "tasks")) {
    const json& c = field(task, "cost");
    t.rows.push_back({text(field(task, "index")), text(field(task, "job")),
                      text(field(task, "phase")), text(field(task, "attempt")),
                      c.is_object() ? fmt::format("{:.2f}", c.value("gpuHours", 0.0)) : "",
                      reason_text(task.value("reason", ""), style)});
  }
  out << table_text(t);
  return out.str();
}

std::string job_text(const json& j, const json& events, const TimeStyle& style) {
  std::ostringstream out;
  const auto line = [&](const char* key, const std::string& value) {
    if (!value.empty()) out << fmt::format("{:<12}{}\n", std::string(key) + ":", value);
  };
  out << "job " << text(field(j, "id")) << " " << text(field(j, "name")) << "\n";
  line("tenant", text(field(j, "tenant")));
  line("class", text(field(j, "priorityClass")));
  std::string state = text(field(j, "phase"));
  if (j.value("attempt", 0) > 0) state += fmt::format(" (attempt {})", j.value("attempt", 0));
  line("state", state);
  line("reason", reason_text(j.value("reason", ""), style));
  std::string gpus = text(field(j, "gpus")) + " asked";
  if (j.value("heldGpus", 0) > 0) gpus += fmt::format(", {} held", j.value("heldGpus", 0));
  line("gpus", gpus);
  line("labels", spec_labels_text(j));
  const json& alloc = field(j, "allocation");
  if (alloc.is_object()) {
    std::map<std::string, std::vector<std::int64_t>> by_node;
    for (const auto& g : alloc.value("gpus", json::array())) {
      by_node[text(field(g, "node"))].push_back(g.value("index", std::int64_t{0}));
    }
    std::string where;
    for (const auto& [node, ix] : by_node) {
      where += (where.empty() ? "" : ", ") + node + " (GPU " + index_list_text(ix) + ")";
    }
    // A share of each GPU: "0.25 of H100 on n1 (GPU 3)".
    const std::int64_t share = alloc.value("shareMilli", std::int64_t{0});
    const std::string what = share > 0 ? core::format_gpu_milli(share) + " of " : "";
    line("placed", what + text(field(alloc, "gpuType")) + " on " + where + ", epoch " +
                       text(field(alloc, "epoch")));
  }
  line("submitted", when_text(field(j, "createdAtMs"), style));
  line("queued", when_text(field(j, "queuedAtMs"), style));
  line("wait/run", wait_run_text(j, alloc, style));
  const json& planned = field(j, "plannedStart");
  if (planned.is_object()) {
    const json& latest = field(planned, "latestAtMs");
    line("start", latest.is_number() ? "planned " + when_text(field(planned, "atMs"), style) +
                                           ", at the latest " + when_text(latest, style)
                                     : "expected " + when_text(field(planned, "atMs"), style) +
                                           " (a forecast from running jobs' expected ends)");
  }
  const json& ckpt = field(j, "lastCheckpoint");
  if (ckpt.is_object()) {
    line("checkpoint", "step " + text(field(ckpt, "step")) + " at " + text(field(ckpt, "uri")) +
                           ", " + when_text(field(ckpt, "timeMs"), style));
  }
  const json& cost = field(j, "cost");
  if (cost.is_object()) {
    line("cost", fmt::format("{:.2f} GPU-hours, {} {} so far", cost.value("gpuHours", 0.0),
                             money_text(cost.value("amountMicros", std::int64_t{0})),
                             text(field(cost, "currency"))));
  }
  if (events.is_array()) {
    Table t{.headers = {"TIME", "EVENT", "MESSAGE"}};
    for (const auto& e : events) {
      t.rows.push_back({date_text(field(e, "timeMs"), style.zone), text(field(e, "kind")),
                        reason_text(e.value("message", ""), style)});
    }
    out << "\nevents:\n" << table_text(t);
  }
  return out.str();
}

Table queue_table(const json& queue, const TimeStyle& style, bool wide) {
  Table t{.headers = {"POS", "JOB", "NAME", "TENANT", "GPUS", "WAIT", "KIND"}};
  if (wide) t.headers.insert(t.headers.end(), {"CLASS", "PLANNED START"});
  t.headers.push_back("REASON");
  for (const auto& q : queue) {
    const auto queued = ms_time(field(q, "queuedAtMs"));
    std::vector<std::string> row = {q.value("position", 0) > 0 ? text(field(q, "position")) : "",
                                    text(field(q, "job")),
                                    text(field(q, "name")),
                                    text(field(q, "tenant")),
                                    text(field(q, "gpus")),
                                    queued ? duration_text(style.now - *queued) : "",
                                    text(field(q, "kind"))};
    if (wide) {
      const json& planned = field(q, "plannedStart");
      row.push_back(text(field(q, "priorityClass")));
      row.push_back(planned.is_object() ? when_text(field(planned, "atMs"), style) : "");
    }
    row.push_back(reason_text(q.value("reason", ""), style));
    t.rows.push_back(std::move(row));
  }
  return t;
}

}  // namespace corral::cli
