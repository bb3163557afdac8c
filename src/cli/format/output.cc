#include "cli/format/output.h"

#include <nlohmann/json.hpp>

#include "cli/format/yaml_text.h"

namespace corral::cli {

std::optional<Format> format_from_string(std::string_view name) {
  if (name == "table") return Format::kTable;
  if (name == "wide") return Format::kWide;
  if (name == "json") return Format::kJson;
  if (name == "yaml") return Format::kYaml;
  if (name == "csv") return Format::kCsv;
  return std::nullopt;
}

std::string output_text(Format format, const nlohmann::json& doc,
                        const std::function<std::string(bool wide)>& human) {
  switch (format) {
    case Format::kJson:
      return doc.dump(2) + "\n";
    case Format::kYaml:
      return yaml_text(doc);
    case Format::kWide:
      return human(true);
    case Format::kTable:
    case Format::kCsv:
      break;
  }
  return human(false);
}

}  // namespace corral::cli
