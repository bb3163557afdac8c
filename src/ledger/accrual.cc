#include "ledger/accrual.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "ledger/apportion.h"

namespace corral::ledger {
namespace {

using core::Time;
using GpuId = std::pair<std::string, std::int32_t>;  // node, index

template <typename T>
GpuId id_of(const T& x) {
  return {x.node.value, x.index};
}

// What one GPU's period is made of, clipped to the period.
struct GpuFacts {
  std::vector<const Hold*> holds;  // sorted by start
  std::vector<const Span*> unhealthy, drained, reserved;
  std::vector<const Sample*> samples;  // sorted by time
};

bool covers(const Span& s, Time t) { return s.start <= t && t < s.end; }
bool covers(const Hold& h, Time t, Time period_end) {
  return h.start <= t && t < h.end.value_or(period_end);
}

template <typename Spans>
const Span* covering(const Spans& spans, Time t) {
  for (const Span* s : spans) {
    if (covers(*s, t)) return s;
  }
  return nullptr;
}

struct Tally {
  core::TenantId tenant;
  bool preemptible = false;
  std::int64_t ms = 0;
  // Milliseconds per stretch of one price, by the stretch's start: each is priced once.
  std::map<Time, std::int64_t> ms_at_price;
};

// Where the price of `type` changes inside (start, end): a change to the same price is
// no change, so it does not cut the rounding.
core::Result<std::vector<Time>> price_cuts(const core::PriceBook& prices,
                                           const core::GpuTypeId& type, const std::string& region,
                                           Time start, Time end) {
  std::vector<Time> out;
  for (const Time t : prices.changes(type, region, start, end)) {
    const auto before = prices.price_per_gpu_hour(type, region, false, t - core::Duration(1));
    CORRAL_ASSIGN_OR_RETURN(const core::MicroDollars after,
                            prices.price_per_gpu_hour(type, region, false, t));
    if (!before.ok() || *before != after) out.push_back(t);
  }
  return out;
}

// The bucket of the GPU-milliseconds from `t` to the next breakpoint, and whose they are.
struct Verdict {
  Bucket bucket;
  const Hold* hold = nullptr;
  const Span* reservation = nullptr;
};

// Hold `h`'s time at `t`, which it covers.
Verdict held(const Hold* h, Time t, double idle_below, const Sample* last_sample) {
  if (t < h->start + h->overhead) return {Bucket::kRestartOverhead, h};
  if (h->stopping_from && t >= *h->stopping_from) return {Bucket::kRestartOverhead, h};
  if (h->lost_from && t >= *h->lost_from) return {Bucket::kPreemptionLost, h};
  const bool sampled = last_sample != nullptr && last_sample->time >= h->start;
  if (sampled && last_sample->utilization < idle_below) return {Bucket::kAllocatedIdle, h};
  return {Bucket::kUsed, h};
}

// A healthy GPU's time at `t` that no hold has.
Verdict unheld(const GpuFacts& f, Time t) {
  if (covering(f.drained, t)) return {Bucket::kDrained};
  if (const Span* r = covering(f.reserved, t)) return {Bucket::kReservedIdle, nullptr, r};
  return {Bucket::kUnallocated};
}

core::Status bad(const std::string& why) { return core::invalid_argument("accrual", why); }

}  // namespace

std::string_view to_string(Bucket bucket) {
  switch (bucket) {
    case Bucket::kUsed:
      return "used";
    case Bucket::kAllocatedIdle:
      return "allocated_idle";
    case Bucket::kReservedIdle:
      return "reserved_idle";
    case Bucket::kPreemptionLost:
      return "preemption_lost";
    case Bucket::kRestartOverhead:
      return "restart_overhead";
    case Bucket::kUnhealthy:
      return "unhealthy";
    case Bucket::kDrained:
      return "drained";
    case Bucket::kUnallocated:
      return "unallocated";
  }
  return "unknown";
}

core::Result<std::vector<Entry>> accrue(const AccrualInput& input, const core::PriceBook& prices,
                                        const AccrualConfig& config, Time start) {
  const std::int64_t period_ms = core::to_ms(config.period);
  if (period_ms <= 0 || core::to_ms(start) % period_ms != 0) {
    return bad(fmt::format("period start {} ms is not a multiple of the period ({} ms)",
                           core::to_ms(start), period_ms));
  }
  const Time end = start + config.period;

  std::map<GpuId, GpuFacts> facts;
  for (const Gpu& g : input.gpus) {
    if (!facts.try_emplace(id_of(g)).second) {
      return bad(fmt::format("GPU {}/{} is listed twice", g.node.value, g.index));
    }
  }
  const auto facts_of = [&](const auto& x) -> GpuFacts* {
    const auto it = facts.find(id_of(x));
    return it == facts.end() ? nullptr : &it->second;
  };
  for (const Hold& h : input.holds) {
    GpuFacts* f = facts_of(h);
    if (f == nullptr) {
      return bad(fmt::format("job {} holds GPU {}/{}, which the input does not list", h.job.value,
                             h.node.value, h.index));
    }
    if (h.share_milli < 0 || h.share_milli > 999) {
      return bad(
          fmt::format("job {}'s share of GPU {}/{} must be 1 to 999 thousandths (0: the "
                      "whole GPU), got {}",
                      h.job.value, h.node.value, h.index, h.share_milli));
    }
    // An empty hold (started and stopped in one instant) held nothing.
    const Time until = h.end.value_or(end);
    if (until > h.start && h.start < end && until > start) f->holds.push_back(&h);
  }
  const auto add_spans = [&](const std::vector<Span>& spans, auto member) {
    for (const Span& s : spans) {
      GpuFacts* f = facts_of(s);
      if (f != nullptr && s.start < end && s.end > start) (f->*member).push_back(&s);
    }
  };
  add_spans(input.unhealthy, &GpuFacts::unhealthy);
  add_spans(input.drained, &GpuFacts::drained);
  add_spans(input.reserved, &GpuFacts::reserved);
  for (const Sample& s : input.samples) {
    GpuFacts* f = facts_of(s);
    if (f != nullptr && s.time < end) f->samples.push_back(&s);
  }

  std::vector<Entry> out;
  for (const Gpu& gpu : input.gpus) {
    GpuFacts& f = facts.at(id_of(gpu));
    // A total order (shares of equal spans tie on time): the split's remainders go the
    // same way whatever order the input lists the holds in.
    std::sort(f.holds.begin(), f.holds.end(), [&](const Hold* a, const Hold* b) {
      return std::tuple(a->start, a->end.value_or(end), a->job, a->attempt) <
             std::tuple(b->start, b->end.value_or(end), b->job, b->attempt);
    });
    std::stable_sort(f.samples.begin(), f.samples.end(),
                     [](const Sample* a, const Sample* b) { return a->time < b->time; });
    // Breakpoints: where any fact about the GPU or its price changes.
    const Time from = std::clamp(gpu.since, start, end);
    std::vector<Time> points = {from, end};
    const auto point = [&](Time t) {
      if (t > from && t < end) points.push_back(t);
    };
    for (const Hold* h : f.holds) {
      if (h->start < gpu.since) {
        return bad(fmt::format("job {} holds GPU {}/{} before the GPU joined", h->job.value,
                               gpu.node.value, gpu.index));
      }
      point(h->start);
      point(h->end.value_or(end));
      point(h->start + h->overhead);
      if (h->stopping_from) point(*h->stopping_from);
      if (h->lost_from) point(*h->lost_from);
    }
    CORRAL_ASSIGN_OR_RETURN(const std::vector<Time> cuts,
                            price_cuts(prices, gpu.type, config.region, from, end));
    for (const Time t : cuts) point(t);
    for (const auto* spans : {&f.unhealthy, &f.drained, &f.reserved}) {
      for (const Span* s : *spans) {
        point(s->start);
        point(s->end);
      }
    }
    for (const Sample* s : f.samples) point(s->time);
    std::sort(points.begin(), points.end());
    points.erase(std::unique(points.begin(), points.end()), points.end());

    std::map<std::tuple<Bucket, std::int64_t, std::string>, Tally> tally;
    std::size_t next_sample = 0;
    const Sample* last_sample = nullptr;
    for (std::size_t p = 0; p + 1 < points.size(); ++p) {
      const Time t = points[p];
      while (next_sample < f.samples.size() && f.samples[next_sample]->time <= t) {
        last_sample = f.samples[next_sample++];
      }
      // The stretch of one price this piece lies in starts at the last cut at or before t.
      const auto cut = std::upper_bound(cuts.begin(), cuts.end(), t);
      const Time price_from = cut == cuts.begin() ? from : *std::prev(cut);
      const auto add = [&](const Verdict& v, std::int64_t ms) {
        if (ms == 0) return;
        const core::TenantId tenant =
            v.hold ? v.hold->tenant : (v.reservation ? v.reservation->tenant : core::TenantId());
        Tally& entry = tally[{v.bucket, v.hold ? v.hold->job.value : 0, tenant.value}];
        entry.tenant = tenant;
        entry.preemptible = v.hold != nullptr && v.hold->preemptible;
        entry.ms += ms;
        entry.ms_at_price[price_from] += ms;
      };
      const std::int64_t ms = core::to_ms(points[p + 1] - t);
      std::vector<const Hold*> holding;
      std::int64_t shared = 0;
      for (const Hold* h : f.holds) {
        if (!covers(*h, t, end)) continue;
        if ((h->share_milli == 0 && !holding.empty()) ||
            (!holding.empty() && holding.front()->share_milli == 0)) {
          return bad(fmt::format("GPU {}/{} is held by jobs {} and {} at once", gpu.node.value,
                                 gpu.index, holding.front()->job.value, h->job.value));
        }
        holding.push_back(h);
        shared += h->share_milli;
      }
      if (shared > 1000) {
        return bad(fmt::format("GPU {}/{}: the shares holding it add up to {}/1000", gpu.node.value,
                               gpu.index, shared));
      }
      if (covering(f.unhealthy, t)) {
        add({Bucket::kUnhealthy}, ms);
      } else if (holding.empty()) {
        add(unheld(f, t), ms);
      } else if (shared == 0) {
        add(held(holding.front(), t, config.idle_below, last_sample), ms);
      } else {
        std::vector<std::int64_t> milli;
        for (const Hold* h : holding) milli.push_back(h->share_milli);
        milli.push_back(1000 - shared);  // the part no share holds
        const std::vector<std::int64_t> parts = apportion(ms, milli);
        for (std::size_t i = 0; i < holding.size(); ++i) {
          add(held(holding[i], t, config.idle_below, last_sample), parts[i]);
        }
        add(unheld(f, t), parts.back());
      }
    }
    for (const auto& [k, t] : tally) {
      const auto& [bucket, job, tenant_name] = k;
      core::MicroDollars amount = 0;
      for (const auto& [at, ms] : t.ms_at_price) {
        CORRAL_ASSIGN_OR_RETURN(const core::MicroDollars part,
                                prices.cost(gpu.type, config.region, t.preemptible, ms, at));
        amount += part;
      }
      out.push_back({.key = fmt::format("{}/{}/{}/{}/{}/{}", gpu.node.value, gpu.index,
                                        core::to_ms(start), to_string(bucket), job, tenant_name),
                     .node = gpu.node,
                     .index = gpu.index,
                     .type = gpu.type,
                     .bucket = bucket,
                     .tenant = t.tenant,
                     .job = core::JobId(job),
                     .start = start,
                     .end = end,
                     .gpu_ms = t.ms,
                     .amount = amount});
    }
  }
  std::sort(out.begin(), out.end(), [](const Entry& a, const Entry& b) {
    return std::tie(a.node, a.index, a.bucket, a.job, a.tenant) <
           std::tie(b.node, b.index, b.bucket, b.job, b.tenant);
  });
  return out;
}

}  // namespace corral::ledger
