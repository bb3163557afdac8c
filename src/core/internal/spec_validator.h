// The job spec's validator (job_spec_parse.h): walks the document's tree once, filling a
// JobSpec and recording every error with its path. Its readers are in one file per part
// of the spec: job_spec_parse.cc (the walk, scalars, identity), job_spec_resources.cc
// (resources, GPU types and speeds, topology, elastic range and scaling),
// job_spec_run.cc (checkpoint, runtimes, processes, command, env, lineage, labels) and
// job_spec_rules.cc (the rules that relate two or more fields).
//
// Thread safety: a Validator is used by one thread, once.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/internal/spec_tree.h"
#include "core/job_spec.h"
#include "core/job_spec_parse.h"
#include "core/time.h"

namespace corral::core::internal {

// Limits of the schema; docs/jobspec.md lists the same numbers.
inline constexpr std::int64_t kMaxGpus = 16384;
// A scaling curve's least throughput (the message below names it; the most is
// kMaxThroughput, job_spec.h): it keeps ratios and their logarithms far from underflow.
inline constexpr double kMinThroughput = 1e-9;
// The largest NVLink domain in service (GB200 NVL72), hence the most GPUs one node or
// one NVLink domain can give a job.
inline constexpr std::int64_t kMaxGpusPerNode = 72;
inline constexpr std::int64_t kMaxCpusPerGpu = 256;
inline constexpr std::int64_t kMaxMemoryPerGpuMib = 4LL * 1024 * 1024;  // 4Ti
inline constexpr std::int64_t kMaxCheckpointSeconds = 30LL * 24 * 3600;
inline constexpr std::int64_t kMaxRestarts = 100;
inline constexpr std::size_t kMaxNameLength = 63;
inline constexpr std::size_t kMaxPathLength = 4096;
inline constexpr std::size_t kMaxLineageLength = 256;
inline constexpr std::size_t kMaxLineageDatasets = 64;
inline constexpr std::size_t kMaxEnvNameLength = 256;
inline constexpr std::int64_t kMaxArrayCount = 10000;
inline constexpr std::size_t kMaxDependencies = 64;
inline constexpr Duration kMinRuntime = seconds(60);
inline constexpr Duration kMaxRuntime = seconds(30LL * 24 * 3600);

// A quoted, escaped and (past 60 bytes) shortened copy of `s` for messages.
std::string quote(std::string_view s);

// How a value appears in "got ..." clauses.
std::string describe(const TreeNode& node);

bool is_alnum(char c);

// Kubernetes' label name/value syntax: ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]
bool is_label_text(std::string_view s);

// [A-Za-z_][A-Za-z0-9_]*, what a POSIX shell accepts as a variable name.
bool is_env_name(std::string_view s);

bool is_power_of_two(std::int64_t n);

// The value of an integer (that fits int64) or a finite float; nullopt for anything else.
std::optional<double> number_value(const TreeNode& node);

std::string join(std::initializer_list<std::string_view> words);

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
  std::vector<FieldError> run(const TreeNode& root);

  JobSpec take_spec() { return std::move(spec_); }

 private:
  void fail(std::string path, std::string reason);

  // Reports unknown and duplicate keys; `map` must be a mapping.
  FieldMap fields(const TreeNode& map, const std::string& path,
                  std::initializer_list<std::string_view> known);

  // A present mapping, or nullptr (with an error when the value is something else).
  const TreeNode* as_map(const TreeNode* node, const std::string& path);

  std::optional<std::int64_t> read_int(const TreeNode* node, const std::string& path,
                                       std::int64_t min, std::int64_t max);

  std::optional<std::string> read_string(const TreeNode* node, const std::string& path);

  std::optional<bool> read_bool(const TreeNode* node, const std::string& path);

  std::optional<std::string> read_dns_label(const TreeNode* node, const std::string& path);

  // One of `choices`, returned as its index.
  std::optional<std::size_t> read_choice(const TreeNode* node, const std::string& path,
                                         std::initializer_list<std::string_view> choices);

  void read_identity(const FieldMap& top);

  void read_resources(const TreeNode* node);

  void read_gpu_types(const TreeNode* node);

  // resources.gpuSpeed: {TYPE: relative speed per GPU}; every type known and, when
  // gpuTypes limits the choice, one of those (a speed for a type the job refuses is a
  // mistake worth naming).
  void read_gpu_speed(const TreeNode* node);
  // resources.gpuShare and gpuMemoryGiB: a share of a GPU per worker, in thousandths.
  void read_gpu_share(const TreeNode* share, const TreeNode* memory);
  // A share job keeps to what the scheduler can place as shares (sched/place_share.cc).
  void check_share();

  // A size string ("120Gi") or a plain number of bytes.
  std::optional<std::int64_t> read_memory(const TreeNode* node, const std::string& path);

  void read_topology(const TreeNode* node);

  void read_elastic(const TreeNode* node);

  // elastic.scaling: [{gpus: N, throughput: X}, ...], at most 64 points, distinct sizes,
  // throughputs > 0; kept sorted by size.
  std::vector<ScalingPoint> read_scaling(const TreeNode* node);

  void read_checkpoint(const TreeNode* node);

  // maxRuntime and expectedRuntime: a duration between kMinRuntime and kMaxRuntime.
  std::optional<Duration> read_runtime(const TreeNode* node, const std::string& path);

  void read_processes(const TreeNode* node);

  void read_command(const TreeNode* node);

  // A mapping of string to string; reports duplicates and values of other types.
  std::vector<std::pair<std::string, std::string>> read_string_map(const TreeNode* node,
                                                                   const std::string& path);

  std::map<std::string, std::string> read_env(const TreeNode* node, const std::string& path);

  // lineage: {datasets: [id@version, ...], code: {repo, commit}, image, dataset}. The
  // datasets are gated at submission (docs/datasets.md); `dataset` and a string `code`
  // are the free-form notes of specs written before lineage was typed, kept as text.
  void read_lineage(const TreeNode* node);

  void read_labels(const TreeNode* node);

  // array: {count: N, maxRunning: K} (job_spec_workflow.cc).
  void read_array(const TreeNode* node);

  // dependsOn: [{job: ID or NAME, on: success|failure|finish|start, elementwise: BOOL}].
  void read_depends_on(const TreeNode* node);

  // retry: {onExitCodes, onNodeFailure, onOutOfMemory, onPreemption, expedite, backoff}.
  void read_retry(const TreeNode* node);

  // sweep: {method, parameters, trials, seed, maxRunning, metric, earlyStopping}
  // (job_spec_sweep.cc); sets the array of its trials too.
  void read_sweep(const TreeNode* node);
  std::optional<SweepParameter> read_parameter(const std::string& name, const TreeNode& node);
  std::optional<double> read_number(const TreeNode* node, const std::string& path);

  // session: {idleTimeout: DURATION} (job_spec_session.cc).
  void read_session(const TreeNode* node);

  // An interactive session's rules: not preemptible, not elastic, not an array, and a
  // `session` mapping only on one (job_spec_session.cc).
  void check_session();

  // Rules that relate two or more fields. Each runs only when its inputs were valid.
  void check_cross_field();

  void check_elastic(const ElasticRange& e, bool gpus_ok, bool per_node_ok);

  JobSpec spec_;
  std::vector<FieldError> errors_;
  std::optional<std::int64_t> gpus_;
  std::optional<std::int64_t> gpus_per_node_;
  std::optional<bool> preemptible_;
  bool class_preemptible_ = false;  // standard, the default class, is not preemptible
  bool elastic_present_ = false;
  bool checkpoint_present_ = false;
};

}  // namespace corral::core::internal
