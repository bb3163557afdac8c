// Telemetry end to end: a real corrald and two real corral-agents (simulated DGX H100s)
// sampling every 100 ms and sending every 200 ms. A worker's GPUs read busy and the
// others idle in telemetry_raw, the 1-minute and 1-hour rollups fill, and a GPU whose
// clocks an injected fault throttles is first hot, then (throttleDrainAfterMs later)
// unhealthy, which drains its node. Read straight from corrald's SQLite file.
#include <set>
#include <string>
#include <vector>

#include "e2e/cluster_fixture.h"

#include "store/store.h"

namespace corral::testing {
namespace {

class TelemetryClusterTest : public ClusterTest {
 protected:
  std::string cluster_config() const override {
    return "scheduler: {minRuntimeMs: 0, tickMs: 200}\n"
           "agents: {nodeLostAfterMs: 4000, stopGraceMs: 5000, restartBackoffMs: 100,"
           " restartBackoffMaxMs: 1000, throttleDrainAfterMs: 1500}\n";
  }
  std::vector<std::string> node_labels() const override {
    return {"spine=s1,leaf=l1,rack=r1", "spine=s1,leaf=l1,rack=r2"};
  }
  std::vector<std::string> agent_args() const override {
    return {"--telemetry-interval", "0.1", "--telemetry-flush", "0.2"};
  }

  // corrald's store, opened beside it (SQLite readers do not wait for its writer).
  std::unique_ptr<store::Store> open_store() {
    auto s = store::open_sqlite_store((dir_.path() / "corral.db").string());
    EXPECT_TRUE(s.ok()) << s.status().to_string();
    return s.ok() ? std::move(*s) : nullptr;
  }
  std::vector<store::TelemetryRow> raw(store::Store& s, const std::string& node, int gpu) {
    std::vector<store::TelemetryRow> out;
    (void)s.read([&](store::Tx& tx) {
      CORRAL_ASSIGN_OR_RETURN(
          out, tx.records().list_telemetry(core::NodeId(node), gpu, core::Time{},
                                           core::time_from_ms(std::int64_t{1} << 50)));
      return core::Status();
    });
    return out;
  }
  std::vector<store::TelemetryRollupRow> rollups(store::Store& s, store::TelemetryResolution r,
                                                 const std::string& node) {
    std::vector<store::TelemetryRollupRow> out;
    (void)s.read([&](store::Tx& tx) {
      CORRAL_ASSIGN_OR_RETURN(
          out, tx.records().list_telemetry_rollup(
                   r, core::Time{}, core::time_from_ms(std::int64_t{1} << 50), core::NodeId(node)));
      return core::Status();
    });
    return out;
  }

  json node(const std::string& name) { return body(admin_->get("/v1/nodes/" + name)); }
};

// A job's GPUs read busy, its node's other GPUs idle; the samples are rolled up by minute
// and by hour as they are written.
TEST_F(TelemetryClusterTest, SamplesOfBusyAndIdleGpusLandInRawAndRollups) {
  const std::int64_t id = submit(trainer_job("busy", 2, 100000, 10));
  ASSERT_TRUE(wait_phase(id, "running")) << job(id).dump();
  std::string node;
  std::set<int> held;
  for (const auto& a : body(admin_->get("/v1/allocations")).value("allocations", json::array())) {
    if (a.value("job", std::int64_t{0}) != id) continue;
    for (const auto& g : a.value("gpus", json::array())) {
      node = g.value("node", "");
      held.insert(g.value("index", -1));
    }
  }
  ASSERT_EQ(held.size(), 2u);
  int idle = 0;
  while (held.count(idle) > 0) ++idle;
  auto s = open_store();
  ASSERT_NE(s, nullptr);
  const int busy = *held.begin();
  const auto busy_sample = [&] {
    for (const auto& r : raw(*s, node, busy)) {
      if (r.utilization >= 0.85 && r.power_watts > 500 && r.memory_used_mib > 0) return true;
    }
    return false;
  };
  ASSERT_TRUE(eventually(busy_sample, 30s)) << node << "/" << busy;
  const auto idle_rows = raw(*s, node, idle);
  ASSERT_FALSE(idle_rows.empty());
  for (const auto& r : idle_rows) EXPECT_LT(r.utilization, 0.01);
  // Samples come every 100 ms: several a second, stamped in order.
  ASSERT_TRUE(eventually([&] { return raw(*s, node, busy).size() >= 10; }, 30s));
  const auto rows = raw(*s, node, busy);
  for (std::size_t i = 1; i < rows.size(); ++i) EXPECT_LE(rows[i - 1].time, rows[i].time);
  const auto minutes = rollups(*s, store::TelemetryResolution::kMinute, node);
  const auto hours = rollups(*s, store::TelemetryResolution::kHour, node);
  ASSERT_FALSE(minutes.empty());
  ASSERT_FALSE(hours.empty());
  std::int64_t in_hours = 0;
  for (const auto& h : hours) {
    if (h.gpu_index == idle) {
      EXPECT_LT(h.max_utilization, 0.01);
      in_hours += h.samples;
    }
  }
  EXPECT_GE(in_hours, static_cast<std::int64_t>(idle_rows.size()));
}

// Thermal throttling on one GPU (an injected fault): hot at once, and after
// throttleDrainAfterMs (1.5 s) of it unhealthy, which drains the node with the reason;
// the telemetry samples carry the reason too.
TEST_F(TelemetryClusterTest, AGpuThrottledTooLongDrainsItsNode) {
  agent("n2").inject_faults(R"({"gpus": {"5": {"throttle": ["hw_thermal_slowdown"]}}})");
  // GPU 5's judgement in the node view; an empty object before the first heartbeat is read.
  const auto gpu5 = [&] {
    const json n = node("n2");
    const json observed = n.is_object() ? n.value("observed", json::object()) : json::object();
    if (observed.is_object()) {
      for (const auto& g : observed.value("gpus", json::array())) {
        if (g.value("index", -1) == 5) return g;
      }
    }
    return json::object();
  };
  ASSERT_TRUE(eventually(
      [&] {
        const std::string health = gpu5().value("health", "");
        return !health.empty() && health != "ok";
      },
      30s))
      << node("n2").dump();
  ASSERT_TRUE(eventually([&] { return node("n2").value("admin", "") == "draining"; }, 30s))
      << node("n2").dump();
  EXPECT_NE(node("n2").value("adminReason", "").find("gpu 5: throttled (hw_thermal_slowdown)"),
            std::string::npos)
      << node("n2").dump();
  EXPECT_EQ(gpu5().value("health", ""), "unhealthy");
  EXPECT_EQ(node("n1").value("admin", ""), "active");
  auto s = open_store();
  ASSERT_NE(s, nullptr);
  ASSERT_TRUE(eventually(
      [&] {
        for (const auto& r : raw(*s, "n2", 5)) {
          if (r.throttle == std::vector<std::string>{"hw_thermal_slowdown"}) return true;
        }
        return false;
      },
      30s));
}

}  // namespace
}  // namespace corral::testing
