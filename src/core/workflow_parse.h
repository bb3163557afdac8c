// A workflow: several job specs submitted as one document, whose steps depend on one
// another by name (docs/jobspec.md, "Workflows"):
//
//   steps:
//     - {name: prep, ...}
//     - {name: train, dependsOn: [{job: prep}], ...}
//
// Thread safety: free functions without shared state.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "core/job_spec.h"
#include "core/job_spec_parse.h"

namespace corral::core {

// The most steps one workflow may have, and the most jobs its steps may make (an array
// step makes its tasks), as many as one array may have.
inline constexpr std::size_t kMaxWorkflowSteps = 256;
inline constexpr std::int64_t kMaxWorkflowTasks = 10000;

// Either the steps or every error, never both.
struct WorkflowOutcome {
  std::vector<JobSpec> steps;  // each after the steps it names (a topological order)
  std::vector<FieldError> errors;
  bool ok() const { return errors.empty(); }
};

// Parses `{steps: [SPEC, ...]}`: each step is validated as parse_job_spec() would (its
// errors' paths start with "steps[i]."); step names are unique; a dependency naming a
// step (`job: NAME`) is on that step, and the steps' dependencies on one another form no
// cycle (the error names it: "train -> eval -> train"). A name that is not a step's is
// left for corrald to resolve like any other (the tenant's latest job of that name).
WorkflowOutcome parse_workflow(std::string_view text, SpecFormat format);

}  // namespace corral::core
