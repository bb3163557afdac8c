// The one place a command's answer becomes text: -o json and -o yaml print the command's
// JSON document (the API's fields, raw milliseconds included); -o table and -o wide print
// its human text, which the command renders from the same document.
//
// Thread safety: safe for concurrent use (pure functions).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace corral::cli {

enum class Format { kTable, kWide, kJson, kYaml, kCsv };

std::optional<Format> format_from_string(std::string_view name);

// The text for `format`: `doc` as JSON (indented 2) or YAML, else `human(wide)`.
// REQUIRES: format is not kCsv (a command that offers CSV renders it itself).
std::string output_text(Format format, const nlohmann::json& doc,
                        const std::function<std::string(bool wide)>& human);

}  // namespace corral::cli
