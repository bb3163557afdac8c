// The decide() knobs (sched::SchedulerConfig) by the names people write: the keys of
// the YAML `scheduler:` section of corrald's --config and of `corral-sim replay
// --config`, and the `config` object of a cycle file. One list, so a knob has one name
// and one range wherever it is written. docs/scheduling.md#configuration has the table.
#pragma once

#include <cmath>

#include <fmt/format.h>

#include "cycle/field_count.h"
#include "cycle/internal/json_codec.h"
#include "sched/config.h"

namespace corral::cycle::detail {

static_assert(field_count<sched::SchedulerConfig>() == 16,
              "sched::SchedulerConfig changed: name the new knob in cycle/internal/knobs.h "
              "(Fields<SchedulerConfig>), document it in docs/scheduling.md and update the count");
static_assert(field_count<sched::PreemptionConfig>() == 7,
              "sched::PreemptionConfig changed: name the new knob in cycle/internal/knobs.h "
              "(Fields<SchedulerConfig>), document it in docs/scheduling.md and update the count");

template <>
struct EnumNames<sched::QueueOrder> {
  static constexpr std::array<std::pair<sched::QueueOrder, std::string_view>, 3> kNames = {{
      {sched::QueueOrder::kFairShare, "fairShare"},
      {sched::QueueOrder::kFifo, "fifo"},
      {sched::QueueOrder::kAttainedService, "attainedService"},
  }};
};

template <>
struct EnumNames<sched::SharePlacement> {
  static constexpr std::array<std::pair<sched::SharePlacement, std::string_view>, 4> kNames = {{
      {sched::SharePlacement::kFragmentation, "fragmentation"},
      {sched::SharePlacement::kBestFit, "bestFit"},
      {sched::SharePlacement::kPacking, "packing"},
      {sched::SharePlacement::kRandom, "random"},
  }};
};

inline constexpr std::int64_t kDayMs = 86'400'000;

template <>
struct Fields<sched::SchedulerConfig> {
  template <typename V, typename C>
  static void visit(V& v, C& c) {
    v("order", c.order);
    v("fairness", c.fairness);
    v("usageHalfLifeMs", c.usage_half_life, Range{1'000, 3'650 * kDayMs});
    v("topologyScoring", c.topology_scoring);
    v("preemptionEnabled", c.preemption.enabled);
    v("minRuntimeMs", c.preemption.min_runtime, Range{0, 30 * kDayMs});
    v("minRuntimeByTierMs", c.preemption.min_runtime_by_tier);
    v("maxPreemptionsPerJob", c.preemption.max_preemptions_per_job, Range{0, 1'000'000});
    v("graceMs", c.preemption.grace, Range{0, kDayMs});
    v("maxPreemptionSearchesPerCycle", c.preemption.max_searches_per_cycle, Range{0, 1'000'000});
    v("attainedServiceMaxLossMs", c.preemption.attained_service_max_loss, Range{0, kDayMs});
    v("backfill", c.backfill);
    v("starvationAgeMs", c.starvation_age, Range{0, 365 * kDayMs});
    v("elasticGrowth", c.elastic_growth);
    v("elasticMinEfficiency", c.elastic_min_efficiency);
    v("elasticResizeCostMs", c.elastic_resize_cost, Range{0, kDayMs});
    v("elasticReplanPeriodMs", c.elastic_replan_period, Range{1'000, kDayMs});
    v("elasticFairness", c.elastic_fairness);
    v("typePriceWeight", c.type_price_weight);
    v("lasThresholdsGpuSeconds", c.las_thresholds_gpu_seconds);
    v("sessionGpusPerUser", c.session_gpus_per_user, Range{0, 16'384});
    v("sharePlacement", c.share_placement);
  }

  static void check(const sched::SchedulerConfig& c, const std::string& path, ReadErrors& errors) {
    const std::string by_tier = child_path(path, "minRuntimeByTierMs");
    for (const auto& [tier, d] : c.preemption.min_runtime_by_tier) {
      if (d.count() < 0 || d.count() > 30 * kDayMs) {
        return errors.fail(child_path(by_tier, std::to_string(tier)),
                           fmt::format("must be between 0 and {}, got {}", 30 * kDayMs, d.count()));
      }
    }
    const double e = c.elastic_min_efficiency;
    if (!std::isfinite(e) || e < 0 || e > 1) {
      return errors.fail(child_path(path, "elasticMinEfficiency"),
                         fmt::format("must be between 0 and 1, got {}", e));
    }
    const double p = c.elastic_fairness;
    if (!std::isfinite(p) || p < -10 || p > 0) {
      return errors.fail(child_path(path, "elasticFairness"),
                         fmt::format("must be between -10 and 0, got {}", p));
    }
    const double f = c.fairness;
    if (!std::isfinite(f) || f < 0 || f > 1) {
      return errors.fail(child_path(path, "fairness"),
                         fmt::format("must be between 0 and 1, got {}", f));
    }
    const double w = c.type_price_weight;
    if (!std::isfinite(w) || w < 0 || w > 4) {
      return errors.fail(child_path(path, "typePriceWeight"),
                         fmt::format("must be between 0 and 4, got {}", w));
    }
    const auto& t = c.las_thresholds_gpu_seconds;
    const std::string key = child_path(path, "lasThresholdsGpuSeconds");
    if (t.size() > 64) return errors.fail(key, fmt::format("at most 64 levels, got {}", t.size()));
    for (std::size_t i = 0; i < t.size(); ++i) {
      if (!std::isfinite(t[i]) || t[i] < 0) {
        return errors.fail(index_path(key, i),
                           fmt::format("must be a GPU-second count >= 0, got {}", t[i]));
      }
    }
  }
};

}  // namespace corral::cycle::detail
