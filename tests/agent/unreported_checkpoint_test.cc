// The agent's fallback restore point (agent/unreported_checkpoint.h, issue 38 item 4):
// which entries of a checkpoint directory count as complete, which is the newest, and
// that a launched worker gets it in CORRAL_RESTORE_FROM when corrald named none.
#include "agent/unreported_checkpoint.h"

#include <chrono>
#include <filesystem>
#include <fstream>

#include "agent_test_util.h"
#include <gtest/gtest.h>

#include "agent/launcher.h"

namespace corral::agent {
namespace {

namespace fs = std::filesystem;
using testing::eventually;
using testing::slurp;
using testing::TempDir;

// A file at `path` last written `age` before a fixed moment, so order never rests on
// how fast the test runs.
void put_file(const fs::path& path, std::chrono::seconds age) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << "state";
  static const auto base = fs::file_time_type::clock::now() - std::chrono::hours(1);
  fs::last_write_time(path, base - age);
}

TEST(UnreportedCheckpoint, TemporaryNamesAreTheWritersNotCheckpoints) {
  for (const char* name : {".tmp-step-3.pt", "tmp8x2k", "step-3.pt.tmp", "step-3.temp",
                           "step-3.part", "step-3.partial", "step-3.incomplete", "step-3.pt~"}) {
    EXPECT_TRUE(is_temporary_name(name)) << name;
  }
  for (const char* name : {"step-000300.pt", "checkpoint-300", "latest.pt", "epoch=3.ckpt"}) {
    EXPECT_FALSE(is_temporary_name(name)) << name;
  }
}

TEST(UnreportedCheckpoint, TheNewestCompleteEntryWins) {
  TempDir dir;
  const fs::path d = dir.path();
  EXPECT_EQ(newest_complete_checkpoint((d / "absent").string()), "");
  EXPECT_EQ(newest_complete_checkpoint(dir.path()), "");

  put_file(d / "step-000100.pt", std::chrono::seconds(50));
  put_file(d / "step-000200.pt", std::chrono::seconds(40));
  EXPECT_EQ(newest_complete_checkpoint(dir.path()), (d / "step-000200.pt").string());

  // Newer, but not complete: a temp name being written, and a directory filled in place
  // whose writer has not left its marker yet.
  put_file(d / ".tmp-step-000300.pt", std::chrono::seconds(5));
  put_file(d / "step-000300.pt.partial", std::chrono::seconds(5));
  put_file(d / "step-000400" / "model.pt", std::chrono::seconds(4));
  EXPECT_EQ(newest_complete_checkpoint(dir.path()), (d / "step-000200.pt").string());

  // The marker completes the directory, as of when it was written.
  put_file(d / "step-000400" / "COMPLETE", std::chrono::seconds(3));
  EXPECT_EQ(newest_complete_checkpoint(dir.path()), (d / "step-000400").string());
  // torch.distributed.checkpoint's .metadata, written last, counts the same.
  put_file(d / "dcp-000500" / "__0_0.distcp", std::chrono::seconds(2));
  put_file(d / "dcp-000500" / ".metadata", std::chrono::seconds(1));
  EXPECT_EQ(newest_complete_checkpoint(dir.path()), (d / "dcp-000500").string());

  // Written in the same clock tick: the greater name.
  put_file(d / "step-000700.pt", std::chrono::seconds(0));
  put_file(d / "step-000600.pt", std::chrono::seconds(0));
  EXPECT_EQ(newest_complete_checkpoint(dir.path()), (d / "step-000700.pt").string());
}

TEST(UnreportedCheckpoint, OnlyRestartsLookAndAReportedCheckpointWins) {
  TempDir dir;
  put_file(fs::path(dir.path()) / "step-7.pt", std::chrono::seconds(1));
  core::WorkerSpec spec{.key = {.job = 1, .attempt = 2, .rank = 0}, .checkpoint_dir = dir.path()};
  EXPECT_EQ(restore_from(spec), dir.path() + "/step-7.pt");
  // A first attempt starts fresh whatever another job left in the same directory.
  spec.key.attempt = 1;
  EXPECT_EQ(restore_from(spec), "");
  // What corrald chose from reported checkpoints is used as it is.
  spec.key.attempt = 2;
  spec.restore_from = "/reported/step-5";
  EXPECT_EQ(restore_from(spec), "/reported/step-5");
  // No checkpoint dir: nothing to look in.
  EXPECT_EQ(restore_from({.key = {.job = 1, .attempt = 3}}), "");
}

// What issue 38 saw: a restarted worker whose first attempt saved a checkpoint without
// reporting it got an empty CORRAL_RESTORE_FROM. Now the launched worker gets the file.
TEST(UnreportedCheckpoint, ALaunchedRestartGetsTheUnreportedCheckpoint) {
  TempDir dir;
  const std::string ckpt = dir.path() + "/ckpt";
  put_file(fs::path(ckpt) / "step-000040.pt", std::chrono::seconds(2));
  put_file(fs::path(ckpt) / ".tmp-step-000060.pt", std::chrono::seconds(1));
  core::SystemClock clock;
  Launcher launcher(Launcher::Options{.state_dir = dir.path() + "/state",
                                      .supervisor_exe = CORRAL_AGENT_PATH,
                                      .agent_url = "http://127.0.0.1:9",
                                      .clock = &clock});
  auto record = launcher.start({.key = {.job = 8, .attempt = 2, .rank = 0},
                                .gpus = {0},
                                .visible_devices = "0",
                                .command = {"/bin/sh", "-c", "env > env.txt"},
                                .checkpoint_dir = ckpt,
                                .grace_ms = 1000});
  ASSERT_TRUE(record.ok()) << record.status().to_string();
  ASSERT_TRUE(eventually(
      [&] { return launcher.observe(*record).state == core::WorkerStatus::State::kExited; }));
  const std::string env = slurp(dir.path() + "/state/work/8/attempt-2/rank-0/env.txt");
  EXPECT_NE(env.find("\nCORRAL_RESTORE_FROM=" + ckpt + "/step-000040.pt\n"), std::string::npos)
      << env;
  // The worker's log says where the restore point came from.
  EXPECT_NE(
      slurp(dir.path() + "/state/logs/8/attempt-2/rank-0.log")
          .find("no checkpoint was reported; CORRAL_RESTORE_FROM=" + ckpt + "/step-000040.pt"),
      std::string::npos);
}

}  // namespace
}  // namespace corral::agent
