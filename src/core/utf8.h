// Where a document stops being UTF-8, told the way an API error names a field. JSON is
// UTF-8 by definition (RFC 8259 section 8.1), so a body with other bytes is refused
// before parsing; these say which field held them, so the refusal is one a client can act
// on (`name: must be valid UTF-8, got byte 0xff at line 1, column 11`).
//
// Used by the job spec parser and by corrald's body readers. No function throws.
// Thread safety: free functions without shared state; safe to call concurrently.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"

namespace corral::core {

// The offset of the first byte of `text` that does not begin a well-formed UTF-8
// sequence (overlongs, surrogates and values past U+10FFFF included); nullopt when all
// of `text` is UTF-8. O(n).
std::optional<std::size_t> invalid_utf8_offset(std::string_view text);

// The path of the JSON field in which byte `offset` of `text` lies, as field errors
// write it ("resources.gpuTypes[0]"); "" when it lies outside every field or `text` is
// not JSON up to there. A byte inside a key names the mapping that holds the key. O(offset).
std::string json_path_at(std::string_view text, std::size_t offset);

// OK when `text` is UTF-8; else InvalidArgument naming the field (json_path_at) and the
// byte and its position: "must be valid UTF-8, got byte 0xff at line 1, column 11".
Status check_json_utf8(std::string_view text);

// True when `text` holds a C0 control character or DEL: free text a caller sends (a
// reason, a path, a URL, a GPU uuid) is refused with them, as they would break a line of
// a log.
bool has_control_chars(std::string_view text);

}  // namespace corral::core
