// Point-in-time lookups (registry::point_in_time, docs/features.md): 10,000 entities with 20
// values each, looked up 10,000 rows at a time, as one lookup request of the API does.
// Drift statistics (registry::drift_stats, docs/drift.md): 100 features of 100,000 reference
// and 100,000 current rows, as samples and as 100-bin histograms.
#include <random>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "registry/drift_stats.h"
#include "registry/feature_lookup.h"

namespace {

void BM_PointInTime(benchmark::State& state) {
  const int entities = static_cast<int>(state.range(0));
  std::mt19937_64 rng(1);
  std::vector<corral::core::FeatureValue> values;
  for (int e = 0; e < entities; ++e) {
    for (int i = 0; i < 20; ++i) {
      values.push_back({.entity = "user-" + std::to_string(e),
                        .event_ms = static_cast<std::int64_t>(rng() % 1'000'000),
                        .seq = static_cast<std::int64_t>(values.size()),
                        .values = R"({"clicks": 3})"});
    }
  }
  std::vector<corral::registry::LookupRow> rows;
  for (int i = 0; i < 10'000; ++i) {
    rows.push_back({.entity = "user-" + std::to_string(rng() % entities),
                    .at_ms = static_cast<std::int64_t>(rng() % 1'000'000)});
  }
  for (auto _ : state) {
    benchmark::DoNotOptimize(corral::registry::point_in_time(values, rows, 100'000));
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(rows.size()));
}
BENCHMARK(BM_PointInTime)->Arg(10'000)->Unit(benchmark::kMillisecond);

void BM_Drift(benchmark::State& state) {
  const int features = 100, rows = static_cast<int>(state.range(0));
  std::mt19937_64 rng(2);
  std::normal_distribution<double> ref_dist(0, 1), cur_dist(0.3, 1.2);
  std::vector<std::vector<double>> reference(features), current(features);
  for (int f = 0; f < features; ++f) {
    for (int i = 0; i < rows; ++i) {
      reference[static_cast<std::size_t>(f)].push_back(ref_dist(rng));
      current[static_cast<std::size_t>(f)].push_back(cur_dist(rng));
    }
  }
  for (auto _ : state) {
    for (int f = 0; f < features; ++f) {
      benchmark::DoNotOptimize(corral::registry::drift_stats(reference[static_cast<std::size_t>(f)],
                                                             current[static_cast<std::size_t>(f)]));
    }
  }
  state.SetItemsProcessed(state.iterations() * features);
}
BENCHMARK(BM_Drift)->Arg(100'000)->Unit(benchmark::kMillisecond);

// The same rows sent as histograms (docs/drift.md#histograms): what the serving side does
// once (count 100,000 rows into 100 bins per feature), then what corrald does per report.
void BM_DriftHistograms(benchmark::State& state) {
  const int features = 100, rows = static_cast<int>(state.range(0));
  std::mt19937_64 rng(2);
  std::normal_distribution<double> ref_dist(0, 1), cur_dist(0.3, 1.2);
  std::vector<double> edges;
  for (int e = 0; e <= 100; ++e) edges.push_back(-5.0 + 0.1 * e);
  std::vector<std::vector<double>> reference(features), current(features);
  for (int f = 0; f < features; ++f) {
    for (int i = 0; i < rows; ++i) {
      reference[static_cast<std::size_t>(f)].push_back(ref_dist(rng));
      current[static_cast<std::size_t>(f)].push_back(cur_dist(rng));
    }
  }
  std::vector<corral::registry::Histogram> ref_h, cur_h;
  for (int f = 0; f < features; ++f) {
    ref_h.push_back(corral::registry::histogram_of(reference[static_cast<std::size_t>(f)], edges));
    cur_h.push_back(corral::registry::histogram_of(current[static_cast<std::size_t>(f)], edges));
  }
  const bool count = state.range(1) == 1;
  for (auto _ : state) {
    for (int f = 0; f < features; ++f) {
      const auto i = static_cast<std::size_t>(f);
      if (count) {
        benchmark::DoNotOptimize(corral::registry::histogram_of(current[i], edges));
      } else {
        benchmark::DoNotOptimize(corral::registry::drift_stats(ref_h[i], cur_h[i]));
      }
    }
  }
  state.SetLabel(count ? "counting the rows into bins" : "statistics of the histograms");
  state.SetItemsProcessed(state.iterations() * features);
}
BENCHMARK(BM_DriftHistograms)
    ->Args({100'000, 1})
    ->Args({100'000, 0})
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
