// Tables as every list command prints them: aligned columns under upper-case headers
// (kubectl's and squeue's shape), or CSV for a spreadsheet (corral cost -o csv).
//
// Thread safety: safe for concurrent use (pure functions).
#pragma once

#include <string>
#include <vector>

namespace corral::cli {

struct Table {
  std::vector<std::string> headers;
  std::vector<std::vector<std::string>> rows;  // each as long as headers
};

// Columns two spaces apart, each as wide as its widest cell (counted in UTF-8 code
// points); no trailing spaces. An empty cell shows as "-" so columns stay countable for
// awk and cut.
std::string table_text(const Table& table);
// RFC 4180: a cell with a comma, quote or line break is quoted; lines end in CRLF.
std::string csv_text(const Table& table);

}  // namespace corral::cli
