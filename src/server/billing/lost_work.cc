#include "server/billing/lost_work.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <string>
#include <tuple>

#include "server/billing/accrual_controller.h"

namespace corral::server {
namespace {

using core::Result;
using core::Time;

// One job's figures on one GPU and bucket in one period.
using LostWorkCell = std::tuple<std::string, std::int32_t, std::string>;  // node, gpu, bucket
struct LostWorkSum {
  core::GpuTypeId type;
  core::TenantId tenant;
  std::int64_t gpu_ms = 0;
  std::int64_t amount = 0;
};

std::optional<ledger::Bucket> bucket_named(const std::string& name) {
  for (int b = 0; b < ledger::kBucketCount; ++b) {
    if (ledger::to_string(static_cast<ledger::Bucket>(b)) == name) {
      return static_cast<ledger::Bucket>(b);
    }
  }
  return std::nullopt;
}

// The adjustments of job `job` in the period starting at `q`: accrued again, less what
// the ledger holds.
Result<std::vector<ledger::Entry>> adjust_period(store::Tx& tx, SpecCache& specs,
                                                 const BillingSettings& settings, core::JobId job,
                                                 Time q, Time accruing) {
  const Time q_end = q + settings.period;
  std::map<LostWorkCell, LostWorkSum> diff;
  CORRAL_ASSIGN_OR_RETURN(
      const auto now, accrue_period(tx, specs, settings, {.start = q, .end = q_end, .job = job}));
  for (const auto& e : now) {
    if (e.job != job) continue;
    LostWorkSum& d = diff[{e.node.value, e.index, std::string(ledger::to_string(e.bucket))}];
    d.type = e.type;
    d.tenant = e.tenant;
    d.gpu_ms += e.gpu_ms;
    d.amount += e.amount;
  }
  CORRAL_ASSIGN_OR_RETURN(
      const auto stored,
      tx.ledger().list_ledger({.from = q, .to = q + core::Duration(1), .job = job}));
  for (const auto& r : stored) {
    LostWorkSum& d = diff[{r.node.value, r.gpu_index, r.bucket}];
    d.type = r.gpu_type;
    d.tenant = r.tenant;
    d.gpu_ms -= r.gpu_ms;
    d.amount -= r.amount_micros;
  }
  // Per GPU: its time must net to zero (only its split between buckets changed); its
  // money is made to, the residual of pricing the new split on its largest move.
  std::map<std::pair<std::string, std::int32_t>, std::vector<std::pair<LostWorkCell, LostWorkSum>>>
      by_gpu;
  for (const auto& [cell, d] : diff) {
    if (d.gpu_ms == 0 && d.amount == 0) continue;
    by_gpu[{std::get<0>(cell), std::get<1>(cell)}].push_back({cell, d});
  }
  std::vector<ledger::Entry> out;
  for (auto& [gpu, moves] : by_gpu) {
    std::int64_t ms = 0, money = 0;
    for (const auto& [cell, d] : moves) {
      ms += d.gpu_ms;
      money += d.amount;
    }
    if (ms != 0) continue;  // more changed than the split: left as billed
    auto largest = std::max_element(moves.begin(), moves.end(), [](const auto& a, const auto& b) {
      return std::llabs(a.second.amount) < std::llabs(b.second.amount);
    });
    largest->second.amount -= money;
    for (const auto& [cell, d] : moves) {
      const auto bucket = bucket_named(std::get<2>(cell));
      if (!bucket) continue;  // a bucket this build does not know: not ours to move
      const std::string key = "adj/" + std::to_string(core::to_ms(accruing)) + "/" +
                              std::get<0>(cell) + "/" + std::to_string(std::get<1>(cell)) + "/" +
                              std::to_string(core::to_ms(q)) + "/" + std::get<2>(cell) + "/" +
                              std::to_string(job.value) + "/" + d.tenant.value;
      out.push_back({.key = key,
                     .node = core::NodeId(std::get<0>(cell)),
                     .index = std::get<1>(cell),
                     .type = d.type,
                     .bucket = *bucket,
                     .tenant = d.tenant,
                     .job = job,
                     .start = q,
                     .end = q_end,
                     .gpu_ms = d.gpu_ms,
                     .amount = d.amount});
    }
  }
  return out;
}

}  // namespace

Result<std::vector<ledger::Entry>> lost_work_adjustments(store::Tx& tx, SpecCache& specs,
                                                         const BillingSettings& settings,
                                                         const ledger::AccrualInput& input,
                                                         Time accruing) {
  // The earliest loss of each job whose hold ended in this period and lost work from
  // before it.
  std::map<std::int64_t, Time> lost_since;
  for (const auto& h : input.holds) {
    if (!h.lost_from || !h.end || *h.lost_from >= accruing || *h.end < accruing) continue;
    auto [it, fresh] = lost_since.try_emplace(h.job.value, *h.lost_from);
    if (!fresh) it->second = std::min(it->second, *h.lost_from);
  }
  std::vector<ledger::Entry> out;
  for (const auto& [job, since] : lost_since) {
    Time q = std::max(period_start(since, settings.period),
                      accruing - settings.period * kMaxAdjustedPeriods);
    for (; q < accruing; q += settings.period) {
      CORRAL_ASSIGN_OR_RETURN(auto some,
                              adjust_period(tx, specs, settings, core::JobId(job), q, accruing));
      out.insert(out.end(), some.begin(), some.end());
    }
  }
  return out;
}

}  // namespace corral::server
