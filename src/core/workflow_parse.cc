#include "core/workflow_parse.h"

#include <algorithm>
#include <map>
#include <string>

#include <fmt/format.h>

#include "core/internal/spec_tree.h"
#include "core/internal/spec_validator.h"
#include "core/json_object.h"
#include "core/utf8.h"

namespace corral::core {
namespace {

using internal::TreeKind;
using internal::TreeNode;

// The steps in an order where each follows the steps it names, or the cycle found.
struct Ordered {
  std::vector<std::size_t> order;
  std::vector<std::string> cycle;  // names, the first repeated at the end
};

Ordered order_steps(const std::vector<JobSpec>& steps) {
  std::map<std::string, std::size_t> by_name;
  for (std::size_t i = 0; i < steps.size(); ++i) by_name[steps[i].name] = i;
  enum class Mark { kNone, kOpen, kDone };
  std::vector<Mark> mark(steps.size(), Mark::kNone);
  std::vector<std::size_t> path;
  Ordered out;
  const auto visit = [&](std::size_t i, auto&& self) -> bool {
    if (mark[i] == Mark::kDone) return true;
    if (mark[i] == Mark::kOpen) {
      const auto from = std::find(path.begin(), path.end(), i);
      for (auto it = from; it != path.end(); ++it) out.cycle.push_back(steps[*it].name);
      out.cycle.push_back(steps[i].name);
      return false;
    }
    mark[i] = Mark::kOpen;
    path.push_back(i);
    for (const Dependency& d : steps[i].depends_on) {
      const auto named = d.id ? by_name.end() : by_name.find(d.name);
      if (named != by_name.end() && !self(named->second, self)) return false;
    }
    path.pop_back();
    mark[i] = Mark::kDone;
    out.order.push_back(i);
    return true;
  };
  for (std::size_t i = 0; i < steps.size(); ++i) {
    if (!visit(i, visit)) return out;
  }
  return out;
}

}  // namespace

WorkflowOutcome parse_workflow(std::string_view text, SpecFormat format) {
  WorkflowOutcome out;
  const auto fail = [&](std::string path, std::string reason) {
    out.errors.push_back({.path = std::move(path), .reason = std::move(reason)});
    return out;
  };
  if (text.size() > kMaxSpecBytes) {
    return fail("", fmt::format("document must be at most {} bytes (1 MiB), got {} bytes",
                                kMaxSpecBytes, text.size()));
  }
  if (const Status utf8 = check_json_utf8(text); !utf8.ok())
    return fail(utf8.field(), utf8.message());
  const internal::TreeReadResult tree =
      format == SpecFormat::kJson ? internal::read_json_tree(text) : internal::read_yaml_tree(text);
  if (!tree.root) return fail("", tree.error ? tree.error->reason : "unreadable document");
  const TreeNode& root = *tree.root;
  if (root.kind != TreeKind::kMap) {
    return fail("", "document must be a mapping with steps, got " + internal::describe(root));
  }
  const TreeNode* steps = nullptr;
  for (const auto& [key, value] : root.entries) {
    if (key != "steps") return fail(key, "unknown field, expected steps");
    steps = &value;
  }
  if (steps == nullptr) return fail("steps", "is required");
  if (steps->kind != TreeKind::kList || steps->items.empty()) {
    return fail("steps",
                "must be a non-empty list of job specs, got " + internal::describe(*steps));
  }
  if (steps->items.size() > kMaxWorkflowSteps) {
    return fail("steps", fmt::format("must have at most {} steps, got {}", kMaxWorkflowSteps,
                                     steps->items.size()));
  }
  std::vector<JobSpec> specs;
  std::map<std::string, std::size_t> seen;
  for (std::size_t i = 0; i < steps->items.size(); ++i) {
    const std::string path = element_path("steps", i);
    const TreeNode& step = steps->items[i];
    if (step.kind != TreeKind::kMap) {
      fail(path, "must be a job spec (a mapping), got " + internal::describe(step));
      continue;
    }
    internal::Validator validator;
    std::vector<FieldError> errors = validator.run(step);
    for (FieldError& e : errors) {
      e.path = e.path.empty() ? path : path + "." + e.path;
      out.errors.push_back(std::move(e));
    }
    if (!errors.empty()) continue;
    JobSpec spec = validator.take_spec();
    if (const auto [it, fresh] = seen.emplace(spec.name, i); !fresh) {
      fail(child_path(path, "name"),
           fmt::format("\"{}\" is also steps[{}]'s name; step names are unique", spec.name,
                       it->second));
      continue;
    }
    specs.push_back(std::move(spec));
  }
  if (!out.errors.empty()) return out;
  const Ordered ordered = order_steps(specs);
  if (!ordered.cycle.empty()) {
    std::string cycle;
    for (const std::string& name : ordered.cycle) cycle += (cycle.empty() ? "" : " -> ") + name;
    return fail("steps", "the steps' dependencies form a cycle: " + cycle);
  }
  for (const std::size_t i : ordered.order) out.steps.push_back(std::move(specs[i]));
  return out;
}

}  // namespace corral::core
