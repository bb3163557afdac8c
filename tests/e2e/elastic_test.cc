// The elastic allocator acting in production, end to end (docs/scheduling.md, part 7): a
// real corrald and a real agent running corral-trainer move GPUs from a running elastic
// job that scales badly to one that scales well, by checkpoint and restart of both; the
// job that grows waits for the GPUs the other is still giving up rather than restart
// small, and each job ends with the value of a run that was never moved.
#include "cluster_fixture.h"

namespace corral::testing {
namespace {

// One node of 8 GPUs, so two elastic jobs fill it and GPUs can only move between them.
// The allocator re-plans every 2 s, a restart costs nothing beyond itself, and a job
// starts at its largest size that fits whatever its curve (elasticMinEfficiency 0: the
// badly scaling job starts large).
class ElasticMoveTest : public ClusterTest {
 protected:
  std::string cluster_config() const override {
    return "scheduler: {minRuntimeMs: 0, tickMs: 200, elasticReplanPeriodMs: 2000,"
           " elasticResizeCostMs: 0, elasticMinEfficiency: 0}\n"
           "agents: {nodeLostAfterMs: 4000, stopGraceMs: 5000,"
           " restartBackoffMs: 100, restartBackoffMaxMs: 1000}\n";
  }
  std::vector<std::string> node_labels() const override { return {"spine=s1,leaf=l1,rack=r1"}; }

  // A corral-trainer job that may run on 1 to 7 GPUs, with its declared throughput curve.
  json elastic_trainer_job(const std::string& name, int gpus, int steps, int checkpoint_every,
                           const json& scaling) {
    json spec = trainer_job(name, gpus, steps, 10, "standard", checkpoint_every);
    spec["elastic"] = {{"minGpus", 1}, {"maxGpus", 7}, {"scaling", scaling}};
    return spec;
  }
  static std::size_t gpus_of(const json& attempt) {
    return attempt.value("gpus", json::array()).size();
  }
};

// Sends SIGCONT to the processes it was given when asked or when it goes out of scope.
class Thaw {
 public:
  explicit Thaw(std::vector<int> pids) : pids_(std::move(pids)) {}
  Thaw(const Thaw&) = delete;
  Thaw& operator=(const Thaw&) = delete;
  ~Thaw() { now(); }
  void now() {
    for (const int pid : pids_) kill(pid, SIGCONT);
    pids_.clear();
  }

 private:
  std::vector<int> pids_;
};

TEST_F(ElasticMoveTest, GpusMoveToTheJobThatScalesBetterAndBothFinishWithTheirUnmovedResults) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::string tag = std::to_string(getpid());
  // `flat` barely gains from GPUs past its first (110 at 7 against 100 at 1), `linear`
  // gains all of each. Each rank's steps take the same time whatever the world size, so
  // the throughput the trainer reports always grows linearly with the GPUs; `flat`
  // checkpoints only when stopped (--checkpoint-every 0), so the one figure it reports is
  // at 7 GPUs, which leaves its declared curve's shape as it is (core::merge_scaling): a
  // second measured size would tell the scheduler it scales linearly after all, and it
  // would take GPUs back. `linear` checkpoints every 50 steps; its figures agree with its
  // curve. `flat` has fewer steps left after the move, so it ends first and `linear`, at
  // its maximum, has no reason to move again.
  const int flat_steps = 600, linear_steps = 1300;
  const std::string flat_name = "flat-" + tag;
  const auto flat = submit(elastic_trainer_job(
      flat_name, 7, flat_steps, 0,
      {{{"gpus", 1}, {"throughput", 100}}, {{"gpus", 7}, {"throughput", 110}}}));
  ASSERT_TRUE(wait_phase(flat, "running")) << job(flat).dump();
  ASSERT_EQ(gpus_of(job(flat)["attempts"][0]), 7u) << job(flat).dump();
  ASSERT_TRUE(eventually([&] { return reported_step(flat) >= 100; })) << reported_step(flat);

  // `flat`'s workers pause, as a large job's are slower to checkpoint and stop than a
  // one-GPU job's: it will still hold its GPUs when `linear`, stopped by the same move,
  // is requeued. Paused before `linear` is even submitted, so before any move.
  const std::vector<int> paused = trainers_of_job(flat, ckpt_dir(flat_name));
  ASSERT_EQ(paused.size(), 7u);
  for (const int pid : paused) ASSERT_EQ(kill(pid, SIGSTOP), 0);
  Thaw thaw(paused);

  // `linear` starts on the one GPU left (`flat` is at its maximum: nothing to grow).
  const auto linear = submit(elastic_trainer_job(
      "linear-" + tag, 1, linear_steps, 50,
      {{{"gpus", 1}, {"throughput", 100}}, {{"gpus", 7}, {"throughput", 700}}}));

  // Once `linear` held its GPU for the re-plan period, every GPU but `flat`'s first moves
  // to it: both are asked to checkpoint and stop. `linear` stops first and, requeued,
  // waits for `flat`'s GPUs instead of starting again on its one GPU.
  const std::string waits_for = "waiting for job " + std::to_string(flat) + ", already stopping";
  ASSERT_TRUE(eventually(
      [&] {
        const json j = job(linear);
        return j.value("phase", "") == "pending" &&
               j.value("reason", "").find(waits_for) != std::string::npos;
      },
      30s))
      << job(linear).dump() << "\n"
      << job(flat).dump();
  EXPECT_EQ(phase(flat), "preempting") << job(flat).dump();
  const json first = job(linear)["attempts"];
  ASSERT_EQ(first.size(), 1u) << first.dump();
  EXPECT_EQ(gpus_of(first[0]), 1u) << first.dump();
  thaw.now();

  ASSERT_TRUE(wait_phase(flat, "succeeded", 60s)) << job(flat).dump() << "\n" << logs(flat, 0);
  ASSERT_TRUE(wait_phase(linear, "succeeded", 60s)) << job(linear).dump() << "\n"
                                                    << logs(linear, 0);

  const auto shrank = event_messages(flat, "resizing");
  ASSERT_EQ(shrank.size(), 1u) << job(flat).dump();
  EXPECT_NE(shrank[0].find("shrank from 7 to 1 GPUs"), std::string::npos) << shrank[0];
  EXPECT_NE(shrank[0].find("(elastic re-allocation)"), std::string::npos) << shrank[0];
  const auto grew = event_messages(linear, "resizing");
  ASSERT_EQ(grew.size(), 1u) << job(linear).dump();
  EXPECT_NE(grew[0].find("grew from 1 to 7 GPUs"), std::string::npos) << grew[0];
  EXPECT_NE(grew[0].find("(elastic re-allocation)"), std::string::npos) << grew[0];

  // Each ran twice, the second time at its new size, resumed from the checkpoint taken
  // when it was stopped, and ended with the value of a run that was never moved.
  const json f = job(flat), l = job(linear);
  ASSERT_EQ(f["attempts"].size(), 2u) << f.dump();
  ASSERT_EQ(l["attempts"].size(), 2u) << l.dump();
  EXPECT_EQ(gpus_of(f["attempts"][1]), 1u) << f.dump();
  EXPECT_EQ(gpus_of(l["attempts"][1]), 7u) << l.dump();
  for (const auto& [id, steps] : {std::pair{flat, flat_steps}, std::pair{linear, linear_steps}}) {
    const std::string last = logs(id, 0);
    EXPECT_NE(last.find("resumed from"), std::string::npos) << last;
    EXPECT_NE(last.find(uninterrupted_final(steps)), std::string::npos) << last;
  }
  // Every rank of `linear`'s second attempt agrees.
  EXPECT_NE(logs(linear, 6).find(uninterrupted_final(linear_steps)), std::string::npos)
      << logs(linear, 6);
  expect_no_double_allocation();
  std::printf("moved and finished in %.1f s\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
}

}  // namespace
}  // namespace corral::testing
