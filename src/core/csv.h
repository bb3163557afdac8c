// CSV rows as RFC 4180 writes them: a cell with a comma, quote or line break is quoted
// (quotes doubled), each row ends in CRLF. The CLI's `-o csv` and corrald's bill
// statement write their rows with it, so both quote alike.
//
// Thread safety: a pure function.
#pragma once

#include <string>
#include <vector>

namespace corral::core {

// Appends `cells` to `out` as one CSV row.
void append_csv_row(std::string& out, const std::vector<std::string>& cells);

}  // namespace corral::core
