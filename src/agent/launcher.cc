#include "agent/launcher.h"

#include <algorithm>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <map>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "agent/atomic_file.h"
#include "agent/unreported_checkpoint.h"
#include "core/worker_env.h"

extern char** environ;

namespace corral::agent {
namespace {

using nlohmann::json;

std::string random_token() {
  unsigned char bytes[24];
  std::size_t got = 0;
  while (got < sizeof(bytes)) {
    const ssize_t n = getrandom(bytes + got, sizeof(bytes) - got, 0);
    if (n > 0) got += static_cast<std::size_t>(n);
  }
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char b : bytes) {
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

std::optional<core::WorkerKey> parse_key(const std::string& stem) {
  core::WorkerKey key;
  long long job = 0;
  int attempt = 0, rank = 0, used = 0;
  if (std::sscanf(stem.c_str(), "%lld-%d-%d%n", &job, &attempt, &rank, &used) != 3 ||
      static_cast<std::size_t>(used) != stem.size()) {
    return std::nullopt;
  }
  key.job = job;
  key.attempt = attempt;
  key.rank = rank;
  return key;
}

std::optional<LaunchRecord> parse_record(const core::WorkerKey& key, const std::string& text) {
  try {
    const json j = json::parse(text);
    return LaunchRecord{.key = key,
                        .token = j.at("token").get<std::string>(),
                        .started_at_ms = j.at("startedAtMs").get<std::int64_t>(),
                        .grace_ms = j.at("graceMs").get<std::int64_t>()};
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

int pidfd_open_compat(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  errno = ENOSYS;
  return -1;
#endif
}

}  // namespace

Launcher::Launcher(Options options) : options_(std::move(options)) {
  run_dir_ = options_.state_dir + "/run";
  (void)make_dirs(run_dir_);
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  watcher_ = std::thread([this] { watcher_loop(); });
}

Launcher::~Launcher() {
  stopping_ = true;
  const std::uint64_t one = 1;
  (void)!write(wake_fd_, &one, sizeof(one));
  watcher_.join();
  close(wake_fd_);
  for (auto& [pid, fd] : pending_watch_) close(fd);
}

std::string Launcher::path(const core::WorkerKey& key, const char* ext) const {
  return run_dir_ + "/" + key.name() + ext;
}

bool Launcher::lock_held(const core::WorkerKey& key) const {
  const int fd = open(path(key, ".lock").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool held = flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  close(fd);  // releases the lock if we took it
  return held;
}

std::optional<std::pair<pid_t, pid_t>> Launcher::read_pids(const core::WorkerKey& key) const {
  const auto text = read_file(path(key, ".pid"));
  if (!text) return std::nullopt;
  try {
    const json j = json::parse(*text);
    return std::make_pair(j.at("supervisorPid").get<pid_t>(), j.at("workerPid").get<pid_t>());
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

core::Result<LaunchRecord> Launcher::start(const core::WorkerSpec& spec) {
  const core::WorkerKey& key = spec.key;
  if (spec.command.empty()) return core::invalid_argument("command", "must not be empty");
  if (std::filesystem::exists(path(key, ".exit"))) {
    return core::Status(core::StatusCode::kAlreadyExists, "worker " + key.name() + " already ran");
  }
  // 1. Take the lock: held means a supervisor for this key lives.
  const int lock_fd = open(path(key, ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock_fd < 0) return core::internal_error("cannot open lock for " + key.name());
  if (flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
    close(lock_fd);
    return core::Status(core::StatusCode::kAlreadyExists, "worker " + key.name() + " is running");
  }
  // 2. Record it before it exists, so a restarted agent finds every worker it started.
  LaunchRecord record{.key = key,
                      .token = random_token(),
                      .started_at_ms = core::to_ms(options_.clock->now()),
                      .grace_ms = spec.grace_ms};
  const std::string rank_dir = "/" + std::to_string(key.job) + "/attempt-" +
                               std::to_string(key.attempt) + "/rank-" + std::to_string(key.rank);
  const std::string work_dir = options_.state_dir + "/work" + rank_dir;
  const std::string log_dir = options_.state_dir + "/logs/" + std::to_string(key.job) +
                              "/attempt-" + std::to_string(key.attempt);
  const std::string log_path = log_dir + "/rank-" + std::to_string(key.rank) + ".log";
  core::Status s = make_dirs(work_dir);
  if (s.ok()) s = make_dirs(log_dir);
  if (s.ok()) {
    s = write_file_atomic(path(key, ".json"), json{{"job", key.job},
                                                   {"attempt", key.attempt},
                                                   {"rank", key.rank},
                                                   {"token", record.token},
                                                   {"startedAtMs", record.started_at_ms},
                                                   {"graceMs", record.grace_ms}}
                                                  .dump());
  }
  if (!s.ok()) {
    close(lock_fd);
    return s;
  }
  const int log_fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (log_fd < 0) {
    close(lock_fd);
    return core::internal_error("cannot open log " + log_path);
  }

  // 3. The worker's environment: the agent's, then the spec's, then Corral's (wins).
  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    const char* eq = std::strchr(*e, '=');
    if (eq) env[std::string(const_cast<const char*>(*e), eq)] = eq + 1;
  }
  for (const auto& [k, v] : spec.env) env[k] = v;
  // CORRAL_RESTORE_FROM: corrald's choice among reported checkpoints, or else what an
  // earlier attempt wrote without reporting (agent/unreported_checkpoint.h), said in the
  // worker's log so that a resume from a file Corral chose is never a surprise.
  core::WorkerSpec effective = spec;
  effective.restore_from = restore_from(spec);
  if (effective.restore_from != spec.restore_from) {
    const std::string line =
        "corral-agent: no checkpoint was reported; CORRAL_RESTORE_FROM=" + effective.restore_from +
        ", the newest complete one in " + spec.checkpoint_dir + "\n";
    if (write(log_fd, line.data(), line.size()) < 0) {
      // The log is for people; the worker starts the same without the line.
    }
  }
  for (auto& [k, v] :
       core::worker_env(effective, options_.agent_url, record.token, options_.mps_pipe_dir)) {
    env[k] = std::move(v);
  }
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (std::string& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);

  std::vector<std::string> args = {options_.supervisor_exe,
                                   "--supervise",
                                   "--run-dir",
                                   run_dir_,
                                   "--key",
                                   key.name(),
                                   "--grace-ms",
                                   std::to_string(spec.grace_ms),
                                   "--cwd",
                                   work_dir,
                                   "--"};
  args.insert(args.end(), spec.command.begin(), spec.command.end());
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  // 4. Spawn the supervisor in its own session, with a clean signal mask (the agent's
  // threads block signals) and the lock handed over as fd 3.
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, log_fd, 1);
  posix_spawn_file_actions_adddup2(&actions, log_fd, 2);
  posix_spawn_file_actions_adddup2(&actions, lock_fd, 3);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGCHLD, SIGQUIT}) sigaddset(&defaults, sig);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0], &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close(log_fd);
  close(lock_fd);  // the supervisor holds the lock through its own descriptor now
  if (rc != 0) {
    std::filesystem::remove(path(key, ".json"));
    return core::internal_error("cannot start supervisor " + options_.supervisor_exe + ": " +
                                std::strerror(rc));
  }
  watch_pid(pid);
  if (options_.on_change) options_.on_change();
  return record;
}

core::Status Launcher::stop(const core::WorkerKey& key, std::int64_t grace_ms) {
  if (!lock_held(key)) return core::ok_status();  // nothing alive to stop
  const auto pids = read_pids(key);
  if (!pids) return core::failed_precondition("worker " + key.name() + " is still starting");
  sigval value{};
  value.sival_int = static_cast<int>(std::clamp<std::int64_t>(grace_ms, 0, 24 * 3600 * 1000));
  if (sigqueue(pids->first, SIGTERM, value) != 0 && errno != ESRCH) {
    return core::internal_error("cannot signal supervisor of " + key.name() + ": " +
                                std::strerror(errno));
  }
  return core::ok_status();
}

core::WorkerStatus Launcher::observe(const LaunchRecord& record) {
  const core::WorkerKey& key = record.key;
  core::WorkerStatus status{.key = key, .started_at_ms = record.started_at_ms};
  const auto pids = read_pids(key);
  if (pids) status.pid = pids->second;
  auto read_exit = [&]() -> bool {
    const auto text = read_file(path(key, ".exit"));
    if (!text) return false;
    try {
      const json j = json::parse(*text);
      status.state = core::WorkerStatus::State::kExited;
      status.exit_code = j.at("exitCode").get<std::int32_t>();
      status.signal = j.at("signal").get<std::int32_t>();
      status.exited_at_ms = j.at("exitedAtMs").get<std::int64_t>();
      return true;
    } catch (const json::exception&) {
      return false;
    }
  };
  if (read_exit()) return status;
  if (lock_held(key)) return status;  // running
  // The lock is free: the supervisor is gone. It may have written the exit file just
  // before dying (between our two reads); otherwise it died abnormally.
  if (read_exit()) return status;
  if (pids) kill(-pids->second, SIGKILL);  // never leave an unsupervised group behind
  status.state = core::WorkerStatus::State::kExited;
  status.exit_code = -1;
  status.exited_at_ms = core::to_ms(options_.clock->now());
  (void)write_file_atomic(
      path(key, ".exit"),
      json{{"exitCode", -1}, {"signal", 0}, {"exitedAtMs", status.exited_at_ms}, {"lost", true}}
          .dump());
  return status;
}

std::vector<LaunchRecord> Launcher::recorded() const {
  std::vector<LaunchRecord> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(run_dir_, ec)) {
    const std::filesystem::path p = entry.path();
    if (p.extension() != ".json") continue;
    const auto key = parse_key(p.stem().string());
    if (!key) continue;
    const auto text = read_file(p.string());
    if (!text) continue;
    if (auto record = parse_record(*key, *text)) out.push_back(*record);
  }
  std::sort(out.begin(), out.end(),
            [](const LaunchRecord& a, const LaunchRecord& b) { return a.key < b.key; });
  return out;
}

void Launcher::watch(const core::WorkerKey& key) {
  if (const auto pids = read_pids(key)) watch_pid(pids->first);
}

void Launcher::forget(const core::WorkerKey& key) {
  for (const char* ext : {".json", ".pid", ".exit", ".lock"}) {
    std::filesystem::remove(path(key, ext));
  }
}

void Launcher::watch_pid(pid_t pid) {
  const int fd = pidfd_open_compat(pid);
  if (fd < 0) return;  // already gone, or no pidfd: the heartbeat still notices
  std::lock_guard lock(watch_mu_);
  pending_watch_.emplace_back(pid, fd);
  const std::uint64_t one = 1;
  (void)!write(wake_fd_, &one, sizeof(one));
}

// Waits on every supervisor's pidfd; a supervisor exits right after recording its
// worker's exit, so readiness means "an exit file is there": tell the agent at once.
void Launcher::watcher_loop() {
  std::vector<std::pair<pid_t, int>> watched;
  while (!stopping_) {
    std::vector<pollfd> fds = {{wake_fd_, POLLIN, 0}};
    for (const auto& [pid, fd] : watched) fds.push_back({fd, POLLIN, 0});
    const int n = poll(fds.data(), fds.size(), 1000);
    if (n <= 0) continue;
    if (fds[0].revents) {
      std::uint64_t value = 0;
      (void)!read(wake_fd_, &value, sizeof(value));
      std::lock_guard lock(watch_mu_);
      watched.insert(watched.end(), pending_watch_.begin(), pending_watch_.end());
      pending_watch_.clear();
    }
    bool changed = false;
    for (std::size_t i = 1; i < fds.size(); ++i) {
      if (!fds[i].revents) continue;
      const auto [pid, fd] = watched[i - 1];
      waitpid(pid, nullptr, WNOHANG);  // reap our own child; harmless for adopted ones
      close(fd);
      watched[i - 1].second = -1;
      changed = true;
    }
    std::erase_if(watched, [](const auto& w) { return w.second < 0; });
    if (changed && options_.on_change) options_.on_change();
  }
  for (const auto& [pid, fd] : watched) close(fd);
}

}  // namespace corral::agent
