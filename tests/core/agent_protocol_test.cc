// The one codec of the corrald ⇄ agent protocol: every message decodes to what was
// encoded, and malformed bodies are InvalidArgument naming the field without echoing
// its value.
#include "core/agent_protocol.h"

#include <cstdint>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace corral::core {
namespace {

using nlohmann::json;

DesiredWorker sample_worker() {
  return DesiredWorker{.spec = {.key = {.job = 42, .attempt = 2, .rank = 3},
                                .local_rank = 3,
                                .node_rank = 0,
                                .world_size = 16,
                                .local_world_size = 8,
                                .gpus = {3},
                                .visible_devices = "3",
                                .command = {"/bin/trainer", "--steps", "200"},
                                .env = {{"MODE", "x"}, {"WANDB_API_KEY", "hunter2"}},
                                .master_addr = "10.0.0.1",
                                .master_port = 29500,
                                .checkpoint_dir = "/ck/42",
                                .restore_from = "/ck/42/step-100",
                                .grace_ms = 1234},
                       .run = false};
}

TEST(AgentProtocol, EveryMessageRoundTrips) {
  const Assignments a{.node = "n1", .epoch = 3, .version = 17, .workers = {sample_worker()}};
  auto a2 = decode_assignments(encode_assignments(a));
  ASSERT_TRUE(a2.ok()) << a2.status().to_string();
  EXPECT_EQ(*a2, a);
  // A perNode worker keeps its mode across the wire (the agent adds torchrun's PET_*).
  Assignments per_node = a;
  per_node.workers[0].spec.per_node = true;
  EXPECT_EQ(*decode_assignments(encode_assignments(per_node)), per_node);

  // A share of a GPU keeps its share and memory limit.
  Assignments share = a;
  share.workers[0].spec.gpu_share_milli = 250;
  share.workers[0].spec.gpu_memory_mib = 20480;
  EXPECT_EQ(*decode_assignments(encode_assignments(share)), share);

  const Heartbeat h{.epoch = 3,
                    .applied_version = 17,
                    .agent_url = "http://[::1]:7070",
                    .gpus = std::vector<GpuHealth>{{.index = 1,
                                                    .uuid = "GPU-1",
                                                    .xid_errors = {13, 79},
                                                    .ecc_uncorrectable = 2,
                                                    .temperature_c = 70,
                                                    .power_w = 312.5,
                                                    .throttle = {"sw_power_cap"}}},
                    .workers = {{.key = {.job = 42, .attempt = 2, .rank = 3},
                                 .state = WorkerStatus::State::kExited,
                                 .pid = 99,
                                 .exit_code = 137,
                                 .signal = 9,
                                 .exited_at_ms = 5}}};
  auto h2 = decode_heartbeat(encode_heartbeat(h));
  ASSERT_TRUE(h2.ok()) << h2.status().to_string();
  EXPECT_EQ(*h2, h);
  // Optional parts left out stay absent.
  auto bare = decode_heartbeat(encode_heartbeat({.epoch = 1}));
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(*bare, Heartbeat{.epoch = 1});

  const JoinAnswer j{.node = "n1", .token = "t", .epoch = 1, .log_key = "k", .cluster_id = "c-1"};
  EXPECT_EQ(*decode_join_answer(encode_join_answer(j)), j);
  EXPECT_EQ(*decode_heartbeat_answer(encode_heartbeat_answer({.epoch = 2, .version = 9})),
            (HeartbeatAnswer{.epoch = 2, .version = 9}));
  const WorkerCheckpoint c{
      .epoch = 3,
      .key = {.job = 42, .attempt = 2, .rank = 0},
      .report = {.step = 100, .path = "/ck/a", .bytes = 7, .checksum = "x", .throughput = 1234.5}};
  EXPECT_EQ(*decode_worker_checkpoint(encode_worker_checkpoint(c)), c);
  EXPECT_EQ(*decode_checkpoint_report(encode_checkpoint_report(c.report)), c.report);
  const WorkerRunReport r{.epoch = 3,
                          .key = {.job = 42, .attempt = 2, .rank = 0},
                          .report = {.metrics = {{.name = "loss", .step = 7, .value = 0.125},
                                                 {.name = "eval/acc", .step = 7, .value = -1e300}},
                                     .artifacts = {{.name = "model",
                                                    .uri = "s3://b/model.pt",
                                                    .digest = "sha256:" + std::string(64, '0'),
                                                    .bytes = 9}}}};
  EXPECT_EQ(*decode_worker_run_report(encode_worker_run_report(r)), r);
  EXPECT_EQ(*decode_run_report(encode_run_report(r.report)), r.report);
  // What a worker posts holds no epoch or key: those are the agent's to add (the first
  // unknown key, in key order, is named).
  EXPECT_EQ(decode_run_report(encode_worker_run_report(r)).status().field(), "attempt");
}

// A feature lookup's rows travel unread (corrald's lookup parser names their fields), and
// the worker's (job, attempt, rank) are always the agent's: a worker cannot ask as another.
TEST(AgentProtocol, AFeatureLookupCarriesItsRowsAsWrittenAndTheAgentsKey) {
  const auto asked = decode_feature_lookup_request(
      R"({"set": "user-stats@v1", "rows": [{"entity": "u1", "atMs": 5}], "ttlMs": 9, "job": 99})");
  ASSERT_TRUE(asked.ok()) << asked.status().to_string();
  EXPECT_EQ(asked->set, "user-stats@v1");
  const WorkerFeatureLookup l{
      .epoch = 3, .key = {.job = 42, .attempt = 2, .rank = 1}, .request = *asked};
  const auto forwarded = decode_worker_feature_lookup(encode_worker_feature_lookup(l));
  ASSERT_TRUE(forwarded.ok()) << forwarded.status().to_string();
  EXPECT_EQ(forwarded->epoch, 3);
  EXPECT_EQ(forwarded->key, (WorkerKey{.job = 42, .attempt = 2, .rank = 1}));
  EXPECT_EQ(forwarded->request.set, "user-stats@v1");
  EXPECT_EQ(forwarded->request.lookup, R"({"rows":[{"atMs":5,"entity":"u1"}],"ttlMs":9})");
  for (const char* bad : {R"({"rows": []})", R"({"set": 5})", R"({"set": "user-stats"})", "[]"}) {
    SCOPED_TRACE(bad);
    const auto refused = decode_feature_lookup_request(bad);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  }
  EXPECT_EQ(decode_feature_lookup_request(R"({"rows": []})").status().field(), "set");
  EXPECT_EQ(
      decode_worker_feature_lookup(R"({"job": 1, "attempt": 1, "set": "a@b"})").status().field(),
      "epoch");
}

// corrald stores these two pieces of the reports as observed state and reads them back.
TEST(AgentProtocol, ObservedStateRoundTripsAndIsReadAsStrictlyAsTheBodies) {
  const ObservedInventory inventory{.source = "nvml",
                                    .gpus = {{.index = 3,
                                              .uuid = "GPU-3",
                                              .model = "NVIDIA H200",
                                              .memory_mib = 143771,
                                              .power_limit_w = 700,
                                              .pci_bus_id = "0000:9a:00.0",
                                              .numa_node = 1,
                                              .nvlink_peers = {0, 1, 2}}}};
  const std::vector<GpuHealth> readings{{.index = 3,
                                         .uuid = "GPU-3",
                                         .xid_errors = {48, 79},
                                         .ecc_uncorrectable = 2,
                                         .temperature_c = 88,
                                         .power_w = 701.5,
                                         .throttle = {"hw_thermal_slowdown"}}};
  auto inv = decode_observed_inventory(encode_observed_inventory(inventory));
  ASSERT_TRUE(inv.ok()) << inv.status().to_string();
  EXPECT_EQ(*inv, inventory);
  auto health = decode_gpu_health(encode_gpu_health(readings));
  ASSERT_TRUE(health.ok()) << health.status().to_string();
  EXPECT_EQ(*health, readings);
  EXPECT_EQ(decode_gpu_health("[]").value(), std::vector<GpuHealth>{});
  EXPECT_EQ(decode_gpu_health("[{\"index\": 1, \"smPercent\": 101}]").status().field(),
            "gpus[0].smPercent");
  EXPECT_EQ(decode_gpu_health("{}").status().field(), "gpus");
  EXPECT_EQ(decode_gpu_health("nope").status().field(), "gpus");
  EXPECT_EQ(decode_observed_inventory("{\"gpus\": [{\"index\": -1}]}").status().field(),
            "gpus[0].index");
  EXPECT_FALSE(decode_observed_inventory("[]").ok());
}

TEST(AgentProtocol, JoinRequestHandsTheNodeToItsDecoder) {
  JoinRequest r{.agent_url = "http://10.0.0.2:7070",
                .rack_power_cap_w = 4000,
                .node = {.id = NodeId("n2")},
                .inventory = {.source = "simulated:dgx-h100",
                              .gpus = {{.index = 0, .uuid = "GPU-0", .nvlink_peers = {1}}}}};
  std::string seen;
  auto decoded = decode_join_request(encode_join_request(r), [&](std::string_view node) {
    seen = std::string(node);
    return Result<Node>(Node{.id = NodeId(json::parse(node)["id"].get<std::string>())});
  });
  ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
  EXPECT_EQ(decoded->agent_url, r.agent_url);
  EXPECT_EQ(decoded->rack_power_cap_w, 4000);
  EXPECT_EQ(decoded->node.id, NodeId("n2"));
  EXPECT_EQ(decoded->inventory, r.inventory);
  EXPECT_EQ(json::parse(seen)["id"], "n2");
  // The node decoder's error comes back under "node.".
  auto refused = decode_join_request(encode_join_request(r), [](std::string_view) {
    return Result<Node>(invalid_argument("gpus[0].type", "unknown GPU type"));
  });
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().field(), "node.gpus[0].type");
}

// A corrald older than shares sends neither field: the worker has whole GPUs, no limit.
TEST(AgentProtocol, WorkerWithoutShareFieldsHasWholeGpus) {
  DesiredWorker w = sample_worker();
  w.spec.gpu_share_milli = 250;
  w.spec.gpu_memory_mib = 20480;
  json body = json::parse(encode_assignments({.epoch = 1, .workers = {w}}));
  ASSERT_EQ(body["workers"][0]["gpuShareMilli"], 250);
  ASSERT_EQ(body["workers"][0]["gpuMemoryMib"], 20480);
  body["workers"][0].erase("gpuShareMilli");
  body["workers"][0].erase("gpuMemoryMib");
  auto decoded = decode_assignments(body.dump());
  ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
  EXPECT_EQ(decoded->workers[0].spec.gpu_share_milli, 0);
  EXPECT_EQ(decoded->workers[0].spec.gpu_memory_mib, 0);
  EXPECT_EQ(decoded->workers[0], sample_worker());
}

struct BadBody {
  const char* name;
  std::string body;
  std::string field;
};

TEST(AgentProtocol, MalformedBodiesNameTheFieldAndNeverEchoValues) {
  json worker = json::parse(encode_assignments({.workers = {sample_worker()}}))["workers"][0];
  auto assignments_with = [&](const char* key, json value) {
    json w = worker;
    w[key] = std::move(value);
    return json{{"epoch", 1}, {"version", 1}, {"workers", {worker, w}}}.dump();
  };
  const std::vector<BadBody> assignments = {
      {"not json", "{", ""},
      {"not an object", "[1]", ""},
      {"no workers", R"({"epoch": 1, "version": 1})", "workers"},
      {"rank out of range", assignments_with("rank", -1), "workers[1].rank"},
      {"env not strings", assignments_with("env", {{"K", 1}}), "workers[1].env.K"},
      {"command missing", assignments_with("command", nullptr), "workers[1].command"},
      {"desired", assignments_with("desired", "hunter2"), "workers[1].desired"},
      {"gpu index", assignments_with("gpus", {0, 5000}), "workers[1].gpus[1]"},
      {"processes", assignments_with("processes", "perRack"), "workers[1].processes"},
      {"local world size", assignments_with("localWorldSize", 0), "workers[1].localWorldSize"},
      {"a whole GPU as a share", assignments_with("gpuShareMilli", 1000),
       "workers[1].gpuShareMilli"},
      {"share negative", assignments_with("gpuShareMilli", -1), "workers[1].gpuShareMilli"},
      {"share not a number", assignments_with("gpuShareMilli", "0.25"), "workers[1].gpuShareMilli"},
      {"memory negative", assignments_with("gpuMemoryMib", -1), "workers[1].gpuMemoryMib"},
      {"memory over 16 TiB", assignments_with("gpuMemoryMib", (std::int64_t{16} << 20) + 1),
       "workers[1].gpuMemoryMib"},
  };
  for (const BadBody& c : assignments) {
    SCOPED_TRACE(c.name);
    auto r = decode_assignments(c.body);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(r.status().field(), c.field);
    EXPECT_EQ(r.status().message().find("hunter2"), std::string::npos);
  }
  const std::vector<BadBody> heartbeats = {
      {"epoch missing", R"({"workers": []})", "epoch"},
      {"state", R"({"epoch": 1, "workers": [{"job": 1, "attempt": 1, "rank": 0,
                   "state": "zombie"}]})",
       "workers[0].state"},
      {"xid", R"({"epoch": 1, "gpus": [{"index": 0, "xidErrors": ["x"]}]})",
       "gpus[0].xidErrors[0]"},
      {"agent url", R"({"epoch": 1, "agentUrl": "ftp://x"})", "agentUrl"},
  };
  for (const BadBody& c : heartbeats) {
    SCOPED_TRACE(c.name);
    auto r = decode_heartbeat(c.body);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().field(), c.field);
  }
  // Readers ignore fields they do not know, but the checkpoint forward refuses them, as
  // corrald always did.
  EXPECT_TRUE(decode_heartbeat(R"({"epoch": 1, "future": true})").ok());
  json ckpt = json::parse(encode_worker_checkpoint(
      {.epoch = 1, .key = {.job = 1}, .report = {.path = "/a", .checksum = "c"}}));
  ckpt["future"] = 1;
  auto refused = decode_worker_checkpoint(ckpt.dump());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().field(), "future");
  auto relative = decode_checkpoint_report(R"({"step": 1, "path": "ck/a"})");
  ASSERT_FALSE(relative.ok());
  EXPECT_EQ(relative.status().field(), "path");
  // A throughput is optional (0: not measured) and never negative.
  auto unmeasured = decode_checkpoint_report(R"({"step": 1, "path": "/a"})");
  ASSERT_TRUE(unmeasured.ok());
  EXPECT_EQ(unmeasured->throughput, 0);
  auto negative = decode_checkpoint_report(R"({"step": 1, "path": "/a", "throughput": -2})");
  ASSERT_FALSE(negative.ok());
  EXPECT_EQ(negative.status().field(), "throughput");
}

// Telemetry batches: every field round-trips (zeros and empty lists left out on the
// wire), and a bad sample is refused whole, naming its field.
TEST(AgentProtocol, TelemetryBatchRoundTripsAndNamesBadFields) {
  const TelemetryBatch batch{.samples = {{.gpu = 3,
                                          .time_ms = 1'780'000'000'123,
                                          .utilization = 0.9375,
                                          .memory_used_mib = 61'000,
                                          .power_w = 612.25,
                                          .temperature_c = 71,
                                          .throttle = {"hw_thermal_slowdown"},
                                          .ecc_corrected = 5,
                                          .ecc_uncorrected = 1},
                                         {.gpu = 0, .time_ms = 1}}};
  const std::string text = encode_telemetry_batch(batch);
  const auto back = decode_telemetry_batch(text);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(*back, batch);
  EXPECT_EQ(json::parse(text)["samples"][1].count("throttle"), 0u);
  const struct {
    const char* body;
    const char* field;
  } bad[] = {
      {R"({})", "samples"},
      {R"({"samples": [{"timeMs": 1}]})", "samples[0].gpu"},
      {R"({"samples": [{"gpu": 0}]})", "samples[0].timeMs"},
      {R"({"samples": [{"gpu": 0, "timeMs": 1, "utilization": 1.5}]})", "samples[0].utilization"},
      {R"({"samples": [{"gpu": 0, "timeMs": 1, "throttle": [7]}]})", "samples[0].throttle[0]"},
      {R"({"samples": [{"gpu": -1, "timeMs": 1}]})", "samples[0].gpu"},
  };
  for (const auto& c : bad) {
    SCOPED_TRACE(c.body);
    const auto r = decode_telemetry_batch(c.body);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(r.status().field(), c.field);
  }
  TelemetryBatch big;
  big.samples.resize(kMaxTelemetryBatch + 1);
  const auto too_many = decode_telemetry_batch(encode_telemetry_batch(big));
  ASSERT_FALSE(too_many.ok());
  EXPECT_EQ(too_many.status().field(), "samples");
}

TEST(AgentProtocol, AgentUrlHost) {
  EXPECT_EQ(agent_url_host("http://10.0.0.1:7070"), "10.0.0.1");
  EXPECT_EQ(agent_url_host("http://[fd00::1]:7070/x"), "fd00::1");
  EXPECT_EQ(agent_url_host("http://host"), "host");
  EXPECT_EQ(agent_url_host("https://host:1"), std::nullopt);
  EXPECT_EQ(agent_url_host("http://:7070"), std::nullopt);
  EXPECT_EQ(agent_url_host("http://[]:1"), std::nullopt);
}

}  // namespace
}  // namespace corral::core
