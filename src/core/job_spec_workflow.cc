// The job spec's workflow fields: job arrays and dependencies (docs/jobspec.md).
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "core/internal/spec_tree.h"
#include "core/internal/spec_validator.h"
#include "core/json_object.h"

namespace corral::core::internal {

void Validator::read_array(const TreeNode* node) {
  const TreeNode* map = as_map(node, "array");
  if (map == nullptr) return;
  const FieldMap f = fields(*map, "array", {"count", "maxRunning"});
  if (f.get("count") == nullptr) fail("array.count", "is required");
  const auto count = read_int(f.get("count"), "array.count", 1, kMaxArrayCount);
  const auto max_running = read_int(f.get("maxRunning"), "array.maxRunning", 0, kMaxArrayCount);
  if (!count) return;
  ArraySpec array{.count = static_cast<std::int32_t>(*count)};
  if (max_running) {
    if (*max_running > *count) {
      fail("array.maxRunning",
           fmt::format("must not exceed array.count ({}), got {}", *count, *max_running));
    } else {
      array.max_running = static_cast<std::int32_t>(*max_running);
    }
  }
  spec_.array = array;
}

void Validator::read_depends_on(const TreeNode* node) {
  const std::string path = "dependsOn";
  if (node == nullptr) return;
  if (node->kind != TreeKind::kList) {
    fail(path, fmt::format("must be a list of {{job, on}} mappings, got {}", describe(*node)));
    return;
  }
  if (node->items.size() > kMaxDependencies) {
    fail(path,
         fmt::format("must have at most {} entries, got {}", kMaxDependencies, node->items.size()));
    return;
  }
  for (std::size_t i = 0; i < node->items.size(); ++i) {
    const std::string item_path = element_path(path, i);
    const TreeNode* map = as_map(&node->items[i], item_path);
    if (map == nullptr) continue;
    const FieldMap f = fields(*map, item_path, {"job", "on", "elementwise"});
    Dependency dep;
    bool ok = true;
    // The job: an id (a positive integer, or its digits as a string) or a job name.
    const std::string job_path = child_path(item_path, "job");
    const TreeNode* job = f.get("job");
    if (job == nullptr) {
      fail(job_path, "is required");
      ok = false;
    } else if (job->kind == TreeKind::kInt) {
      if (auto id = read_int(job, job_path, 1, INT64_MAX)) {
        dep.id = JobId(*id);
      } else {
        ok = false;
      }
    } else if (auto text = read_string(job, job_path)) {
      const bool digits = !text->empty() && text->size() <= 18 &&
                          text->find_first_not_of("0123456789") == std::string::npos &&
                          text->front() != '0';
      if (digits) {
        dep.id = JobId(std::stoll(*text));
      } else if (auto name = read_dns_label(job, job_path)) {
        dep.name = std::move(*name);
      } else {
        ok = false;
      }
    } else {
      ok = false;
    }
    if (auto on = read_choice(f.get("on"), child_path(item_path, "on"),
                              {"success", "failure", "finish", "start"})) {
      dep.on = static_cast<DependencyCondition>(*on);
    } else if (f.get("on") != nullptr) {
      ok = false;
    }
    if (auto each = read_bool(f.get("elementwise"), child_path(item_path, "elementwise"))) {
      dep.elementwise = *each;
    }
    if (ok) spec_.depends_on.push_back(std::move(dep));
  }
}

void Validator::read_retry(const TreeNode* node) {
  const TreeNode* map = as_map(node, "retry");
  if (map == nullptr) return;
  const FieldMap f = fields(
      *map, "retry",
      {"onExitCodes", "onNodeFailure", "onOutOfMemory", "onPreemption", "expedite", "backoff"});
  RetryPolicy retry;
  if (const TreeNode* codes = f.get("onExitCodes")) {
    if (codes->kind != TreeKind::kList || codes->items.empty()) {
      fail("retry.onExitCodes",
           fmt::format("must be a non-empty list of exit codes, got {}", describe(*codes)));
    } else if (codes->items.size() > 255) {
      fail("retry.onExitCodes", "must have at most 255 codes");
    } else {
      for (std::size_t i = 0; i < codes->items.size(); ++i) {
        if (auto code = read_int(&codes->items[i], element_path("retry.onExitCodes", i), 1, 255)) {
          retry.on_exit_codes.push_back(static_cast<std::int32_t>(*code));
        }
      }
    }
  }
  if (auto n = read_int(f.get("onNodeFailure"), "retry.onNodeFailure", 0, kMaxRestarts)) {
    retry.on_node_failure = static_cast<std::int32_t>(*n);
  }
  if (auto n = read_int(f.get("onOutOfMemory"), "retry.onOutOfMemory", 0, kMaxRestarts)) {
    retry.on_out_of_memory = static_cast<std::int32_t>(*n);
  }
  if (const TreeNode* p = f.get("onPreemption")) {
    // always | never | N: a word for the two ends, a count between.
    if (p->kind == TreeKind::kString && (p->text == "always" || p->text == "never")) {
      retry.on_preemption = p->text == "always" ? -1 : 0;
    } else if (p->kind == TreeKind::kString) {
      fail("retry.onPreemption",
           fmt::format("must be always, never or a count from 0 to {}, got {}", kMaxRestarts,
                       describe(*p)));
    } else if (auto n = read_int(p, "retry.onPreemption", 0, kMaxRestarts)) {
      retry.on_preemption = static_cast<std::int32_t>(*n);
    }
  }
  if (auto expedite = read_bool(f.get("expedite"), "retry.expedite")) retry.expedite = *expedite;
  if (const TreeNode* backoff = as_map(f.get("backoff"), "retry.backoff")) {
    const FieldMap b = fields(*backoff, "retry.backoff", {"initialSeconds", "maxSeconds"});
    const auto initial =
        read_int(b.get("initialSeconds"), "retry.backoff.initialSeconds", 1, 86400);
    const auto most = read_int(b.get("maxSeconds"), "retry.backoff.maxSeconds", 1, 86400);
    if (initial) retry.backoff_initial = seconds(*initial);
    if (most) retry.backoff_max = seconds(*most);
    if (initial && most && *most < *initial) {
      fail("retry.backoff.maxSeconds",
           fmt::format("must be at least retry.backoff.initialSeconds ({}), got {}", *initial,
                       *most));
    }
  }
  std::sort(retry.on_exit_codes.begin(), retry.on_exit_codes.end());
  retry.on_exit_codes.erase(std::unique(retry.on_exit_codes.begin(), retry.on_exit_codes.end()),
                            retry.on_exit_codes.end());
  spec_.retry = std::move(retry);
}

}  // namespace corral::core::internal
