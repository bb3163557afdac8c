// Attribution: who pays for the GPU time no tenant used. The ledger puts unallocated,
// unhealthy and drained time on nobody (docs/ledger.md); a chargeback report may leave
// that cost with the operator or spread it over the tenants, by one of these modes:
//
//   none          nobody: the report shows it as unattributed.
//   proportional  by use: each GPU type's unattributed cost is split among the tenants in
//                 proportion to the GPU-time they were charged for on that type.
//   guarantee     by guarantee left idle: a tenant guaranteed G GPUs of a type over a
//                 window of W holds G x W GPU-time of it; what it did not use of that
//                 (G x W minus its charged time, at least 0) is what it pays for out of the
//                 type's unattributed time, at that time's average price. When the idle
//                 guarantees exceed the unattributed time, each pays in proportion to its
//                 idle guarantee; whatever no guarantee covers stays unattributed.
//
// Amounts are split by largest remainder, so the shares and what stays unattributed add
// up to the unattributed total to the micro-dollar.
//
// Pure: no I/O; the same input gives the same shares.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "core/ids.h"
#include "core/price_book.h"
#include "core/time.h"

namespace corral::ledger {

enum class Attribution { kNone, kProportional, kGuarantee };
std::string_view to_string(Attribution mode);
std::optional<Attribution> attribution_from_string(std::string_view text);

// GPU-time and money on one GPU type: charged to a tenant, or (tenant empty) unattributed.
struct TypeTotal {
  core::TenantId tenant;
  core::GpuTypeId type;
  std::int64_t gpu_ms = 0;
  core::MicroDollars amount = 0;
  friend bool operator==(const TypeTotal&, const TypeTotal&) = default;
};

struct Guarantee {
  core::TenantId tenant;
  core::GpuTypeId type;
  std::int64_t milli = 0;  // thousandths of a GPU (core::Quota::guaranteed_milli)
};

// The share of the unattributed totals (tenant empty in `totals`) each tenant pays, one
// row per (tenant, type) with a share, by (tenant, type). `window` is the report's length.
std::vector<TypeTotal> attribute(Attribution mode, const std::vector<TypeTotal>& totals,
                                 const std::vector<Guarantee>& guarantees, core::Duration window);

}  // namespace corral::ledger
