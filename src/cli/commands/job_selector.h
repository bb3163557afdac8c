// Which jobs a command means: --tenant, --state (one or more phases, comma separated;
// --phase is the same flag; unfinished jobs when not given), --label KEY=VALUE
// (repeatable; all must match) and --gpu-type. `corral jobs` lists them and `corral cancel` cancels
// them. Bad values are usage errors that name the flag and list the valid values, before any call
// is made.
//
// Thread safety: not for concurrent use.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"

namespace CLI {  // NOLINT(readability-identifier-naming): CLI11 names it, not us
class App;
}  // namespace CLI

namespace corral::cli {

struct JobSelector {
  std::string tenant;
  std::vector<std::string> states;  // as given: "pending,running" or repeated
  std::vector<std::string> labels;  // KEY=VALUE
  std::string gpu_type;
  bool all = false;  // finished jobs too, when no --state is given (`corral jobs --all`)

  // Adds the flags to `cmd`.
  void add_flags(CLI::App& cmd);
  // True when no flag was given.
  bool empty() const;
  // InvalidArgument naming the flag and listing what it accepts; else Ok. Fills the
  // parsed forms the two calls below use.
  core::Status check();
  // GET /v1/jobs with what the server filters (tenant, phases, gpuType): without --state,
  // the unfinished phases unless `all`.
  std::string list_path() const;
  // What the server does not filter: labels.
  bool matches(const nlohmann::json& job) const;

 private:
  std::vector<std::string> phases_;
  std::vector<std::pair<std::string, std::string>> label_pairs_;
};

// A job id as the API writes it: a positive decimal integer; InvalidArgument else.
core::Result<std::int64_t> parse_job_id(const std::string& text);

}  // namespace corral::cli
