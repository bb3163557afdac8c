#include "cli/views/datasets_view.h"

#include <sstream>

#include <fmt/format.h>

#include "cli/format/units_text.h"

namespace corral::cli {
namespace {

using nlohmann::json;

std::string size_text(const json& bytes) {
  if (!bytes.is_number_integer()) return "-";
  return gib_text(bytes.get<std::int64_t>() / (1024 * 1024));
}

std::string privacy_text(const json& privacy) {
  if (privacy.is_string()) return privacy.get<std::string>();
  std::string out = "shared:";
  for (const json& t : field(privacy, "shared")) out += (out.back() == ':' ? "" : ",") + text(t);
  return out;
}

}  // namespace

Table datasets_table(const json& datasets, const TimeStyle& style) {
  Table t{.headers = {"ID", "TENANT", "VERSIONS", "LATEST"}};
  for (const auto& d : datasets) {
    t.rows.push_back({text(field(d, "id")), text(field(d, "tenant")), text(field(d, "versions")),
                      age_text(field(d, "latestAtMs"), style)});
  }
  return t;
}

Table dataset_versions_table(const json& versions, const TimeStyle& style, bool wide) {
  Table t{.headers = {"VERSION", "STATUS", "SIZE", "PRIVACY", "CREATED"}};
  if (wide) t.headers.insert(t.headers.end(), {"DIGEST", "URI"});
  for (const auto& v : versions) {
    std::vector<std::string> row = {
        text(field(v, "version")), text(field(v, "status")), size_text(field(v, "sizeBytes")),
        privacy_text(field(v, "privacy")), age_text(field(v, "createdAtMs"), style)};
    if (wide) {
      row.push_back(text(field(v, "digest")));
      row.push_back(text(field(v, "uri")));
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

std::string dataset_version_text(const json& v, const TimeStyle& style) {
  std::ostringstream out;
  const auto line = [&](const char* key, const std::string& value) {
    if (!value.empty()) out << fmt::format("{:<12}{}\n", std::string(key) + ":", value);
  };
  out << "dataset " << text(field(v, "ref")) << "\n";
  line("tenant", text(field(v, "tenant")));
  line("status", text(field(v, "status")));
  line("reason", text(field(v, "statusReason")));
  line("moved", text(field(v, "statusBy")) + ", " + when_text(field(v, "statusAtMs"), style));
  line("uri", text(field(v, "uri")));
  line("digest", text(field(v, "digest")));
  line("schema", text(field(v, "schemaHash")));
  line("size", size_text(field(v, "sizeBytes")));
  line("privacy", privacy_text(field(v, "privacy")));
  std::string parents;
  for (const json& p : field(v, "parents")) parents += (parents.empty() ? "" : ", ") + text(p);
  line("parents", parents);
  line("created", text(field(v, "createdBy")) + ", " + when_text(field(v, "createdAtMs"), style));
  return out.str();
}

}  // namespace corral::cli
