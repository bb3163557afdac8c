#include "core/job_spec_parse.h"

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
#include "core/json_object.h"
#include "core/priority.h"
#include "core/units.h"
#include "core/utf8.h"
#include "core/worker_env.h"

namespace corral::core {
namespace {

using internal::TreeKind;
using internal::TreeNode;

// Limits of the schema; docs/jobspec.md lists the same numbers.
constexpr std::int64_t kMaxGpus = 16384;
// A scaling curve's least throughput (the message below names it; the most is
// kMaxThroughput, job_spec.h): it keeps ratios and their logarithms far from underflow.
constexpr double kMinThroughput = 1e-9;
// The largest NVLink domain in service (GB200 NVL72), hence the most GPUs one node or
// one NVLink domain can give a job.
constexpr std::int64_t kMaxGpusPerNode = 72;
constexpr std::int64_t kMaxCpusPerGpu = 256;
constexpr std::int64_t kMaxMemoryPerGpuMib = 4LL * 1024 * 1024;  // 4Ti
constexpr std::int64_t kMaxCheckpointSeconds = 30LL * 24 * 3600;
constexpr std::int64_t kMaxRestarts = 100;
constexpr std::size_t kMaxNameLength = 63;
constexpr std::size_t kMaxPathLength = 4096;
constexpr std::size_t kMaxLineageLength = 256;
constexpr std::size_t kMaxLineageDatasets = 64;
constexpr std::size_t kMaxEnvNameLength = 256;
constexpr Duration kMinRuntime = seconds(60);
constexpr Duration kMaxRuntime = seconds(30LL * 24 * 3600);

// A quoted, escaped and (past 60 bytes) shortened copy of `s` for messages.
std::string quote(std::string_view s) {
  constexpr std::size_t kShown = 60;
  // Cut on a character boundary, so a shortened copy of UTF-8 text stays UTF-8.
  std::size_t shown = std::min(s.size(), kShown);
  while (shown > 0 && shown < s.size() && (static_cast<unsigned char>(s[shown]) & 0xC0) == 0x80) {
    --shown;
  }
  std::string out = "\"";
  for (std::size_t i = 0; i < shown; ++i) {
    const char c = s[i];
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
    } else {
      out += c;
    }
  }
  if (s.size() > shown) {
    out += "...";
  }
  return out + "\"";
}

// How a value appears in "got ..." clauses.
std::string describe(const TreeNode& node) {
  switch (node.kind) {
    case TreeKind::kString:
      return quote(node.text);
    case TreeKind::kList:
      return "a list";
    case TreeKind::kMap:
      return "a mapping";
    case TreeKind::kNull:
      return "null";
    case TreeKind::kBool:
    case TreeKind::kInt:
    case TreeKind::kFloat:
      return node.text.size() > 60 ? node.text.substr(0, 60) + "..." : node.text;
  }
  return "a value";
}

bool is_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// Kubernetes' label name/value syntax: ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]
bool is_label_text(std::string_view s) {
  if (s.empty() || !is_alnum(s.front()) || !is_alnum(s.back())) {
    return false;
  }
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return is_alnum(c) || c == '-' || c == '_' || c == '.'; });
}

// [A-Za-z_][A-Za-z0-9_]*, what a POSIX shell accepts as a variable name.
bool is_env_name(std::string_view s) {
  if (s.empty() || (s.front() >= '0' && s.front() <= '9')) {
    return false;
  }
  return std::all_of(s.begin(), s.end(), [](char c) { return is_alnum(c) || c == '_'; });
}

bool is_power_of_two(std::int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

std::string join(std::initializer_list<std::string_view> words) {
  std::string out;
  for (const auto word : words) {
    out += out.empty() ? std::string(word) : fmt::format(", {}", word);
  }
  return out;
}

// The fields of one mapping, looked up by name; a null value counts as absent.
class FieldMap {
 public:
  const TreeNode* get(std::string_view key) const {
    const auto it = found_.find(key);
    return it == found_.end() ? nullptr : it->second;
  }
  void put(std::string_view key, const TreeNode* node) {
    if (node->kind != TreeKind::kNull) {
      found_.emplace(std::string(key), node);
    }
  }

 private:
  std::map<std::string, const TreeNode*, std::less<>> found_;
};

// Walks the tree once, filling `spec_` and recording every error. Rules that involve
// two fields run last, and only when both fields were valid on their own, so one
// mistake is reported once.
class Validator {
 public:
  std::vector<FieldError> run(const TreeNode& root) {
    const FieldMap top =
        fields(root, "",
               {"name", "tenant", "priorityClass", "resources", "topology", "elastic",
                "preemptible", "checkpoint", "maxRuntime", "expectedRuntime", "reservation",
                "processes", "maxRestarts", "command", "env", "secretEnv", "lineage", "labels"});
    read_identity(top);
    read_resources(top.get("resources"));
    read_topology(top.get("topology"));
    read_elastic(top.get("elastic"));
    preemptible_ = read_bool(top.get("preemptible"), "preemptible");
    read_checkpoint(top.get("checkpoint"));
    if (auto d = read_runtime(top.get("maxRuntime"), "maxRuntime")) spec_.max_runtime = *d;
    if (auto d = read_runtime(top.get("expectedRuntime"), "expectedRuntime")) {
      spec_.expected_runtime = *d;
    }
    read_processes(top.get("processes"));
    if (auto n = read_int(top.get("maxRestarts"), "maxRestarts", 0, kMaxRestarts)) {
      spec_.max_restarts = static_cast<std::int32_t>(*n);
    }
    read_command(top.get("command"));
    spec_.env = read_env(top.get("env"), "env");
    spec_.secret_env = read_env(top.get("secretEnv"), "secretEnv");
    read_lineage(top.get("lineage"));
    read_labels(top.get("labels"));
    check_cross_field();
    return std::move(errors_);
  }

  JobSpec take_spec() { return std::move(spec_); }

 private:
  void fail(std::string path, std::string reason) {
    errors_.push_back(FieldError{.path = std::move(path), .reason = std::move(reason)});
  }

  // Reports unknown and duplicate keys; `map` must be a mapping.
  FieldMap fields(const TreeNode& map, const std::string& path,
                  std::initializer_list<std::string_view> known) {
    FieldMap out;
    std::map<std::string_view, bool> seen;
    for (const auto& [key, value] : map.entries) {
      const std::string key_path = child_path(path, key);
      if (std::find(known.begin(), known.end(), key) == known.end()) {
        fail(key_path, fmt::format("unknown field, expected one of {}", join(known)));
      } else if (seen[key]) {
        fail(key_path, "duplicate key");
      } else {
        seen[key] = true;
        out.put(key, &value);
      }
    }
    return out;
  }

  // A present mapping, or nullptr (with an error when the value is something else).
  const TreeNode* as_map(const TreeNode* node, const std::string& path) {
    if (node == nullptr) {
      return nullptr;
    }
    if (node->kind != TreeKind::kMap) {
      fail(path, fmt::format("must be a mapping, got {}", describe(*node)));
      return nullptr;
    }
    return node;
  }

  std::optional<std::int64_t> read_int(const TreeNode* node, const std::string& path,
                                       std::int64_t min, std::int64_t max) {
    if (node == nullptr) {
      return std::nullopt;
    }
    if (node->kind != TreeKind::kInt) {
      fail(path, fmt::format("must be an integer, got {}", describe(*node)));
      return std::nullopt;
    }
    if (node->int_overflow || node->int_value < min || node->int_value > max) {
      fail(path, fmt::format("must be between {} and {}, got {}", min, max, describe(*node)));
      return std::nullopt;
    }
    return node->int_value;
  }

  std::optional<std::string> read_string(const TreeNode* node, const std::string& path) {
    if (node == nullptr) {
      return std::nullopt;
    }
    if (node->kind != TreeKind::kString) {
      // A YAML author who wrote `VALUE: 4` meant a string; say how to write one.
      const bool scalar = node->kind == TreeKind::kInt || node->kind == TreeKind::kFloat ||
                          node->kind == TreeKind::kBool;
      fail(path, fmt::format("must be a string{}, got {}",
                             scalar ? fmt::format(" (quote it: \"{}\")", node->text) : "",
                             describe(*node)));
      return std::nullopt;
    }
    if (node->text.find('\0') != std::string::npos) {
      fail(path, fmt::format("must not contain NUL characters, got {}", quote(node->text)));
      return std::nullopt;
    }
    return node->text;
  }

  std::optional<bool> read_bool(const TreeNode* node, const std::string& path) {
    if (node == nullptr) {
      return std::nullopt;
    }
    if (node->kind != TreeKind::kBool) {
      fail(path, fmt::format("must be true or false, got {}", describe(*node)));
      return std::nullopt;
    }
    return node->bool_value;
  }

  std::optional<std::string> read_dns_label(const TreeNode* node, const std::string& path) {
    auto s = read_string(node, path);
    if (!s) {
      return std::nullopt;
    }
    if (s->size() > kMaxNameLength) {
      fail(path, fmt::format("must be at most {} characters, got {} ({})", kMaxNameLength,
                             s->size(), quote(*s)));
      return std::nullopt;
    }
    if (!is_dns_label(*s)) {
      fail(path, fmt::format("must be a DNS label (lowercase letters, digits and '-', starting "
                             "and ending with a letter or digit), got {}",
                             quote(*s)));
      return std::nullopt;
    }
    return s;
  }

  // One of `choices`, returned as its index.
  std::optional<std::size_t> read_choice(const TreeNode* node, const std::string& path,
                                         std::initializer_list<std::string_view> choices) {
    auto s = read_string(node, path);
    if (!s) {
      return std::nullopt;
    }
    const auto it = std::find(choices.begin(), choices.end(), *s);
    if (it == choices.end()) {
      fail(path, fmt::format("must be one of {}, got {}", join(choices), quote(*s)));
      return std::nullopt;
    }
    return static_cast<std::size_t>(it - choices.begin());
  }

  void read_identity(const FieldMap& top) {
    if (top.get("name") == nullptr) {
      fail("name", "is required");
    }
    if (auto name = read_dns_label(top.get("name"), "name")) {
      spec_.name = std::move(*name);
    }
    if (auto tenant = read_dns_label(top.get("tenant"), "tenant")) {
      spec_.tenant = TenantId(std::move(*tenant));
    }
    if (auto s = read_string(top.get("priorityClass"), "priorityClass")) {
      const auto classes = default_priority_classes();
      const auto it = std::find_if(classes.begin(), classes.end(),
                                   [&](const PriorityClass& c) { return c.name == *s; });
      if (it == classes.end()) {
        std::string names;
        for (const auto& c : classes) {
          names += names.empty() ? c.name : ", " + c.name;
        }
        fail("priorityClass", fmt::format("must be one of {}, got {}", names, quote(*s)));
      } else {
        spec_.priority_class = *s;
        class_preemptible_ = it->preemptible;
      }
    }
    if (auto reservation = read_dns_label(top.get("reservation"), "reservation")) {
      spec_.reservation = ReservationId(std::move(*reservation));
    }
  }

  void read_resources(const TreeNode* node) {
    const std::string path = "resources";
    const TreeNode* map = as_map(node, path);
    const FieldMap f = map ? fields(*map, path,
                                    {"gpus", "gpuTypes", "gpuSpeed", "gpusPerNode", "cpusPerGpu",
                                     "memoryPerGpu", "region"})
                           : FieldMap();
    Resources& r = spec_.resources;
    if (f.get("gpus") == nullptr && (map != nullptr || node == nullptr)) {
      fail("resources.gpus", "is required");
    }
    gpus_ = read_int(f.get("gpus"), "resources.gpus", 1, kMaxGpus);
    if (gpus_) {
      r.gpus = static_cast<std::int32_t>(*gpus_);
    }
    read_gpu_types(f.get("gpuTypes"));
    read_gpu_speed(f.get("gpuSpeed"));
    // Leaving gpusPerNode out lets the scheduler choose the split; 0 once meant the same
    // and is refused now, with the way to say it.
    const TreeNode* per_node = f.get("gpusPerNode");
    if (per_node != nullptr && per_node->kind == TreeKind::kInt && !per_node->int_overflow &&
        per_node->int_value == 0) {
      fail("resources.gpusPerNode",
           fmt::format("must be between 1 and {}, got 0 (leave it out to let the scheduler "
                       "choose the split)",
                       kMaxGpusPerNode));
    } else {
      gpus_per_node_ = read_int(per_node, "resources.gpusPerNode", 1, kMaxGpusPerNode);
    }
    if (gpus_per_node_) {
      r.gpus_per_node = static_cast<std::int32_t>(*gpus_per_node_);
    }
    if (auto cpus = read_int(f.get("cpusPerGpu"), "resources.cpusPerGpu", 0, kMaxCpusPerGpu)) {
      r.cpus_per_gpu = static_cast<std::int32_t>(*cpus);
    }
    if (auto mib = read_memory(f.get("memoryPerGpu"), "resources.memoryPerGpu")) {
      r.memory_per_gpu_mib = *mib;
    }
    // Region names are DNS labels (us-east-1, eu-west): the same rule as node names, so
    // a typo such as "US East" is refused here rather than left pending forever.
    if (auto region = read_dns_label(f.get("region"), "resources.region")) {
      r.region = std::move(*region);
    }
  }

  void read_gpu_types(const TreeNode* node) {
    const std::string path = "resources.gpuTypes";
    if (node == nullptr) {
      return;
    }
    if (node->kind != TreeKind::kList) {
      fail(path, fmt::format("must be a list of gpu types, got {}", describe(*node)));
      return;
    }
    for (std::size_t i = 0; i < node->items.size(); ++i) {
      const std::string item_path = element_path(path, i);
      auto s = read_string(&node->items[i], item_path);
      if (!s) {
        continue;
      }
      if (!find_builtin_gpu_type(*s)) {
        std::string known;
        for (const auto& t : builtin_gpu_types()) {
          known += known.empty() ? t.id.value : ", " + t.id.value;
        }
        fail(item_path, fmt::format("unknown gpu type {}, known types: {}", quote(*s), known));
        continue;
      }
      const GpuTypeId id(*s);
      auto& types = spec_.resources.gpu_types;
      if (std::find(types.begin(), types.end(), id) != types.end()) {
        fail(item_path, fmt::format("duplicate gpu type {}", quote(*s)));
        continue;
      }
      types.push_back(id);
    }
  }

  // resources.gpuSpeed: {TYPE: relative speed per GPU}; every type known and, when
  // gpuTypes limits the choice, one of those (a speed for a type the job refuses is a
  // mistake worth naming).
  void read_gpu_speed(const TreeNode* node) {
    const std::string path = "resources.gpuSpeed";
    const TreeNode* map = as_map(node, path);
    if (map == nullptr) {
      return;
    }
    const auto& allowed = spec_.resources.gpu_types;
    for (const auto& [key, value] : map->entries) {
      const std::string item = child_path(path, key);
      if (!find_builtin_gpu_type(key)) {
        fail(item, fmt::format("unknown gpu type {}", quote(key)));
        continue;
      }
      const GpuTypeId id(key);
      if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), id) == allowed.end()) {
        fail(item, fmt::format("{} is not one of resources.gpuTypes", quote(key)));
        continue;
      }
      const double speed = value.kind == TreeKind::kInt     ? static_cast<double>(value.int_value)
                           : value.kind == TreeKind::kFloat ? value.float_value
                                                            : -1;
      if (!(speed >= kMinThroughput && speed <= kMaxThroughput) || value.int_overflow) {
        fail(item, fmt::format("must be a number between 1e-9 and 1e15 (only ratios between "
                               "types count), got {}",
                               describe(value)));
        continue;
      }
      if (!spec_.resources.gpu_speed.emplace(id, speed).second) {
        fail(item, "duplicate key");
      }
    }
  }

  // A size string ("120Gi") or a plain number of bytes.
  std::optional<std::int64_t> read_memory(const TreeNode* node, const std::string& path) {
    if (node == nullptr) {
      return std::nullopt;
    }
    if (node->kind != TreeKind::kString && node->kind != TreeKind::kInt) {
      fail(path, fmt::format("must be a size like 512Mi, 120Gi or 80G, got {}", describe(*node)));
      return std::nullopt;
    }
    const Result<std::int64_t> mib = parse_memory_mib(node->text);
    if (!mib.ok()) {
      fail(path, mib.status().message());
      return std::nullopt;
    }
    if (*mib < 1 || *mib > kMaxMemoryPerGpuMib) {
      fail(path, fmt::format("must be between 1Mi and {}, got {}",
                             format_memory_mib(kMaxMemoryPerGpuMib), describe(*node)));
      return std::nullopt;
    }
    return *mib;
  }

  void read_topology(const TreeNode* node) {
    const TreeNode* map = as_map(node, "topology");
    if (map == nullptr) {
      return;
    }
    const FieldMap f = fields(*map, "topology", {"pack", "mode"});
    static constexpr PackLevel kLevels[] = {PackLevel::kNvlink, PackLevel::kNode, PackLevel::kLeaf,
                                            PackLevel::kSpine, PackLevel::kNone};
    if (auto ix = read_choice(f.get("pack"), "topology.pack",
                              {"nvlink", "node", "leaf", "spine", "none"})) {
      spec_.topology.pack = kLevels[*ix];
    }
    if (auto ix = read_choice(f.get("mode"), "topology.mode", {"preferred", "required"})) {
      spec_.topology.mode = *ix == 0 ? TopologyMode::kPreferred : TopologyMode::kRequired;
    }
  }

  void read_elastic(const TreeNode* node) {
    const std::string path = "elastic";
    const TreeNode* map = as_map(node, path);
    if (map == nullptr) {
      return;
    }
    const FieldMap f = fields(*map, path, {"minGpus", "maxGpus", "step", "scaling"});
    elastic_present_ = true;
    if (f.get("minGpus") == nullptr) {
      fail("elastic.minGpus", "is required");
    }
    if (f.get("maxGpus") == nullptr) {
      fail("elastic.maxGpus", "is required");
    }
    ElasticRange range;
    const auto min = read_int(f.get("minGpus"), "elastic.minGpus", 1, kMaxGpus);
    const auto max = read_int(f.get("maxGpus"), "elastic.maxGpus", 1, kMaxGpus);
    bool step_ok = true;
    if (const TreeNode* step = f.get("step")) {
      if (step->kind == TreeKind::kString && step->text == "pow2") {
        range.step = ElasticStep::kPowerOfTwo;
      } else if (step->kind == TreeKind::kInt && !step->int_overflow && step->int_value >= 1 &&
                 step->int_value <= kMaxGpus) {
        range.step_multiple = static_cast<std::int32_t>(step->int_value);
      } else {
        fail("elastic.step", fmt::format("must be an integer between 1 and {} or \"pow2\", got {}",
                                         kMaxGpus, describe(*step)));
        step_ok = false;
      }
    }
    if (!min || !max || !step_ok) {
      return;
    }
    range.min_gpus = static_cast<std::int32_t>(*min);
    range.max_gpus = static_cast<std::int32_t>(*max);
    range.scaling = read_scaling(f.get("scaling"));
    spec_.elastic = range;
  }

  // elastic.scaling: [{gpus: N, throughput: X}, ...], at most 64 points, distinct sizes,
  // throughputs > 0; kept sorted by size.
  std::vector<ScalingPoint> read_scaling(const TreeNode* node) {
    const std::string path = "elastic.scaling";
    std::vector<ScalingPoint> out;
    if (node == nullptr) {
      return out;
    }
    if (node->kind != TreeKind::kList || node->items.size() > 64) {
      fail(path,
           fmt::format("must be a list of at most 64 {{gpus, throughput}} points, got {}",
                       node->kind == TreeKind::kList ? fmt::format("{} points", node->items.size())
                                                     : describe(*node)));
      return out;
    }
    for (std::size_t i = 0; i < node->items.size(); ++i) {
      const std::string item = element_path(path, i);
      const TreeNode* map = as_map(&node->items[i], item);
      if (map == nullptr) {
        continue;
      }
      const FieldMap f = fields(*map, item, {"gpus", "throughput"});
      const auto gpus = read_int(f.get("gpus"), item + ".gpus", 1, kMaxGpus);
      const TreeNode* tp = f.get("throughput");
      if (f.get("gpus") == nullptr) fail(item + ".gpus", "is required");
      if (tp == nullptr) fail(item + ".throughput", "is required");
      double value = 0;
      if (tp != nullptr) {
        value = tp->kind == TreeKind::kInt     ? static_cast<double>(tp->int_value)
                : tp->kind == TreeKind::kFloat ? tp->float_value
                                               : -1;
        if (!(value >= kMinThroughput && value <= kMaxThroughput) || tp->int_overflow) {
          fail(item + ".throughput",
               fmt::format("must be a number between 1e-9 and 1e15 (samples/s or any unit), "
                           "got {}",
                           describe(*tp)));
          continue;
        }
      }
      if (!gpus || tp == nullptr) {
        continue;
      }
      const auto n = static_cast<std::int32_t>(*gpus);
      if (std::any_of(out.begin(), out.end(), [&](const ScalingPoint& p) { return p.gpus == n; })) {
        fail(item + ".gpus", fmt::format("duplicate size {}", n));
        continue;
      }
      out.push_back({.gpus = n, .throughput = value});
    }
    std::sort(out.begin(), out.end(),
              [](const ScalingPoint& a, const ScalingPoint& b) { return a.gpus < b.gpus; });
    return out;
  }

  void read_checkpoint(const TreeNode* node) {
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
  std::optional<Duration> read_runtime(const TreeNode* node, const std::string& path) {
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

  void read_processes(const TreeNode* node) {
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

  void read_command(const TreeNode* node) {
    const std::string path = "command";
    if (node == nullptr) {
      fail(path, "is required");
      return;
    }
    if (node->kind != TreeKind::kList) {
      fail(path, fmt::format("must be a list of strings (program and arguments), got {}",
                             describe(*node)));
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
  std::vector<std::pair<std::string, std::string>> read_string_map(const TreeNode* node,
                                                                   const std::string& path) {
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

  std::map<std::string, std::string> read_env(const TreeNode* node, const std::string& path) {
    std::map<std::string, std::string> out;
    for (auto& [key, value] : read_string_map(node, path)) {
      const std::string key_path = child_path(path, key);
      if (key.size() > kMaxEnvNameLength || !is_env_name(key)) {
        fail(key_path, fmt::format("must be a variable name ([A-Za-z_][A-Za-z0-9_]*, at most {} "
                                   "characters), got {}",
                                   kMaxEnvNameLength, quote(key)));
      } else if (key.starts_with(kCorralEnvPrefix)) {
        fail(key_path, fmt::format("is reserved: names starting with {} are set by corral",
                                   kCorralEnvPrefix));
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
  void read_lineage(const TreeNode* node) {
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
          } else if (std::find(spec_.lineage.datasets.begin(), spec_.lineage.datasets.end(),
                               *ref) != spec_.lineage.datasets.end()) {
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

  void read_labels(const TreeNode* node) {
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

  // Rules that relate two or more fields. Each runs only when its inputs were valid.
  void check_cross_field() {
    Resources& r = spec_.resources;
    const bool gpus_ok = gpus_.has_value();
    const bool per_node_ok = gpus_per_node_.has_value() && *gpus_per_node_ > 0;

    // 1. A fixed per-node split must fit the job and divide it evenly.
    if (gpus_ok && per_node_ok) {
      if (r.gpus_per_node > r.gpus) {
        fail("resources.gpusPerNode",
             fmt::format("must not exceed resources.gpus ({}), got {}", r.gpus, r.gpus_per_node));
      } else if (r.gpus % r.gpus_per_node != 0) {
        fail("resources.gpusPerNode",
             fmt::format("must divide resources.gpus ({}), got {}", r.gpus, r.gpus_per_node));
      }
    }

    // 2. Node and NVLink packing cannot hold more than one NVLink domain's GPUs, at the
    //    largest size the job can grow to.
    const std::int32_t largest = spec_.elastic ? std::max(spec_.elastic->max_gpus, r.gpus) : r.gpus;
    const PackLevel pack = spec_.topology.pack;
    if ((pack == PackLevel::kNode || pack == PackLevel::kNvlink) && gpus_ok &&
        largest > kMaxGpusPerNode) {
      fail("topology.pack",
           fmt::format("\"{}\" packing holds at most {} gpus, but the job asks for up to {}",
                       to_string(pack), kMaxGpusPerNode, largest));
    }
    if (pack == PackLevel::kNode && gpus_ok && per_node_ok && r.gpus_per_node != r.gpus) {
      fail("resources.gpusPerNode",
           fmt::format("must equal resources.gpus ({}) when topology.pack is \"node\", got {}",
                       r.gpus, r.gpus_per_node));
    }

    // 3. preemptible: the class's default unless stated; the preemptible class cannot opt out.
    if (preemptible_.has_value()) {
      if (class_preemptible_ && !*preemptible_) {
        fail("preemptible", fmt::format("must be true for priority class \"{}\", got false",
                                        spec_.priority_class));
      }
      spec_.preemptible = *preemptible_;
    } else {
      spec_.preemptible = class_preemptible_;
    }

    // 4. Elastic ranges: ordered, containing the starting size, and on the step.
    if (spec_.elastic) {
      check_elastic(*spec_.elastic, gpus_ok, per_node_ok);
    }
    if (elastic_present_ && !checkpoint_present_) {
      fail("checkpoint",
           "is required for an elastic job (it resizes by restarting from a "
           "checkpoint)");
    }

    // 5. An estimate longer than the limit would never be reached: the job is stopped first.
    if (spec_.expected_runtime > spec_.max_runtime) {
      fail("expectedRuntime", fmt::format("must not exceed maxRuntime ({}), got {}",
                                          format_duration(spec_.max_runtime),
                                          format_duration(spec_.expected_runtime)));
    }

    // 6. A variable lives in env or in secretEnv, never both (which would win is unclear).
    for (const auto& [key, value] : spec_.secret_env) {
      if (spec_.env.contains(key)) {
        fail(child_path("secretEnv", key), "is also set in env; set it in one of them only");
      }
    }
  }

  void check_elastic(const ElasticRange& e, bool gpus_ok, bool per_node_ok) {
    const Resources& r = spec_.resources;
    if (e.max_gpus < e.min_gpus) {
      fail("elastic.maxGpus",
           fmt::format("must be at least elastic.minGpus ({}), got {}", e.min_gpus, e.max_gpus));
      return;
    }
    if (gpus_ok && (r.gpus < e.min_gpus || r.gpus > e.max_gpus)) {
      fail("resources.gpus", fmt::format("must be between elastic.minGpus ({}) and "
                                         "elastic.maxGpus ({}) for an elastic job, got {}",
                                         e.min_gpus, e.max_gpus, r.gpus));
    }
    const auto on_step = [&](std::int32_t n, const std::string& path) {
      if (e.step == ElasticStep::kPowerOfTwo && !is_power_of_two(n)) {
        fail(path, fmt::format("must be a power of two (elastic.step is \"pow2\"), got {}", n));
      } else if (e.step == ElasticStep::kMultiple && n % e.step_multiple != 0) {
        fail(path,
             fmt::format("must be a multiple of elastic.step ({}), got {}", e.step_multiple, n));
      } else if (per_node_ok && n % r.gpus_per_node != 0) {
        fail(path, fmt::format("must be a multiple of resources.gpusPerNode ({}), got {}",
                               r.gpus_per_node, n));
      }
    };
    on_step(e.min_gpus, "elastic.minGpus");
    on_step(e.max_gpus, "elastic.maxGpus");
    if (gpus_ok) {
      on_step(r.gpus, "resources.gpus");
    }
  }

  JobSpec spec_;
  std::vector<FieldError> errors_;
  std::optional<std::int64_t> gpus_;
  std::optional<std::int64_t> gpus_per_node_;
  std::optional<bool> preemptible_;
  bool class_preemptible_ = false;  // standard, the default class, is not preemptible
  bool elastic_present_ = false;
  bool checkpoint_present_ = false;
};

}  // namespace

ParseOutcome parse_job_spec(std::string_view text, SpecFormat format) {
  ParseOutcome out;
  const auto fail = [&](std::string reason) {
    out.errors.push_back(FieldError{.path = "", .reason = std::move(reason)});
    return out;
  };
  if (text.size() > kMaxSpecBytes) {
    return fail(fmt::format("document must be at most {} bytes (1 MiB), got {} bytes",
                            kMaxSpecBytes, text.size()));
  }
  // JSON names the field that holds the bad byte; YAML gets its line and column.
  if (const Status utf8 = check_json_utf8(text); !utf8.ok()) {
    out.errors.push_back(FieldError{.path = utf8.field(), .reason = utf8.message()});
    return out;
  }
  internal::TreeReadResult tree =
      format == SpecFormat::kJson ? internal::read_json_tree(text) : internal::read_yaml_tree(text);
  if (!tree.root) {
    return fail(tree.error ? tree.error->reason : "unreadable document");
  }
  if (tree.root->kind != TreeKind::kMap) {
    return fail(fmt::format("document must be a mapping of fields, got {}", describe(*tree.root)));
  }
  Validator validator;
  out.errors = validator.run(*tree.root);
  if (out.errors.empty()) {
    out.spec = validator.take_spec();
  }
  return out;
}

// [a-z0-9]([-a-z0-9]*[a-z0-9])?
bool is_dns_label(std::string_view s) {
  const auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (s.empty() || !alnum(s.front()) || !alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [&](char c) { return alnum(c) || c == '-'; });
}

}  // namespace corral::core
