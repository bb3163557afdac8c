#include "cli/format/node_list.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <tuple>

namespace corral::cli {

std::string node_list_text(std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  // (prefix, digit count) -> the numbers after it; names without a number stay whole.
  std::map<std::pair<std::string, std::size_t>, std::vector<std::int64_t>> groups;
  std::vector<std::string> whole;
  for (const auto& n : names) {
    std::size_t cut = n.size();
    while (cut > 0 && n[cut - 1] >= '0' && n[cut - 1] <= '9') --cut;
    const std::size_t digits = n.size() - cut;
    if (digits == 0 || digits > 9) {
      whole.push_back(n);
      continue;
    }
    groups[{n.substr(0, cut), digits}].push_back(std::stoll(n.substr(cut)));
  }
  std::vector<std::string> parts = whole;
  for (auto& [key, numbers] : groups) {
    const auto& [prefix, width] = key;
    std::sort(numbers.begin(), numbers.end());
    const auto pad = [w = width](std::int64_t v) {
      std::string s = std::to_string(v);
      return std::string(w > s.size() ? w - s.size() : 0, '0') + s;
    };
    if (numbers.size() == 1) {
      parts.push_back(prefix + pad(numbers[0]));
      continue;
    }
    std::string ranges;
    for (std::size_t i = 0; i < numbers.size();) {
      std::size_t j = i;
      while (j + 1 < numbers.size() && numbers[j + 1] == numbers[j] + 1) ++j;
      ranges += (ranges.empty() ? "" : ",") + pad(numbers[i]);
      if (j > i) ranges += "-" + pad(numbers[j]);
      i = j + 1;
    }
    parts.push_back(prefix + "[" + ranges + "]");
  }
  std::sort(parts.begin(), parts.end());
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ",") + p;
  return out;
}

}  // namespace corral::cli
