#include "agent/unreported_checkpoint.h"

#include <array>
#include <filesystem>
#include <optional>
#include <system_error>

namespace corral::agent {
namespace {

namespace fs = std::filesystem;

// The markers a checkpoint directory's writer leaves last (see the header).
constexpr std::array<std::string_view, 2> kCompleteMarkers = {"COMPLETE", ".metadata"};

// When the entry at `path` became a complete checkpoint; nullopt when it is not one.
std::optional<fs::file_time_type> completed_at(const fs::path& path) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);  // follows a "latest" symlink
  if (ec) return std::nullopt;
  if (fs::is_regular_file(st)) {
    const auto t = fs::last_write_time(path, ec);
    return ec ? std::nullopt : std::optional(t);
  }
  if (!fs::is_directory(st)) return std::nullopt;
  for (const std::string_view marker : kCompleteMarkers) {
    const fs::path m = path / marker;
    if (!fs::is_regular_file(m, ec)) continue;
    const auto t = fs::last_write_time(m, ec);
    if (!ec) return t;
  }
  return std::nullopt;
}

}  // namespace

bool is_temporary_name(std::string_view name) {
  if (name.empty() || name.starts_with('.') || name.starts_with("tmp")) return true;
  for (const std::string_view suffix : {".tmp", ".temp", ".part", ".partial", ".incomplete", "~"}) {
    if (name.ends_with(suffix)) return true;
  }
  return false;
}

std::string newest_complete_checkpoint(const std::string& dir) {
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) return "";
  std::optional<fs::file_time_type> best_time;
  std::string best_name;
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) return "";  // the listing broke off: better no restore point than a wrong one
    const std::string name = it->path().filename().string();
    if (is_temporary_name(name)) continue;
    const auto t = completed_at(it->path());
    if (!t) continue;
    if (!best_time || *t > *best_time || (*t == *best_time && name > best_name)) {
      best_time = *t;
      best_name = name;
    }
  }
  return best_time ? (fs::path(dir) / best_name).string() : "";
}

std::string restore_from(const core::WorkerSpec& spec) {
  if (!spec.restore_from.empty()) return spec.restore_from;
  if (spec.key.attempt <= 1 || spec.checkpoint_dir.empty()) return "";
  return newest_complete_checkpoint(spec.checkpoint_dir);
}

}  // namespace corral::agent
