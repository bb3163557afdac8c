#include "cli/views/drift_view.h"

#include <sstream>

#include <fmt/format.h>

#include "cli/format/units_text.h"

namespace corral::cli {
namespace {

using nlohmann::json;

// "age, income of 3": the features that drifted, of how many.
std::string features_text(const json& features) {
  std::string drifted;
  for (const auto& [name, f] : features.items()) {
    if (field(f, "drifted") == true) drifted += (drifted.empty() ? "" : ", ") + name;
  }
  return fmt::format("{} of {}", drifted.empty() ? "none" : drifted, features.size());
}

std::string performance_text(const json& p) {
  if (!p.is_object()) return "-";
  std::string out = fmt::format("{} labels, mae {:.3g}", text(field(p, "labeled")),
                                field(p, "mae").get<double>());
  if (field(p, "accuracy").is_number()) {
    out += fmt::format(", accuracy {:.1f}%", field(p, "accuracy").get<double>() * 100);
  }
  return out;
}

std::string retraining_outcome_text(const json& r) {
  if (!r.is_object()) return "-";
  const std::string outcome = text(field(r, "outcome"));
  if (outcome == "submitted") return "submitted job " + text(field(r, "job"));
  if (outcome == "skipped") return "job " + text(field(r, "job")) + " still open";
  if (outcome == "refused") return "refused: " + text(field(r, "reason"));
  return outcome;
}

std::string limit_text(const json& v, const char* unit) {
  return v.is_number() ? fmt::format("{:g} {}", v.get<double>(), unit) : "no cap";
}

}  // namespace

Table drift_reports_table(const json& reports, const TimeStyle& style) {
  Table t{
      .headers = {"WHEN", "KIND", "SEGMENT", "DRIFTED", "FEATURES", "PERFORMANCE", "RETRAINING"}};
  for (const auto& r : reports) {
    const std::string segment = text(field(r, "segment"));
    t.rows.push_back({when_text(field(r, "atMs"), style), text(field(r, "kind")),
                      segment.empty() ? "-" : segment, field(r, "drifted") == true ? "yes" : "no",
                      features_text(field(r, "features")),
                      performance_text(field(r, "performance")),
                      retraining_outcome_text(field(r, "retraining"))});
  }
  return t;
}

std::string drift_report_text(const json& r, const TimeStyle& style) {
  std::ostringstream out;
  const auto line = [&](const char* key, const std::string& value) {
    out << fmt::format("{:<13}{}\n", std::string(key) + ":", value);
  };
  const std::string segment = text(field(r, "segment"));
  out << "drift report " << text(field(r, "id")) << " of " << text(field(r, "model")) << "@"
      << text(field(r, "version")) << (segment.empty() ? "" : ", segment " + segment) << "\n";
  line("when", when_text(field(r, "atMs"), style));
  line("drifted", features_text(field(r, "features")));
  if (field(r, "performance").is_object()) {
    line("performance", performance_text(field(r, "performance")));
  }
  if (field(r, "retraining").is_object()) {
    line("retraining", retraining_outcome_text(field(r, "retraining")));
  }
  // Each feature is judged by one statistic (registry/drift.h): the KS p-value drifts
  // below its threshold, the normed Wasserstein distance at or above it.
  Table t{.headers = {"FEATURE", "DRIFTED", "STATISTIC", "VALUE", "THRESHOLD", "PSI",
                      "JENSEN-SHANNON", "REFERENCE", "CURRENT"}};
  const auto number = [](const json& v) {
    return v.is_number() ? fmt::format("{:.3g}", v.get<double>()) : std::string("-");
  };
  for (const auto& [name, f] : field(r, "features").items()) {
    const bool ks = field(f, "method") == "ks";
    t.rows.push_back(
        {name, field(f, "drifted") == true ? "yes" : "no", ks ? "KS p-value" : "normed Wasserstein",
         number(field(f, ks ? "ksP" : "wassersteinNormed")), number(field(f, "threshold")),
         number(field(f, "psi")), number(field(f, "jensenShannon")),
         text(field(f, "referenceValues")), text(field(f, "currentValues"))});
  }
  out << "\n" << table_text(t);
  return out.str();
}

std::string retraining_text(const json& s, const TimeStyle& style) {
  std::ostringstream out;
  out << "model " << text(field(s, "model")) << " (tenant " << text(field(s, "tenant")) << ")\n";
  const json& job = field(s, "job");
  if (job.is_object()) {
    out << "retraining template: job " << text(field(job, "name")) << ", "
        << text(field(field(job, "resources"), "gpus")) << " GPUs, set by "
        << text(field(s, "setBy")) << " " << age_text(field(s, "setAtMs"), style) << " ago\n";
  } else {
    out << "retraining template: none (drift submits nothing)\n";
  }
  const json& b = field(s, "budget");
  const json& use = field(b, "inUse");
  out << "budget of tenant " << text(field(s, "tenant")) << ": "
      << limit_text(field(b, "maxGpus"), "GPUs at once") << ", "
      << limit_text(field(b, "gpuHours"), "GPU-hours") << " per " << text(field(b, "period"))
      << "\n";
  out << fmt::format("in use: {} GPUs now, {:.1f} GPU-hours since {} (the period ends {})\n",
                     text(field(use, "gpus")), field(use, "gpuHours").get<double>(),
                     when_text(field(use, "periodStartMs"), style),
                     when_text(field(use, "periodEndMs"), style));
  Table jobs{.headers = {"JOB", "VERSION", "REPORT", "PHASE", "GPUS", "SUBMITTED"}};
  for (const auto& j : field(s, "jobs")) {
    jobs.rows.push_back({text(field(j, "job")), text(field(j, "version")),
                         text(field(j, "reportId")), text(field(j, "phase")),
                         text(field(j, "gpus")), when_text(field(j, "submittedAtMs"), style)});
  }
  if (!jobs.rows.empty()) out << "\n" << table_text(jobs);
  return out.str();
}

}  // namespace corral::cli
