// JobSpec: what a user asks for when submitting a training job. One schema, accepted
// as YAML or JSON (job_spec_parse.h); every field is documented in docs/jobspec.md.
//
// Specs compare field by field (tests check that parse -> JSON -> parse is lossless).
//
// A JobSpec held anywhere in Corral has passed validation: the parser fills defaults
// and resolves derived fields (e.g. `preemptible` from the priority class), so the
// scheduler never sees an unset value.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/dataset.h"
#include "core/ids.h"
#include "core/sweep.h"
#include "core/time.h"

namespace corral::core {

// How tightly a gang must be packed. Each level contains the ones before it.
enum class PackLevel {
  kNvlink,  // one NVLink/NVSwitch domain (a multi-node NVLink rack counts as one)
  kNode,    // one node
  kLeaf,    // nodes under one leaf switch
  kSpine,   // nodes under one spine
  kNone,    // anywhere
};
std::string_view to_string(PackLevel level);

enum class TopologyMode {
  kPreferred,  // pack as asked when possible, else place wider
  kRequired,   // pack as asked or wait
};
std::string_view to_string(TopologyMode mode);

struct TopologyConstraint {
  PackLevel pack = PackLevel::kNone;
  TopologyMode mode = TopologyMode::kPreferred;

  friend bool operator==(const TopologyConstraint&, const TopologyConstraint&) = default;
};

struct Resources {
  std::int32_t gpus = 1;
  // resources.gpuShare, in thousandths (1-999): each of the job's `gpus` workers gets this
  // share of a GPU of its own, beside other jobs' shares (isolated by MPS); 0: whole GPUs.
  std::int32_t gpu_milli = 0;
  // resources.gpuMemoryGiB, in MiB, with a share only: the GPU memory each share may pin
  // (MPS enforces it); 0: none stated (the share is not limited, nor counted against room).
  std::int64_t gpu_memory_mib = 0;
  std::vector<GpuTypeId> gpu_types;  // acceptable types; empty means any type
  std::int32_t gpus_per_node = 0;    // 0: the scheduler chooses the split
  std::int32_t cpus_per_gpu = 1;
  std::int64_t memory_per_gpu_mib = 8 * 1024;
  // How fast the job runs on each type, per GPU, relative to each other (any unit; only
  // ratios count): the scheduler places it on the type with the most speed per unit of
  // the type's price. Empty: the job does not say.
  std::map<GpuTypeId, double> gpu_speed;
  // The region the job must run in, matched against the nodes' labels.region (its data
  // lives there: locality, egress, residency). Empty: any region.
  std::string region;

  friend bool operator==(const Resources&, const Resources&) = default;
};

// Elastic jobs run with any GPU count in [min_gpus, max_gpus] that the step allows.
enum class ElasticStep {
  kMultiple,    // counts are multiples of `step_multiple`
  kPowerOfTwo,  // counts are powers of two
};

// A job's throughput at one size, in any unit the job likes (samples/s, steps/s): only
// ratios between sizes matter. What the user declares as the prior, in `elastic.scaling`.
struct ScalingPoint {
  std::int32_t gpus = 0;
  double throughput = 0;
  friend bool operator==(const ScalingPoint&, const ScalingPoint&) = default;
};

// The most throughput a scaling point or a worker's report may carry: ratios are what
// matters, and this keeps them and their logarithms far from overflow.
inline constexpr double kMaxThroughput = 1e15;

struct ElasticRange {
  std::int32_t min_gpus = 0;
  std::int32_t max_gpus = 0;
  ElasticStep step = ElasticStep::kMultiple;
  std::int32_t step_multiple = 1;
  // The job's scaling curve, by gpus ascending; empty: throughput proportional to GPUs.
  std::vector<ScalingPoint> scaling;

  friend bool operator==(const ElasticRange&, const ElasticRange&) = default;
};

// Throughput at `gpus` by the curve: linear between its points and from (0, 0) to the
// first, flat past the last (no gain is assumed beyond what was measured or declared).
// An empty curve is linear: `gpus` itself.
double throughput_at(const std::vector<ScalingPoint>& curve, std::int32_t gpus);

// The curve decide() uses for an elastic job once its workers have reported throughput
// (`observed`: sorted by size, one point per size, throughputs > 0): the measurements at
// the sizes measured, and at the declared curve's sizes (none declared: the range's
// ends, on a linear prior) the declared throughput scaled to agree with the
// measurements, by the geometric mean of measured / declared over the measured sizes.
// So the declared curve is the prior and only its shape survives a measurement. Past the
// largest measured size, with two or more measurements, a prior point is capped where the
// last two measurements' slope (if rising) would put it. With no measurements: the
// declared curve.
std::vector<ScalingPoint> merge_scaling(const ElasticRange& range,
                                        const std::vector<ScalingPoint>& observed);

struct CheckpointPolicy {
  std::string dir;           // where the worker writes checkpoints
  Duration interval{0};      // how often the worker checkpoints
  Duration restore_time{0};  // expected time to resume from a checkpoint

  friend bool operator==(const CheckpointPolicy&, const CheckpointPolicy&) = default;
};

struct CodeVersion {
  std::string repo;    // e.g. "github.com/org/train"; a legacy free-form `code` string
  std::string commit;  // 7 to 64 lowercase hex digits, or empty

  friend bool operator==(const CodeVersion&, const CodeVersion&) = default;
};

// What the job trains on and with: recorded with every run, and its datasets gated
// (docs/datasets.md).
struct Lineage {
  std::vector<DatasetRef> datasets;  // each must exist, be visible and have passed
  CodeVersion code;
  std::string image;    // the environment, pinned: NAME@sha256:<64 hex>
  std::string dataset;  // a free-form note from before lineage was typed; not gated

  friend bool operator==(const Lineage&, const Lineage&) = default;
};

// How many worker processes the agent starts per node (docs/agent-protocol.md §2).
enum class ProcessMode {
  kPerGpu,   // one process per GPU, RANK per GPU (the default)
  kPerNode,  // one process per node, holding all its GPUs (launchers such as torchrun)
};
std::string_view to_string(ProcessMode mode);

// A job array (Slurm's --array=0-N%K): one submission, `count` tasks of the same spec,
// task i seeing CORRAL_ARRAY_INDEX=i, at most `max_running` of them holding GPUs at once
// (0: no limit). Each task is a job of its own; the array is named by its first task's id.
struct ArraySpec {
  std::int32_t count = 1;
  std::int32_t max_running = 0;
  friend bool operator==(const ArraySpec&, const ArraySpec&) = default;
};

// What a dependency waits for in the job it names (Slurm's afterok, afternotok, afterany,
// after). For an array, the whole array: success when every task succeeded, failure when
// all ended and one did not succeed, start when one started.
enum class DependencyCondition { kSuccess, kFailure, kFinish, kStart };
std::string_view to_string(DependencyCondition on);

// A job this one runs after. As submitted `job` is an id, or the name of a job of the
// same tenant (its latest); corrald resolves a name to the id at submission, so a stored
// spec holds ids only. `elementwise` (Slurm's aftercorr): task i of this array waits for
// task i of the array named, not for all of it.
struct Dependency {
  std::optional<JobId> id;
  std::string name;  // set when submitted by name, until resolved
  DependencyCondition on = DependencyCondition::kSuccess;
  bool elementwise = false;
  friend bool operator==(const Dependency&, const Dependency&) = default;
};

// How a job's attempts are retried, by what ended them (Armada's retry policies, Slurm's
// --requeue). Absent fields keep the behaviour of a spec without `retry`: every failed
// rank and every lost node counts against maxRestarts, restarts back off by corrald's
// agents.restartBackoffMs, a requeued job queues again from the back, and a preempted job
// always goes back to the queue.
struct RetryPolicy {
  // The exit codes a failed rank is retried for (within maxRestarts); any other code ends
  // the job at once (the job's own bug). Empty: every non-zero exit is retried.
  std::vector<std::int32_t> on_exit_codes;
  // Attempts ended by a lost node (or a node drained under the job) retried on their own
  // budget, apart from maxRestarts; -1: counted in maxRestarts.
  std::int32_t on_node_failure = -1;
  // Attempts ended by the out-of-memory killer (a rank killed by SIGKILL that Corral did
  // not send) retried on their own budget; -1: as any failed rank.
  std::int32_t on_out_of_memory = -1;
  // Attempts ended by a preemption, requeued on a budget of their own: -1 (`always`, the
  // default) always; 0 (`never`) the job ends at its first preemption; N ends it at its
  // (N+1)th. A preempted job has done nothing wrong, so it never counts in maxRestarts;
  // this is for work that is worth nothing late (a deadline, a job a pipeline resubmits
  // itself).
  std::int32_t on_preemption = -1;
  // A job requeued after a node failure keeps its place in the queue (its queued_at), as
  // Slurm's --requeue=expedite: it did nothing wrong.
  bool expedite = true;
  // Restart backoff, doubling from `backoff_initial` up to `backoff_max`; 0: corrald's.
  Duration backoff_initial{0};
  Duration backoff_max{0};
  friend bool operator==(const RetryPolicy&, const RetryPolicy&) = default;
};

// An interactive session (priorityClass: interactive; docs/sessions.md): how long its GPUs
// may sit idle before it is warned, then reclaimed. 0: corrald's sessions.idleTimeoutMs.
struct SessionSpec {
  Duration idle_timeout{0};
  friend bool operator==(const SessionSpec&, const SessionSpec&) = default;
};

struct JobSpec {
  std::string name;
  TenantId tenant{"default"};
  std::string priority_class = "standard";
  Resources resources;
  TopologyConstraint topology;
  std::optional<ElasticRange> elastic;
  bool preemptible = false;  // resolved: the spec's value, else the priority class's
  std::optional<CheckpointPolicy> checkpoint;
  Duration max_runtime = seconds(72 * 3600);
  // How long the job is expected to run, if the user knows: planned starts of jobs that
  // wait behind it use it instead of max_runtime (0: not given). At most max_runtime.
  Duration expected_runtime{0};
  std::optional<ReservationId> reservation;
  ProcessMode processes = ProcessMode::kPerGpu;
  std::int32_t max_restarts = 3;  // failed or lost attempts restarted before the job fails
  std::vector<std::string> command;
  std::map<std::string, std::string> env;
  std::map<std::string, std::string> secret_env;  // never echoed back or logged
  Lineage lineage;
  std::map<std::string, std::string> labels;
  std::optional<ArraySpec> array;
  std::vector<Dependency> depends_on;
  std::optional<RetryPolicy> retry;
  // A sweep's trials are its array's tasks: `array` is set from it (count and maxRunning).
  std::optional<SweepSpec> sweep;
  std::optional<SessionSpec> session;  // given only with priorityClass interactive

  friend bool operator==(const JobSpec&, const JobSpec&) = default;
};

}  // namespace corral::core
