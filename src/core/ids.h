// Typed ids: a job id cannot be passed where a node id is expected.
//
// Numeric ids (jobs, allocations) are assigned by the store; named ids (tenants, nodes,
// GPU types, reservations) are chosen by people. Both compare and hash by value, so
// they sort deterministically and can key ordered and unordered maps.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>

namespace corral::core {

template <typename Tag, typename Rep>
struct Id {
  Rep value{};

  Id() = default;
  explicit Id(Rep v) : value(std::move(v)) {}
  friend auto operator<=>(const Id&, const Id&) = default;
  friend bool operator==(const Id&, const Id&) = default;
};

using JobId = Id<struct JobIdTag, std::int64_t>;
using AllocationId = Id<struct AllocationIdTag, std::int64_t>;
using TenantId = Id<struct TenantIdTag, std::string>;
using NodeId = Id<struct NodeIdTag, std::string>;
using GpuTypeId = Id<struct GpuTypeIdTag, std::string>;
using ReservationId = Id<struct ReservationIdTag, std::string>;

}  // namespace corral::core

template <typename Tag, typename Rep>
struct std::hash<corral::core::Id<Tag, Rep>> {
  std::size_t operator()(const corral::core::Id<Tag, Rep>& id) const noexcept {
    return std::hash<Rep>{}(id.value);
  }
};
