// What the agent protocol's two files share (core/agent_protocol.h): agent_protocol.cc
// (joins, assignments, heartbeats) and agent_protocol_reports.cc (telemetry, checkpoints,
// run reports, feature lookups): the limits on what a peer may send, the typed field
// readers, and the encoder's one rule for user bytes.
//
// Thread safety: constants and free functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "core/json_fields.h"
#include "core/status.h"

namespace corral::core::detail {

using json_fields::Field;
using json_fields::find;
using json_fields::read_bool;
using json_fields::read_double;
using json_fields::read_int;
using json_fields::read_int_array;
using json_fields::read_objects;
using json_fields::read_string;
using json_fields::read_string_array;
using json_fields::read_string_map;
using nlohmann::json;

// Limits on what a peer may send: wide enough for any real value, narrow enough that
// nothing overflows once read.
inline constexpr std::int64_t kMaxRank = 1 << 20;
inline constexpr std::int64_t kMaxGpuIndex = 63;  // at most 64 GPUs a node, as registered nodes
inline constexpr std::int64_t kMaxGpuShareMilli = 999;  // a share is less than a whole GPU
inline constexpr std::int64_t kMaxGpuMemoryMib = std::int64_t{16} << 20;  // 16 TiB of one GPU
inline constexpr std::int64_t kMaxRackPowerCapW = 10'000'000;
inline constexpr std::int64_t kMaxTimeMs = std::int64_t{1}
                                           << 50;  // ms since the epoch: year 37,648
inline constexpr std::size_t kMaxUrlBytes = 256;
inline constexpr std::size_t kMaxPathBytes = 4096;
inline constexpr std::size_t kMaxChecksumBytes = 256;
inline constexpr std::size_t kMaxStateBytes = 16;
inline constexpr std::size_t kMaxTextBytes = 1 << 16;

// Bodies carry user bytes (env values, paths): invalid UTF-8 is replaced, never thrown.
inline std::string dump(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

// An absolute path of at most kMaxPathBytes.
Status read_checkpoint_path(const Field& f, std::string& out);

}  // namespace corral::core::detail
