#include "testing/agent_process.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <sys/wait.h>

namespace corral::testing {

std::string trainer_path() { return CORRAL_TRAINER_PATH; }

AgentProcess::AgentProcess(std::string node, std::filesystem::path state_dir)
    : node_(std::move(node)), state_dir_(std::move(state_dir)) {}

AgentProcess::~AgentProcess() { crash_node(); }

core::Status AgentProcess::start(const std::string& server, const std::filesystem::path& join_token,
                                 const std::string& preset, const std::string& labels,
                                 std::vector<std::string> extra_args) {
  std::filesystem::create_directories(state_dir_);
  std::vector<std::string> args{CORRAL_AGENT_PATH,
                                "--server",
                                "http://" + server,
                                "--join-token-file",
                                join_token.string(),
                                "--node",
                                node_,
                                "--state-dir",
                                state_dir_.string(),
                                "--heartbeat-ms",
                                "200"};
  if (!preset.empty()) args.insert(args.end(), {"--simulate", preset});
  if (!labels.empty()) args.insert(args.end(), {"--labels", labels});
  for (auto& a : extra_args) args.push_back(std::move(a));
  const std::string log = (state_dir_ / "agent.log").string();
  const std::string path = std::filesystem::path(CORRAL_TRAINER_PATH).parent_path().string() + ":" +
                           (std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin");
  pid_ = fork();
  if (pid_ < 0) return core::internal_error("fork failed");
  if (pid_ == 0) {
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    setenv("PATH", path.c_str(), 1);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  return core::Status();
}

void AgentProcess::kill9() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

void AgentProcess::stop() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

namespace {

// (supervisor pid, worker pid) of every run record under STATE_DIR: each cluster's
// run/ (STATE_DIR/clusters/ID/run) and the layout from before clusters (STATE_DIR/run).
std::vector<std::pair<pid_t, pid_t>> run_records(const std::filesystem::path& state_dir) {
  std::vector<std::filesystem::path> run_dirs = {state_dir / "run"};
  std::error_code ec;
  for (const auto& c : std::filesystem::directory_iterator(state_dir / "clusters", ec)) {
    run_dirs.push_back(c.path() / "run");
  }
  std::vector<std::pair<pid_t, pid_t>> out;
  for (const auto& dir : run_dirs) {
    for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
      if (e.path().extension() != ".pid") continue;
      std::ifstream in(e.path());
      std::stringstream text;
      text << in.rdbuf();
      const auto j = nlohmann::json::parse(text.str(), nullptr, false);
      if (!j.is_object()) continue;
      out.emplace_back(j.value("supervisorPid", 0), j.value("workerPid", 0));
    }
  }
  return out;
}

}  // namespace

void AgentProcess::crash_node() {
  kill9();
  for (const auto& [supervisor, worker] : run_records(state_dir_)) {
    if (supervisor > 0) ::kill(supervisor, SIGKILL);
    if (worker > 0) ::kill(-worker, SIGKILL);  // the worker's whole process group
  }
}

void AgentProcess::inject_faults(const std::string& json) const {
  const auto tmp = state_dir_ / "faults.json.tmp";
  {
    std::ofstream out(tmp);
    out << json;
  }
  std::filesystem::rename(tmp, state_dir_ / "faults.json");
}

std::vector<int> processes_of_job(std::int64_t job, const std::string& checkpoint_dir) {
  std::vector<int> out;
  const std::string wanted[] = {"CORRAL_JOB_ID=" + std::to_string(job),
                                "CORRAL_CHECKPOINT_DIR=" + checkpoint_dir};
  DIR* d = opendir("/proc");
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    const int pid = std::atoi(e->d_name);
    if (pid <= 0) continue;
    std::ifstream in("/proc/" + std::string(e->d_name) + "/environ");
    std::stringstream text;
    text << in.rdbuf();
    // A zombie has an empty environ, so a match is a live process.
    const std::string env = std::string(1, '\0') + text.str();
    if (std::all_of(std::begin(wanted), std::end(wanted), [&](const std::string& entry) {
          return env.find(std::string(1, '\0') + entry + std::string(1, '\0')) != std::string::npos;
        })) {
      out.push_back(pid);
    }
  }
  closedir(d);
  return out;
}

std::vector<pid_t> AgentProcess::live_worker_groups() const {
  std::vector<pid_t> out;
  for (const auto& [supervisor, worker] : run_records(state_dir_)) {
    if (worker > 0 && ::kill(-worker, 0) == 0) out.push_back(worker);
  }
  return out;
}

}  // namespace corral::testing
