// The corrald ⇄ corral-agent protocol (docs/agent-protocol.md): its messages as types,
// and their one JSON codec. corrald (src/server) and corral-agent (src/agent) both encode
// and decode every body through here, and the agent's tests give their stand-in corrald
// the same codec, so the wire format has one definition.
//
// Decoders never throw. A malformed body is InvalidArgument whose field is the path of
// the offending value ("workers[2].rank", "gpus[0].xidErrors[1]"; empty for the body as
// a whole), and no message echoes a value (assignments carry secret env values). Absent
// optional fields take the defaults of the types below. Readers ignore fields they do
// not know, so either side may grow the protocol first; the join and the checkpoint
// bodies are the exception, refused with an unknown field as corrald always did.
//
// Thread safety: value types and pure functions.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "core/topology.h"

namespace corral::core {

// ---- workers ------------------------------------------------------------------------

// One worker: one process (with its descendants) per rank of a job attempt on a node.
struct WorkerKey {
  std::int64_t job = 0;
  std::int32_t attempt = 0;
  std::int32_t rank = 0;

  auto operator<=>(const WorkerKey&) const = default;
  // "JOB-ATTEMPT-RANK": the worker's file name stem under the agent's run dir.
  std::string name() const;
};

// What corrald asks a worker to be (§2). core/worker_env.h turns it into the process's
// environment.
struct WorkerSpec {
  WorkerKey key;
  std::int32_t local_rank = 0;
  std::int32_t node_rank = 0;
  std::int32_t world_size = 1;
  // The attempt's ranks on this node: LOCAL_WORLD_SIZE (1 for perNode, whose one process
  // per node is the rank).
  std::int32_t local_world_size = 1;
  // perNode: the process is a launcher such as torchrun that starts one process per GPU
  // itself; world_size counts nodes and worker_env adds torchrun's own PET_* settings.
  bool per_node = false;
  std::vector<std::int32_t> gpus;
  std::string visible_devices;  // CUDA_VISIBLE_DEVICES: `gpus`, comma-separated
  // A share of a GPU: the worker's share of each of its `gpus`, in thousandths (1-999),
  // which it shares with other jobs' workers under NVIDIA MPS (worker_env sets MPS's
  // limits from it); 0: whole GPUs, its own.
  std::int32_t gpu_share_milli = 0;
  // With a share: the GPU memory the worker may pin on each of its GPUs, in MiB; 0: no
  // limit stated.
  std::int64_t gpu_memory_mib = 0;
  std::vector<std::string> command;        // argv; command[0] is looked up in PATH
  std::map<std::string, std::string> env;  // the spec's env and secretEnv: never logged
  std::string master_addr;
  std::int32_t master_port = 0;
  std::string checkpoint_dir;
  std::string restore_from;  // empty: nothing to restore
  std::int64_t grace_ms = 30000;
  // A task of a job array: the array's id (its first task's job id), the task's index and
  // the array's size; array_job 0 for a job that is not in an array.
  std::int64_t array_job = 0;
  std::int32_t array_index = 0;
  std::int32_t array_count = 0;
  // A trial of a sweep: its parameters by name, each as JSON scalar text
  // (core::trial_parameters); empty for any other job.
  std::map<std::string, std::string> sweep_params;

  friend bool operator==(const WorkerSpec&, const WorkerSpec&) = default;
};

struct DesiredWorker {
  WorkerSpec spec;
  bool run = true;  // false: desired "stop"

  friend bool operator==(const DesiredWorker&, const DesiredWorker&) = default;
};

// What an agent observes of a worker and reports (§3).
struct WorkerStatus {
  enum class State { kRunning, kExited };
  WorkerKey key;
  State state = State::kRunning;
  std::int64_t pid = 0;  // the worker's pid (its process group id); 0 before it is known
  std::int64_t started_at_ms = 0;
  // When exited: the exit status, or 128 + signal with `signal` set when a signal ended
  // it. -1 when its supervisor vanished without recording one (the group is killed).
  std::int32_t exit_code = 0;
  std::int32_t signal = 0;
  std::int64_t exited_at_ms = 0;

  friend bool operator==(const WorkerStatus&, const WorkerStatus&) = default;
};
// "running" or "exited", as the heartbeat and corrald's store spell them.
std::string_view to_string(WorkerStatus::State state);

// A GPU's health and utilization, read before each heartbeat (§3).
struct GpuHealth {
  std::int32_t index = 0;
  std::string uuid;
  bool present = true;
  std::vector<std::int32_t> xid_errors;  // distinct XIDs seen since the agent started, sorted
  std::int64_t ecc_uncorrectable = 0;
  bool retired_pages_pending = false;
  bool remap_failed = false;
  std::int32_t temperature_c = 0;
  double power_w = 0;
  std::int32_t power_limit_w = 0;
  std::vector<std::string> throttle;  // e.g. "sw_power_cap", "hw_thermal_slowdown"
  std::int64_t nvlink_errors = 0;
  std::int32_t sm_percent = 0;
  std::int64_t memory_used_mib = 0;

  friend bool operator==(const GpuHealth&, const GpuHealth&) = default;
};

// ---- §1 joining ---------------------------------------------------------------------

// A GPU as the agent discovered it: kept by corrald as observed state.
struct ObservedGpu {
  std::int32_t index = 0;
  std::string uuid;
  std::string model;  // the vendor's name, e.g. "NVIDIA H100 80GB HBM3"
  std::int64_t memory_mib = 0;
  std::int32_t power_limit_w = 0;
  std::string pci_bus_id;  // "0000:18:00.0"
  std::int32_t numa_node = 0;
  std::vector<std::int32_t> nvlink_peers;

  friend bool operator==(const ObservedGpu&, const ObservedGpu&) = default;
};

struct ObservedInventory {
  std::string source;  // "nvml", "simulated:dgx-h100", "file:/path"
  std::vector<ObservedGpu> gpus;

  friend bool operator==(const ObservedInventory&, const ObservedInventory&) = default;
};

struct JoinRequest {
  std::string agent_url;  // http://HOST:PORT (agent_url_host() holds)
  std::int64_t rack_power_cap_w = 0;
  // Registered exactly as POST /v1/nodes would: its encoder writes id, labels, cpus,
  // memoryMib and gpus (index, uuid, type, nvlinkDomain, numaNode).
  Node node;
  ObservedInventory inventory;
};

// The `node` member is the body POST /v1/nodes takes, whose schema and rules belong to
// the nodes API: the decoder hands its JSON text to one of these (corrald passes its
// node_from_json) and prefixes the field of an error with "node.".
using NodeDecoder = std::function<Result<Node>(std::string_view json)>;

std::string encode_join_request(const JoinRequest& request);
Result<JoinRequest> decode_join_request(std::string_view body, const NodeDecoder& decode_node);

struct JoinAnswer {
  std::string node;
  std::string token;
  std::int64_t epoch = 0;
  std::string log_key;
  std::string cluster_id;  // the agent checks it is safe as a path component

  friend bool operator==(const JoinAnswer&, const JoinAnswer&) = default;
};
std::string encode_join_answer(const JoinAnswer& answer);
Result<JoinAnswer> decode_join_answer(std::string_view body);

// "http://HOST:PORT[/...]" -> HOST (brackets of an IPv6 literal removed); nullopt for
// anything else. An agent's URL must have one; its host is MASTER_ADDR of the ranks it
// runs as rank 0.
std::optional<std::string> agent_url_host(std::string_view url);

// ---- §2 desired workers ---------------------------------------------------------------

struct Assignments {
  std::string node;
  std::int64_t epoch = 0;
  std::int64_t version = 0;
  std::vector<DesiredWorker> workers;

  friend bool operator==(const Assignments&, const Assignments&) = default;
};
std::string encode_assignments(const Assignments& assignments);
Result<Assignments> decode_assignments(std::string_view body);

// ---- §3 reports -----------------------------------------------------------------------

struct Heartbeat {
  std::int64_t epoch = 0;
  // The last assignments version fully applied before `workers` was observed; absent
  // before the agent applied any.
  std::optional<std::int64_t> applied_version;
  std::optional<std::string> agent_url;        // absent: unchanged
  std::optional<std::vector<GpuHealth>> gpus;  // absent: no readings this time
  std::vector<WorkerStatus> workers;

  friend bool operator==(const Heartbeat&, const Heartbeat&) = default;
};
std::string encode_heartbeat(const Heartbeat& heartbeat);
Result<Heartbeat> decode_heartbeat(std::string_view body);

// The pieces corrald keeps as observed state, as the join and heartbeat bodies carry them;
// the decoders read them back as strictly as the bodies are read.
std::string encode_observed_inventory(const ObservedInventory& inventory);
std::string encode_gpu_health(const std::vector<GpuHealth>& gpus);
Result<ObservedInventory> decode_observed_inventory(std::string_view text);
Result<std::vector<GpuHealth>> decode_gpu_health(std::string_view text);

struct HeartbeatAnswer {
  std::int64_t epoch = 0;
  std::int64_t version = 0;  // the node's current assignments version

  friend bool operator==(const HeartbeatAnswer&, const HeartbeatAnswer&) = default;
};
std::string encode_heartbeat_answer(const HeartbeatAnswer& answer);
Result<HeartbeatAnswer> decode_heartbeat_answer(std::string_view body);

// ---- §3b telemetry -------------------------------------------------------------------

// One telemetry sample of one GPU (docs/telemetry.md): what the agent's sampler read at
// `time_ms`. Sent in batches apart from the heartbeat, best effort.
struct TelemetrySample {
  std::int32_t gpu = 0;  // the GPU's index on the node
  std::int64_t time_ms = 0;
  double utilization = 0;  // 0 to 1: the fraction of the last interval a kernel ran
  std::int64_t memory_used_mib = 0;
  double power_w = 0;
  std::int32_t temperature_c = 0;
  std::vector<std::string> throttle;  // clock throttle reasons, e.g. "hw_thermal_slowdown"
  std::int64_t ecc_corrected = 0;     // volatile counts since the driver loaded
  std::int64_t ecc_uncorrected = 0;

  friend bool operator==(const TelemetrySample&, const TelemetrySample&) = default;
};

// POST /v1/agents/{node}/telemetry. At most kMaxTelemetryBatch samples.
struct TelemetryBatch {
  std::vector<TelemetrySample> samples;

  friend bool operator==(const TelemetryBatch&, const TelemetryBatch&) = default;
};
inline constexpr std::size_t kMaxTelemetryBatch = 10000;
std::string encode_telemetry_batch(const TelemetryBatch& batch);
Result<TelemetryBatch> decode_telemetry_batch(std::string_view body);

// ---- §4 checkpoints -------------------------------------------------------------------

// What a worker posts to its local agent.
struct CheckpointReport {
  std::int64_t step = 0;
  std::string path;  // absolute
  std::int64_t bytes = 0;
  std::string checksum;
  // Training throughput since the previous checkpoint (samples/s or any unit the job's
  // elastic.scaling uses); 0: not measured. Optional on the wire.
  double throughput = 0;

  friend bool operator==(const CheckpointReport&, const CheckpointReport&) = default;
};
std::string encode_checkpoint_report(const CheckpointReport& report);
Result<CheckpointReport> decode_checkpoint_report(std::string_view body);

// The same report, as the agent forwards it to corrald for one of its workers.
struct WorkerCheckpoint {
  std::int64_t epoch = 0;
  WorkerKey key;
  CheckpointReport report;

  friend bool operator==(const WorkerCheckpoint&, const WorkerCheckpoint&) = default;
};
std::string encode_worker_checkpoint(const WorkerCheckpoint& checkpoint);
Result<WorkerCheckpoint> decode_worker_checkpoint(std::string_view body);

// ---- §5 run reports -------------------------------------------------------------------

// One value of one metric at one training step ("loss" at step 1200). A point's key in
// its run is (name, step): a retry, or a restored attempt reporting the step again,
// replaces the value instead of adding a point.
struct MetricPoint {
  std::string name;  // 1 to 128 of letters, digits, '_', '.', '/', '-'
  std::int64_t step = 0;
  double value = 0;  // finite

  friend bool operator==(const MetricPoint&, const MetricPoint&) = default;
};

// A file the run produced (weights, an evaluation report): where it is and how to verify
// it. Its key in the run is the uri; the bytes are never sent.
struct ArtifactReport {
  std::string name;    // what it is ("model", "eval"): as a metric name
  std::string uri;     // an absolute path or SCHEME://...
  std::string digest;  // sha256:<64 lowercase hex>
  std::int64_t bytes = 0;

  friend bool operator==(const ArtifactReport&, const ArtifactReport&) = default;
};

// What a worker posts to its local agent (/local/run): a batch of points and artifacts.
struct RunReport {
  std::vector<MetricPoint> metrics;
  std::vector<ArtifactReport> artifacts;

  friend bool operator==(const RunReport&, const RunReport&) = default;
};
inline constexpr std::size_t kMaxMetricBatch = 1000;
inline constexpr std::size_t kMaxArtifactBatch = 100;
std::string encode_run_report(const RunReport& report);
Result<RunReport> decode_run_report(std::string_view body);
// A metric or artifact name as the rules above allow.
bool is_metric_name(std::string_view name);

// The same report, as the agent forwards it to corrald for one of its workers.
struct WorkerRunReport {
  std::int64_t epoch = 0;
  WorkerKey key;
  RunReport report;

  friend bool operator==(const WorkerRunReport&, const WorkerRunReport&) = default;
};
std::string encode_worker_run_report(const WorkerRunReport& report);
Result<WorkerRunReport> decode_worker_run_report(std::string_view body);

// ---- §5 feature lookups ---------------------------------------------------------------

// A worker's point-in-time lookup (/local/features/lookup), answered at once: the agent
// forwards it to corrald and hands the worker corrald's answer. Only `set` is read here.
// The rows and the TTL are checked by corrald with the member endpoint's own rules
// (docs/features.md), so they travel as the worker wrote them and a bad row is named by
// the one parser that knows them.
struct FeatureLookupRequest {
  std::string set;     // "NAME@VERSION"
  std::string lookup;  // the body's other keys, a JSON object ({"rows", "ttlMs"})

  friend bool operator==(const FeatureLookupRequest&, const FeatureLookupRequest&) = default;
};
inline constexpr std::size_t kMaxFeatureSetRefBytes = 128;
Result<FeatureLookupRequest> decode_feature_lookup_request(std::string_view body);

// The same lookup, as the agent forwards it to corrald for one of its workers.
struct WorkerFeatureLookup {
  std::int64_t epoch = 0;
  WorkerKey key;
  FeatureLookupRequest request;

  friend bool operator==(const WorkerFeatureLookup&, const WorkerFeatureLookup&) = default;
};
std::string encode_worker_feature_lookup(const WorkerFeatureLookup& lookup);
Result<WorkerFeatureLookup> decode_worker_feature_lookup(std::string_view body);

}  // namespace corral::core
