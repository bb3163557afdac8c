// The documents commands read with -f FILE (tenant set, reservation create): YAML or
// JSON (YAML reads both), "-" for standard input, as the JSON the API takes. Quoted
// YAML scalars stay strings; plain ones become numbers, booleans or null when they
// read as one.
//
// Thread safety: not for concurrent use (may read standard input).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/result.h"

namespace corral::cli {

// The file's document, which must be a mapping; InvalidArgument naming the file and
// the line of a YAML error, or that it cannot be read.
core::Result<nlohmann::json> read_document(const std::string& path);

// The same for text already read (tests, and read_document).
core::Result<nlohmann::json> parse_document(const std::string& text, const std::string& name);

}  // namespace corral::cli
