// The Store conformance suite: one typed suite, run over SQLite and PostgreSQL.
//
// PostgreSQL needs a server: scripts/test.sh starts a throwaway one
// (scripts/with_postgres.sh) and exports CORRAL_TEST_POSTGRES_URL. When the variable is
// set and the server cannot be reached, the PostgreSQL tests fail. Only a developer
// running ctest by hand without the variable sees them skipped, with a note saying so.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "store/store.h"
#include "testing/store_fixture.h"

namespace corral::store {
namespace {

using core::JobPhase;
using core::Status;
using core::StatusCode;
using testing::PostgresFactory;
using testing::SqliteFactory;

template <typename Factory>
class StoreConformance : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = factory_.open();
    if (!store.ok() && store.status().code() == StatusCode::kNotFound) {
      GTEST_SKIP() << store.status().message();
    }
    ASSERT_TRUE(store.ok()) << store.status().to_string();
    store_ = std::move(store).value();
  }

  NewJob job(const std::string& tenant, std::int64_t now_ms = 1000) {
    return NewJob{.tenant = core::TenantId(tenant),
                  .name = "train",
                  .priority_class = "standard",
                  .tier = 1,
                  .gpus = 2,
                  .spec_json = R"({"name":"train"})",
                  .secret_env_json = R"({"TOKEN":"s3cret"})",
                  .now = core::time_from_ms(now_ms)};
  }

  Factory factory_;
  std::unique_ptr<Store> store_;
};

TYPED_TEST_SUITE(StoreConformance, corral::testing::Stores, corral::testing::StoreNames);

TYPED_TEST(StoreConformance, MigratesToLatestVersion) {
  EXPECT_EQ(this->store_->schema_version(), latest_schema_version());
  EXPECT_GE(latest_schema_version(), 1);
}

core::Result<std::string> read_cluster_id(Store& store) {
  std::string id;
  CORRAL_RETURN_IF_ERROR(store.transact([&](Tx& tx) {
    CORRAL_ASSIGN_OR_RETURN(id, tx.agents().cluster_id());
    return Status();
  }));
  return id;
}

TYPED_TEST(StoreConformance, ClusterIdIsMadeOnceAndKeptAcrossReopens) {
  auto first = read_cluster_id(*this->store_);
  ASSERT_TRUE(first.ok()) << first.status().to_string();
  EXPECT_EQ(first->size(), 32u) << *first;
  EXPECT_EQ(first->find_first_not_of("0123456789abcdef"), std::string::npos) << *first;
  EXPECT_EQ(read_cluster_id(*this->store_).value(), *first);

  // The same database opened again keeps it.
  this->store_.reset();
  auto reopened = open_store(this->factory_.url());
  ASSERT_TRUE(reopened.ok()) << reopened.status().to_string();
  EXPECT_EQ(read_cluster_id(**reopened).value(), *first);

  // A fresh store is another cluster. Two handles asking at once for its first id (two
  // corralds starting together) get the same one.
  TypeParam other_factory;
  auto other = other_factory.open();
  ASSERT_TRUE(other.ok()) << other.status().to_string();
  auto other_again = open_store(other_factory.url());
  ASSERT_TRUE(other_again.ok()) << other_again.status().to_string();
  core::Result<std::string> a = std::string(), b = std::string();
  std::thread ta([&] { a = read_cluster_id(**other); });
  std::thread tb([&] { b = read_cluster_id(**other_again); });
  ta.join();
  tb.join();
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  EXPECT_EQ(*a, *b);
  EXPECT_EQ(a->size(), 32u);
  EXPECT_NE(*a, *first);
}

TYPED_TEST(StoreConformance, InsertsAndReadsJobs) {
  JobRow inserted;
  ASSERT_TRUE(this->store_
                  ->transact([&](Tx& tx) {
                    CORRAL_ASSIGN_OR_RETURN(inserted, tx.jobs().insert_job(this->job("nlp")));
                    return Status();
                  })
                  .ok());
  EXPECT_GT(inserted.id.value, 0);
  EXPECT_EQ(inserted.phase, JobPhase::kPending);
  std::optional<JobRow> read;
  std::string secrets;
  ASSERT_TRUE(this->store_
                  ->transact([&](Tx& tx) {
                    CORRAL_ASSIGN_OR_RETURN(read, tx.jobs().get_job(inserted.id));
                    CORRAL_ASSIGN_OR_RETURN(secrets, tx.jobs().get_job_secrets(inserted.id));
                    return Status();
                  })
                  .ok());
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->tenant.value, "nlp");
  EXPECT_EQ(read->gpus, 2);
  EXPECT_EQ(read->spec_json, R"({"name":"train"})");
  EXPECT_EQ(core::to_ms(read->queued_at), 1000);
  EXPECT_EQ(secrets, R"({"TOKEN":"s3cret"})");
}

// The batch read answers what one get_job per id would: each existing job once, by id,
// past the size of one query's chunk of ids.
// One read for the workers a node reported of every job its heartbeat names: only that
// node's, across the 500-id chunks, in (job, attempt, rank) order, each job's rows once
// however often it is asked.
TYPED_TEST(StoreConformance, ListWorkersOnReadsOneNodesWorkersOfManyJobsInOrder) {
  std::mt19937 rng(11);
  std::map<std::int64_t, std::vector<store::WorkerRow>> of_job;  // job -> n0's rows, in order
  ASSERT_TRUE(this->store_
                  ->transact([&](Tx& tx) {
                    for (std::int64_t job = 1; job <= 1100; ++job) {
                      const int attempts = static_cast<int>(rng() % 3);  // 0: no workers
                      for (int attempt = 1; attempt <= attempts; ++attempt) {
                        for (int rank = 0; rank < 3; ++rank) {  // ranks 0 and 2 on n0
                          store::WorkerRow w{.job = core::JobId(job),
                                             .attempt = attempt,
                                             .rank = rank,
                                             .node = core::NodeId("n" + std::to_string(rank % 2)),
                                             .pid = job * 10 + rank,
                                             .started_at = core::time_from_ms(job)};
                          CORRAL_RETURN_IF_ERROR(tx.agents().upsert_worker(w));
                          if (rank % 2 == 0) of_job[job].push_back(w);
                        }
                      }
                    }
                    return Status();
                  })
                  .ok());
  for (int round = 0; round < 4; ++round) {
    std::vector<core::JobId> asked;
    for (int i = 0; i < 800; ++i) asked.push_back(core::JobId(1 + rng() % 1200));
    if (round == 0) asked.clear();                       // nothing asked: nothing read
    if (!asked.empty()) asked.push_back(asked.front());  // asked twice
    std::set<std::int64_t> distinct;
    for (const core::JobId id : asked) distinct.insert(id.value);
    std::vector<store::WorkerRow> want;
    for (const std::int64_t id : distinct) {
      for (const auto& w : of_job[id]) want.push_back(w);
    }
    ASSERT_TRUE(this->store_
                    ->transact([&](Tx& tx) {
                      CORRAL_ASSIGN_OR_RETURN(
                          auto got, tx.agents().list_workers_on(core::NodeId("n0"), asked));
                      EXPECT_EQ(got.size(), want.size());
                      for (std::size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
                        EXPECT_EQ(got[i].job, want[i].job);
                        EXPECT_EQ(got[i].attempt, want[i].attempt);
                        EXPECT_EQ(got[i].rank, want[i].rank);
                        EXPECT_EQ(got[i].node, want[i].node);
                        EXPECT_EQ(got[i].pid, want[i].pid);
                      }
                      return Status();
                    })
                    .ok());
  }
}

TYPED_TEST(StoreConformance, GetJobsReadsManyIdsAsGetJobWould) {
  std::vector<core::JobId> ids;
  ASSERT_TRUE(this->store_
                  ->transact([&](Tx& tx) {
                    for (int i = 0; i < 1203; ++i) {
                      CORRAL_ASSIGN_OR_RETURN(auto row,
                                              tx.jobs().insert_job(this->job("t1", 1000 + i)));
                      ids.push_back(row.id);
                    }
                    return Status();
                  })
                  .ok());
  std::mt19937 rng(7);
  for (int round = 0; round < 5; ++round) {
    std::vector<core::JobId> asked;
    for (int i = 0; i < 900; ++i) asked.push_back(ids[rng() % ids.size()]);
    asked.push_back(asked.front());                       // asked twice
    asked.push_back(core::JobId(ids.back().value + 50));  // never existed
    ASSERT_TRUE(this->store_
                    ->transact([&](Tx& tx) {
                      CORRAL_ASSIGN_OR_RETURN(auto got, tx.jobs().get_jobs(asked));
                      std::vector<JobRow> want;
                      std::set<std::int64_t> seen;
                      for (const core::JobId id : asked) seen.insert(id.value);
                      for (const std::int64_t id : seen) {
                        CORRAL_ASSIGN_OR_RETURN(auto one, tx.jobs().get_job(core::JobId(id)));
                        if (one) want.push_back(std::move(*one));
                      }
                      EXPECT_EQ(got.size(), want.size());
                      for (std::size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
                        EXPECT_EQ(got[i].id, want[i].id);
                        EXPECT_EQ(got[i].spec_json, want[i].spec_json);
                        EXPECT_EQ(got[i].created_at, want[i].created_at);
                      }
                      return Status();
                    })
                    .ok());
  }
  ASSERT_TRUE(this->store_
                  ->transact([&](Tx& tx) {
                    CORRAL_ASSIGN_OR_RETURN(auto none, tx.jobs().get_jobs({}));
                    EXPECT_TRUE(none.empty());
                    return Status();
                  })
                  .ok());
}

TYPED_TEST(StoreConformance, FiltersJobsByTenantAndPhase) {
  ASSERT_TRUE(this->store_
                  ->transact([&](Tx& tx) {
                    for (const char* t : {"a", "b", "a"}) {
                      CORRAL_RETURN_IF_ERROR(tx.jobs().insert_job(this->job(t)).status());
                    }
                    return Status();
                  })
                  .ok());
  std::vector<JobRow> a, running;
  std::int64_t pending_a = 0;
  ASSERT_TRUE(
      this->store_
          ->transact([&](Tx& tx) {
            CORRAL_ASSIGN_OR_RETURN(a, tx.jobs().list_jobs({.tenant = core::TenantId("a")}));
            CORRAL_ASSIGN_OR_RETURN(running, tx.jobs().list_jobs({.phases = {JobPhase::kRunning}}));
            CORRAL_ASSIGN_OR_RETURN(pending_a, tx.jobs().count_pending_jobs(core::TenantId("a")));
            return Status();
          })
          .ok());
  EXPECT_EQ(a.size(), 2u);
  EXPECT_TRUE(running.empty());
  EXPECT_EQ(pending_a, 2);
}

TYPED_TEST(StoreConformance, UpdateJobIsCompareAndSet) {
  JobRow row;
  ASSERT_TRUE(this->store_
                  ->transact([&](Tx& tx) {
                    CORRAL_ASSIGN_OR_RETURN(row, tx.jobs().insert_job(this->job("a")));
                    return Status();
                  })
                  .ok());
  bool first = false, second = true;
  ASSERT_TRUE(this->store_
                  ->transact([&](Tx& tx) {
                    JobRow next = row;
                    next.phase = JobPhase::kCancelled;
                    next.reason = "cancelled by test";
                    CORRAL_ASSIGN_OR_RETURN(first, tx.jobs().update_job(next, JobPhase::kPending));
                    next.phase = JobPhase::kLaunching;
                    CORRAL_ASSIGN_OR_RETURN(second, tx.jobs().update_job(next, JobPhase::kPending));
                    return Status();
                  })
                  .ok());
  EXPECT_TRUE(first);
  EXPECT_FALSE(second);
  std::int64_t pending = -1;
  ASSERT_TRUE(this->store_
                  ->transact([&](Tx& tx) {
                    CORRAL_ASSIGN_OR_RETURN(pending,
                                            tx.jobs().count_pending_jobs(core::TenantId("a")));
                    return Status();
                  })
                  .ok());
  EXPECT_EQ(pending, 0);  // the counter followed the job out of pending
}

TYPED_TEST(StoreConformance, ConcurrentCallsCommitOrRollBackIndependently) {
  // Many threads at once (SQLite groups them into shared commits): the calls that fail
  // leave nothing behind, the others all land.
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10; ++i) {
        const bool fail = (t + i) % 2 == 0;
        const Status s = this->store_->transact([&](Tx& tx) {
          CORRAL_RETURN_IF_ERROR(
              tx.jobs().insert_job(this->job(fail ? "failed" : "kept")).status());
          return fail ? core::failed_precondition("no") : Status();
        });
        if (s.ok()) ++ok;
      }
    });
  }
  for (auto& th : threads) th.join();
  std::vector<JobRow> kept, failed;
  std::int64_t pending_failed = -1;
  ASSERT_TRUE(this->store_
                  ->transact([&](Tx& tx) {
                    CORRAL_ASSIGN_OR_RETURN(
                        kept, tx.jobs().list_jobs({.tenant = core::TenantId("kept")}));
                    CORRAL_ASSIGN_OR_RETURN(
                        failed, tx.jobs().list_jobs({.tenant = core::TenantId("failed")}));
                    CORRAL_ASSIGN_OR_RETURN(pending_failed,
                                            tx.jobs().count_pending_jobs(core::TenantId("failed")));
                    return Status();
                  })
                  .ok());
  EXPECT_EQ(ok.load(), 40);
  EXPECT_EQ(kept.size(), 40u);
  EXPECT_TRUE(failed.empty());
  EXPECT_EQ(pending_failed, 0);
}

TYPED_TEST(StoreConformance, RollsBackWhenTheCallbackFails) {
  const Status s = this->store_->transact([&](Tx& tx) {
    CORRAL_RETURN_IF_ERROR(tx.jobs().insert_job(this->job("rollback")).status());
    return core::failed_precondition("changed my mind");
  });
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  std::vector<JobRow> jobs;
  ASSERT_TRUE(this->store_
                  ->transact([&](Tx& tx) {
                    CORRAL_ASSIGN_OR_RETURN(
                        jobs, tx.jobs().list_jobs({.tenant = core::TenantId("rollback")}));
                    return Status();
                  })
                  .ok());
  EXPECT_TRUE(jobs.empty());
}

TYPED_TEST(StoreConformance, RefusesSecondActiveAllocationOfAGpu) {
  auto alloc = [](std::int64_t job) {
    return AllocationRow{.job = core::JobId(job),
                         .attempt = 1,
                         .node = core::NodeId("n1"),
                         .gpu_index = 3,
                         .gpu_type = core::GpuTypeId("H100"),
                         .epoch = 1,
                         .created_at = core::time_from_ms(5)};
  };
  ASSERT_TRUE(
      this->store_->transact([&](Tx& tx) { return tx.allocations().insert_allocation(alloc(1)); })
          .ok());
  // The same GPU, another job: the unique index refuses it, and nothing is written.
  const Status clash =
      this->store_->transact([&](Tx& tx) { return tx.allocations().insert_allocation(alloc(2)); });
  EXPECT_EQ(clash.code(), StatusCode::kAlreadyExists) << clash.to_string();
  // Once released, the GPU may be allocated again; history stays.
  ASSERT_TRUE(this->store_
                  ->transact([&](Tx& tx) {
                    CORRAL_ASSIGN_OR_RETURN(auto n, tx.allocations().release_allocations(
                                                        core::JobId(1), core::time_from_ms(9)));
                    EXPECT_EQ(n, 1);
                    return tx.allocations().insert_allocation(alloc(2));
                  })
                  .ok());
  std::vector<AllocationRow> active, history;
  ASSERT_TRUE(this->store_
                  ->transact([&](Tx& tx) {
                    CORRAL_ASSIGN_OR_RETURN(active, tx.allocations().list_active_allocations());
                    CORRAL_ASSIGN_OR_RETURN(history,
                                            tx.allocations().list_allocations(core::JobId(1)));
                    return Status();
                  })
                  .ok());
  ASSERT_EQ(active.size(), 1u);
  EXPECT_EQ(active[0].job.value, 2);
  ASSERT_EQ(history.size(), 1u);
  EXPECT_FALSE(history[0].active);
  ASSERT_TRUE(history[0].released_at.has_value());
  // The batch read of a page's jobs: only active allocations, only of the jobs asked.
  ASSERT_TRUE(
      this->store_
          ->transact([&](Tx& tx) {
            AllocationRow other = alloc(3);
            other.gpu_index = 4;
            CORRAL_RETURN_IF_ERROR(tx.allocations().insert_allocation(other));
            CORRAL_ASSIGN_OR_RETURN(auto held, tx.allocations().list_active_allocations_of(
                                                   {core::JobId(3), core::JobId(1), core::JobId(2),
                                                    core::JobId(3), core::JobId(99)}));
            EXPECT_EQ(held.size(), 2u);
            if (held.size() == 2) {
              EXPECT_EQ(held[0].job.value, 2);
              EXPECT_EQ(held[1].job.value, 3);
              EXPECT_EQ(held[1].gpu_index, 4);
            }
            CORRAL_ASSIGN_OR_RETURN(auto none, tx.allocations().list_active_allocations_of({}));
            EXPECT_TRUE(none.empty());
            return Status();
          })
          .ok());
}

// Shares of a GPU (resources.gpuShare): several jobs on one GPU, never more than the whole
// of it, one share per job, and a whole GPU never beside a share.
TYPED_TEST(StoreConformance, SharesOfAGpuNeverAddUpToMoreThanTheGpu) {
  std::vector<core::JobId> jobs;
  ASSERT_TRUE(this->store_
                  ->transact([&](Tx& tx) {
                    for (int i = 0; i < 5; ++i) {
                      CORRAL_ASSIGN_OR_RETURN(auto row, tx.jobs().insert_job(this->job("s")));
                      jobs.push_back(row.id);
                    }
                    return Status();
                  })
                  .ok());
  const auto take = [&](std::size_t job, std::int32_t gpu, std::int32_t milli) {
    return this->store_->transact([&](Tx& tx) {
      return tx.allocations().insert_allocation({.job = jobs[job],
                                                 .attempt = 1,
                                                 .node = core::NodeId("n1"),
                                                 .gpu_index = gpu,
                                                 .gpu_type = core::GpuTypeId("H100"),
                                                 .created_at = core::time_from_ms(1'000),
                                                 .share_milli = milli});
    });
  };
  EXPECT_TRUE(take(0, 3, 500).ok());
  EXPECT_TRUE(take(1, 3, 250).ok());
  const Status over = take(2, 3, 300);  // 1050 thousandths
  EXPECT_EQ(over.code(), StatusCode::kAlreadyExists) << over.to_string();
  EXPECT_NE(over.message().find("no room for a share of 300"), std::string::npos) << over.message();
  EXPECT_EQ(take(3, 3, 0).code(), StatusCode::kAlreadyExists);    // a whole GPU beside shares
  EXPECT_EQ(take(0, 3, 100).code(), StatusCode::kAlreadyExists);  // a second share of one job
  EXPECT_TRUE(take(3, 4, 0).ok());
  EXPECT_EQ(take(4, 4, 100).code(), StatusCode::kAlreadyExists);  // a share beside a whole GPU
  EXPECT_TRUE(take(2, 3, 250).ok());                              // exactly full
  // Released after 10 s, a 0.5 share has 5 GPU-seconds of service; the room it frees takes
  // another share.
  std::optional<JobRow> released;
  std::vector<AllocationRow> active;
  ASSERT_TRUE(
      this->store_
          ->transact([&](Tx& tx) {
            CORRAL_RETURN_IF_ERROR(
                tx.allocations().release_allocations(jobs[0], core::time_from_ms(11'000)).status());
            CORRAL_ASSIGN_OR_RETURN(released, tx.jobs().get_job(jobs[0]));
            CORRAL_ASSIGN_OR_RETURN(active, tx.allocations().list_active_allocations());
            return Status();
          })
          .ok());
  ASSERT_TRUE(released.has_value());
  EXPECT_EQ(released->attained_gpu_ms, 5'000);
  ASSERT_EQ(active.size(), 3u);
  EXPECT_EQ(active[0].share_milli, 250);
  EXPECT_EQ(active[0].milli(), 250);
  EXPECT_EQ(active[2].gpu_index, 4);
  EXPECT_EQ(active[2].milli(), 1000);
  EXPECT_TRUE(take(4, 3, 500).ok());
}

// Twelve writers at once, each on its own handle of the database (as replicas are), take
// a 0.3 share of one GPU: three fit, whatever the order. PostgreSQL reads committed rows,
// so without insert_allocation's lock on the GPU each would find room beside the others'
// uncommitted shares.
TYPED_TEST(StoreConformance, ConcurrentSharesNeverOversubscribeAGpu) {
  constexpr int kWriters = 12;
  std::vector<std::unique_ptr<Store>> handles;
  for (int t = 0; t < kWriters; ++t) {
    auto handle = open_store(this->factory_.url());
    ASSERT_TRUE(handle.ok()) << handle.status().to_string();
    handles.push_back(std::move(*handle));
  }
  std::atomic<int> won{0}, tried{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kWriters; ++t) {
    threads.emplace_back([&, t] {
      const Status s = handles[t]->transact([&](Tx& tx) {
        const Status put = tx.allocations().insert_allocation({.job = core::JobId(200 + t),
                                                               .node = core::NodeId("race"),
                                                               .gpu_index = 0,
                                                               .gpu_type = core::GpuTypeId("A100"),
                                                               .epoch = 1,
                                                               .share_milli = 300});
        // Uncommitted until the others have tried too (or 50 ms): without the lock they
        // all would, and all find room. With it, this wait is one writer's turn.
        ++tried;
        const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
        while (tried.load() < kWriters && std::chrono::steady_clock::now() < until) {
          std::this_thread::yield();
        }
        return put;
      });
      if (s.ok()) ++won;
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(won.load(), 3);
}

TYPED_TEST(StoreConformance, ConcurrentWritersCannotDoubleAllocate) {
  // Eight threads race to allocate the same four GPUs; each GPU goes to exactly one.
  std::atomic<int> won{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int gpu = 0; gpu < 4; ++gpu) {
        const Status s = this->store_->transact([&](Tx& tx) {
          return tx.allocations().insert_allocation({.job = core::JobId(100 + t),
                                                     .node = core::NodeId("race"),
                                                     .gpu_index = gpu,
                                                     .gpu_type = core::GpuTypeId("A100"),
                                                     .epoch = 1});
        });
        if (s.ok()) ++won;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(won.load(), 4);
}

// The commit-time rack recount (server/cycle/shard_scope.h): eight writers at once each count
// the GPUs held on a capped rack's two nodes and take two more only while the rack has
// room for them (four GPUs in all). Locking the rack's cap rows makes them count one
// after the other, so exactly four GPUs are taken; without the lock, PostgreSQL's read
// committed lets them all count the same empty rack (sixteen GPUs taken).
TYPED_TEST(StoreConformance, LockRackHoldingsMakesCommitsOnOneRackTakeTurns) {
  const std::vector<core::NodeId> nodes = {core::NodeId("ra"), core::NodeId("rb")};
  ASSERT_TRUE(this->store_
                  ->transact([&](Tx& tx) {
                    CORRAL_RETURN_IF_ERROR(
                        tx.rack_caps().put_rack_cap({.rack = "r1",
                                                     .declared_by = "config",
                                                     .power_cap_watts = 2800,
                                                     .updated_at = core::time_from_ms(1)}));
                    return tx.rack_caps().put_rack_cap({.rack = "r1",
                                                        .declared_by = "node/ra",
                                                        .power_cap_watts = 3000,
                                                        .updated_at = core::time_from_ms(1)});
                  })
                  .ok());
  // Each writer on its own handle of the database, as replicas are (one handle would group
  // their commits into one transaction).
  constexpr int kWriters = 8;
  std::vector<std::unique_ptr<Store>> handles;
  for (int t = 0; t < kWriters; ++t) {
    auto handle = open_store(this->factory_.url());
    ASSERT_TRUE(handle.ok()) << handle.status().to_string();
    handles.push_back(std::move(*handle));
  }
  std::atomic<int> counted{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kWriters; ++t) {
    threads.emplace_back([&, t] {
      const Status s = handles[t]->transact([&](Tx& tx) {
        CORRAL_ASSIGN_OR_RETURN(const auto held, tx.rack_caps().lock_rack_holdings({"r1"}, nodes));
        // Room for the others to count too before this one writes: without the lock they
        // all would, and all find the rack empty. With it, this wait is one writer's turn.
        ++counted;
        const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
        while (counted.load() < kWriters && std::chrono::steady_clock::now() < until) {
          std::this_thread::yield();
        }
        std::int64_t gpus = 0;
        for (const auto& [node, n] : held) gpus += n;
        if (gpus + 2 > 4) return Status();  // no room: this writer takes nothing
        for (int g = 0; g < 2; ++g) {
          CORRAL_RETURN_IF_ERROR(
              tx.allocations().insert_allocation({.job = core::JobId(100 + t),
                                                  .node = nodes[t % 2],
                                                  .gpu_index = 2 * t + g,
                                                  .gpu_type = core::GpuTypeId("H100"),
                                                  .epoch = 1}));
        }
        return Status();
      });
      EXPECT_TRUE(s.ok()) << s.to_string();
    });
  }
  for (auto& th : threads) th.join();
  std::map<std::string, std::int64_t> held;
  ASSERT_TRUE(this->store_
                  ->transact([&](Tx& tx) {
                    CORRAL_ASSIGN_OR_RETURN(held, tx.rack_caps().lock_rack_holdings({"r1"}, nodes));
                    // A node that holds nothing is absent; no nodes, no count.
                    CORRAL_ASSIGN_OR_RETURN(const auto none,
                                            tx.rack_caps().lock_rack_holdings({"r1"}, {}));
                    EXPECT_TRUE(none.empty());
                    return Status();
                  })
                  .ok());
  std::int64_t total = 0;
  for (const auto& [node, n] : held) total += n;
  EXPECT_EQ(total, 4) << "the writers did not count one after the other";
}

TYPED_TEST(StoreConformance, EpochFencesStaleSchedulers) {
  std::int64_t first = 0, second = 0;
  ASSERT_TRUE(this->store_
                  ->transact([&](Tx& tx) {
                    CORRAL_ASSIGN_OR_RETURN(first, tx.scheduler().acquire_epoch("default", "a"));
                    return Status();
                  })
                  .ok());
  ASSERT_TRUE(this->store_
                  ->transact([&](Tx& tx) {
                    CORRAL_ASSIGN_OR_RETURN(second, tx.scheduler().acquire_epoch("default", "b"));
                    return Status();
                  })
                  .ok());
  EXPECT_EQ(second, first + 1);
  int runs = 0;
  const Status stale = this->store_->transact([&](Tx& tx) {
    ++runs;
    return tx.scheduler().check_epoch("default", first);
  });
  EXPECT_EQ(stale.code(), StatusCode::kAborted);
  EXPECT_TRUE(stale.is(core::ErrorReason::kStaleEpoch)) << stale.to_string();
  EXPECT_TRUE(is_stale_epoch(stale)) << stale.to_string();
  EXPECT_EQ(runs, 1) << "a stale epoch is final, never retried";
  EXPECT_TRUE(
      this->store_->transact([&](Tx& tx) { return tx.scheduler().check_epoch("default", second); })
          .ok());
}

// transact() runs a call again only when it raced (ErrorReason::kRaced), each run from a
// clean slate; every other refusal, Aborted or not, is the answer and comes back after
// one run. (The retry used to be decided by the message: an Aborted without the word
// "epoch", such as a refused stale report, ran five times.)
TYPED_TEST(StoreConformance, TransactRetriesOnlyRaces) {
  int runs = 0;
  const Status won = this->store_->transact([&](Tx& tx) {
    CORRAL_RETURN_IF_ERROR(tx.jobs().insert_job(this->job("a")).status());
    return ++runs < 3 ? core::raced("job changed meanwhile") : Status();
  });
  EXPECT_TRUE(won.ok()) << won.to_string();
  EXPECT_EQ(runs, 3);
  std::int64_t pending = -1;
  ASSERT_TRUE(this->store_
                  ->read([&](Tx& tx) {
                    CORRAL_ASSIGN_OR_RETURN(pending,
                                            tx.jobs().count_pending_jobs(core::TenantId("a")));
                    return Status();
                  })
                  .ok());
  EXPECT_EQ(pending, 1) << "the raced runs' writes were rolled back";

  runs = 0;
  const Status lost = this->store_->transact([&](Tx&) {
    ++runs;
    return core::raced("job changed meanwhile");
  });
  EXPECT_TRUE(lost.is(core::ErrorReason::kRaced));
  EXPECT_GT(runs, 1);

  const std::vector<std::pair<const char*, Status>> final_answers = {
      {"fenced", core::fenced("node n1 has not joined; join again")},
      {"stale attempt", core::stale_attempt("attempt 1 of job 7 is not its current attempt (2)")},
      {"stale epoch", core::stale_epoch("scheduler epoch 1 of shard default is stale")},
      {"aborted without a reason", Status(StatusCode::kAborted, "conflict")},
      {"failed precondition", core::failed_precondition("job 7 is running")},
  };
  for (const auto& [name, answer] : final_answers) {
    SCOPED_TRACE(name);
    runs = 0;
    const Status got = this->store_->transact([&](Tx&) {
      ++runs;
      return answer;
    });
    EXPECT_EQ(got, answer);
    EXPECT_EQ(runs, 1);
  }
}

TYPED_TEST(StoreConformance, IdempotencyKeysAreUniquePerScope) {
  const IdempotencyRow row{.scope = "alice",
                           .key = "k1",
                           .request_hash = "h",
                           .status = 201,
                           .response_body = R"({"id":1})"};
  ASSERT_TRUE(
      this->store_->transact([&](Tx& tx) { return tx.security().put_idempotency(row); }).ok());
  EXPECT_EQ(
      this->store_->transact([&](Tx& tx) { return tx.security().put_idempotency(row); }).code(),
      StatusCode::kAlreadyExists);
  IdempotencyRow other = row;
  other.scope = "bob";
  EXPECT_TRUE(
      this->store_->transact([&](Tx& tx) { return tx.security().put_idempotency(other); }).ok());
  std::optional<IdempotencyRow> got;
  ASSERT_TRUE(this->store_
                  ->transact([&](Tx& tx) {
                    CORRAL_ASSIGN_OR_RETURN(got, tx.security().get_idempotency("alice", "k1"));
                    return Status();
                  })
                  .ok());
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->status, 201);
  EXPECT_EQ(got->response_body, R"({"id":1})");
}

TYPED_TEST(StoreConformance, AuditHeadChainsEntries) {
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(this->store_
                    ->transact([&](Tx& tx) {
                      CORRAL_ASSIGN_OR_RETURN(auto head, tx.audit().lock_audit_head());
                      return tx.audit().insert_audit({.seq = head.next_seq,
                                                      .actor = "admin",
                                                      .action = "test",
                                                      .target = "x",
                                                      .prev_hash = head.prev_hash,
                                                      .hash = "h" + std::to_string(head.next_seq)});
                    })
                    .ok());
  }
  std::vector<AuditRow> rows;
  ASSERT_TRUE(this->store_
                  ->transact([&](Tx& tx) {
                    CORRAL_ASSIGN_OR_RETURN(rows, tx.audit().list_audit(0, 100));
                    return Status();
                  })
                  .ok());
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].seq, 1);
  EXPECT_EQ(rows[0].prev_hash, "");
  EXPECT_EQ(rows[2].prev_hash, "h2");
}

// Observed state round-trips typed, is replaced whole (a GPU no longer judged is not kept),
// and never touches the registration.
TYPED_TEST(StoreConformance, KeepsWhatAgentsObserveTypedAndReplacesItWhole) {
  const ObservedNode first{
      .node = core::NodeId("n1"),
      .inventory = {.source = "simulated:dgx-h100",
                    .gpus = {{.index = 0,
                              .uuid = "GPU-0",
                              .model = "NVIDIA H100 80GB HBM3",
                              .memory_mib = 81559,
                              .power_limit_w = 700,
                              .pci_bus_id = "0000:18:00.0",
                              .nvlink_peers = {1}}}},
      .gpus = {{.index = 0, .condition = core::GpuCondition::kOk},
               {.index = 1, .condition = core::GpuCondition::kUnhealthy, .problem = "XID 79"}},
      .readings = {{.index = 0,
                    .uuid = "GPU-0",
                    .xid_errors = {13},
                    .temperature_c = 61,
                    .power_w = 412.5,
                    .throttle = {"sw_power_cap"}}},
      .heartbeat_at = core::time_from_ms(5000)};
  ObservedNode second = first;
  second.node = core::NodeId("n2");
  second.gpus = {{.index = 3, .condition = core::GpuCondition::kHot, .problem = "hot: 95 C"}};
  ASSERT_TRUE(this->store_
                  ->transact([&](Tx& tx) {
                    CORRAL_RETURN_IF_ERROR(tx.nodes().upsert_node(
                        {.id = core::NodeId("n1"), .spec_json = "{\"v\":1}"}));
                    CORRAL_RETURN_IF_ERROR(tx.nodes().upsert_observed(second));
                    return tx.nodes().upsert_observed(first);
                  })
                  .ok());
  ObservedNode replaced = first;
  replaced.gpus = {{.index = 1, .condition = core::GpuCondition::kOk}};
  replaced.heartbeat_at = core::time_from_ms(6000);
  ASSERT_TRUE(this->store_
                  ->transact([&](Tx& tx) {
                    CORRAL_ASSIGN_OR_RETURN(auto got, tx.nodes().get_observed(core::NodeId("n1")));
                    EXPECT_EQ(got, std::optional<ObservedNode>(first));
                    CORRAL_ASSIGN_OR_RETURN(auto all, tx.nodes().list_observed());
                    EXPECT_EQ(all, (std::vector<ObservedNode>{first, second}));
                    CORRAL_ASSIGN_OR_RETURN(auto none, tx.nodes().get_observed(core::NodeId("n9")));
                    EXPECT_FALSE(none.has_value());
                    return tx.nodes().upsert_observed(replaced);
                  })
                  .ok());
  ASSERT_TRUE(this->store_
                  ->transact([&](Tx& tx) {
                    CORRAL_ASSIGN_OR_RETURN(auto all, tx.nodes().list_observed());
                    EXPECT_EQ(all, (std::vector<ObservedNode>{replaced, second}));
                    CORRAL_ASSIGN_OR_RETURN(auto node, tx.nodes().get_node(core::NodeId("n1")));
                    EXPECT_EQ(node ? node->spec_json : "", "{\"v\":1}");
                    return Status();
                  })
                  .ok());
}

// A heartbeat's write (update_observed) changes the readings and time, and the
// conditions only when given; the join's inventory stays; a node never observed says so.
TYPED_TEST(StoreConformance, AHeartbeatUpdatesReadingsAndOnlyTheConditionsGiven) {
  const ObservedNode joined{
      .node = core::NodeId("n1"),
      .inventory = {.source = "simulated:dgx-h100",
                    .gpus = {{.index = 0, .uuid = "GPU-0", .model = "NVIDIA H100 80GB HBM3"}}},
      .gpus = {{.index = 0, .condition = core::GpuCondition::kOk}},
      .heartbeat_at = core::time_from_ms(1000)};
  const std::vector<core::GpuHealth> readings = {{.index = 0, .uuid = "GPU-0", .power_w = 300}};
  const std::vector<GpuObservation> hot = {{.index = 0,
                                            .condition = core::GpuCondition::kHot,
                                            .problem = "hot: 95 C",
                                            .power_limit_w = 650}};
  ASSERT_TRUE(
      this->store_
          ->transact([&](Tx& tx) {
            CORRAL_RETURN_IF_ERROR(tx.nodes().upsert_observed(joined));
            CORRAL_ASSIGN_OR_RETURN(const bool unknown,
                                    tx.nodes().update_observed(core::NodeId("n9"), hot, readings,
                                                               core::time_from_ms(2000)));
            EXPECT_FALSE(unknown);
            CORRAL_ASSIGN_OR_RETURN(const bool kept,
                                    tx.nodes().update_observed(core::NodeId("n1"), std::nullopt,
                                                               readings, core::time_from_ms(2000)));
            EXPECT_TRUE(kept);
            CORRAL_ASSIGN_OR_RETURN(auto got, tx.nodes().get_observed(core::NodeId("n1")));
            ObservedNode want = joined;
            want.readings = readings;
            want.heartbeat_at = core::time_from_ms(2000);
            EXPECT_EQ(got, std::optional<ObservedNode>(want));
            CORRAL_ASSIGN_OR_RETURN(const bool changed,
                                    tx.nodes().update_observed(core::NodeId("n1"), hot, readings,
                                                               core::time_from_ms(3000)));
            EXPECT_TRUE(changed);
            CORRAL_ASSIGN_OR_RETURN(auto conditions,
                                    tx.nodes().list_gpu_conditions(core::NodeId("n1")));
            EXPECT_EQ(conditions, hot);
            CORRAL_ASSIGN_OR_RETURN(auto none, tx.nodes().list_gpu_conditions(core::NodeId("n9")));
            EXPECT_TRUE(none.empty());
            CORRAL_ASSIGN_OR_RETURN(got, tx.nodes().get_observed(core::NodeId("n1")));
            EXPECT_EQ(got ? got->inventory : core::ObservedInventory{}, joined.inventory);
            EXPECT_FALSE(tx.nodes().get_observed(core::NodeId("n9"))->has_value());
            // A cycle's read: the same but for the readings.
            CORRAL_ASSIGN_OR_RETURN(auto light, tx.nodes().list_observed_without_readings());
            ObservedNode judged = *got;
            judged.readings.clear();
            EXPECT_EQ(light, std::vector<ObservedNode>{judged});
            EXPECT_EQ(light.at(0).gpus, hot);
            return Status();
          })
          .ok());
}

TYPED_TEST(StoreConformance, KeepsNodesTenantsReservationsAndTokens) {
  ASSERT_TRUE(this->store_
                  ->transact([&](Tx& tx) {
                    CORRAL_RETURN_IF_ERROR(
                        tx.nodes().upsert_node({.id = core::NodeId("n1"),
                                                .spec_json = "{}",
                                                .admin = core::NodeAdminState::kActive}));
                    CORRAL_RETURN_IF_ERROR(
                        tx.nodes().upsert_node({.id = core::NodeId("n1"),
                                                .spec_json = "{\"v\":2}",
                                                .admin = core::NodeAdminState::kCordoned}));
                    CORRAL_RETURN_IF_ERROR(tx.tenants().put_tenant(
                        {.id = core::TenantId("nlp"), .config_json = "{}"}));
                    CORRAL_RETURN_IF_ERROR(tx.tenants().insert_reservation(
                        {.id = core::ReservationId("r1"), .tenant = core::TenantId("nlp")}));
                    return tx.security().insert_token({.hash = "abc", .role = "admin"});
                  })
                  .ok());
  ASSERT_TRUE(this->store_
                  ->transact([&](Tx& tx) {
                    CORRAL_ASSIGN_OR_RETURN(auto node, tx.nodes().get_node(core::NodeId("n1")));
                    EXPECT_TRUE(node.has_value());
                    if (node) {
                      EXPECT_EQ(node->admin, core::NodeAdminState::kCordoned);
                      EXPECT_EQ(node->spec_json, "{\"v\":2}");
                    }
                    CORRAL_ASSIGN_OR_RETURN(auto tenants, tx.tenants().list_tenants());
                    EXPECT_EQ(tenants.size(), 1u);
                    CORRAL_ASSIGN_OR_RETURN(auto res, tx.tenants().list_reservations());
                    EXPECT_EQ(res.size(), 1u);
                    CORRAL_ASSIGN_OR_RETURN(auto token, tx.security().find_token("abc"));
                    EXPECT_TRUE(token.has_value());
                    CORRAL_ASSIGN_OR_RETURN(auto none, tx.security().find_token("zzz"));
                    EXPECT_FALSE(none.has_value());
                    return Status();
                  })
                  .ok());
  // A deleted node is gone with what its agent observed; its agent session (and fencing
  // epoch) stays.
  ASSERT_TRUE(
      this->store_
          ->transact([&](Tx& tx) {
            const core::NodeId n1("n1");
            CORRAL_RETURN_IF_ERROR(tx.nodes().upsert_observed(
                {.node = n1, .gpus = {{.index = 0}}, .heartbeat_at = core::time_from_ms(5)}));
            CORRAL_RETURN_IF_ERROR(
                tx.agents().upsert_agent_session({.node = n1,
                                                  .epoch = 3,
                                                  .joined_at = core::time_from_ms(1),
                                                  .heartbeat_at = core::time_from_ms(5)}));
            return tx.nodes().delete_node(n1);
          })
          .ok());
  ASSERT_TRUE(this->store_
                  ->transact([&](Tx& tx) {
                    const core::NodeId n1("n1");
                    CORRAL_ASSIGN_OR_RETURN(auto node, tx.nodes().get_node(n1));
                    EXPECT_FALSE(node.has_value());
                    CORRAL_ASSIGN_OR_RETURN(auto nodes, tx.nodes().list_nodes());
                    EXPECT_TRUE(nodes.empty());
                    CORRAL_ASSIGN_OR_RETURN(auto observed, tx.nodes().get_observed(n1));
                    EXPECT_FALSE(observed.has_value());
                    CORRAL_ASSIGN_OR_RETURN(auto session, tx.agents().get_agent_session(n1));
                    EXPECT_TRUE(session.has_value() && session->epoch == 3);
                    return Status();
                  })
                  .ok());
}

// A tenant's submit bucket: a new one is the one offered, a kept one is returned as put
// (its fraction of a token included), and it goes with its tenant.
TYPED_TEST(StoreConformance, KeepsSubmitBucketsWithTheirTenants) {
  const core::TenantId nlp("nlp");
  const auto lock = [&](double offered) {
    store::SubmitBucketRow got;
    EXPECT_TRUE(
        this->store_
            ->transact([&](Tx& tx) {
              CORRAL_RETURN_IF_ERROR(tx.tenants().lock_tenants({nlp}, store::TenantLock::kSubmit));
              CORRAL_ASSIGN_OR_RETURN(
                  got, tx.tenants().lock_submit_bucket(
                           {.tenant = nlp, .tokens = offered, .as_of = core::time_from_ms(7)}));
              return Status();
            })
            .ok());
    return got;
  };
  ASSERT_TRUE(this->store_
                  ->transact([&](Tx& tx) {
                    return tx.tenants().put_tenant({.id = nlp, .config_json = "{}"});
                  })
                  .ok());
  EXPECT_EQ(lock(4).tokens, 4);  // new: the offered one, stored
  ASSERT_TRUE(this->store_
                  ->transact([&](Tx& tx) {
                    return tx.tenants().put_submit_bucket(
                        {.tenant = nlp, .tokens = 2.125, .as_of = core::time_from_ms(9)});
                  })
                  .ok());
  const store::SubmitBucketRow kept = lock(4);
  EXPECT_EQ(kept.tokens, 2.125);
  EXPECT_EQ(kept.as_of, core::time_from_ms(9));
  ASSERT_TRUE(this->store_->transact([&](Tx& tx) { return tx.tenants().delete_tenant(nlp); }).ok());
  EXPECT_EQ(lock(3).tokens, 3);  // gone with its tenant
}

TYPED_TEST(StoreConformance, KeepsCheckpoints) {
  ASSERT_TRUE(this->store_
                  ->transact([&](Tx& tx) {
                    for (int step : {100, 200}) {
                      CORRAL_RETURN_IF_ERROR(tx.checkpoints().insert_checkpoint(
                          {.job = core::JobId(7),
                           .attempt = 1,
                           .step = step,
                           .uri = "file:///ckpt/" + std::to_string(step),
                           .time = core::time_from_ms(step),
                           .gpus = 4,
                           .throughput = step / 8.0}));
                    }
                    return Status();
                  })
                  .ok());
  ASSERT_TRUE(this->store_
                  ->transact([&](Tx& tx) {
                    CORRAL_ASSIGN_OR_RETURN(auto latest,
                                            tx.checkpoints().latest_checkpoint(core::JobId(7)));
                    EXPECT_TRUE(latest.has_value());
                    if (latest) {
                      EXPECT_EQ(latest->step, 200);
                      EXPECT_EQ(latest->gpus, 4);
                      EXPECT_DOUBLE_EQ(latest->throughput, 25.0);
                    }
                    return Status();
                  })
                  .ok());
}

TelemetryRow telemetry_row(const char* node, std::int32_t gpu, std::int64_t t_ms, double util,
                           double power, std::int32_t temp) {
  return {.node = core::NodeId(node),
          .gpu_index = gpu,
          .time = core::time_from_ms(t_ms),
          .utilization = util,
          .memory_used_mib = static_cast<std::int64_t>(util * 80000),
          .power_watts = power,
          .temperature_c = temp};
}

// Raw samples come back exactly, by time, and only the asked GPU's window.
TYPED_TEST(StoreConformance, KeepsTelemetrySamples) {
  std::vector<TelemetryRow> rows;
  for (int i = 0; i < 150; ++i) {  // more than one INSERT's chunk
    rows.push_back(telemetry_row("n1", i % 2, 1'000 * (150 - i), 0.125 * (i % 8), 100.5 + i, 40));
  }
  rows[3].throttle = {"hw_thermal_slowdown", "sw_power_cap"};
  rows[3].ecc_corrected = 7;
  rows[3].ecc_uncorrected = 1;
  rows.push_back(telemetry_row("n2", 0, 5'000, 1, 700, 80));
  ASSERT_TRUE(
      this->store_->transact([&](Tx& tx) { return tx.records().insert_telemetry_batch(rows); })
          .ok());
  std::vector<TelemetryRow> got;
  ASSERT_TRUE(this->store_
                  ->read([&](Tx& tx) {
                    CORRAL_ASSIGN_OR_RETURN(
                        got, tx.records().list_telemetry(core::NodeId("n1"), 1,
                                                         core::time_from_ms(10'000),
                                                         core::time_from_ms(20'000)));
                    return Status();
                  })
                  .ok());
  std::vector<TelemetryRow> want;
  for (const auto& r : rows) {
    if (r.node.value == "n1" && r.gpu_index == 1 && core::to_ms(r.time) >= 10'000 &&
        core::to_ms(r.time) < 20'000) {
      want.push_back(r);
    }
  }
  std::sort(want.begin(), want.end(), [](const auto& a, const auto& b) { return a.time < b.time; });
  ASSERT_EQ(want.size(), 5u);
  EXPECT_EQ(got, want);
  ASSERT_TRUE(this->store_
                  ->read([&](Tx& tx) {
                    CORRAL_ASSIGN_OR_RETURN(
                        got, tx.records().list_telemetry(core::NodeId("n1"), 1,
                                                         core::time_from_ms(147'000),
                                                         core::time_from_ms(148'000)));
                    return Status();
                  })
                  .ok());
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0], rows[3]);
}

// Usage samples come back exactly, by (time, tenant); one again at the same (tenant,
// time) replaces it; a window, a tenant filter and the retention delete each hold.
TYPED_TEST(StoreConformance, KeepsUsageHistory) {
  // Allocated GPUs with a share's fraction (2.25), exact in binary as `share` below.
  const auto sample = [](std::int64_t t_ms, const char* tenant, double allocated) {
    return UsageSampleRow{
        .time = core::time_from_ms(t_ms),
        .tenant = tenant,
        .gpus = 32.5,
        .allocated = allocated,
        .borrowed = allocated / 2,
        .utilization = 0.625,
        .share = 0.375,  // exact in binary: SQLite reads decimal text back to within an ulp only
        .usage_gpus = 7.25,
        .pending = 3,
        .preemptions = 1,
        .restarts = 2,
        .placed = 4,
        .wait_ms_sum = 12'345};
  };
  std::vector<UsageSampleRow> rows = {sample(2'000, "b", 8), sample(1'000, "*", 16.75),
                                      sample(1'000, "a", 4.25), sample(2'000, "a", 6),
                                      sample(3'000, "a", 2)};
  ASSERT_TRUE(
      this->store_->transact([&](Tx& tx) { return tx.records().insert_usage_samples(rows); }).ok());
  rows[3].allocated = 7;  // again: replaces
  ASSERT_TRUE(
      this->store_->transact([&](Tx& tx) { return tx.records().insert_usage_samples({rows[3]}); })
          .ok());
  std::vector<UsageSampleRow> all, a_only;
  std::int64_t deleted = 0;
  ASSERT_TRUE(this->store_
                  ->read([&](Tx& tx) {
                    CORRAL_ASSIGN_OR_RETURN(all, tx.records().list_usage_samples(
                                                     core::time_from_ms(1'000),
                                                     core::time_from_ms(3'000), std::nullopt));
                    CORRAL_ASSIGN_OR_RETURN(
                        a_only, tx.records().list_usage_samples(core::time_from_ms(0),
                                                                core::time_from_ms(10'000), "a"));
                    return Status();
                  })
                  .ok());
  EXPECT_EQ(all, (std::vector<UsageSampleRow>{rows[1], rows[2], rows[3], rows[0]}));
  EXPECT_EQ(a_only, (std::vector<UsageSampleRow>{rows[2], rows[3], rows[4]}));
  ASSERT_TRUE(this->store_
                  ->transact([&](Tx& tx) {
                    CORRAL_ASSIGN_OR_RETURN(deleted, tx.records().delete_usage_samples_before(
                                                         core::time_from_ms(2'000)));
                    CORRAL_ASSIGN_OR_RETURN(
                        all, tx.records().list_usage_samples(
                                 core::time_from_ms(0), core::time_from_ms(10'000), std::nullopt));
                    return Status();
                  })
                  .ok());
  EXPECT_EQ(deleted, 2);
  EXPECT_EQ(all, (std::vector<UsageSampleRow>{rows[3], rows[0], rows[4]}));
}

// Rollups add up every batch's samples per GPU and bucket: sums for averages, maxima.
TYPED_TEST(StoreConformance, RollsTelemetryUpByMinuteAndHour) {
  constexpr std::int64_t kHour = 3'600'000;
  const std::int64_t t0 = 500 * kHour;  // aligned to the hour
  // Two batches into one minute (so the upsert adds), one sample in the next minute and
  // one in the next hour; n2 beside it.
  const std::vector<std::vector<TelemetryRow>> batches = {
      {telemetry_row("n1", 0, t0 + 1'000, 0.2, 100, 50),
       telemetry_row("n1", 0, t0 + 2'000, 0.6, 300, 70)},
      {telemetry_row("n1", 0, t0 + 3'000, 0.4, 200, 60),
       telemetry_row("n1", 0, t0 + 61'000, 1.0, 500, 90),
       telemetry_row("n1", 0, t0 + kHour + 5, 0.5, 250, 55),
       telemetry_row("n2", 3, t0 + 4'000, 0.9, 650, 66)}};
  auto throttled = batches;
  throttled[1][0].throttle = {"sw_power_cap"};
  throttled[1][0].ecc_uncorrected = 2;
  for (const auto& b : throttled) {
    ASSERT_TRUE(
        this->store_->transact([&](Tx& tx) { return tx.records().insert_telemetry_batch(b); })
            .ok());
  }
  std::vector<TelemetryRollupRow> minutes, hours, n2;
  ASSERT_TRUE(
      this->store_
          ->read([&](Tx& tx) {
            const auto from = core::time_from_ms(t0), to = core::time_from_ms(t0 + 2 * kHour);
            CORRAL_ASSIGN_OR_RETURN(
                minutes, tx.records().list_telemetry_rollup(TelemetryResolution::kMinute, from, to,
                                                            core::NodeId("n1")));
            CORRAL_ASSIGN_OR_RETURN(hours, tx.records().list_telemetry_rollup(
                                               TelemetryResolution::kHour, from, to, std::nullopt));
            CORRAL_ASSIGN_OR_RETURN(
                n2, tx.records().list_telemetry_rollup(TelemetryResolution::kMinute, from, to,
                                                       core::NodeId("n2")));
            return Status();
          })
          .ok());
  ASSERT_EQ(minutes.size(), 3u);
  EXPECT_EQ(core::to_ms(minutes[0].start), t0);
  EXPECT_EQ(minutes[0].samples, 3);
  EXPECT_NEAR(minutes[0].avg_utilization, 0.4, 1e-12);
  EXPECT_DOUBLE_EQ(minutes[0].max_utilization, 0.6);
  EXPECT_NEAR(minutes[0].avg_power_watts, 200, 1e-9);
  EXPECT_DOUBLE_EQ(minutes[0].max_power_watts, 300);
  EXPECT_EQ(minutes[0].max_temperature_c, 70);
  EXPECT_EQ(minutes[0].max_memory_used_mib, 48000);
  EXPECT_EQ(minutes[0].throttled_samples, 1);
  EXPECT_EQ(minutes[0].max_ecc_uncorrected, 2);
  EXPECT_EQ(core::to_ms(minutes[1].start), t0 + 60'000);
  EXPECT_EQ(minutes[1].samples, 1);
  EXPECT_EQ(minutes[1].max_temperature_c, 90);
  EXPECT_EQ(core::to_ms(minutes[2].start), t0 + kHour);
  ASSERT_EQ(n2.size(), 1u);
  EXPECT_EQ(n2[0].gpu_index, 3);
  EXPECT_DOUBLE_EQ(n2[0].avg_utilization, 0.9);
  // Hours: n1's first hour (4 samples), its second (1), n2's first; by node, GPU, start.
  ASSERT_EQ(hours.size(), 3u);
  EXPECT_EQ(hours[0].node.value, "n1");
  EXPECT_EQ(hours[0].samples, 4);
  EXPECT_NEAR(hours[0].avg_utilization, 0.55, 1e-12);
  EXPECT_DOUBLE_EQ(hours[0].max_power_watts, 500);
  EXPECT_EQ(hours[0].max_temperature_c, 90);
  EXPECT_EQ(core::to_ms(hours[1].start), t0 + kHour);
  EXPECT_EQ(hours[2].node.value, "n2");
}

// Retention: each table loses what is older than its own cutoff, and nothing else.
TYPED_TEST(StoreConformance, DeletesTelemetryBeforeCutoffs) {
  constexpr std::int64_t kHour = 3'600'000;
  const std::int64_t t0 = 600 * kHour;
  std::vector<TelemetryRow> rows;
  for (int m = 0; m < 180; m += 30)
    rows.push_back(telemetry_row("n1", 0, t0 + m * 60'000, 0.5, 1, 1));
  ASSERT_TRUE(
      this->store_->transact([&](Tx& tx) { return tx.records().insert_telemetry_batch(rows); })
          .ok());
  std::int64_t deleted = 0;
  ASSERT_TRUE(this->store_
                  ->transact([&](Tx& tx) {
                    CORRAL_ASSIGN_OR_RETURN(
                        deleted, tx.records().delete_telemetry_before(
                                     {.raw = core::time_from_ms(t0 + 100 * 60'000),    // 4 of 6
                                      .minute = core::time_from_ms(t0 + 31 * 60'000),  // 2 of 6
                                      .hour = core::time_from_ms(t0 + kHour)}));       // 1 of 3
                    return Status();
                  })
                  .ok());
  EXPECT_EQ(deleted, 4 + 2 + 1);
  ASSERT_TRUE(this->store_
                  ->read([&](Tx& tx) {
                    const auto all_from = core::time_from_ms(0),
                               all_to = core::time_from_ms(t0 + 10 * kHour);
                    CORRAL_ASSIGN_OR_RETURN(auto raw, tx.records().list_telemetry(
                                                          core::NodeId("n1"), 0, all_from, all_to));
                    EXPECT_EQ(raw.size(), 2u);
                    if (!raw.empty()) {
                      EXPECT_EQ(core::to_ms(raw[0].time), t0 + 120 * 60'000);
                    }
                    CORRAL_ASSIGN_OR_RETURN(auto minutes, tx.records().list_telemetry_rollup(
                                                              TelemetryResolution::kMinute,
                                                              all_from, all_to, std::nullopt));
                    EXPECT_EQ(minutes.size(), 4u);
                    CORRAL_ASSIGN_OR_RETURN(auto hours, tx.records().list_telemetry_rollup(
                                                            TelemetryResolution::kHour, all_from,
                                                            all_to, std::nullopt));
                    EXPECT_EQ(hours.size(), 2u);
                    return Status();
                  })
                  .ok());
}

// A GPU's throttled-since time is kept with its condition; none reads back as none.
TYPED_TEST(StoreConformance, KeepsGpuThrottledSince) {
  ObservedNode row{.node = core::NodeId("n1"),
                   .gpus = {{.index = 0,
                             .condition = core::GpuCondition::kHot,
                             .problem = "throttled",
                             .throttled_since = core::time_from_ms(1234)},
                            {.index = 1}},
                   .heartbeat_at = core::time_from_ms(2000)};
  ASSERT_TRUE(this->store_->transact([&](Tx& tx) { return tx.nodes().upsert_observed(row); }).ok());
  std::optional<ObservedNode> got;
  ASSERT_TRUE(this->store_
                  ->read([&](Tx& tx) {
                    CORRAL_ASSIGN_OR_RETURN(got, tx.nodes().get_observed(core::NodeId("n1")));
                    return Status();
                  })
                  .ok());
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->gpus, row.gpus);
}

TYPED_TEST(StoreConformance, JobEventsComeBackInOrder) {
  ASSERT_TRUE(this->store_
                  ->transact([&](Tx& tx) {
                    for (const char* kind : {"submitted", "pending", "placed"}) {
                      CORRAL_RETURN_IF_ERROR(tx.records().append_job_event(
                          {.job = core::JobId(3), .kind = kind, .message = kind}));
                    }
                    return Status();
                  })
                  .ok());
  std::vector<JobEventRow> events;
  ASSERT_TRUE(this->store_
                  ->transact([&](Tx& tx) {
                    CORRAL_ASSIGN_OR_RETURN(events, tx.records().list_job_events(core::JobId(3)));
                    return Status();
                  })
                  .ok());
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[2].kind, "placed");
}

TYPED_TEST(StoreConformance, KeepsAgentSessionsWorkersAndRestarts) {
  const core::NodeId n1("n1"), n2("n2");
  const auto t = [](std::int64_t ms) { return core::time_from_ms(ms); };
  ASSERT_TRUE(
      this->store_
          ->transact([&](Tx& tx) {
            CORRAL_ASSIGN_OR_RETURN(auto job, tx.jobs().insert_job(this->job("a")));
            // Restart bookkeeping round-trips through update_job.
            JobRow next = job;
            next.phase = JobPhase::kPending;
            next.restarts = 2;
            next.not_before = t(5000);
            CORRAL_ASSIGN_OR_RETURN(const bool won, tx.jobs().update_job(next, JobPhase::kPending));
            EXPECT_TRUE(won);
            CORRAL_RETURN_IF_ERROR(tx.nodes().upsert_node({.id = n1,
                                                           .spec_json = "{}",
                                                           .admin = core::NodeAdminState::kDraining,
                                                           .admin_reason = "gpu 3: XID 79",
                                                           .created_at = t(1),
                                                           .updated_at = t(1)}));
            CORRAL_RETURN_IF_ERROR(tx.agents().upsert_agent_session({.node = n1,
                                                                     .epoch = 1,
                                                                     .agent_url = "http://h:1",
                                                                     .log_key = "k",
                                                                     .joined_at = t(10),
                                                                     .heartbeat_at = t(20)}));
            store::AgentSessionRow lost{.node = n1,
                                        .epoch = 2,
                                        .agent_url = "http://h:1",
                                        .log_key = "k",
                                        .joined_at = t(10),
                                        .heartbeat_at = t(20),
                                        .lost = true};
            CORRAL_RETURN_IF_ERROR(tx.agents().upsert_agent_session(lost));
            for (const auto& [node, gpu] : {std::pair{n1, 0}, {n1, 1}, {n2, 0}}) {
              CORRAL_RETURN_IF_ERROR(
                  tx.allocations().insert_allocation({.job = job.id,
                                                      .attempt = 1,
                                                      .node = node,
                                                      .gpu_index = gpu,
                                                      .gpu_type = core::GpuTypeId("H100"),
                                                      .epoch = 1,
                                                      .created_at = t(30)}));
            }
            CORRAL_RETURN_IF_ERROR(
                tx.agents().upsert_worker({.job = job.id,
                                           .attempt = 1,
                                           .rank = 0,
                                           .node = n1,
                                           .pid = 7,
                                           .state = core::WorkerStatus::State::kRunning,
                                           .started_at = t(31)}));
            CORRAL_RETURN_IF_ERROR(
                tx.agents().upsert_worker({.job = job.id,
                                           .attempt = 1,
                                           .rank = 0,
                                           .node = n1,
                                           .pid = 7,
                                           .state = core::WorkerStatus::State::kExited,
                                           .exit_code = 3,
                                           .started_at = t(31),
                                           .exited_at = t(40)}));
            CORRAL_RETURN_IF_ERROR(tx.checkpoints().insert_checkpoint(
                {.job = job.id, .attempt = 1, .step = 10, .uri = "/c/10", .time = t(50)}));
            CORRAL_RETURN_IF_ERROR(tx.checkpoints().insert_checkpoint(
                {.job = job.id, .attempt = 1, .step = 20, .uri = "/c/20", .time = t(60)}));
            return Status();
          })
          .ok());
  ASSERT_TRUE(
      this->store_
          ->transact([&](Tx& tx) {
            CORRAL_ASSIGN_OR_RETURN(auto job, tx.jobs().get_job(core::JobId(1)));
            EXPECT_EQ(job->restarts, 2);
            EXPECT_EQ(job->not_before, t(5000));
            CORRAL_ASSIGN_OR_RETURN(auto node, tx.nodes().get_node(n1));
            EXPECT_EQ(node->admin_reason, "gpu 3: XID 79");
            CORRAL_ASSIGN_OR_RETURN(auto session, tx.agents().get_agent_session(n1));
            EXPECT_EQ(session->epoch, 2);
            EXPECT_TRUE(session->lost);
            EXPECT_EQ(session->heartbeat_at, t(20));
            CORRAL_ASSIGN_OR_RETURN(auto none, tx.agents().get_agent_session(n2));
            EXPECT_FALSE(none.has_value());
            CORRAL_ASSIGN_OR_RETURN(auto sessions, tx.agents().list_agent_sessions());
            EXPECT_EQ(sessions.size(), 1u);
            CORRAL_ASSIGN_OR_RETURN(auto workers, tx.agents().list_workers(job->id));
            EXPECT_EQ(workers.size(), 1u);  // one row per (job, attempt, rank)
            EXPECT_EQ(workers.at(0).state, core::WorkerStatus::State::kExited);
            EXPECT_EQ(workers.at(0).exit_code, 3);
            CORRAL_ASSIGN_OR_RETURN(auto on_n1, tx.allocations().list_active_allocations_on(n1));
            EXPECT_EQ(on_n1.size(), 2u);
            // Fencing a node releases only that node's allocations.
            CORRAL_ASSIGN_OR_RETURN(auto released,
                                    tx.allocations().release_allocations_on(n1, t(70)));
            EXPECT_EQ(released, 2);
            CORRAL_ASSIGN_OR_RETURN(auto active, tx.allocations().list_active_allocations());
            EXPECT_EQ(active.size(), 1u);
            EXPECT_EQ(active.at(0).node, n2);
            CORRAL_ASSIGN_OR_RETURN(auto ckpts, tx.checkpoints().list_checkpoints(job->id));
            EXPECT_EQ(ckpts.size(), 2u);
            EXPECT_EQ(ckpts.back().uri, "/c/20");
            return Status();
          })
          .ok());
}

}  // namespace
}  // namespace corral::store
