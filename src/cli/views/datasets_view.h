// What `corral datasets` and `corral dataset ...` print.
//
//   datasets           ID TENANT VERSIONS LATEST
//   dataset versions   VERSION STATUS SIZE PRIVACY CREATED (wide adds DIGEST and URI)
//   dataset get        one version: content, lineage, status and its reason
//
// Sizes in GiB; times relative or as dates (TimeStyle).
//
// Thread safety: safe for concurrent use (pure functions).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "cli/format/table.h"
#include "cli/format/time_text.h"

namespace corral::cli {

Table datasets_table(const nlohmann::json& datasets, const TimeStyle& style);
Table dataset_versions_table(const nlohmann::json& versions, const TimeStyle& style, bool wide);
std::string dataset_version_text(const nlohmann::json& version, const TimeStyle& style);

}  // namespace corral::cli
