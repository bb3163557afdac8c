#include "cli/views/reservations_view.h"

#include <sstream>

#include <fmt/format.h>

#include "cli/format/node_list.h"
#include "cli/format/units_text.h"

namespace corral::cli {
namespace {

using nlohmann::json;

std::vector<std::string> names(const json& list) {
  std::vector<std::string> out;
  for (const auto& n : list) out.push_back(text(n));
  return out;
}

// "16 H100", or "every GPU" of a node set.
std::string gpus_text(const json& r) {
  if (field(r, "gpuType").is_string()) {
    return text(field(r, "count")) + " " + text(field(r, "gpuType"));
  }
  return "every GPU";
}

std::string length_text(const json& r) {
  const auto start = ms_time(field(r, "startMs"));
  const auto end = ms_time(field(r, "endMs"));
  return start && end ? duration_text(*end - *start) : "";
}

}  // namespace

std::string reservation_state(const json& r, core::Time now) {
  if (field(r, "state").is_string()) return field(r, "state").get<std::string>();
  const auto start = ms_time(field(r, "startMs"));
  const auto end = ms_time(field(r, "endMs"));
  if (end && *end <= now) return "ended";
  if (start && *start > now) return "upcoming";
  return "active";
}

Table reservations_table(const json& reservations, const TimeStyle& style, bool wide) {
  Table t{.headers = {"ID", "TENANT", "STATE", "GPUS", "NODES", "START", "END"}};
  if (wide) t.headers.insert(t.headers.end(), {"LENGTH", "HELD BY"});
  for (const auto& r : reservations) {
    std::vector<std::string> row = {text(field(r, "id")),
                                    text(field(r, "tenant")),
                                    reservation_state(r, style.now),
                                    gpus_text(r),
                                    node_list_text(names(field(r, "nodes"))),
                                    when_text(field(r, "startMs"), style),
                                    when_text(field(r, "endMs"), style)};
    if (wide) {
      row.insert(row.end(), {length_text(r), node_list_text(names(field(r, "heldNodes")))});
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

std::string reservation_text(const json& r, const TimeStyle& style) {
  std::ostringstream out;
  const auto line = [&](const char* key, const std::string& value) {
    if (!value.empty()) out << fmt::format("{:<9}{}\n", std::string(key) + ":", value);
  };
  out << "reservation " << text(field(r, "id")) << "\n";
  line("tenant", text(field(r, "tenant")));
  line("state", reservation_state(r, style.now));
  line("gpus", gpus_text(r));
  line("nodes", node_list_text(names(field(r, "nodes"))));
  line("start", when_text(field(r, "startMs"), style));
  line("end", when_text(field(r, "endMs"), style));
  line("length", length_text(r));
  if (field(r, "heldNodes").is_array()) {
    const std::string held = node_list_text(names(field(r, "heldNodes")));
    line("held by", held.empty() ? "no node yet" : held);
  }
  return out.str();
}

}  // namespace corral::cli
