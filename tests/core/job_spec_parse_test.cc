// Job spec parsing: every rule of docs/jobspec.md as a bad-input case with its exact
// field path, the defaults, both formats, the normalized JSON round trip, and the
// example specs shipped in examples/jobs.
#include "core/job_spec_parse.h"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/utf8.h"

namespace corral::core {
namespace {

// The smallest valid spec; bad cases add or replace one thing.
constexpr std::string_view kMinimal = "name: job\nresources: {gpus: 1}\ncommand: [python]\n";

std::string describe(const std::vector<FieldError>& errors) {
  std::string out;
  for (const auto& e : errors) out += "  " + to_string(e) + "\n";
  return out.empty() ? "  (no errors)\n" : out;
}

// Parses a spec that must be valid, failing the test with every error otherwise.
JobSpec parse_ok(std::string_view text, SpecFormat format = SpecFormat::kYaml) {
  ParseOutcome outcome = parse_job_spec(text, format);
  EXPECT_TRUE(outcome.ok()) << describe(outcome.errors);
  if (!outcome.spec) return JobSpec{};
  return std::move(*outcome.spec);
}

// The spec as it comes back from its own JSON: secrets read "***".
JobSpec masked(JobSpec spec) {
  for (auto& [key, value] : spec.secret_env) value = std::string(kSecretMask);
  return spec;
}

void expect_round_trip(const JobSpec& spec) {
  const std::string json_text = job_spec_to_json(spec);
  const JobSpec again = parse_ok(json_text, SpecFormat::kJson);
  EXPECT_EQ(again, masked(spec)) << json_text;
  EXPECT_EQ(job_spec_to_json(again), json_text) << "normalized JSON is not a fixed point";
}

std::filesystem::path source_dir() { return CORRAL_SOURCE_DIR; }

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

SpecFormat format_of(const std::filesystem::path& path) {
  return path.extension() == ".json" ? SpecFormat::kJson : SpecFormat::kYaml;
}

struct BadCase {
  std::string name;
  std::string text;
  std::string path;      // the exact path one of the errors must carry
  std::string fragment;  // ... and a piece of its reason
  SpecFormat format = SpecFormat::kYaml;
};

std::string with(std::string_view extra) { return std::string(kMinimal) + std::string(extra); }
std::string with_resources(std::string_view resources, std::string_view extra = "") {
  return "name: job\ncommand: [python]\nresources: " + std::string(resources) + "\n" +
         std::string(extra);
}
constexpr std::string_view kCheckpoint = "checkpoint: {dir: /ckpt/x, intervalSeconds: 600}\n";

std::vector<BadCase> bad_cases() {
  const std::string long_name(64, 'a');
  const std::string deep_json =
      "{\"labels\": " + std::string(100, '[') + std::string(100, ']') + "}";
  const std::string deep_yaml = "labels: " + std::string(100, '[') + std::string(100, ']') + "\n";
  return {
      // resources
      {"GpusZero", with_resources("{gpus: 0}"), "resources.gpus",
       "must be between 1 and 16384, got 0"},
      {"GpusTooMany", with_resources("{gpus: 16385}"), "resources.gpus", "got 16385"},
      {"GpusNotInteger", with_resources("{gpus: many}"), "resources.gpus",
       "must be an integer, got \"many\""},
      {"GpusFloat", with_resources("{gpus: 1.5}"), "resources.gpus", "must be an integer, got 1.5"},
      {"GpusQuotedYaml", with_resources("{gpus: \"16\"}"), "resources.gpus",
       "must be an integer, got \"16\""},
      {"GpusHuge", with_resources("{gpus: 99999999999999999999}"), "resources.gpus",
       "must be between 1 and 16384, got 99999999999999999999"},
      {"GpusMissing", with_resources("{cpusPerGpu: 2}"), "resources.gpus", "is required"},
      {"ResourcesMissing", "name: job\ncommand: [python]\n", "resources.gpus", "is required"},
      {"ResourcesNotMapping", with_resources("5"), "resources", "must be a mapping, got 5"},
      {"ResourcesUnknownField", with_resources("{gpus: 1, gpuz: 2}"), "resources.gpuz",
       "unknown field"},
      {"GpuTypeUnknown", with_resources("{gpus: 1, gpuTypes: [H100, H1000]}"),
       "resources.gpuTypes[1]", "unknown gpu type \"H1000\", known types: A10, A100-40GB"},
      {"GpuTypeDuplicate", with_resources("{gpus: 1, gpuTypes: [H100, A10, H100]}"),
       "resources.gpuTypes[2]", "duplicate gpu type \"H100\""},
      {"GpuTypesNotList", with_resources("{gpus: 1, gpuTypes: H100}"), "resources.gpuTypes",
       "must be a list"},
      {"GpuSpeedUnknownType", with_resources("{gpus: 1, gpuSpeed: {H1000: 2}}"),
       "resources.gpuSpeed.H1000", "unknown gpu type \"H1000\""},
      {"GpuSpeedTypeNotListed", with_resources("{gpus: 1, gpuTypes: [H100], gpuSpeed: {T4: 1}}"),
       "resources.gpuSpeed.T4", "\"T4\" is not one of resources.gpuTypes"},
      {"GpuSpeedNotPositive", with_resources("{gpus: 1, gpuSpeed: {H100: 0}}"),
       "resources.gpuSpeed.H100", "must be a number between 1e-9 and 1e15"},
      {"GpuSpeedNotANumber", with_resources("{gpus: 1, gpuSpeed: {H100: fast}}"),
       "resources.gpuSpeed.H100", "must be a number"},
      {"GpuSpeedNotAMap", with_resources("{gpus: 1, gpuSpeed: [H100]}"), "resources.gpuSpeed",
       "must be a mapping"},
      {"GpuShareWhole", with_resources("{gpuShare: 1}"), "resources.gpuShare",
       "must be a fraction of one GPU between 0.001 and 0.999 (ask for whole GPUs with "
       "resources.gpus), got 1"},
      {"GpuShareZero", with_resources("{gpuShare: 0}"), "resources.gpuShare", "got 0"},
      {"GpuShareNegative", with_resources("{gpuShare: -0.5}"), "resources.gpuShare", "got -0.5"},
      {"GpuShareTooFine", with_resources("{gpuShare: 0.2505}"), "resources.gpuShare",
       "must be a multiple of 0.001, got 0.2505"},
      {"GpuShareNotANumber", with_resources("{gpuShare: half}"), "resources.gpuShare",
       "got \"half\""},
      {"GpuMemoryWithoutShare", with_resources("{gpus: 1, gpuMemoryGiB: 20}"),
       "resources.gpuMemoryGiB", "needs resources.gpuShare"},
      {"GpuMemoryZero", with_resources("{gpuShare: 0.5, gpuMemoryGiB: 0}"),
       "resources.gpuMemoryGiB", "must be a number of GiB between 1 MiB"},
      {"GpuShareElastic",
       with_resources(
           "{gpus: 2, gpuShare: 0.5}",
           std::string("elastic: {minGpus: 1, maxGpus: 4}\n") + std::string(kCheckpoint)),
       "elastic", "is not allowed with resources.gpuShare"},
      {"GpuShareGpusPerNode", with_resources("{gpus: 2, gpuShare: 0.5, gpusPerNode: 2}"),
       "resources.gpusPerNode", "is not allowed with resources.gpuShare"},
      {"GpuSharePerNode", with_resources("{gpuShare: 0.5}", "processes: perNode\n"), "processes",
       "must be perGpu with resources.gpuShare"},
      {"GpuShareRequiredTopology",
       with_resources("{gpus: 2, gpuShare: 0.5}", "topology: {pack: node, mode: required}\n"),
       "topology.mode", "must be preferred with resources.gpuShare"},
      {"RegionNotDnsLabel", with_resources("{gpus: 1, region: US_East}"), "resources.region",
       "must be a DNS label (lowercase letters, digits and '-', starting and ending with a "
       "letter or digit), got \"US_East\""},
      {"RegionEmpty", with_resources("{gpus: 1, region: \"\"}"), "resources.region",
       "must be a DNS label"},
      {"RegionTrailingDash", with_resources("{gpus: 1, region: eu-west-}"), "resources.region",
       "must be a DNS label"},
      {"RegionTooLong", with_resources("{gpus: 1, region: " + long_name + "}"), "resources.region",
       "must be at most 63 characters, got 64"},
      {"RegionNotAString", with_resources("{gpus: 1, region: 1}"), "resources.region",
       "must be a string (quote it: \"1\"), got 1"},
      {"RegionList", with_resources("{gpus: 1, region: [eu-west]}"), "resources.region",
       "must be a string, got a list"},
      {"GpusPerNodeTooMany", with_resources("{gpus: 144, gpusPerNode: 73}"),
       "resources.gpusPerNode", "must be between 1 and 72, got 73"},
      // 0 once meant "the scheduler chooses"; absence says that now (issue 12).
      {"GpusPerNodeZero", with_resources("{gpus: 8, gpusPerNode: 0}"), "resources.gpusPerNode",
       "must be between 1 and 72, got 0 (leave it out to let the scheduler choose the split)"},
      {"GpusPerNodeNegative", with_resources("{gpus: 8, gpusPerNode: -8}"), "resources.gpusPerNode",
       "must be between 1 and 72, got -8"},
      {"GpusPerNodeNotDividing", with_resources("{gpus: 16, gpusPerNode: 6}"),
       "resources.gpusPerNode", "must divide resources.gpus (16), got 6"},
      {"GpusPerNodeAboveGpus", with_resources("{gpus: 4, gpusPerNode: 8}"), "resources.gpusPerNode",
       "must not exceed resources.gpus (4), got 8"},
      {"CpusPerGpuTooMany", with_resources("{gpus: 1, cpusPerGpu: 257}"), "resources.cpusPerGpu",
       "must be between 0 and 256, got 257"},
      {"MemoryBadUnit", with_resources("{gpus: 1, memoryPerGpu: 12Gb}"), "resources.memoryPerGpu",
       "unit must be one of"},
      {"MemoryZero", with_resources("{gpus: 1, memoryPerGpu: 0Gi}"), "resources.memoryPerGpu",
       "must be between 1Mi and 4096Gi"},
      {"MemoryList", with_resources("{gpus: 1, memoryPerGpu: [1]}"), "resources.memoryPerGpu",
       "must be a size"},
      // identity
      {"NameMissing", "resources: {gpus: 1}\ncommand: [python]\n", "name", "is required"},
      {"NameNull", "name:\nresources: {gpus: 1}\ncommand: [python]\n", "name", "is required"},
      {"NameUppercase", "name: Llama\nresources: {gpus: 1}\ncommand: [python]\n", "name",
       "must be a DNS label"},
      {"NameLeadingDash", "name: -llama\nresources: {gpus: 1}\ncommand: [python]\n", "name",
       "got \"-llama\""},
      {"NameTooLong", "name: " + long_name + "\nresources: {gpus: 1}\ncommand: [python]\n", "name",
       "must be at most 63 characters, got 64"},
      {"TenantBad", with("tenant: NLP_team\n"), "tenant", "must be a DNS label"},
      {"PriorityClassUnknown", with("priorityClass: gold\n"), "priorityClass",
       "must be one of interactive, production, standard, preemptible, got \"gold\""},
      {"ReservationBad", with("reservation: Launch!\n"), "reservation", "must be a DNS label"},
      // topology
      {"PackUnknown", with("topology: {pack: rack}\n"), "topology.pack",
       "must be one of nvlink, node, leaf, spine, none, got \"rack\""},
      {"ModeUnknown", with("topology: {mode: strict}\n"), "topology.mode",
       "must be one of preferred, required"},
      {"TopologyUnknownField", with("topology: {packing: leaf}\n"), "topology.packing",
       "unknown field"},
      {"PackNodeTooBig", with_resources("{gpus: 128}", "topology: {pack: node}\n"), "topology.pack",
       "\"node\" packing holds at most 72 gpus, but the job asks for up to 128"},
      {"PackNvlinkElasticTooBig",
       with_resources("{gpus: 64}",
                      "topology: {pack: nvlink}\nelastic: {minGpus: 64, maxGpus: "
                      "128, step: 64}\n" +
                          std::string(kCheckpoint)),
       "topology.pack", "up to 128"},
      {"PackNodeSplit", with_resources("{gpus: 8, gpusPerNode: 4}", "topology: {pack: node}\n"),
       "resources.gpusPerNode", "must equal resources.gpus (8) when topology.pack is \"node\""},
      // elastic
      {"ElasticGpusOutsideRange",
       with_resources("{gpus: 16}",
                      "elastic: {minGpus: 32, maxGpus: 64, step: 8}\n" + std::string(kCheckpoint)),
       "resources.gpus", "must be between elastic.minGpus (32) and elastic.maxGpus (64)"},
      {"ElasticMaxBelowMin",
       with_resources("{gpus: 16}",
                      "elastic: {minGpus: 16, maxGpus: 8}\n" + std::string(kCheckpoint)),
       "elastic.maxGpus", "must be at least elastic.minGpus (16), got 8"},
      {"ElasticStepWord",
       with_resources("{gpus: 16}", "elastic: {minGpus: 8, maxGpus: 32, step: pow3}\n" +
                                        std::string(kCheckpoint)),
       "elastic.step", "or \"pow2\", got \"pow3\""},
      {"ElasticStepZero",
       with_resources("{gpus: 16}",
                      "elastic: {minGpus: 8, maxGpus: 32, step: 0}\n" + std::string(kCheckpoint)),
       "elastic.step", "got 0"},
      {"ElasticMinOffStep",
       with_resources("{gpus: 16}",
                      "elastic: {minGpus: 12, maxGpus: 32, step: 8}\n" + std::string(kCheckpoint)),
       "elastic.minGpus", "must be a multiple of elastic.step (8), got 12"},
      {"ElasticMaxNotPow2",
       with_resources("{gpus: 16}", "elastic: {minGpus: 8, maxGpus: 24, step: pow2}\n" +
                                        std::string(kCheckpoint)),
       "elastic.maxGpus", "must be a power of two (elastic.step is \"pow2\"), got 24"},
      {"ElasticGpusOffStep",
       with_resources("{gpus: 12}",
                      "elastic: {minGpus: 8, maxGpus: 32, step: 8}\n" + std::string(kCheckpoint)),
       "resources.gpus", "must be a multiple of elastic.step (8), got 12"},
      {"ElasticMinOffNodeSplit",
       with_resources("{gpus: 16, gpusPerNode: 8}",
                      "elastic: {minGpus: 4, maxGpus: 32, step: 4}\n" + std::string(kCheckpoint)),
       "elastic.minGpus", "must be a multiple of resources.gpusPerNode (8), got 4"},
      {"ElasticScalingNotAList",
       with_resources("{gpus: 16}", "elastic: {minGpus: 8, maxGpus: 32, scaling: 3}\n" +
                                        std::string(kCheckpoint)),
       "elastic.scaling", "must be a list of at most 64 {gpus, throughput} points, got 3"},
      {"ElasticScalingThroughputZero",
       with_resources("{gpus: 16}",
                      "elastic: {minGpus: 8, maxGpus: 32, scaling: [{gpus: 8, "
                      "throughput: 100}, {gpus: 16, throughput: 0}]}\n" +
                          std::string(kCheckpoint)),
       "elastic.scaling[1].throughput",
       "must be a number between 1e-9 and 1e15 (samples/s or any unit), got 0"},
      {"ElasticScalingDuplicateSize",
       with_resources("{gpus: 16}",
                      "elastic: {minGpus: 8, maxGpus: 32, scaling: [{gpus: 8, "
                      "throughput: 100}, {gpus: 8, throughput: 120}]}\n" +
                          std::string(kCheckpoint)),
       "elastic.scaling[1].gpus", "duplicate size 8"},
      {"ElasticScalingGpusMissing",
       with_resources("{gpus: 16}",
                      "elastic: {minGpus: 8, maxGpus: 32, scaling: [{throughput: "
                      "100}]}\n" +
                          std::string(kCheckpoint)),
       "elastic.scaling[0].gpus", "is required"},
      {"ElasticNeedsCheckpoint",
       with_resources("{gpus: 16}", "elastic: {minGpus: 8, maxGpus: 32}\n"), "checkpoint",
       "is required for an elastic job"},
      {"ElasticMinMissing",
       with_resources("{gpus: 16}", "elastic: {maxGpus: 32}\n" + std::string(kCheckpoint)),
       "elastic.minGpus", "is required"},
      // preemptible
      {"PreemptibleClassCannotOptOut", with("priorityClass: preemptible\npreemptible: false\n"),
       "preemptible", "must be true for priority class \"preemptible\", got false"},
      {"PreemptibleYes", with("preemptible: yes\n"), "preemptible",
       "must be true or false, got \"yes\""},
      // checkpoint
      {"CheckpointRelativeDir", with("checkpoint: {dir: ckpt/x, intervalSeconds: 60}\n"),
       "checkpoint.dir", "must be an absolute path, got \"ckpt/x\""},
      {"CheckpointDirMissing", with("checkpoint: {intervalSeconds: 60}\n"), "checkpoint.dir",
       "is required"},
      {"CheckpointIntervalZero", with("checkpoint: {dir: /c, intervalSeconds: 0}\n"),
       "checkpoint.intervalSeconds", "must be between 1 and 2592000, got 0"},
      {"CheckpointIntervalMissing", with("checkpoint: {dir: /c}\n"), "checkpoint.intervalSeconds",
       "is required"},
      {"CheckpointRestoreNegative",
       with("checkpoint: {dir: /c, intervalSeconds: 60, restoreSeconds: -1}\n"),
       "checkpoint.restoreSeconds", "got -1"},
      {"CheckpointNotMapping", with("checkpoint: /ckpt\n"), "checkpoint",
       "must be a mapping, got \"/ckpt\""},
      // maxRuntime
      {"RuntimeTooShort", with("maxRuntime: 30s\n"), "maxRuntime",
       "must be between 1m and 30d, got \"30s\""},
      {"RuntimeTooLong", with("maxRuntime: 31d\n"), "maxRuntime", "got \"31d\""},
      {"RuntimeWord", with("maxRuntime: forever\n"), "maxRuntime", "got \"forever\""},
      {"RuntimeBareNumber", with("maxRuntime: 3600\n"), "maxRuntime", "must be a duration"},
      {"ExpectedRuntimeTooShort", with("expectedRuntime: 10s\n"), "expectedRuntime",
       "must be between 1m and 30d, got \"10s\""},
      {"ExpectedRuntimeNumber", with("expectedRuntime: 60\n"), "expectedRuntime",
       "must be a duration"},
      {"ExpectedRuntimeBeyondMax", with("maxRuntime: 2h\nexpectedRuntime: 3h\n"), "expectedRuntime",
       "must not exceed maxRuntime (2h), got 3h"},
      // processes, maxRestarts
      {"ProcessesUnknown", with("processes: perRack\n"), "processes",
       "must be perGpu or perNode, got \"perRack\""},
      {"ProcessesNumber", with("processes: 2\n"), "processes", "must be a string"},
      {"RestartsNegative", with("maxRestarts: -1\n"), "maxRestarts",
       "must be between 0 and 100, got -1"},
      {"RestartsTooMany", with("maxRestarts: 101\n"), "maxRestarts", "got 101"},
      {"RestartsString", with("maxRestarts: lots\n"), "maxRestarts", "must be an integer"},
      // command
      {"CommandMissing", "name: job\nresources: {gpus: 1}\n", "command", "is required"},
      {"CommandEmpty", "name: job\nresources: {gpus: 1}\ncommand: []\n", "command",
       "must not be empty"},
      {"CommandEmptyArg", "name: job\nresources: {gpus: 1}\ncommand: [python, \"\"]\n",
       "command[1]", "must not be an empty string"},
      {"CommandString", "name: job\nresources: {gpus: 1}\ncommand: python train.py\n", "command",
       "must be a list of strings"},
      {"CommandNumberArg", "name: job\nresources: {gpus: 1}\ncommand: [python, 3]\n", "command[1]",
       "must be a string (quote it: \"3\"), got 3"},
      // env and secretEnv
      {"EnvLauncherReserved", with("env: {RANK: \"0\"}\n"), "env.RANK", "is reserved"},
      {"EnvLocalWorldSizeReserved", with("env: {LOCAL_WORLD_SIZE: \"8\"}\n"),
       "env.LOCAL_WORLD_SIZE", "is reserved"},
      {"EnvTorchrunSettingReserved", with("env: {PET_NNODES: \"2\"}\n"), "env.PET_NNODES",
       "is reserved: the launcher sets PET_NNODES for torchrun when processes is perNode"},
      {"EnvCorralPrefix", with("env: {CORRAL_JOB_ID: x}\n"), "env.CORRAL_JOB_ID",
       "names starting with CORRAL_"},
      // A share's isolation under NVIDIA MPS is these variables: a job's own would undo it.
      {"EnvMpsPrefix", with("env: {CUDA_MPS_ACTIVE_THREAD_PERCENTAGE: \"100\"}\n"),
       "env.CUDA_MPS_ACTIVE_THREAD_PERCENTAGE",
       "is reserved: names starting with CUDA_MPS_ are NVIDIA MPS's, which corral sets for a "
       "share of a GPU so that no job takes another's compute or memory"},
      {"SecretEnvMpsPrefix", with("secretEnv: {CUDA_MPS_PIPE_DIRECTORY: /tmp/mine}\n"),
       "secretEnv.CUDA_MPS_PIPE_DIRECTORY", "names starting with CUDA_MPS_"},
      {"EnvBadName", with("env: {1BAD: x}\n"), "env.1BAD", "must be a variable name"},
      {"EnvNumberValue", with("env: {OMP_NUM_THREADS: 4}\n"), "env.OMP_NUM_THREADS",
       "must be a string (quote it: \"4\"), got 4"},
      {"EnvNullValue", with("env: {A: }\n"), "env.A", "must be a string, got null"},
      {"EnvDuplicate", with("env: {A: x, A: y}\n"), "env.A", "duplicate key"},
      {"SecretEnvReserved", with("secretEnv: {MASTER_PORT: \"1\"}\n"), "secretEnv.MASTER_PORT",
       "is reserved"},
      {"SecretEnvAlsoInEnv", with("env: {TOKEN: a}\nsecretEnv: {TOKEN: b}\n"), "secretEnv.TOKEN",
       "is also set in env"},
      // lineage and labels
      {"LineageUnknownField", with("lineage: {commit: abc}\n"), "lineage.commit", "unknown field"},
      {"LineageNotString", with("lineage: {dataset: 12}\n"), "lineage.dataset", "must be a string"},
      {"LineageDatasetsNotList", with("lineage: {datasets: webtext@v1}\n"), "lineage.datasets",
       "must be a list of DATASET@VERSION"},
      {"LineageDatasetNoVersion", with("lineage: {datasets: [webtext]}\n"), "lineage.datasets[0]",
       "must be DATASET@VERSION"},
      {"LineageDatasetBadId", with("lineage: {datasets: [Web_Text@v1]}\n"), "lineage.datasets[0]",
       "must be a DNS label"},
      {"LineageDatasetBadVersion", with("lineage: {datasets: [\"webtext@v 1\"]}\n"),
       "lineage.datasets[0]", "the version must be"},
      {"LineageDatasetTwice", with("lineage: {datasets: [a@1, b@1, a@1]}\n"), "lineage.datasets[2]",
       "names a@1 twice"},
      {"LineageCodeUnknownField", with("lineage: {code: {repo: r, sha: abc}}\n"),
       "lineage.code.sha", "unknown field"},
      {"LineageCommitNotHex", with("lineage: {code: {repo: r, commit: main}}\n"),
       "lineage.code.commit", "must be a commit id"},
      {"LineageImageUnpinned", with("lineage: {image: \"nvcr.io/pytorch:24.05\"}\n"),
       "lineage.image", "must end in its digest"},
      {"LabelBadKey", with("labels: {-team: x}\n"), "labels.-team", "label names must be"},
      {"LabelValueTooLong", with("labels: {team: " + long_name + "}\n"), "labels.team",
       "label values must be"},
      {"LabelsNotMapping", with("labels: [a, b]\n"), "labels", "must be a mapping, got a list"},
      // the document
      {"UnknownTopLevel", with("gpus: 4\n"), "gpus", "unknown field, expected one of name"},
      {"DuplicateKeyJson",
       R"({"name": "a", "name": "b", "resources": {"gpus": 1}, "command": ["x"]})", "name",
       "duplicate key", SpecFormat::kJson},
      {"GpusStringJson", R"({"name": "a", "resources": {"gpus": "16"}, "command": ["x"]})",
       "resources.gpus", "must be an integer, got \"16\"", SpecFormat::kJson},
      {"YamlSyntax", "name: [unclosed\n", "", "invalid yaml at line"},
      {"JsonSyntax", "{\"name\": \"a\",\n  \"resources\": }", "", "invalid json at line 2, column",
       SpecFormat::kJson},
      {"JsonTrailingGarbage", R"({"name": "a"} x)", "", "invalid json", SpecFormat::kJson},
      {"TopLevelList", "- name: job\n", "", "document must be a mapping of fields, got a list"},
      {"EmptyDocument", "", "", "document must be a mapping of fields, got null"},
      {"TopLevelScalarJson", "42", "", "got 42", SpecFormat::kJson},
      {"TooLarge", with("# " + std::string(kMaxSpecBytes, 'x') + "\n"), "",
       "document must be at most 1048576 bytes"},
      {"NotUtf8", with("labels: {team: \"\xff\xfe\"}\n"), "", "valid UTF-8"},
      // JSON names the field holding the bad byte (issue 12).
      {"NotUtf8Json",
       "{\"name\": \"a\", \"resources\": {\"gpus\": 1, \"gpuTypes\": [\"H100\", \"\xc0\xaf\"]},"
       " \"command\": [\"x\"]}",
       "resources.gpuTypes[1]", "must be valid UTF-8, got byte 0xc0 at line 1, column 62",
       SpecFormat::kJson},
      {"DeepJson", deep_json, "", "nesting is deeper than 32 levels", SpecFormat::kJson},
      {"DeepYaml", deep_yaml, "", "nesting is deeper than 32 levels"},
  };
}

TEST(ParseJobSpec, RejectsBadInputWithExactFieldPath) {
  const auto cases = bad_cases();
  ASSERT_GE(cases.size(), 40u);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const ParseOutcome outcome = parse_job_spec(c.text, c.format);
    EXPECT_FALSE(outcome.ok());
    EXPECT_FALSE(outcome.spec.has_value());
    bool found = false;
    for (const auto& e : outcome.errors) {
      found = found || (e.path == c.path && e.reason.find(c.fragment) != std::string::npos);
      // Messages are lowercase sentences without a trailing period (STYLE.md 6.2).
      EXPECT_FALSE(e.reason.empty());
      EXPECT_NE(e.reason.back(), '.') << e.reason;
    }
    EXPECT_TRUE(found) << "want " << c.path << ": ..." << c.fragment << "...\ngot:\n"
                       << describe(outcome.errors);
  }
}

TEST(ParseJobSpec, ReportsEveryErrorNotJustTheFirst) {
  const ParseOutcome outcome = parse_job_spec(
      "name: Bad_Name\nresources: {gpus: 0, gpuTypes: [Z80]}\ncommand: []\nenv: {RANK: \"1\"}\n",
      SpecFormat::kYaml);
  std::vector<std::string> paths;
  for (const auto& e : outcome.errors) paths.push_back(e.path);
  EXPECT_EQ(paths, (std::vector<std::string>{"name", "resources.gpus", "resources.gpuTypes[0]",
                                             "command", "env.RANK"}))
      << describe(outcome.errors);
}

// A value quoted in a message is shortened on a character boundary: cutting "é" in half
// made the message itself invalid UTF-8, which corrald's answer then could not carry.
TEST(ParseJobSpec, ShortenedQuotesStayUtf8) {
  std::string name = "a";
  for (int i = 0; i < 40; ++i) name += "\xc3\xa9";  // é
  const ParseOutcome outcome =
      parse_job_spec("name: " + name + "\nresources: {gpus: 1}\ncommand: [x]\n", SpecFormat::kYaml);
  ASSERT_FALSE(outcome.errors.empty());
  for (const auto& e : outcome.errors) {
    EXPECT_EQ(invalid_utf8_offset(e.reason), std::nullopt) << e.reason;
    EXPECT_NE(e.reason.find("...\""), std::string::npos) << e.reason;
  }
}

TEST(ParseJobSpec, SyntaxErrorNamesLineAndColumn) {
  const ParseOutcome outcome =
      parse_job_spec("name: job\nresources:\n  gpus: 1\n   bad: [\n", SpecFormat::kYaml);
  ASSERT_EQ(outcome.errors.size(), 1u) << describe(outcome.errors);
  EXPECT_EQ(outcome.errors[0].path, "");
  EXPECT_NE(outcome.errors[0].reason.find("line 4"), std::string::npos) << outcome.errors[0].reason;
}

TEST(ParseJobSpec, FillsDefaults) {
  const JobSpec spec = parse_ok(kMinimal);
  EXPECT_EQ(spec.name, "job");
  EXPECT_EQ(spec.tenant, TenantId("default"));
  EXPECT_EQ(spec.priority_class, "standard");
  EXPECT_EQ(spec.resources.gpus, 1);
  EXPECT_TRUE(spec.resources.gpu_types.empty());
  EXPECT_EQ(spec.resources.gpus_per_node, 0);
  EXPECT_EQ(spec.resources.cpus_per_gpu, 1);
  EXPECT_EQ(spec.resources.memory_per_gpu_mib, 8 * 1024);
  EXPECT_EQ(spec.topology.pack, PackLevel::kNone);
  EXPECT_EQ(spec.topology.mode, TopologyMode::kPreferred);
  EXPECT_FALSE(spec.elastic.has_value());
  EXPECT_FALSE(spec.preemptible);
  EXPECT_FALSE(spec.checkpoint.has_value());
  EXPECT_EQ(spec.max_runtime, seconds(72 * 3600));
  EXPECT_FALSE(spec.reservation.has_value());
  EXPECT_EQ(spec.processes, ProcessMode::kPerGpu);
  EXPECT_EQ(spec.max_restarts, 3);
  EXPECT_EQ(spec.command, std::vector<std::string>{"python"});
  EXPECT_TRUE(spec.env.empty());
  EXPECT_TRUE(spec.secret_env.empty());
  EXPECT_TRUE(spec.labels.empty());
}

TEST(ParseJobSpec, ReadsProcessesAndMaxRestartsAndRoundTrips) {
  const JobSpec spec = parse_ok(with("processes: perNode\nmaxRestarts: 0\n"));
  EXPECT_EQ(spec.processes, ProcessMode::kPerNode);
  EXPECT_EQ(spec.max_restarts, 0);
  const auto again = parse_job_spec(job_spec_to_json(spec), SpecFormat::kJson);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again.spec, spec);
  EXPECT_EQ(parse_ok(with("maxRestarts: 100\n")).max_restarts, 100);
}

// The declared scaling curve is read sorted by size and written back as it was read.
TEST(ParseJobSpec, ReadsTheElasticScalingCurveAndRoundTrips) {
  const JobSpec spec =
      parse_ok(with_resources("{gpus: 16}",
                              "elastic: {minGpus: 8, maxGpus: 32, step: 8, scaling: [{gpus: 32, "
                              "throughput: 250.5}, {gpus: 8, throughput: 100}]}\n" +
                                  std::string(kCheckpoint)));
  ASSERT_TRUE(spec.elastic.has_value());
  EXPECT_EQ(spec.elastic->scaling, (std::vector<ScalingPoint>{{.gpus = 8, .throughput = 100.0},
                                                              {.gpus = 32, .throughput = 250.5}}));
  const auto again = parse_job_spec(job_spec_to_json(spec), SpecFormat::kJson);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again.spec, spec);
}

// Speeds by GPU type are read as given and written back.
TEST(ParseJobSpec, ReadsGpuSpeedAndRoundTrips) {
  const JobSpec spec = parse_ok(with_resources("{gpus: 4, gpuSpeed: {H100: 2.5, T4: 0.3}}"));
  EXPECT_EQ(spec.resources.gpu_speed,
            (std::map<GpuTypeId, double>{{GpuTypeId("H100"), 2.5}, {GpuTypeId("T4"), 0.3}}));
  const auto again = parse_job_spec(job_spec_to_json(spec), SpecFormat::kJson);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again.spec, spec);
}

// A share of a GPU: one share unless `gpus` says how many, in thousandths, with the memory
// it may pin; whole-GPU specs write neither field.
TEST(ParseJobSpec, ReadsAShareOfAGpuAndRoundTrips) {
  const JobSpec one = parse_ok(with_resources("{gpuShare: 0.25, gpuMemoryGiB: 20}"));
  EXPECT_EQ(one.resources.gpus, 1);
  EXPECT_EQ(one.resources.gpu_milli, 250);
  EXPECT_EQ(one.resources.gpu_memory_mib, 20 * 1024);
  expect_round_trip(one);
  EXPECT_NE(job_spec_to_json(one).find("\"gpuShare\": 0.25"), std::string::npos);
  const JobSpec gang = parse_ok(with_resources("{gpus: 4, gpuShare: 0.333, gpuMemoryGiB: 7.5}"));
  EXPECT_EQ(gang.resources.gpus, 4);
  EXPECT_EQ(gang.resources.gpu_milli, 333);
  EXPECT_EQ(gang.resources.gpu_memory_mib, 7680);
  expect_round_trip(gang);
  const JobSpec whole = parse_ok(kMinimal);
  EXPECT_EQ(whole.resources.gpu_milli, 0);
  EXPECT_EQ(job_spec_to_json(whole).find("gpuShare"), std::string::npos);
  EXPECT_EQ(job_spec_to_json(whole).find("gpuMemoryGiB"), std::string::npos);
}

// A region binds the job to nodes labelled with it; left out, any region does (and the
// normalized JSON leaves it out too, as it parses back).
TEST(ParseJobSpec, ReadsRegionAndRoundTrips) {
  const JobSpec spec = parse_ok(with_resources("{gpus: 8, region: eu-west-1}"));
  EXPECT_EQ(spec.resources.region, "eu-west-1");
  expect_round_trip(spec);
  EXPECT_NE(job_spec_to_json(spec).find("\"region\": \"eu-west-1\""), std::string::npos);
  const JobSpec any = parse_ok(kMinimal);
  EXPECT_EQ(any.resources.region, "");
  EXPECT_EQ(job_spec_to_json(any).find("region"), std::string::npos);
  const JobSpec from_json =
      parse_ok(R"({"name": "a", "resources": {"gpus": 1, "region": "us-east"}, "command": ["x"]})",
               SpecFormat::kJson);
  EXPECT_EQ(from_json.resources.region, "us-east");
}

TEST(ParseJobSpec, ResolvesPreemptibleFromPriorityClass) {
  EXPECT_TRUE(parse_ok(with("priorityClass: preemptible\n")).preemptible);
  EXPECT_FALSE(parse_ok(with("priorityClass: production\n")).preemptible);
  EXPECT_TRUE(parse_ok(with("priorityClass: production\npreemptible: true\n")).preemptible);
  EXPECT_TRUE(parse_ok(with("priorityClass: preemptible\npreemptible: true\n")).preemptible);
}

TEST(ParseJobSpec, ReadsEveryFieldFromYaml) {
  const JobSpec spec = parse_ok(R"(
name: llama-8b-finetune
tenant: nlp
priorityClass: standard
resources:
  gpus: 16
  gpuTypes: [H100, A100-80GB]
  gpusPerNode: 8
  cpusPerGpu: 12
  memoryPerGpu: 120Gi
  region: eu-west
topology: {pack: leaf, mode: required}
elastic: {minGpus: 8, maxGpus: 32, step: pow2}
preemptible: true
checkpoint: {dir: /ckpt/llama-8b, intervalSeconds: 1800, restoreSeconds: 120}
maxRuntime: 24h
expectedRuntime: 6h
reservation: nlp-launch
command: [python, train.py, --config, cfg.yaml]
env: {NCCL_DEBUG: WARN}
secretEnv: {WANDB_API_KEY: "s3cr3t"}
lineage: {dataset: "webtext@v12", code: "git:3f9c2e1"}
labels: {team: pretraining}
)");
  EXPECT_EQ(spec.tenant, TenantId("nlp"));
  EXPECT_EQ(spec.resources.gpus, 16);
  EXPECT_EQ(spec.resources.gpu_types,
            (std::vector<GpuTypeId>{GpuTypeId("H100"), GpuTypeId("A100-80GB")}));
  EXPECT_EQ(spec.resources.gpus_per_node, 8);
  EXPECT_EQ(spec.resources.cpus_per_gpu, 12);
  EXPECT_EQ(spec.resources.memory_per_gpu_mib, 120 * 1024);
  EXPECT_EQ(spec.resources.region, "eu-west");
  EXPECT_EQ(spec.topology.pack, PackLevel::kLeaf);
  EXPECT_EQ(spec.topology.mode, TopologyMode::kRequired);
  ASSERT_TRUE(spec.elastic.has_value());
  EXPECT_EQ(spec.elastic->min_gpus, 8);
  EXPECT_EQ(spec.elastic->max_gpus, 32);
  EXPECT_EQ(spec.elastic->step, ElasticStep::kPowerOfTwo);
  EXPECT_TRUE(spec.preemptible);
  ASSERT_TRUE(spec.checkpoint.has_value());
  EXPECT_EQ(spec.checkpoint->dir, "/ckpt/llama-8b");
  EXPECT_EQ(spec.checkpoint->interval, seconds(1800));
  EXPECT_EQ(spec.checkpoint->restore_time, seconds(120));
  EXPECT_EQ(spec.max_runtime, seconds(24 * 3600));
  EXPECT_EQ(spec.expected_runtime, seconds(6 * 3600));
  EXPECT_EQ(spec.reservation, ReservationId("nlp-launch"));
  EXPECT_EQ(spec.command.size(), 4u);
  EXPECT_EQ(spec.env.at("NCCL_DEBUG"), "WARN");
  EXPECT_EQ(spec.secret_env.at("WANDB_API_KEY"), "s3cr3t");
  EXPECT_EQ(spec.lineage.dataset, "webtext@v12");
  EXPECT_EQ(spec.lineage.code.repo, "git:3f9c2e1");  // a free-form note from before typing
  EXPECT_EQ(spec.labels.at("team"), "pretraining");
  expect_round_trip(spec);
}

// The typed lineage: dataset versions, code version and a pinned image round-trip.
TEST(ParseJobSpec, ReadsTypedLineage) {
  const std::string image = "nvcr.io/nvidia/pytorch@sha256:" + std::string(64, 'a');
  const auto out = parse_job_spec(
      "name: t\nresources: {gpus: 1}\ncommand: [a]\nlineage:\n  datasets: [webtext@v12, "
      "code-eval@2024.06]\n  code: {repo: github.com/org/train, commit: 3f9c2e1}\n  image: \"" +
          image + "\"\n",
      SpecFormat::kYaml);
  ASSERT_TRUE(out.ok()) << to_string(out.errors.front());
  const JobSpec& spec = *out.spec;
  ASSERT_EQ(spec.lineage.datasets.size(), 2u);
  EXPECT_EQ(spec.lineage.datasets[0].text(), "webtext@v12");
  EXPECT_EQ(spec.lineage.datasets[1], (DatasetRef{"code-eval", "2024.06"}));
  EXPECT_EQ(spec.lineage.code, (CodeVersion{"github.com/org/train", "3f9c2e1"}));
  EXPECT_EQ(spec.lineage.image, image);
  expect_round_trip(spec);
}

TEST(ParseJobSpec, ReadsJsonAndAgreesWithYaml) {
  constexpr std::string_view kJson = R"({
    "name": "bert-large", "tenant": "nlp",
    "resources": {"gpus": 8, "memoryPerGpu": "64Gi"},
    "topology": {"pack": "nvlink", "mode": "required"},
    "elastic": {"minGpus": 4, "maxGpus": 8, "step": 4},
    "checkpoint": {"dir": "/ckpt/bert", "intervalSeconds": 600},
    "command": ["python", "train.py"],
    "env": {"OMP_NUM_THREADS": "4"}
  })";
  const JobSpec from_json = parse_ok(kJson, SpecFormat::kJson);
  EXPECT_EQ(from_json.resources.gpus, 8);
  ASSERT_TRUE(from_json.elastic.has_value());
  EXPECT_EQ(from_json.elastic->step, ElasticStep::kMultiple);
  EXPECT_EQ(from_json.elastic->step_multiple, 4);
  EXPECT_EQ(from_json.checkpoint->restore_time, Duration(0));
  // YAML is a superset of JSON: the YAML reader must agree.
  EXPECT_EQ(parse_ok(kJson, SpecFormat::kYaml), from_json);
  expect_round_trip(from_json);
}

TEST(ParseJobSpec, Yaml11BooleansStayStrings) {
  // `on` and `yes` are booleans in YAML 1.1 only; a label value "on" must stay a string.
  const JobSpec spec = parse_ok(with("labels: {enabled: on}\nenv: {FLAG: yes}\n"));
  EXPECT_EQ(spec.labels.at("enabled"), "on");
  EXPECT_EQ(spec.env.at("FLAG"), "yes");
}

TEST(ParseJobSpec, MemoryAcceptsPlainBytes) {
  const JobSpec spec = parse_ok(with_resources("{gpus: 1, memoryPerGpu: 1073741824}"));
  EXPECT_EQ(spec.resources.memory_per_gpu_mib, 1024);
}

TEST(JobSpecToJson, MasksSecretsButKeepsTheirNames) {
  const JobSpec spec = parse_ok(with("secretEnv: {WANDB_API_KEY: hunter2, HF_TOKEN: abc}\n"));
  const std::string json_text = job_spec_to_json(spec);
  EXPECT_EQ(json_text.find("hunter2"), std::string::npos) << json_text;
  EXPECT_EQ(json_text.find("\"abc\""), std::string::npos) << json_text;
  EXPECT_NE(json_text.find("\"WANDB_API_KEY\": \"***\""), std::string::npos) << json_text;
  EXPECT_NE(json_text.find("\"HF_TOKEN\": \"***\""), std::string::npos) << json_text;
}

TEST(JobSpecToJson, WritesDefaultsWithSchemaNames) {
  const std::string json_text = job_spec_to_json(parse_ok(kMinimal));
  for (const char* expected :
       {"\"tenant\": \"default\"", "\"priorityClass\": \"standard\"", "\"cpusPerGpu\": 1",
        "\"memoryPerGpu\": \"8Gi\"", "\"pack\": \"none\"", "\"mode\": \"preferred\"",
        "\"preemptible\": false", "\"maxRuntime\": \"3d\""}) {
    EXPECT_NE(json_text.find(expected), std::string::npos) << expected << " in\n" << json_text;
  }
  EXPECT_EQ(json_text.find("elastic"), std::string::npos);
  EXPECT_EQ(json_text.find("checkpoint"), std::string::npos);
  // The scheduler's choice is no number: gpusPerNode is left out, as it parses back.
  EXPECT_EQ(json_text.find("gpusPerNode"), std::string::npos) << json_text;
}

TEST(ExampleJobs, EveryExampleParsesAndRoundTrips) {
  const auto dir = source_dir() / "examples" / "jobs";
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 6u);
  for (const auto& file : files) {
    SCOPED_TRACE(file.string());
    const JobSpec spec = parse_ok(read_file(file), format_of(file));
    EXPECT_FALSE(spec.name.empty());
    expect_round_trip(spec);
  }
}

TEST(ExampleJobs, BadGpusZeroFailsOnResourcesGpus) {
  const auto file = source_dir() / "tests" / "core" / "testdata" / "bad-gpus-zero.yaml";
  const ParseOutcome outcome = parse_job_spec(read_file(file), SpecFormat::kYaml);
  ASSERT_EQ(outcome.errors.size(), 1u) << describe(outcome.errors);
  EXPECT_EQ(to_string(outcome.errors[0]), "resources.gpus: must be between 1 and 16384, got 0");
}

// Property: damaged versions of the examples never crash the parser, and any that
// still parse round-trip through their JSON. A failure prints its seed.
TEST(ParseJobSpecProperty, MutatedExamplesNeverCrashAndRoundTrip) {
  const auto dir = source_dir() / "examples" / "jobs";
  std::vector<std::pair<std::string, SpecFormat>> seeds;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    seeds.emplace_back(read_file(entry.path()), format_of(entry.path()));
  }
  std::sort(seeds.begin(), seeds.end());
  std::uint64_t state = 0x9E3779B97F4A7C15ULL;
  const auto next = [&] {  // xorshift64: deterministic, no <random> needed
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  constexpr std::string_view kAlphabet = "{}[]:,-\"'#\n &*!|>0123456789aZ";
  for (int iteration = 0; iteration < 1500; ++iteration) {
    const std::uint64_t seed = state;
    auto [text, format] = seeds[next() % seeds.size()];
    const int edits = 1 + static_cast<int>(next() % 4);
    for (int k = 0; k < edits && !text.empty(); ++k) {
      const std::size_t pos = next() % text.size();
      switch (next() % 3) {
        case 0:
          text[pos] = kAlphabet[next() % kAlphabet.size()];
          break;
        case 1:
          text.erase(pos, 1 + next() % 8);
          break;
        default:
          text.insert(pos, 1, kAlphabet[next() % kAlphabet.size()]);
          break;
      }
    }
    SCOPED_TRACE("seed " + std::to_string(seed));
    const ParseOutcome outcome = parse_job_spec(text, format);
    EXPECT_NE(outcome.ok(), outcome.errors.size() > 0);
    if (outcome.ok()) expect_round_trip(*outcome.spec);
  }
}

}  // namespace
}  // namespace corral::core
