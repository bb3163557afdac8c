#include "agent/cluster_scope.h"

#include <algorithm>
#include <filesystem>

#include "agent/atomic_file.h"

namespace corral::agent {

bool valid_cluster_id(const std::string& id) {
  if (id.empty() || id.size() > 64) return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-';
  });
}

std::string cluster_dir(const std::string& state_dir, const std::string& cluster_id) {
  return state_dir + "/clusters/" + cluster_id;
}

std::optional<std::string> read_joined_cluster(const std::string& state_dir) {
  const auto text = read_file(state_dir + "/cluster-id");
  if (!text) return std::nullopt;
  std::string id = *text;
  while (!id.empty() && (id.back() == '\n' || id.back() == ' ')) id.pop_back();
  if (!valid_cluster_id(id)) return std::nullopt;
  return id;
}

core::Status write_joined_cluster(const std::string& state_dir, const std::string& cluster_id) {
  CORRAL_RETURN_IF_ERROR(make_dirs(state_dir));
  return write_file_atomic(state_dir + "/cluster-id", cluster_id + "\n");
}

std::vector<std::string> other_clusters_dirs(const std::string& state_dir,
                                             const std::string& cluster_id) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  std::error_code ec;
  if (fs::is_directory(state_dir + "/run", ec)) out.push_back(state_dir);
  for (const auto& entry : fs::directory_iterator(state_dir + "/clusters", ec)) {
    const std::string id = entry.path().filename().string();
    if (id == cluster_id || !fs::is_directory(entry.path() / "run", ec)) continue;
    out.push_back(entry.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool sweep(Launcher& launcher) {
  bool left = false;
  for (const LaunchRecord& record : launcher.recorded()) {
    if (launcher.observe(record).state == core::WorkerStatus::State::kExited) {
      launcher.forget(record.key);
      continue;
    }
    left = true;
    // Idempotent; FailedPrecondition while its supervisor is still starting: next pass.
    (void)launcher.stop(record.key, 0);
  }
  if (left) return false;
  std::error_code ec;
  std::filesystem::remove(launcher.run_dir(), ec);  // only when empty: a record may be new
  return true;
}

}  // namespace corral::agent
