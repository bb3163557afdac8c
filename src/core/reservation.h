// Reservations hold GPUs for a tenant over a time window [start, end).
// Either `count` GPUs of `gpu_type` anywhere, or every GPU on the named `nodes`.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/ids.h"
#include "core/time.h"

namespace corral::core {

struct Reservation {
  ReservationId id;
  TenantId tenant;
  std::optional<GpuTypeId> gpu_type;  // with `count`
  std::int32_t count = 0;
  std::vector<NodeId> nodes;  // or a node set
  Time start;
  Time end;

  bool active_at(Time t) const { return start <= t && t < end; }
  friend bool operator==(const Reservation&, const Reservation&) = default;
};

}  // namespace corral::core
