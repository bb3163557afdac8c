#include "cli/format/table.h"

#include <algorithm>

#include "core/csv.h"

namespace corral::cli {
namespace {

// Code points, not bytes: "°C" and names in other scripts stay aligned.
std::size_t width_of(const std::string& s) {
  std::size_t n = 0;
  for (const char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80 ? 1 : 0;
  return n;
}

}  // namespace

std::string table_text(const Table& table) {
  const auto cell = [](const std::vector<std::string>& row, std::size_t c) -> std::string {
    return c < row.size() && !row[c].empty() ? row[c] : "-";
  };
  std::vector<std::size_t> width(table.headers.size());
  for (std::size_t c = 0; c < width.size(); ++c) width[c] = width_of(table.headers[c]);
  for (const auto& row : table.rows) {
    for (std::size_t c = 0; c < width.size(); ++c) {
      width[c] = std::max(width[c], width_of(cell(row, c)));
    }
  }
  std::string out;
  const auto line = [&](const std::vector<std::string>& cells) {
    for (std::size_t c = 0; c < width.size(); ++c) {
      const std::string v = cell(cells, c);
      out += v;
      if (c + 1 < width.size()) out += std::string(width[c] - width_of(v) + 2, ' ');
    }
    out += "\n";
  };
  line(table.headers);
  for (const auto& row : table.rows) line(row);
  return out;
}

std::string csv_text(const Table& table) {
  std::string out;
  core::append_csv_row(out, table.headers);
  for (const auto& row : table.rows) core::append_csv_row(out, row);
  return out;
}

}  // namespace corral::cli
