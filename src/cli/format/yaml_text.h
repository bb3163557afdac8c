// -o yaml: a JSON answer as block-style YAML, in the API's key order (nlohmann keeps
// keys sorted), lists indented as kubectl writes them. Strings that YAML would read as
// something else (true, 1e3, "", ": ") are double-quoted, as JSON writes them; JSON's
// escapes are YAML's. The reverse (reading YAML files for -f) is yaml-cpp's job.
//
// Thread safety: safe for concurrent use (a pure function).
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

namespace corral::cli {

// `doc` as a YAML document ending in a newline.
std::string yaml_text(const nlohmann::json& doc);

}  // namespace corral::cli
