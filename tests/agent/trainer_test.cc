// corral-trainer: its final value after any number of SIGTERM-and-resume cycles equals
// an uninterrupted run's, and a torn checkpoint is never taken for a real one.
#include <fcntl.h>
#include <random>
#include <signal.h>
#include <spawn.h>
#include <unistd.h>

#include "agent_test_util.h"
#include <gtest/gtest.h>
#include <sys/wait.h>

extern char** environ;

namespace {

using corral::agent::testing::eventually;
using corral::agent::testing::slurp;
using corral::agent::testing::TempDir;

struct TrainerRun {
  pid_t pid = 0;
  std::string out_path;
};

// Starts the trainer with CORRAL_CHECKPOINT_DIR/CORRAL_RESTORE_FROM set; stdout to a file.
TrainerRun start(const std::string& dir, int index, const std::string& restore_from, int steps,
                 int step_ms, int every) {
  TrainerRun run{.out_path = dir + "/out-" + std::to_string(index)};
  std::vector<std::string> env_strings = {
      "CORRAL_CHECKPOINT_DIR=" + dir + "/ckpt", "CORRAL_RESTORE_FROM=" + restore_from,
      "CORRAL_ATTEMPT=" + std::to_string(index), "RANK=0", "PATH=/usr/bin:/bin"};
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = {CORRAL_TRAINER_PATH,     "--steps",
                                   std::to_string(steps),   "--step-ms",
                                   std::to_string(step_ms), "--checkpoint-every",
                                   std::to_string(every)};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, run.out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0644);
  EXPECT_EQ(posix_spawn(&run.pid, argv[0], &actions, nullptr, argv.data(), envp.data()), 0);
  posix_spawn_file_actions_destroy(&actions);
  return run;
}

int wait_exit(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// The 16 hex digits after "final=", or "" (std::regex trips GCC 12's
// -Wmaybe-uninitialized under ASan, so this is done by hand).
std::string final_value(const std::string& out) {
  const std::size_t at = out.find("final=");
  if (at == std::string::npos || out.size() < at + 6 + 16) return "";
  const std::string hex = out.substr(at + 6, 16);
  return hex.find_first_not_of("0123456789abcdef") == std::string::npos ? hex : "";
}

// The newest checkpoint file in the directory, as a resuming scheduler would pick it.
std::string newest_checkpoint(const std::string& dir) {
  std::string best;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("step-", 0) == 0 && name > std::filesystem::path(best).filename().string()) {
      best = e.path().string();
    }
  }
  return best;
}

TEST(Trainer, FinalValueSurvivesRepeatedPreemption) {
  constexpr int kSteps = 400;
  TempDir reference_dir;
  const TrainerRun reference = start(reference_dir.path(), 0, "", kSteps, 0, 50);
  ASSERT_EQ(wait_exit(reference.pid), 0);
  const std::string expected = final_value(slurp(reference.out_path));
  ASSERT_EQ(expected.size(), 16u);

  // Deterministic seeds: a failure is reproducible. Each cycle runs for a random time,
  // gets SIGTERM, checkpoints and exits 143; the next resumes from the newest checkpoint.
  for (std::uint32_t seed : {1u, 2u, 3u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    TempDir dir;
    std::string restore;
    std::string got;
    int preemptions = 0;
    for (int cycle = 1; cycle < 50 && got.empty(); ++cycle) {
      const TrainerRun run = start(dir.path(), cycle, restore, kSteps, 1, 37);
      if (preemptions < 4) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20 + rng() % 120));
        kill(run.pid, SIGTERM);
      }
      const int code = wait_exit(run.pid);
      if (code == 0) {
        got = final_value(slurp(run.out_path));
      } else {
        ASSERT_EQ(code, 143);
        ++preemptions;
        // "" when the signal came before the trainer's first checkpoint (under load, even
        // before it installed its handler): the next attempt starts over, as a real one would.
        restore = newest_checkpoint(dir.path() + "/ckpt");
      }
    }
    EXPECT_GE(preemptions, 1);
    EXPECT_EQ(got, expected);
  }
}

TEST(Trainer, ATornCheckpointIsNeverPicked) {
  TempDir dir;
  const TrainerRun first = start(dir.path(), 1, "", 100, 0, 40);
  ASSERT_EQ(wait_exit(first.pid), 0);
  const std::string expected = final_value(slurp(first.out_path));
  const std::string good = newest_checkpoint(dir.path() + "/ckpt");  // step 80
  ASSERT_NE(good.find("step-000000080"), std::string::npos);
  const std::string content = slurp(good);

  // A checkpoint cut short, one with a flipped digit, and a leftover temp file, all
  // "newer" than the good one.
  const std::string ckpt = dir.path() + "/ckpt";
  std::ofstream(ckpt + "/step-000000090-attempt-9") << content.substr(0, content.size() / 2);
  std::string flipped = content;
  flipped[flipped.find("step ") + 5] = '9';
  std::ofstream(ckpt + "/step-000000095-attempt-9") << flipped;
  std::ofstream(ckpt + "/.tmp-step-000000099-attempt-9-1") << content;

  // Named directly, a torn file is refused (exit 3), never used.
  const TrainerRun torn = start(dir.path(), 2, ckpt + "/step-000000090-attempt-9", 100, 0, 0);
  EXPECT_EQ(wait_exit(torn.pid), 3);
  const TrainerRun bad = start(dir.path(), 3, ckpt + "/step-000000095-attempt-9", 100, 0, 0);
  EXPECT_EQ(wait_exit(bad.pid), 3);
  // Given the directory, the newest valid one (step 80) is used and the result is right.
  const TrainerRun resumed = start(dir.path(), 4, ckpt, 100, 0, 0);
  EXPECT_EQ(wait_exit(resumed.pid), 0);
  EXPECT_EQ(final_value(slurp(resumed.out_path)), expected);
}

}  // namespace
