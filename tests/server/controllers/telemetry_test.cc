// Telemetry in corrald (docs/telemetry.md), for both stores: the sink's caps (per node per
// minute, the queue), its writes (raw samples and rollups) and retention on a manual
// clock; a store whose telemetry writes fail (testing/faulty_store.h) or hang, behind the
// real HTTP routes, while heartbeats and the API keep answering; and throttling as a
// health signal (evaluate_gpus, and a heartbeat that drains a node after
// throttleDrainAfterMs on corrald's own clock).
#include <atomic>
#include <condition_variable>
#include <fstream>
#include <httplib.h>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/agent_protocol.h"
#include "core/clock.h"
#include "server/agent_api/agent_api.h"
#include "server/api/api.h"
#include "server/base/crypto.h"
#include "server/base/model_json.h"
#include "server/config.h"
#include "server/controllers/node_health.h"
#include "server/controllers/telemetry_sink.h"
#include "server/cycle/scheduler.h"
#include "server/http/request_pipeline.h"
#include "server/http/token_auth.h"
#include "testing/corrald_process.h"
#include "testing/fake_agent.h"
#include "testing/faulty_store.h"
#include "testing/in_process_corrald.h"
#include "testing/store_fixture.h"

namespace corral::server {
namespace {

using core::Status;
using nlohmann::json;
using testing::body;
using testing::FakeAgent;
using testing::Fault;
using testing::FaultyStore;

constexpr std::int64_t kTelemetryT0 = 1'780'000'040'000;  // 20 s into a minute, 27 min into an hour

std::vector<core::TelemetrySample> samples(int n, std::int64_t time_ms, double util = 0.5) {
  std::vector<core::TelemetrySample> out;
  for (int i = 0; i < n; ++i) {
    out.push_back({.gpu = i % 8,
                   .time_ms = time_ms + i,
                   .utilization = util,
                   .memory_used_mib = 1000,
                   .power_w = 400,
                   .temperature_c = 60});
  }
  return out;
}

template <typename Factory>
class TelemetrySinkTest : public ::testing::Test {
 protected:
  void SetUp() override { corral::testing::open_or_skip(factory_, store_); }

  std::vector<store::TelemetryRow> raw(const std::string& node, std::int32_t gpu) {
    std::vector<store::TelemetryRow> out;
    const Status s = store_->read([&](store::Tx& tx) {
      CORRAL_ASSIGN_OR_RETURN(out,
                              tx.records().list_telemetry(core::NodeId(node), gpu, core::Time{},
                                                          core::time_from_ms(kTelemetryT0 * 2)));
      return Status();
    });
    EXPECT_TRUE(s.ok()) << s.to_string();
    return out;
  }
  std::vector<store::TelemetryRollupRow> rollups(store::TelemetryResolution r) {
    std::vector<store::TelemetryRollupRow> out;
    const Status s = store_->read([&](store::Tx& tx) {
      CORRAL_ASSIGN_OR_RETURN(
          out, tx.records().list_telemetry_rollup(
                   r, core::Time{}, core::time_from_ms(kTelemetryT0 * 2), std::nullopt));
      return Status();
    });
    EXPECT_TRUE(s.ok()) << s.to_string();
    return out;
  }

  Factory factory_;
  std::unique_ptr<store::Store> store_;
  core::ManualClock clock_{core::time_from_ms(kTelemetryT0)};
};

TYPED_TEST_SUITE(TelemetrySinkTest, corral::testing::Stores, corral::testing::StoreNames);

// Each node has its own allowance per clock minute: the rest of a batch is dropped and
// counted, another node is not affected, and the next minute brings a fresh allowance.
TYPED_TEST(TelemetrySinkTest, CapsSamplesPerNodePerMinute) {
  if (this->IsSkipped()) return;
  TelemetrySink sink(*this->store_, this->clock_, {.node_samples_per_minute = 100});
  EXPECT_EQ(sink.offer("n1", samples(60, kTelemetryT0)).accepted, 60);
  const TelemetryOffer second = sink.offer("n1", samples(60, kTelemetryT0));
  EXPECT_EQ(second.accepted, 40);
  EXPECT_EQ(second.dropped, 20);
  EXPECT_EQ(sink.offer("n1", samples(1, kTelemetryT0)).accepted, 0);
  EXPECT_EQ(sink.offer("n2", samples(100, kTelemetryT0)).accepted, 100);
  this->clock_.advance(core::seconds(40));  // the next minute
  EXPECT_EQ(sink.offer("n1", samples(70, kTelemetryT0)).accepted, 70);
  const TelemetryStats st = sink.stats();
  EXPECT_EQ(st.accepted, 60 + 40 + 100 + 70);
  EXPECT_EQ(st.dropped_rate, 20 + 1);
  EXPECT_EQ(st.dropped_queue, 0);
  EXPECT_EQ(st.queued, st.accepted);
}

// The queue holds queue_samples in all; a flush makes room again.
TYPED_TEST(TelemetrySinkTest, CapsTheQueueAndAFlushMakesRoom) {
  if (this->IsSkipped()) return;
  TelemetrySink sink(*this->store_, this->clock_, {.queue_samples = 50});
  EXPECT_EQ(sink.offer("n1", samples(30, kTelemetryT0)).accepted, 30);
  EXPECT_EQ(sink.offer("n2", samples(30, kTelemetryT0)).accepted, 20);
  EXPECT_EQ(sink.stats().dropped_queue, 10);
  ASSERT_TRUE(sink.flush_once().ok());
  EXPECT_EQ(sink.stats().queued, 0);
  EXPECT_EQ(sink.stats().written, 50);
  EXPECT_EQ(sink.offer("n2", samples(30, kTelemetryT0)).accepted, 30);
}

// What is offered is written as raw samples and rolled up by minute and hour; one write
// takes at most max_write_samples, the rest waits for the next.
TYPED_TEST(TelemetrySinkTest, WritesRawSamplesAndRollups) {
  if (this->IsSkipped()) return;
  TelemetrySink sink(*this->store_, this->clock_, {.max_write_samples = 10});
  std::vector<core::TelemetrySample> batch;
  for (int i = 0; i < 12; ++i) {
    batch.push_back({.gpu = 2,
                     .time_ms = kTelemetryT0 + 5'000 * i,  // 20 s into a minute: 8 then 4
                     .utilization = i < 8 ? 0.9 : 0.1,
                     .memory_used_mib = 100 * i,
                     .power_w = 100.0 + i,
                     .temperature_c = 50 + i,
                     .throttle = i == 3 ? std::vector<std::string>{"sw_thermal_slowdown"}
                                        : std::vector<std::string>{}});
  }
  ASSERT_EQ(sink.offer("n1", batch).accepted, 12);
  ASSERT_TRUE(sink.flush_once().ok());
  EXPECT_EQ(this->raw("n1", 2).size(), 10u);
  EXPECT_EQ(sink.stats().queued, 2);
  ASSERT_TRUE(sink.flush_once().ok());
  const auto rows = this->raw("n1", 2);
  ASSERT_EQ(rows.size(), 12u);
  EXPECT_EQ(core::to_ms(rows[3].time), kTelemetryT0 + 15'000);
  EXPECT_EQ(rows[3].throttle, std::vector<std::string>{"sw_thermal_slowdown"});
  EXPECT_DOUBLE_EQ(rows[11].power_watts, 111);
  const auto minutes = this->rollups(store::TelemetryResolution::kMinute);
  ASSERT_EQ(minutes.size(), 2u);
  EXPECT_EQ(core::to_ms(minutes[0].start), kTelemetryT0 - 20'000);
  EXPECT_EQ(minutes[0].samples, 8);
  EXPECT_NEAR(minutes[0].avg_utilization, 0.9, 1e-9);
  EXPECT_EQ(minutes[0].throttled_samples, 1);
  EXPECT_EQ(minutes[1].samples, 4);
  EXPECT_NEAR(minutes[1].avg_utilization, 0.1, 1e-9);
  EXPECT_EQ(minutes[1].max_temperature_c, 61);
  const auto hours = this->rollups(store::TelemetryResolution::kHour);
  ASSERT_EQ(hours.size(), 1u);
  EXPECT_EQ(hours[0].samples, 12);
  EXPECT_NEAR(hours[0].avg_utilization, (8 * 0.9 + 4 * 0.1) / 12, 1e-9);
  EXPECT_EQ(sink.stats().written, 12);
}

// A store whose telemetry writes fail: each batch is dropped and counted, nothing is
// retried or kept, and offer() goes on taking samples.
TYPED_TEST(TelemetrySinkTest, AFailingWriteDropsItsBatch) {
  if (this->IsSkipped()) return;
  FaultyStore faulty(*this->store_,
                     Fault{.nth = 1, .persistent = true, .only = "insert_telemetry"});
  TelemetrySink sink(faulty, this->clock_, {});
  for (int round = 0; round < 3; ++round) {
    EXPECT_EQ(sink.offer("n1", samples(16, kTelemetryT0)).accepted, 16);
    const Status s = sink.flush_once();
    EXPECT_EQ(s.code(), core::StatusCode::kUnavailable) << s.to_string();
  }
  const TelemetryStats st = sink.stats();
  EXPECT_EQ(st.write_failures, 3);
  EXPECT_EQ(st.dropped_failed, 48);
  EXPECT_EQ(st.written, 0);
  EXPECT_EQ(st.queued, 0);
  EXPECT_EQ(faulty.failures(), 3);
  EXPECT_TRUE(this->raw("n1", 0).empty());
}

// Retention: each table keeps its own window, as of the sink's clock.
TYPED_TEST(TelemetrySinkTest, PrunesPastRetention) {
  if (this->IsSkipped()) return;
  constexpr std::int64_t kHour = 3'600'000;
  TelemetrySink sink(*this->store_, this->clock_,
                     {.raw_retention_ms = kHour,
                      .minute_retention_ms = 3 * kHour,
                      .hour_retention_ms = 5 * kHour,
                      .node_samples_per_minute = 1000});
  // One sample every half hour over the last 6 hours.
  std::vector<core::TelemetrySample> old;
  for (int i = 1; i <= 12; ++i) {
    old.push_back({.gpu = 0, .time_ms = kTelemetryT0 - i * kHour / 2, .utilization = 0.5});
  }
  ASSERT_EQ(sink.offer("n1", old).accepted, 12);
  ASSERT_TRUE(sink.flush_once().ok());
  ASSERT_TRUE(sink.prune_once().ok());
  EXPECT_EQ(this->raw("n1", 0).size(), 2u);  // 0.5 h and 1 h old (the cutoff is exclusive)
  for (const auto& m : this->rollups(store::TelemetryResolution::kMinute)) {
    EXPECT_GE(core::to_ms(m.start), kTelemetryT0 - 3 * kHour);
  }
  EXPECT_EQ(this->rollups(store::TelemetryResolution::kMinute).size(), 5u);
  for (const auto& h : this->rollups(store::TelemetryResolution::kHour)) {
    EXPECT_GE(core::to_ms(h.start), kTelemetryT0 - 5 * kHour);
  }
  EXPECT_EQ(this->rollups(store::TelemetryResolution::kHour).size(), 4u);
  EXPECT_EQ(sink.stats().pruned, (12 - 2) + (12 - 5) + (6 - 4));
}

// A Store whose transact() waits at a gate while it is closed: a telemetry write that
// hangs. Reads pass.
class GatedStore final : public store::Store {
 public:
  explicit GatedStore(store::Store& inner) : inner_(inner) {}
  core::Status transact(const std::function<core::Status(store::Tx&)>& fn) override {
    {
      std::unique_lock lock(mu_);
      ++waiting_;
      cv_.notify_all();
      cv_.wait(lock, [&] { return open_; });
      --waiting_;
    }
    return inner_.transact(fn);
  }
  core::Status read(const std::function<core::Status(store::Tx&)>& fn) override {
    return inner_.read(fn);
  }
  std::string_view kind() const override { return inner_.kind(); }
  std::int64_t schema_version() const override { return inner_.schema_version(); }
  void set_open(bool open) {
    std::lock_guard lock(mu_);
    open_ = open;
    cv_.notify_all();
  }
  // Waits until a transaction is held at the gate.
  void await_waiter() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return waiting_ > 0; });
  }

 private:
  store::Store& inner_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = true;
  int waiting_ = 0;
};

// corrald's request path and telemetry sink as server.cc wires them, serving real HTTP on
// loopback; the sink writes through `sink_store` (the API's store, or a wrapper of it).
struct TelemetryWorld {
  TelemetryWorld(store::Store& store, store::Store& sink_store, const core::Clock& clock,
                 TelemetrySettings settings)
      : config(default_server_config()),
        board(1),
        specs(SpecCache::kDefaultCapacity),
        loop(store, clock, metrics, config.sched, config.shards, config.replica, &board, &specs),
        auth(store, clock),
        pipeline(store, clock, metrics, auth, board, loop, keys),
        sink(sink_store, clock, settings),
        agent_api(pipeline, board, specs, config.agents, &sink),
        api(pipeline, loop, metrics, board, specs, config.agents, config.billing,
            config.dashboard) {
    const Status s = store.transact([&](store::Tx& tx) {
      CORRAL_RETURN_IF_ERROR(
          tx.security().insert_token({.hash = sha256_hex("jt"), .role = "join"}));
      return tx.security().insert_token({.hash = sha256_hex("admin"), .role = "admin"});
    });
    EXPECT_TRUE(s.ok()) << s.to_string();
    agent_api.install(http);
    api.install(http);
    const int port = http.bind_to_any_port("127.0.0.1");
    addr = "127.0.0.1:" + std::to_string(port);
    serving = std::thread([this] { http.listen_after_bind(); });
  }
  ~TelemetryWorld() {
    board.shutdown();
    http.stop();
    if (serving.joinable()) serving.join();
    sink.stop();
  }

  ServerConfig config;
  Metrics metrics;
  AssignmentBoard board;
  SpecCache specs;
  Scheduler loop;
  TokenAuth auth;
  const KeyRing keys = KeyRing::ephemeral();
  RequestPipeline pipeline;
  TelemetrySink sink;
  AgentApi agent_api;
  Api api;
  httplib::Server http;
  std::string addr;
  std::thread serving;
};

std::string telemetry_body(int n, std::int64_t time_ms) {
  return core::encode_telemetry_batch({.samples = samples(n, time_ms)});
}

// Every telemetry write fails, for good: agents' batches are still answered 202,
// heartbeats and the API are answered as ever, the failures are counted and nothing of
// the telemetry is stored.
TYPED_TEST(TelemetrySinkTest, FailingTelemetryWritesNeverFailHeartbeatsOrTheApi) {
  if (this->IsSkipped()) return;
  FaultyStore faulty(*this->store_,
                     Fault{.nth = 1, .persistent = true, .only = "insert_telemetry"});
  TelemetryWorld world(faulty, faulty, this->clock_, {.flush_ms = 1});
  world.sink.start();
  FakeAgent agent{.addr = world.addr, .node = "n1"};
  ASSERT_EQ(agent.join("jt").status, 200);
  for (int i = 0; i < 20; ++i) {
    const auto posted =
        agent.client().post("/v1/agents/n1/telemetry", telemetry_body(8, kTelemetryT0 + 1000 * i));
    ASSERT_EQ(posted.status, 202) << posted.body;
    EXPECT_EQ(body(posted)["accepted"], 8);
    const auto beat = agent.heartbeat();
    ASSERT_EQ(beat.status, 200) << beat.body;
    const auto nodes = testing::TestClient(world.addr, "admin").get("/v1/nodes/n1");
    ASSERT_EQ(nodes.status, 200) << nodes.body;
  }
  ASSERT_TRUE(testing::eventually([&] { return world.sink.stats().queued == 0; }));
  ASSERT_TRUE(testing::eventually([&] { return world.sink.stats().dropped_failed == 160; }))
      << world.sink.stats().dropped_failed;
  EXPECT_GE(world.sink.stats().write_failures, 1);
  EXPECT_EQ(world.sink.stats().written, 0);
  EXPECT_TRUE(this->raw("n1", 0).empty());
  // The heartbeats were stored: the node's observation is there.
  std::optional<store::ObservedNode> observed;
  ASSERT_TRUE(this->store_
                  ->read([&](store::Tx& tx) {
                    CORRAL_ASSIGN_OR_RETURN(observed, tx.nodes().get_observed(core::NodeId("n1")));
                    return Status();
                  })
                  .ok());
  ASSERT_TRUE(observed.has_value());
  EXPECT_EQ(observed->gpus.size(), 8u);
}

// An agent posts a batch again when it got no answer (corrald may have taken it), and
// cuts its batches anew when it does: each sample is stored and rolled up once, whether
// the retry meets the first post in the queue or arrives after it was written
// (issue 38, item 11).
TYPED_TEST(TelemetrySinkTest, ARetriedBatchIsCountedOnce) {
  if (this->IsSkipped()) return;
  TelemetryWorld world(*this->store_, *this->store_, this->clock_, {});
  FakeAgent agent{.addr = world.addr, .node = "n1"};
  ASSERT_EQ(agent.join("jt").status, 200);
  const auto post = [&](const std::vector<core::TelemetrySample>& batch) {
    const auto r = agent.client().post("/v1/agents/n1/telemetry",
                                       core::encode_telemetry_batch({.samples = batch}));
    EXPECT_EQ(r.status, 202) << r.body;
  };
  const std::vector<core::TelemetrySample> first = samples(8, kTelemetryT0);
  post(first);
  post(first);  // retried before corrald wrote the first
  ASSERT_TRUE(world.sink.flush_once().ok());
  // Retried after it was written, cut anew: its last half with 4 new samples.
  std::vector<core::TelemetrySample> recut(first.begin() + 4, first.end());
  for (const auto& s : samples(4, kTelemetryT0 + 1'000)) recut.push_back(s);
  post(recut);
  ASSERT_TRUE(world.sink.flush_once().ok());
  std::size_t raw = 0;
  for (std::int32_t gpu = 0; gpu < 8; ++gpu) raw += this->raw("n1", gpu).size();
  EXPECT_EQ(raw, 12u);
  for (const auto resolution :
       {store::TelemetryResolution::kMinute, store::TelemetryResolution::kHour}) {
    std::int64_t rolled = 0;
    for (const auto& r : this->rollups(resolution)) rolled += r.samples;
    EXPECT_EQ(rolled, 12);
  }
}

// The telemetry writer hangs in its store: agents' batches keep being answered at once
// (the queue fills, then its cap drops the rest), heartbeats still commit; once the store
// answers again the queue is written.
TYPED_TEST(TelemetrySinkTest, AHangingTelemetryWriteNeverHoldsTheAgentRoutes) {
  if (this->IsSkipped()) return;
  GatedStore gated(*this->store_);
  TelemetryWorld world(*this->store_, gated, this->clock_, {.queue_samples = 40, .flush_ms = 1});
  FakeAgent agent{.addr = world.addr, .node = "n1"};
  ASSERT_EQ(agent.join("jt").status, 200);
  gated.set_open(false);
  world.sink.start();
  ASSERT_EQ(agent.client().post("/v1/agents/n1/telemetry", telemetry_body(8, kTelemetryT0)).status,
            202);
  gated.await_waiter();  // the writer now hangs with those 8 samples
  std::int64_t accepted = 0;
  for (int i = 0; i < 10; ++i) {
    const auto posted =
        agent.client().post("/v1/agents/n1/telemetry", telemetry_body(8, kTelemetryT0 + 1000 * i));
    ASSERT_EQ(posted.status, 202) << posted.body;
    accepted += body(posted)["accepted"].get<std::int64_t>();
    ASSERT_EQ(agent.heartbeat().status, 200);
  }
  EXPECT_EQ(accepted, 40);  // the queue's cap, with the hanging write's 8 out of it
  EXPECT_EQ(world.sink.stats().dropped_queue, 80 - 40);
  EXPECT_TRUE(this->raw("n1", 0).empty());
  gated.set_open(true);
  ASSERT_TRUE(testing::eventually([&] { return world.sink.stats().written == 48; }))
      << world.sink.stats().written;
  EXPECT_FALSE(this->raw("n1", 0).empty());
}

// An agent token posts only for its own node, and a malformed batch is refused whole.
TYPED_TEST(TelemetrySinkTest, TheRouteChecksTheNodeAndTheBody) {
  if (this->IsSkipped()) return;
  TelemetryWorld world(*this->store_, *this->store_, this->clock_, {});
  FakeAgent agent{.addr = world.addr, .node = "n1"};
  ASSERT_EQ(agent.join("jt").status, 200);
  EXPECT_EQ(agent.client().post("/v1/agents/n2/telemetry", telemetry_body(1, kTelemetryT0)).status,
            403);
  EXPECT_EQ(testing::TestClient(world.addr, "nope")
                .post("/v1/agents/n1/telemetry", telemetry_body(1, kTelemetryT0))
                .status,
            401);
  const auto bad = agent.client().post(
      "/v1/agents/n1/telemetry", R"({"samples": [{"gpu": 0, "timeMs": 1, "utilization": 2}]})");
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(body(bad)["error"]["field"], "samples[0].utilization");
  EXPECT_EQ(world.sink.stats().accepted, 0);
}

// ---- throttling as a health signal ---------------------------------------------------

core::Node two_gpus() {
  core::Node node{.id = core::NodeId("n1")};
  for (int g = 0; g < 2; ++g) node.gpus.push_back({.index = g, .type = core::GpuTypeId("H100")});
  return node;
}

std::vector<core::GpuHealth> readings(std::vector<std::string> throttle_gpu1) {
  return {{.index = 0, .temperature_c = 50, .power_w = 300, .power_limit_w = 700},
          {.index = 1,
           .temperature_c = 50,
           .power_w = 300,
           .power_limit_w = 700,
           .throttle = std::move(throttle_gpu1)}};
}

// A reason that counts makes the GPU hot at once and unhealthy once it has lasted
// throttleDrainAfterMs without a break; a reading without it starts the count again.
// sw_power_cap (an admin's power cap) does not count by default.
TEST(ThrottleHealth, ThrottledTooLongIsUnhealthy) {
  AgentSettings settings;
  settings.throttle_drain_after_ms = 60'000;
  const core::Node node = two_gpus();
  const auto at = [](std::int64_t ms) { return core::time_from_ms(kTelemetryT0 + ms); };
  auto judged = evaluate_gpus(node, readings({"hw_thermal_slowdown"}), settings, {}, at(0));
  ASSERT_EQ(judged.size(), 2u);
  EXPECT_EQ(judged[0].condition, core::GpuCondition::kOk);
  EXPECT_FALSE(judged[0].throttled_since.has_value());
  EXPECT_EQ(judged[1].condition, core::GpuCondition::kHot);
  EXPECT_EQ(judged[1].problem, "hot: throttled (hw_thermal_slowdown)");
  EXPECT_EQ(judged[1].throttled_since, at(0));
  judged = evaluate_gpus(node, readings({"hw_thermal_slowdown"}), settings, judged, at(59'999));
  EXPECT_EQ(judged[1].condition, core::GpuCondition::kHot);
  EXPECT_EQ(judged[1].throttled_since, at(0));
  judged = evaluate_gpus(node, readings({"hw_thermal_slowdown", "sw_power_cap"}), settings, judged,
                         at(60'000));
  EXPECT_EQ(judged[1].condition, core::GpuCondition::kUnhealthy);
  EXPECT_EQ(judged[1].problem, "throttled (hw_thermal_slowdown) for 60 s");
  // A break resets it.
  judged = evaluate_gpus(node, readings({}), settings, judged, at(61'000));
  EXPECT_EQ(judged[1].condition, core::GpuCondition::kOk);
  EXPECT_FALSE(judged[1].throttled_since.has_value());
  judged = evaluate_gpus(node, readings({"hw_slowdown"}), settings, judged, at(62'000));
  EXPECT_EQ(judged[1].throttled_since, at(62'000));
  EXPECT_EQ(judged[1].condition, core::GpuCondition::kHot);
  // Not a reason that counts.
  judged = evaluate_gpus(node, readings({"sw_power_cap"}), settings, judged, at(63'000));
  EXPECT_EQ(judged[1].condition, core::GpuCondition::kOk);
  // The set is configurable; 0 never drains.
  settings.throttle_reasons = {"sw_power_cap"};
  settings.throttle_drain_after_ms = 0;
  judged = evaluate_gpus(node, readings({"sw_power_cap"}), settings, judged, at(64'000));
  EXPECT_EQ(judged[1].condition, core::GpuCondition::kHot);
  judged = evaluate_gpus(node, readings({"sw_power_cap"}), settings, judged, at(10'000'000));
  EXPECT_EQ(judged[1].condition, core::GpuCondition::kHot);
}

// The judged conditions carry the power limit the readings last gave, so a scheduling
// cycle reads it with them (issue 41): a reading without a limit, or a GPU gone absent,
// keeps the last one; a new limit replaces it; and apply_observation() counts it over
// the join's inventory.
TEST(PowerLimits, TheJudgedConditionsKeepTheLastLimitTheReadingsGave) {
  const AgentSettings settings;
  const core::Node node = two_gpus();
  const auto t0 = core::time_from_ms(kTelemetryT0);
  auto judged = evaluate_gpus(node, readings({}), settings, {}, t0);
  ASSERT_EQ(judged.size(), 2u);
  EXPECT_EQ(judged[0].power_limit_w, 700);
  EXPECT_EQ(judged[1].power_limit_w, 700);
  auto next = readings({});
  next[0].power_limit_w = 0;    // this reading gives none
  next[1].power_limit_w = 450;  // an admin lowered it
  judged = evaluate_gpus(node, next, settings, judged, t0);
  EXPECT_EQ(judged[0].power_limit_w, 700);
  EXPECT_EQ(judged[1].power_limit_w, 450);
  next.pop_back();  // GPU 1 absent: unhealthy, its limit as last known
  judged = evaluate_gpus(node, next, settings, judged, t0);
  EXPECT_EQ(judged[1].condition, core::GpuCondition::kUnhealthy);
  EXPECT_EQ(judged[1].power_limit_w, 450);

  store::ObservedNode observed{.node = node.id, .gpus = judged};
  for (int g = 0; g < 2; ++g) observed.inventory.gpus.push_back({.index = g, .power_limit_w = 500});
  observed.gpus[0].power_limit_w = 0;  // judged before any reading gave one
  core::Node placed = node;
  apply_observation(placed, observed);
  EXPECT_EQ(placed.gpus[0].power_limit_watts, 500) << "the join's inventory";
  EXPECT_EQ(placed.gpus[1].power_limit_watts, 450) << "the readings' last limit";
  EXPECT_TRUE(placed.gpus[0].healthy);
  EXPECT_FALSE(placed.gpus[1].healthy);
}

// The configured reasons and window, from corrald's config file.
TEST(ThrottleHealth, ConfigReadsReasonsAndWindow) {
  corral::testing::TempDir dir;
  const auto path = dir.path() / "c.yaml";
  std::ofstream(path) << "agents:\n  throttleReasons: [hw_slowdown, sw_power_cap]\n"
                         "  throttleDrainAfterMs: 1234\ntelemetry:\n  rawRetentionMs: 3600000\n"
                         "  nodePerMinute: 7\n  queueSamples: 9\n";
  auto c = load_server_config(path.string());
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(c->agents.throttle_reasons, (std::set<std::string>{"hw_slowdown", "sw_power_cap"}));
  EXPECT_EQ(c->agents.throttle_drain_after_ms, 1234);
  EXPECT_EQ(c->telemetry.raw_retention_ms, 3'600'000);
  EXPECT_EQ(c->telemetry.node_samples_per_minute, 7);
  EXPECT_EQ(c->telemetry.queue_samples, 9);
  std::ofstream(path) << "agents:\n  throttleReasons: [too_warm]\n";
  auto bad = load_server_config(path.string());
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().field(), "agents.throttleReasons[0]");
  std::ofstream(path) << "telemetry:\n  rawRetention: 5\n";
  bad = load_server_config(path.string());
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().field(), "telemetry.rawRetention");
}

// Through a real corrald on its own clock: heartbeats reporting a GPU thermally throttled
// make it hot (no new placements), and throttleDrainAfterMs later unhealthy, which drains
// the node with the reason, as any GPU fault does.
TEST(ThrottleHealth, AHeartbeatThrottledTooLongDrainsTheNode) {
  corral::testing::TempDir dir;
  core::ManualClock clock(core::time_from_ms(kTelemetryT0));
  auto corrald = corral::testing::InProcessCorrald::start(
      dir.path(), clock, "agents:\n  nodeLostAfterMs: 3600000\n  throttleDrainAfterMs: 120000\n");
  ASSERT_TRUE(corrald.ok()) << corrald.status().to_string();
  FakeAgent agent{.addr = (*corrald)->addr(), .node = "n1", .gpus = 2};
  ASSERT_EQ(agent.join((*corrald)->join_token()).status, 200);
  auto admin = (*corrald)->client((*corrald)->admin_token());
  const auto node_view = [&] { return body(admin.get("/v1/nodes/n1")); };
  agent.faults[1] = {{"throttle", {"hw_thermal_slowdown"}}};
  ASSERT_EQ(agent.heartbeat().status, 200);
  clock.advance(core::seconds(119));
  ASSERT_EQ(agent.heartbeat().status, 200);
  json n = node_view();
  EXPECT_EQ(n.value("admin", ""), "active") << n.dump();
  EXPECT_NE(n.dump().find("hot: throttled (hw_thermal_slowdown)"), std::string::npos) << n.dump();
  clock.advance(core::seconds(1));
  ASSERT_EQ(agent.heartbeat().status, 200);
  n = node_view();
  EXPECT_EQ(n.value("admin", ""), "draining") << n.dump();
  EXPECT_NE(n.value("adminReason", "").find("throttled (hw_thermal_slowdown) for 120 s"),
            std::string::npos)
      << n.dump();
}

}  // namespace
}  // namespace corral::server
