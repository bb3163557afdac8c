// The agent's telemetry pieces (agent/telemetry.h) without threads or sockets: the
// bounded buffer, a sampling round with injected faults, and a flush against a scripted
// sender that fails the ways corrald can.
#include "agent/telemetry.h"

#include <gtest/gtest.h>

namespace corral::agent {
namespace {

std::vector<core::TelemetrySample> at_times(std::int64_t from, int n) {
  std::vector<core::TelemetrySample> out;
  for (int i = 0; i < n; ++i) out.push_back({.gpu = 0, .time_ms = from + i});
  return out;
}

std::vector<std::int64_t> times(const std::vector<core::TelemetrySample>& samples) {
  std::vector<std::int64_t> out;
  for (const auto& s : samples) out.push_back(s.time_ms);
  return out;
}

TEST(TelemetryBuffer, DropsTheOldestBeyondCapacity) {
  TelemetryBuffer buffer(5);
  buffer.add(at_times(0, 3));
  buffer.add(at_times(10, 4));
  EXPECT_EQ(buffer.size(), 5u);
  EXPECT_EQ(buffer.dropped(), 2);
  EXPECT_EQ(times(buffer.take(2)), (std::vector<std::int64_t>{2, 10}));
  // A batch put back goes in front (it is older), and the buffer stays bounded by
  // dropping the oldest: here the whole batch put back.
  buffer.add(at_times(20, 2));      // 11 12 13 20 21
  buffer.put_back(at_times(0, 2));  // 0 1 11 12 13 20 21 -> 11 12 13 20 21
  EXPECT_EQ(buffer.dropped(), 4);
  EXPECT_EQ(times(buffer.take(10)), (std::vector<std::int64_t>{11, 12, 13, 20, 21}));
}

TEST(TelemetryBuffer, PutBackKeepsTheNewestByPosition) {
  TelemetryBuffer buffer(4);
  buffer.add(at_times(10, 3));      // 10 11 12
  buffer.put_back(at_times(0, 2));  // 0 1 10 11 12 -> 1 10 11 12
  EXPECT_EQ(buffer.dropped(), 1);
  EXPECT_EQ(times(buffer.take(9)), (std::vector<std::int64_t>{1, 10, 11, 12}));
  EXPECT_EQ(buffer.size(), 0u);
}

// Unavailable keeps the batch (and stops the flush); a refusal drops it and goes on.
TEST(FlushTelemetry, KeepsWhatCouldNotBeSentAndDropsWhatWasRefused) {
  TelemetryBuffer buffer(100);
  buffer.add(at_times(0, 10));
  std::vector<std::vector<std::int64_t>> sent;
  std::vector<core::Status> answers = {
      core::Status(),
      core::failed_precondition("telemetry: HTTP 400"),
      core::Status(core::StatusCode::kUnavailable, "corrald unreachable"),
  };
  std::size_t call = 0;
  const SendTelemetry send = [&](const core::TelemetryBatch& b) {
    sent.push_back(times(b.samples));
    return answers[std::min(call++, answers.size() - 1)];
  };
  FlushResult r = flush_telemetry(buffer, 3, send);
  EXPECT_EQ(r.sent, 3);
  EXPECT_EQ(r.refused, 3);
  EXPECT_EQ(r.last_error.code(), core::StatusCode::kUnavailable);
  ASSERT_EQ(sent.size(), 3u);
  EXPECT_EQ(sent[0], (std::vector<std::int64_t>{0, 1, 2}));
  EXPECT_EQ(sent[1], (std::vector<std::int64_t>{3, 4, 5}));
  EXPECT_EQ(sent[2], (std::vector<std::int64_t>{6, 7, 8}));
  EXPECT_EQ(buffer.size(), 4u);  // 6, 7, 8 back in front of 9
  // corrald answers again: the rest goes, oldest first.
  answers = {core::Status()};
  call = 0;
  sent.clear();
  r = flush_telemetry(buffer, 3, send);
  EXPECT_EQ(r.sent, 4);
  EXPECT_TRUE(r.last_error.ok());
  EXPECT_EQ(sent, (std::vector<std::vector<std::int64_t>>{{6, 7, 8}, {9}}));
  EXPECT_EQ(buffer.size(), 0u);
  // Nothing buffered: nothing sent.
  sent.clear();
  r = flush_telemetry(buffer, 3, send);
  EXPECT_TRUE(sent.empty());
  EXPECT_EQ(r.sent, 0);
}

// A sampling round of a simulated node: the busy GPUs read busy, and injected faults
// overlay temperature, power and throttle reasons; a GPU made absent has no sample.
TEST(SampleTelemetry, OverlaysInjectedFaults) {
  auto inventory = open_preset_inventory("dgx-h100", "n1");
  ASSERT_TRUE(inventory.ok());
  auto faults = parse_faults(
      R"({"gpus": {"1": {"temperatureC": 96, "throttle": ["hw_thermal_slowdown"]},
                   "2": {"present": false}, "4": {"powerW": 900}}})");
  ASSERT_TRUE(faults.ok()) << faults.status().to_string();
  TelemetryBuffer buffer(100);
  ASSERT_TRUE(sample_telemetry(**inventory, 5000, {1}, &*faults, buffer).ok());
  const auto samples = buffer.take(100);
  ASSERT_EQ(samples.size(), 7u);
  for (const auto& s : samples) {
    EXPECT_NE(s.gpu, 2);
    EXPECT_EQ(s.time_ms, 5000);
  }
  EXPECT_EQ(samples[1].temperature_c, 96);
  EXPECT_EQ(samples[1].throttle, std::vector<std::string>{"hw_thermal_slowdown"});
  EXPECT_GE(samples[1].utilization, 0.85);
  EXPECT_DOUBLE_EQ(samples[3].power_w, 900);  // GPU 4: index 3 once GPU 2 is gone
  EXPECT_EQ(samples[3].gpu, 4);
  EXPECT_TRUE(samples[0].throttle.empty());
  auto bad = parse_faults(R"({"gpus": {"1": {"throttle": "hot"}}})");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().field(), "gpus.1.throttle");
}

}  // namespace
}  // namespace corral::agent
