// Files that are either whole or absent: write a temp file, fsync, rename, fsync the
// directory. The agent's run records, the supervisors' exit files and the trainer's
// checkpoints all rely on it: a crash leaves the old file or the new one, never half.
//
// Thread safety: functions of the file system; concurrent writers of one path race
// only on which whole file wins.
#pragma once

#include <optional>
#include <string>

#include "core/status.h"

namespace corral::agent {

core::Status write_file_atomic(const std::string& path, const std::string& content);

// The whole file, or nullopt when it cannot be read (missing included).
std::optional<std::string> read_file(const std::string& path);

// mkdir -p.
core::Status make_dirs(const std::string& path);

}  // namespace corral::agent
