// Quantities as a person reads them in a table cell: any JSON scalar, money, memory in
// GiB, power in W or kW, temperatures and percentages. Times are in time_text.h.
//
// Thread safety: safe for concurrent use (pure functions).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace corral::cli {

// obj[key], or null when obj is no object or has no such key (a const json's operator[]
// must not be asked for a missing key; an older corrald may not send every field).
const nlohmann::json& field(const nlohmann::json& obj, const char* key);
// A JSON scalar as text: a string as it is, "" for null, numbers and the rest as JSON.
std::string text(const nlohmann::json& value);
// Micro-units of a currency as its usual two decimals, rounded half up: 12345678 ->
// "12.35".
std::string money_text(std::int64_t micros);
// Mebibytes as GiB with one decimal: 62669 -> "61.2 GiB"; whole GiB without: "80 GiB".
std::string gib_text(std::int64_t mib);
// Watts: "690 W" below a kilowatt, "5.5 kW" from there.
std::string power_text(double watts);
// "71°C", "95%".
std::string celsius_text(std::int64_t c);
std::string percent_text(double p);

}  // namespace corral::cli
