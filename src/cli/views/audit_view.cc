#include "cli/views/audit_view.h"

#include "cli/format/units_text.h"

namespace corral::cli {
namespace {

using nlohmann::json;

// At most `n` code points, "..." marking a cut; whole when `whole`.
std::string cut(const std::string& s, std::size_t n, bool whole) {
  if (whole) return s;
  std::size_t points = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) continue;
    if (points++ == n) return s.substr(0, i) + "...";
  }
  return s;
}

}  // namespace

Table audit_table(const json& entries, const TimeStyle& style, bool wide) {
  Table t{.headers = {"SEQ", "TIME", "ACTOR", "ACTION", "TARGET"}};
  if (wide) t.headers.insert(t.headers.end(), {"REQUEST", "BEFORE"});
  t.headers.push_back("AFTER");
  for (const auto& e : entries) {
    std::vector<std::string> row = {
        text(field(e, "seq")), date_text(field(e, "timeMs"), style.zone), text(field(e, "actor")),
        text(field(e, "action")), text(field(e, "target"))};
    if (wide) {
      row.push_back(text(field(e, "requestId")));
      row.push_back(reason_text(text(field(e, "before")), style));
    }
    row.push_back(cut(reason_text(text(field(e, "after")), style), 60, wide));
    t.rows.push_back(std::move(row));
  }
  return t;
}

}  // namespace corral::cli
