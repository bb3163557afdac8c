#include "cli/commands/job_selector.h"

#include <algorithm>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands/remote.h"
#include "core/gpu_type.h"
#include "core/job_phase.h"

namespace corral::cli {
namespace {

std::string known_phases() {
  std::string out;
  for (int p = 0; p <= static_cast<int>(core::JobPhase::kCancelled); ++p) {
    out += (out.empty() ? "" : ", ") + std::string(core::to_string(static_cast<core::JobPhase>(p)));
  }
  return out;
}

std::string known_gpu_types() {
  std::string out;
  for (const auto& t : core::builtin_gpu_types()) out += (out.empty() ? "" : ", ") + t.id.value;
  return out;
}

}  // namespace

void JobSelector::add_flags(CLI::App& cmd) {
  cmd.add_option("--tenant", tenant, "only this tenant's jobs");
  cmd.add_option("--state,--phase", states,
                 "only jobs in these phases (comma separated or repeated): " + known_phases())
      ->delimiter(',')
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd.add_option("--label,-l", labels, "only jobs with this label, KEY=VALUE (repeatable)")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd.add_option("--gpu-type", gpu_type, "only jobs that accept this GPU type");
}

bool JobSelector::empty() const {
  return tenant.empty() && states.empty() && labels.empty() && gpu_type.empty();
}

core::Status JobSelector::check() {
  phases_.clear();
  label_pairs_.clear();
  for (const auto& s : states) {
    if (!core::job_phase_from_string(s)) {
      return core::invalid_argument(
          "--state", fmt::format("unknown state \"{}\"; valid states: {}", s, known_phases()));
    }
    if (std::find(phases_.begin(), phases_.end(), s) == phases_.end()) phases_.push_back(s);
  }
  for (const auto& l : labels) {
    const auto eq = l.find('=');
    if (eq == std::string::npos || eq == 0) {
      return core::invalid_argument("--label", "must be KEY=VALUE, got \"" + l + "\"");
    }
    label_pairs_.emplace_back(l.substr(0, eq), l.substr(eq + 1));
  }
  if (!gpu_type.empty() && !core::find_builtin_gpu_type(gpu_type)) {
    return core::invalid_argument(
        "--gpu-type",
        fmt::format("unknown GPU type \"{}\"; known types: {}", gpu_type, known_gpu_types()));
  }
  return core::Status();
}

std::string JobSelector::list_path() const {
  std::string q;
  const auto add = [&](const char* k, const std::string& v) {
    if (!v.empty()) q += (q.empty() ? "?" : "&") + std::string(k) + "=" + query_value(v);
  };
  add("tenant", tenant);
  std::string phases;
  for (const std::string& p : phases_) phases += (phases.empty() ? "" : ",") + p;
  if (phases_.empty() && !all) {
    for (const core::JobPhase p : core::unfinished_phases()) {
      phases += (phases.empty() ? "" : ",") + std::string(core::to_string(p));
    }
  }
  add("phase", phases);
  add("gpuType", gpu_type);
  return "/v1/jobs" + q;
}

bool JobSelector::matches(const nlohmann::json& job) const {
  const nlohmann::json& job_labels = field(field(job, "spec"), "labels");
  for (const auto& [k, v] : label_pairs_) {
    if (text(field(job_labels, k.c_str())) != v || !field(job_labels, k.c_str()).is_string()) {
      return false;
    }
  }
  return true;
}

core::Result<std::int64_t> parse_job_id(const std::string& text) {
  const bool digits =
      !text.empty() && text.size() <= 18 &&
      std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!digits || std::stoll(text) <= 0) {
    return core::invalid_argument("id", "a job id is a positive integer, got \"" + text + "\"");
  }
  return std::stoll(text);
}

}  // namespace corral::cli
