// Injected faults (protocol §7): a JSON file the agent re-reads before every heartbeat,
// so tests can make a simulated GPU fail, overheat, throttle or vanish without restarting it.
//
//   {"gpus": {"3": {"xid": 79}, "5": {"temperatureC": 95}, "6": {"present": false},
//             "2": {"eccUncorrectable": 1}, "1": {"throttle": ["hw_thermal_slowdown"]}}}
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "agent/inventory.h"
#include "core/result.h"

namespace corral::agent {

struct GpuFault {
  std::optional<std::int32_t> xid;
  std::optional<std::int32_t> temperature_c;
  std::optional<bool> present;
  std::optional<std::int64_t> ecc_uncorrectable;
  std::optional<double> power_w;
  std::optional<bool> remap_failed;
  std::optional<bool> retired_pages_pending;
  std::optional<std::int64_t> nvlink_errors;
  std::optional<std::vector<std::string>> throttle;  // clock throttle reasons, replacing any
};

using Faults = std::map<std::int32_t, GpuFault>;  // by GPU index

// Parses the faults document. InvalidArgument names the field ("gpus.3.xid").
core::Result<Faults> parse_faults(const std::string& json_text);

// Reads `path`; a missing file is no faults.
core::Result<Faults> read_faults_file(const std::string& path);

// Overlays the faults on health readings (GPUs absent from `faults` are unchanged).
void apply_faults(const Faults& faults, std::vector<core::GpuHealth>& health);
// The same on telemetry samples: temperature, power, uncorrectable ECC and throttle
// reasons; a GPU made absent has no sample.
void apply_faults(const Faults& faults, std::vector<core::TelemetrySample>& samples);

}  // namespace corral::agent
