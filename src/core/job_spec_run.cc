#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "core/dataset.h"
#include "core/gpu_type.h"
#include "core/internal/spec_tree.h"
#include "core/internal/spec_validator.h"
#include "core/json_object.h"
#include "core/priority.h"
#include "core/units.h"
#include "core/utf8.h"
#include "core/worker_env.h"

namespace corral::core::internal {

void Validator::read_checkpoint(const TreeNode* node) {
  const std::string path = "checkpoint";
  const TreeNode* map = as_map(node, path);
  if (map == nullptr) {
    return;
  }
  checkpoint_present_ = true;
  const FieldMap f = fields(*map, path, {"dir", "intervalSeconds", "restoreSeconds"});
  if (f.get("dir") == nullptr) {
    fail("checkpoint.dir", "is required");
  }
  if (f.get("intervalSeconds") == nullptr) {
    fail("checkpoint.intervalSeconds", "is required");
  }
  CheckpointPolicy policy;
  bool ok = true;
  if (auto dir = read_string(f.get("dir"), "checkpoint.dir")) {
    if (dir->empty() || dir->front() != '/') {
      fail("checkpoint.dir", fmt::format("must be an absolute path, got {}", quote(*dir)));
      ok = false;
    } else if (dir->size() > kMaxPathLength) {
      fail("checkpoint.dir",
           fmt::format("must be at most {} characters, got {}", kMaxPathLength, dir->size()));
      ok = false;
    } else {
      policy.dir = std::move(*dir);
    }
  } else {
    ok = false;
  }
  const auto interval =
      read_int(f.get("intervalSeconds"), "checkpoint.intervalSeconds", 1, kMaxCheckpointSeconds);
  if (interval) {
    policy.interval = seconds(*interval);
  }
  ok = ok && interval.has_value();
  if (const TreeNode* restore_node = f.get("restoreSeconds")) {
    const auto restore =
        read_int(restore_node, "checkpoint.restoreSeconds", 0, kMaxCheckpointSeconds);
    if (restore) {
      policy.restore_time = seconds(*restore);
    }
    ok = ok && restore.has_value();
  }
  if (ok) {
    spec_.checkpoint = std::move(policy);
  }
}

// maxRuntime and expectedRuntime: a duration between kMinRuntime and kMaxRuntime.
std::optional<Duration> Validator::read_runtime(const TreeNode* node, const std::string& path) {
  if (node == nullptr) {
    return std::nullopt;
  }
  if (node->kind != TreeKind::kString) {
    fail(path, fmt::format("must be a duration like 90m, 24h or 1d12h, got {}", describe(*node)));
    return std::nullopt;
  }
  const Result<Duration> d = parse_duration(node->text);
  if (!d.ok()) {
    fail(path, d.status().message());
    return std::nullopt;
  }
  if (*d < kMinRuntime || *d > kMaxRuntime) {
    fail(path, fmt::format("must be between {} and {}, got {}", format_duration(kMinRuntime),
                           format_duration(kMaxRuntime), quote(node->text)));
    return std::nullopt;
  }
  return *d;
}

void Validator::read_processes(const TreeNode* node) {
  const auto mode = read_string(node, "processes");
  if (!mode) {
    return;
  }
  if (*mode == "perGpu") {
    spec_.processes = ProcessMode::kPerGpu;
  } else if (*mode == "perNode") {
    spec_.processes = ProcessMode::kPerNode;
  } else {
    fail("processes", fmt::format("must be perGpu or perNode, got {}", quote(*mode)));
  }
}

void Validator::read_command(const TreeNode* node) {
  const std::string path = "command";
  if (node == nullptr) {
    fail(path, "is required");
    return;
  }
  if (node->kind != TreeKind::kList) {
    fail(path,
         fmt::format("must be a list of strings (program and arguments), got {}", describe(*node)));
    return;
  }
  if (node->items.empty()) {
    fail(path, "must not be empty");
    return;
  }
  for (std::size_t i = 0; i < node->items.size(); ++i) {
    const std::string item_path = element_path(path, i);
    auto arg = read_string(&node->items[i], item_path);
    if (!arg) {
      continue;
    }
    if (arg->empty()) {
      fail(item_path, "must not be an empty string");
      continue;
    }
    spec_.command.push_back(std::move(*arg));
  }
}

// A mapping of string to string; reports duplicates and values of other types.
std::vector<std::pair<std::string, std::string>> Validator::read_string_map(
    const TreeNode* node, const std::string& path) {
  std::vector<std::pair<std::string, std::string>> out;
  const TreeNode* map = as_map(node, path);
  if (map == nullptr) {
    return out;
  }
  std::map<std::string_view, bool> seen;
  for (const auto& [key, value] : map->entries) {
    const std::string key_path = child_path(path, key);
    if (seen[key]) {
      fail(key_path, "duplicate key");
      continue;
    }
    seen[key] = true;
    if (value.kind == TreeKind::kNull) {
      fail(key_path, "must be a string, got null");
      continue;
    }
    if (auto s = read_string(&value, key_path)) {
      out.emplace_back(key, std::move(*s));
    }
  }
  return out;
}

std::map<std::string, std::string> Validator::read_env(const TreeNode* node,
                                                       const std::string& path) {
  std::map<std::string, std::string> out;
  for (auto& [key, value] : read_string_map(node, path)) {
    const std::string key_path = child_path(path, key);
    if (key.size() > kMaxEnvNameLength || !is_env_name(key)) {
      fail(key_path, fmt::format("must be a variable name ([A-Za-z_][A-Za-z0-9_]*, at most {} "
                                 "characters), got {}",
                                 kMaxEnvNameLength, quote(key)));
    } else if (key.starts_with(kCorralEnvPrefix)) {
      fail(key_path,
           fmt::format("is reserved: names starting with {} are set by corral", kCorralEnvPrefix));
    } else if (key.starts_with(kMpsEnvPrefix)) {
      fail(key_path, fmt::format("is reserved: names starting with {} are NVIDIA MPS's, which "
                                 "corral sets for a share of a GPU so that no job takes "
                                 "another's compute or memory",
                                 kMpsEnvPrefix));
    } else if (std::find(std::begin(kTorchrunEnv), std::end(kTorchrunEnv), key) !=
               std::end(kTorchrunEnv)) {
      fail(key_path, fmt::format("is reserved: the launcher sets {} for every worker", key));
    } else if (std::find(std::begin(kTorchrunLauncherEnv), std::end(kTorchrunLauncherEnv), key) !=
               std::end(kTorchrunLauncherEnv)) {
      fail(key_path, fmt::format("is reserved: the launcher sets {} for torchrun when "
                                 "processes is perNode",
                                 key));
    } else {
      out.emplace(key, std::move(value));
    }
  }
  return out;
}

// lineage: {datasets: [id@version, ...], code: {repo, commit}, image, dataset}. The
// datasets are gated at submission (docs/datasets.md); `dataset` and a string `code`
// are the free-form notes of specs written before lineage was typed, kept as text.
void Validator::read_lineage(const TreeNode* node) {
  const TreeNode* map = as_map(node, "lineage");
  if (map == nullptr) {
    return;
  }
  const FieldMap f = fields(*map, "lineage", {"datasets", "code", "image", "dataset"});
  const auto text = [&](const TreeNode* value, const std::string& path) {
    auto s = read_string(value, path);
    if (s && s->size() > kMaxLineageLength) {
      fail(path,
           fmt::format("must be at most {} characters, got {}", kMaxLineageLength, s->size()));
      return std::optional<std::string>();
    }
    return s;
  };
  if (auto s = text(f.get("dataset"), "lineage.dataset")) spec_.lineage.dataset = std::move(*s);
  if (const TreeNode* list = f.get("datasets"); list != nullptr) {
    if (list->kind != TreeKind::kList) {
      fail("lineage.datasets",
           fmt::format("must be a list of DATASET@VERSION, got {}", describe(*list)));
    } else if (list->items.size() > kMaxLineageDatasets) {
      fail("lineage.datasets",
           fmt::format("at most {} datasets, got {}", kMaxLineageDatasets, list->items.size()));
    } else {
      for (std::size_t i = 0; i < list->items.size(); ++i) {
        const std::string path = element_path("lineage.datasets", i);
        auto s = read_string(&list->items[i], path);
        if (!s) continue;
        auto ref = parse_dataset_ref(*s, path);
        if (!ref.ok()) {
          fail(path, ref.status().message());
        } else if (std::find(spec_.lineage.datasets.begin(), spec_.lineage.datasets.end(), *ref) !=
                   spec_.lineage.datasets.end()) {
          fail(path, "names " + ref->text() + " twice");
        } else {
          spec_.lineage.datasets.push_back(std::move(*ref));
        }
      }
    }
  }
  if (const TreeNode* code = f.get("code"); code != nullptr && code->kind == TreeKind::kString) {
    if (auto s = text(code, "lineage.code")) spec_.lineage.code.repo = std::move(*s);
  } else if (const TreeNode* m = as_map(code, "lineage.code"); m != nullptr) {
    const FieldMap c = fields(*m, "lineage.code", {"repo", "commit"});
    if (auto s = text(c.get("repo"), "lineage.code.repo")) spec_.lineage.code.repo = *s;
    // Empty is absent: a stored spec writes every lineage field (job_spec_to_json).
    if (auto s = text(c.get("commit"), "lineage.code.commit"); s && !s->empty()) {
      const bool hex =
          s->size() >= 7 && s->size() <= 64 && std::all_of(s->begin(), s->end(), [](char ch) {
            return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f');
          });
      if (!hex) {
        fail("lineage.code.commit",
             fmt::format("must be a commit id, 7 to 64 lowercase hex digits, got {}", quote(*s)));
      } else {
        spec_.lineage.code.commit = std::move(*s);
      }
    }
  }
  if (auto s = text(f.get("image"), "lineage.image"); s && !s->empty()) {
    // Pinned by digest, so a rerun gets the same environment, not whatever a tag is now.
    const auto at = s->rfind("sha256:");
    const bool pinned =
        at != std::string::npos && s->size() - at == 7 + 64 &&
        std::all_of(s->begin() + static_cast<std::ptrdiff_t>(at) + 7, s->end(),
                    [](char ch) { return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f'); });
    if (!pinned) {
      fail("lineage.image",
           "must end in its digest, sha256: and 64 lowercase hex digits (NAME@sha256:...)");
    } else {
      spec_.lineage.image = std::move(*s);
    }
  }
}

void Validator::read_labels(const TreeNode* node) {
  for (auto& [key, value] : read_string_map(node, "labels")) {
    const std::string key_path = child_path("labels", key);
    bool ok = true;
    if (key.size() > kMaxNameLength || !is_label_text(key)) {
      fail(key_path, fmt::format("label names must be 1-{} letters, digits, '-', '_' or '.', "
                                 "starting and ending with a letter or digit, got {}",
                                 kMaxNameLength, quote(key)));
      ok = false;
    }
    if (value.size() > kMaxNameLength || (!value.empty() && !is_label_text(value))) {
      fail(key_path, fmt::format("label values must be empty or 1-{} letters, digits, '-', "
                                 "'_' or '.', starting and ending with a letter or digit, got {}",
                                 kMaxNameLength, quote(value)));
      ok = false;
    }
    if (ok) {
      spec_.labels.emplace(key, std::move(value));
    }
  }
}

}  // namespace corral::core::internal
