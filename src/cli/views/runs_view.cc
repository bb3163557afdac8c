#include "cli/views/runs_view.h"

#include <sstream>

#include <fmt/format.h>

#include "cli/format/units_text.h"
#include "cli/views/jobs_view.h"
#include "core/units.h"

namespace corral::cli {
namespace {

using nlohmann::json;

std::string list_text(const json& items) {
  std::string out;
  for (const json& i : items) {
    if (!out.empty()) out += ',';
    out += text(i);
  }
  return out.empty() ? "-" : out;
}

// "repo@commit" with the commit cut to 12 characters, as git shows one.
std::string code_text(const json& code) {
  const std::string repo = text(field(code, "repo")), commit = text(field(code, "commit"));
  if (repo.empty() && commit.empty()) return "-";
  return repo + "@" + commit.substr(0, 12);
}

std::string bytes_text(const json& bytes) {
  return bytes.is_number_integer() ? core::format_bytes(bytes.get<std::int64_t>()) : "-";
}

std::string value_text(const json& v) {
  return v.is_number() ? fmt::format("{:.6g}", v.get<double>()) : "-";
}

}  // namespace

Table runs_table(const json& runs, const TimeStyle& style, bool wide) {
  Table t{.headers = {"ID", "NAME", "TENANT", "STATUS", "ATTEMPTS", "DATASETS", "CODE", "CREATED"}};
  if (wide) t.headers.insert(t.headers.end(), {"IMAGE", "CONFIG"});
  for (const auto& r : runs) {
    std::vector<std::string> row = {
        text(field(r, "id")),        text(field(r, "name")),
        text(field(r, "tenant")),    text(field(r, "status")),
        text(field(r, "attempts")),  list_text(field(r, "datasets")),
        code_text(field(r, "code")), age_text(field(r, "createdAtMs"), style)};
    if (wide) {
      row.push_back(text(field(r, "image")));
      row.push_back(text(field(r, "configHash")).substr(0, 19));  // sha256: and 12 digits
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

std::string run_text(const json& r, const TimeStyle& style) {
  std::ostringstream out;
  const auto line = [&](const char* key, const std::string& value) {
    if (!value.empty()) out << fmt::format("{:<12}{}\n", std::string(key) + ":", value);
  };
  out << "run " << text(field(r, "id")) << " (" << text(field(r, "name")) << ")\n";
  line("tenant", text(field(r, "tenant")));
  line("status", text(field(r, "status")));
  if (!field(r, "reproduces").is_null()) line("reproduces", "run " + text(field(r, "reproduces")));
  line("created", when_text(field(r, "createdAtMs"), style));
  const json& m = field(r, "manifest");
  line("code", code_text(field(m, "code")));
  line("image", text(field(m, "image")));
  line("config", text(field(m, "configHash")));
  for (const json& d : field(m, "datasets")) {
    line("dataset", text(field(d, "ref")) + "  " + text(field(d, "digest")) + "  " +
                        bytes_text(field(d, "sizeBytes")) + "  " + text(field(d, "status")));
  }
  // The feature set versions it read through its agent (docs/features.md).
  for (const json& f : field(m, "features")) {
    line("features", text(field(f, "set")) + "  " + text(field(f, "lookups")) + " lookups of " +
                         text(field(f, "rows")) + " rows, the latest at " +
                         when_text(field(f, "latestAtMs"), style));
  }
  out << "\nattempts:\n";
  Table attempts{
      .headers = {"ATTEMPT", "GPUS", "TYPE", "PACKED", "NODES", "RESTORED FROM", "STARTED"}};
  for (const json& a : field(r, "attemptHistory")) {
    const json& from = field(a, "restoredFrom");
    attempts.rows.push_back(
        {text(field(a, "attempt")), std::to_string(field(a, "gpus").size()),
         text(field(a, "gpuType")), text(field(a, "packed")), list_text(field(a, "nodes")),
         from.is_null() ? "-"
                        : text(field(from, "uri")) + " (step " + text(field(from, "step")) + ")",
         when_text(field(a, "startedAtMs"), style)});
  }
  out << table_text(attempts);
  out << "\nmetrics:\n";
  Table metrics{.headers = {"NAME", "POINTS", "LAST STEP", "LAST VALUE"}};
  for (const json& x : field(r, "metrics")) {
    metrics.rows.push_back({text(field(x, "name")), text(field(x, "points")),
                            text(field(x, "lastStep")), value_text(field(x, "lastValue"))});
  }
  out << table_text(metrics);
  out << "\nartifacts:\n";
  Table artifacts{.headers = {"KIND", "NAME", "SIZE", "ATTEMPT", "URI", "DIGEST"}};
  for (const json& a : field(r, "artifacts")) {
    artifacts.rows.push_back({text(field(a, "kind")), text(field(a, "name")),
                              bytes_text(field(a, "bytes")), text(field(a, "attempt")),
                              text(field(a, "uri")), text(field(a, "digest")).substr(0, 19)});
  }
  out << table_text(artifacts);
  return out.str();
}

std::string sweep_text(const json& s) {
  std::ostringstream out;
  const std::string limit = s.value("maxRunning", 0) > 0
                                ? "at most " + text(field(s, "maxRunning")) + " running"
                                : "no limit on how many run";
  out << fmt::format("sweep {} {} ({}): {}, {} trials, {}\n", text(field(s, "id")),
                     text(field(s, "name")), text(field(s, "tenant")), text(field(s, "method")),
                     text(field(s, "trials")), limit);
  const json& metric = field(s, "metric");
  std::string stopping = "none (every trial runs to its end)";
  if (const json& e = field(s, "earlyStopping"); e.is_object()) {
    std::string steps;
    for (const json& step : field(e, "rungSteps"))
      steps += (steps.empty() ? "" : ", ") + text(step);
    stopping = "ASHA, rungs at steps " + steps + ", the best 1/" +
               text(field(e, "reductionFactor")) + " go on";
  }
  out << fmt::format("metric:     {} ({})\nstopping:   {}\n", text(field(metric, "name")),
                     text(field(metric, "goal")), stopping);
  std::map<std::string, std::int64_t> counts;
  for (const auto& [phase, n] : field(s, "phases").items()) counts[phase] = n.get<std::int64_t>();
  out << fmt::format("trials:     {}; {} stopped early; {:.2f} GPU-hours\n",
                     phase_counts_text(counts), text(field(s, "stoppedEarly")),
                     s.value("gpuMs", std::int64_t{0}) / 3.6e6);
  const auto params_text = [](const json& params) {
    std::string t;
    for (const auto& [name, value] : params.items()) {
      t += (t.empty() ? "" : " ") + name + "=" +
           (value.is_string() ? value.get<std::string>() : value.dump());
    }
    return t;
  };
  if (const json& best = field(s, "best"); best.is_object()) {
    out << fmt::format("best:       trial {} (job {}): {} {} at step {}; {}\n",
                       text(field(best, "index")), text(field(best, "job")),
                       text(field(metric, "name")), value_text(field(best, "value")),
                       text(field(best, "step")), params_text(field(best, "parameters")));
    const json& m = field(field(best, "run"), "manifest");
    std::string datasets;
    for (const json& d : field(m, "datasets"))
      datasets += (datasets.empty() ? "" : ",") + text(field(d, "ref"));
    out << fmt::format("best run:   datasets {}, code {}, config {}\n",
                       datasets.empty() ? "-" : datasets, code_text(field(m, "code")),
                       text(field(m, "configHash")).substr(0, 19));
    for (const json& a : field(field(best, "run"), "artifacts")) {
      if (text(field(a, "kind")) != "artifact") continue;
      out << fmt::format("artifact:   {} {} ({})\n", text(field(a, "name")), text(field(a, "uri")),
                         bytes_text(field(a, "bytes")));
    }
  } else {
    out << "best:       none yet (no trial has run to its end)\n";
  }
  out << "\n";
  Table t{
      .headers = {"INDEX", "JOB", "STATE", "PARAMETERS", "RUNGS", "STEP", "VALUE", "GPU-HOURS"}};
  for (const json& trial : field(s, "trialList")) {
    const json& stopped = field(trial, "stoppedAtRung");
    t.rows.push_back({text(field(trial, "index")), text(field(trial, "job")),
                      text(field(trial, "phase")), params_text(field(trial, "parameters")),
                      text(field(trial, "rungsPassed")) +
                          (stopped.is_null() ? "" : ", stopped at " + text(stopped)),
                      text(field(trial, "lastStep")), value_text(field(trial, "lastValue")),
                      fmt::format("{:.2f}", trial.value("gpuMs", std::int64_t{0}) / 3.6e6)});
  }
  out << table_text(t);
  return out.str();
}

Table metric_points_table(const json& points, const TimeStyle& style) {
  Table t{.headers = {"NAME", "STEP", "VALUE", "ATTEMPT", "REPORTED"}};
  for (const auto& p : points) {
    t.rows.push_back({text(field(p, "name")), text(field(p, "step")), value_text(field(p, "value")),
                      text(field(p, "attempt")), age_text(field(p, "atMs"), style)});
  }
  return t;
}

}  // namespace corral::cli
