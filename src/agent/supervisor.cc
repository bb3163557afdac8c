// `corral-agent --supervise --run-dir DIR --key KEY --grace-ms N --cwd DIR -- CMD...`:
// the per-worker supervisor (like containerd's shim). It outlives the agent, so a
// worker's exit status is recorded even while no agent runs. See launcher.h.
//
// It runs with the worker's environment and with fd 3 holding KEY.lock (flock), fd 1
// and 2 on the rank's log. Signals arrive through a signalfd, so a SIGTERM that comes
// while the worker is being forked is never lost.
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string>
#include <unistd.h>
#include <vector>

#include <nlohmann/json.hpp>
#include <sys/signalfd.h>
#include <sys/wait.h>

#include "agent/atomic_file.h"
#include "agent/launcher.h"

namespace corral::agent {
namespace {

constexpr int kLockFd = 3;

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::int64_t monotonic_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Args {
  std::string run_dir, key, cwd;
  std::int64_t grace_ms = 30000;
  std::vector<char*> command;
};

bool parse_args(int argc, char** argv, Args& out) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--") {
      for (int j = i + 1; j < argc; ++j) out.command.push_back(argv[j]);
      break;
    }
    if (i + 1 >= argc) return false;
    const std::string v = argv[++i];
    if (a == "--run-dir") {
      out.run_dir = v;
    } else if (a == "--key") {
      out.key = v;
    } else if (a == "--cwd") {
      out.cwd = v;
    } else if (a == "--grace-ms") {
      out.grace_ms = std::stoll(v);
    } else {
      return false;
    }
  }
  out.command.push_back(nullptr);
  return !out.run_dir.empty() && !out.key.empty() && out.command.size() > 1;
}

}  // namespace

int supervise_main(int argc, char** argv) {
  Args args;
  try {
    if (!parse_args(argc, argv, args)) {
      std::fprintf(stderr, "corral-agent --supervise: bad arguments\n");
      return 2;
    }
  } catch (const std::exception&) {
    std::fprintf(stderr, "corral-agent --supervise: --grace-ms must be an integer\n");
    return 2;
  }
  // The lock must not leak into the worker (it would outlive us and fake "alive").
  fcntl(kLockFd, F_SETFD, FD_CLOEXEC);

  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGCHLD);
  sigprocmask(SIG_BLOCK, &mask, nullptr);
  const int sig_fd = signalfd(-1, &mask, SFD_CLOEXEC);

  int exec_pipe[2];
  if (pipe2(exec_pipe, O_CLOEXEC) != 0) return 1;
  const pid_t worker = fork();
  if (worker == 0) {
    // The worker: its own session and process group, the rank's directory, signals
    // unblocked. On exec failure, tell the supervisor why.
    setsid();
    sigset_t empty;
    sigemptyset(&empty);
    sigprocmask(SIG_SETMASK, &empty, nullptr);
    if (!args.cwd.empty() && chdir(args.cwd.c_str()) != 0) {
      const int err = errno;
      (void)!write(exec_pipe[1], &err, sizeof(err));
      _exit(127);
    }
    execvp(args.command[0], args.command.data());
    const int err = errno;
    (void)!write(exec_pipe[1], &err, sizeof(err));
    _exit(127);
  }
  close(exec_pipe[1]);
  if (worker < 0) {
    std::fprintf(stderr, "corral-agent --supervise: fork failed: %s\n", std::strerror(errno));
    (void)write_file_atomic(
        args.run_dir + "/" + args.key + ".exit",
        nlohmann::json{{"exitCode", 127}, {"signal", 0}, {"exitedAtMs", now_ms()}}.dump());
    return 1;
  }
  // EOF on the pipe: the worker exec'd (or failed to, and said why), so setsid() is done
  // and signalling its group reaches it.
  int exec_errno = 0;
  while (read(exec_pipe[0], &exec_errno, sizeof(exec_errno)) < 0 && errno == EINTR) {
  }
  close(exec_pipe[0]);
  if (exec_errno != 0) {
    std::fprintf(stderr, "corral-agent: cannot start %s: %s\n", args.command[0],
                 std::strerror(exec_errno));
  }
  (void)write_file_atomic(
      args.run_dir + "/" + args.key + ".pid",
      nlohmann::json{{"supervisorPid", getpid()}, {"workerPid", worker}}.dump());

  int wait_status = 0;
  bool stop_requested = false;
  std::int64_t kill_at = -1;  // monotonic ms at which the group gets SIGKILL
  for (;;) {
    int timeout = -1;
    if (kill_at >= 0)
      timeout = static_cast<int>(std::max<std::int64_t>(0, kill_at - monotonic_ms()));
    pollfd pfd{sig_fd, POLLIN, 0};
    const int n = poll(&pfd, 1, timeout);
    if (n == 0) {
      kill(-worker, SIGKILL);
      kill_at = -1;
      continue;
    }
    if (n < 0) continue;
    signalfd_siginfo info{};
    if (read(sig_fd, &info, sizeof(info)) != sizeof(info)) continue;
    if (info.ssi_signo == SIGTERM) {
      // The agent sigqueue()s the grace with the signal; a plain kill uses --grace-ms. A
      // second request can only shorten the grace (a fenced agent kills at once).
      const std::int64_t grace =
          info.ssi_code == SI_QUEUE ? static_cast<std::int64_t>(info.ssi_int) : args.grace_ms;
      const std::int64_t at = monotonic_ms() + grace;
      if (!stop_requested) kill(-worker, SIGTERM);
      if (!stop_requested || at < kill_at) kill_at = at;
      stop_requested = true;
    }
    if (info.ssi_signo == SIGCHLD) {
      const pid_t r = waitpid(worker, &wait_status, WNOHANG);
      if (r == worker) break;
    }
  }
  // The leader is gone; take down whatever it left in its group, so "exited" means the
  // GPUs are free.
  kill(-worker, SIGKILL);
  int exit_code = 0, signal = 0;
  if (WIFEXITED(wait_status)) {
    exit_code = WEXITSTATUS(wait_status);
  } else if (WIFSIGNALED(wait_status)) {
    signal = WTERMSIG(wait_status);
    exit_code = 128 + signal;
  }
  const core::Status s = write_file_atomic(args.run_dir + "/" + args.key + ".exit",
                                           nlohmann::json{{"exitCode", exit_code},
                                                          {"signal", signal},
                                                          {"exitedAtMs", now_ms()},
                                                          {"stopRequested", stop_requested}}
                                               .dump());
  if (!s.ok()) {
    std::fprintf(stderr, "corral-agent --supervise: %s\n", s.to_string().c_str());
    return 1;
  }
  return 0;
}

}  // namespace corral::agent
