#include "ledger/apportion.h"

#include <algorithm>
#include <utility>

namespace corral::ledger {

namespace {
__extension__ typedef __int128 Wide;  // NOLINT(modernize-use-using): __extension__ needs it
}  // namespace

std::vector<std::int64_t> apportion(std::int64_t total, const std::vector<std::int64_t>& weights) {
  Wide sum = 0;
  for (const std::int64_t w : weights) sum += w;
  std::vector<std::int64_t> parts(weights.size());
  std::vector<std::pair<Wide, std::size_t>> fractions;
  std::int64_t given = 0;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    const Wide scaled = static_cast<Wide>(total) * weights[i];
    parts[i] = static_cast<std::int64_t>(scaled / sum);
    given += parts[i];
    fractions.push_back({scaled % sum, i});
  }
  std::stable_sort(fractions.begin(), fractions.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (std::size_t k = 0; given < total; ++k, ++given) ++parts[fractions[k].second];
  return parts;
}

}  // namespace corral::ledger
