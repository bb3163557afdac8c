// The traces' CSV rows: plain comma-separated cells, no quoting (every published trace we
// read is written that way).
#pragma once

#include <string_view>
#include <vector>

namespace corral::sim {

inline std::vector<std::string_view> split_csv_line(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = line.find(',', start);
    if (comma == std::string_view::npos) {
      out.push_back(line.substr(start));
      return out;
    }
    out.push_back(line.substr(start, comma - start));
    start = comma + 1;
  }
}

}  // namespace corral::sim
