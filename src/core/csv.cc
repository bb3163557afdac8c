#include "core/csv.h"

namespace corral::core {

void append_csv_row(std::string& out, const std::vector<std::string>& cells) {
  for (std::size_t c = 0; c < cells.size(); ++c) {
    const std::string& v = cells[c];
    if (v.find_first_of(",\"\r\n") == std::string::npos) {
      out += v;
    } else {
      out += '"';
      for (const char ch : v) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
      out += '"';
    }
    out += c + 1 < cells.size() ? "," : "\r\n";
  }
}

}  // namespace corral::core
