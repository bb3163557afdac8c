#include "cli/format/units_text.h"

#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace corral::cli {

const nlohmann::json& field(const nlohmann::json& obj, const char* key) {
  static const nlohmann::json kNull;
  if (!obj.is_object()) return kNull;
  const auto it = obj.find(key);
  return it == obj.end() ? kNull : *it;
}

std::string text(const nlohmann::json& value) {
  if (value.is_null()) return "";
  if (value.is_string()) return value.get<std::string>();
  return value.dump();
}

std::string money_text(std::int64_t micros) {
  const bool negative = micros < 0;
  const std::int64_t cents = ((negative ? -micros : micros) + 5'000) / 10'000;
  return fmt::format("{}{}.{:02}", negative ? "-" : "", cents / 100, cents % 100);
}

std::string gib_text(std::int64_t mib) {
  if (mib % 1024 == 0) return fmt::format("{} GiB", mib / 1024);
  return fmt::format("{:.1f} GiB", static_cast<double>(mib) / 1024.0);
}

std::string power_text(double watts) {
  if (watts < 999.5) return fmt::format("{:.0f} W", watts);
  return fmt::format("{:.1f} kW", watts / 1000.0);
}

std::string celsius_text(std::int64_t c) { return fmt::format("{}°C", c); }

std::string percent_text(double p) { return fmt::format("{:.0f}%", p); }

}  // namespace corral::cli
