// A request body that must be one JSON object, parsed one way for every surface (the
// user API, the agent protocol): bytes that are not UTF-8 and numbers no double holds
// are refused naming the field that holds them, where nlohmann would only say "invalid".
//
// Thread safety: a free function, safe to call concurrently.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "core/result.h"

namespace corral::core {

// The object `text` holds; InvalidArgument otherwise, naming the field when one is to
// blame (not UTF-8, a number past a double) and "" when the whole body is.
Result<nlohmann::json> parse_json_object(std::string_view text);

// How a value a caller sent reads in a "got ..." clause: as written (ill-formed UTF-8
// as U+FFFD), at most 60 bytes and "...".
std::string json_excerpt(const nlohmann::json& v);

// The integer `v` holds when it is one in [lo, hi]; InvalidArgument naming `field`
// otherwise ("must be an integer, got 1.5", "must be between 1 and 8, got 0"). A float,
// a string, or an integer past int64 (nlohmann holds it unsigned) is refused. The one
// integer reader of the request bodies of both surfaces.
Result<std::int64_t> integer_in(const nlohmann::json& v, std::string_view field, std::int64_t lo,
                                std::int64_t hi);

// The names errors give to the fields of a body: `key` under `path` ("spec.resources";
// `key` alone at the top) and item `index` of the array at `path` ("workers[3]").
std::string child_path(const std::string& path, std::string_view key);
std::string element_path(const std::string& path, std::size_t index);

// Ok when every key of object `obj` is among `keys`; else InvalidArgument "unknown field"
// naming the first other one under `path`. The one rule for unknown keys of a body.
Status only_fields(const nlohmann::json& obj, const std::string& path,
                   std::initializer_list<std::string_view> keys);

}  // namespace corral::core
