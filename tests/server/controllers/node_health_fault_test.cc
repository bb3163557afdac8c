// declare_node_lost against a store that fails writes (testing/faulty_store.h): for every
// write the controller makes, failing that write leaves the store exactly as it was, and a
// retry then does what a fault-free run does. A persistent fault keeps failing without
// changing anything, and a lost commit (the callback ran, the commit did not) leaves
// nothing behind either. Run over both stores.
#include <memory>
#include <sstream>
#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "core/job_spec.h"
#include "core/job_spec_parse.h"
#include "server/base/spec_cache.h"
#include "server/controllers/assignment_board.h"
#include "server/controllers/lifecycle.h"
#include "server/controllers/node_health.h"
#include "store/store.h"
#include "testing/faulty_store.h"
#include "testing/store_fixture.h"

namespace corral::server {
namespace {

using core::JobPhase;
using core::Status;
using core::StatusCode;
using testing::Fault;
using testing::FaultyStore;

const core::NodeId kLost("n1");
const core::NodeId kOther("n2");
const core::Time kHealthNow = core::time_from_ms(50'000);

// A valid stored spec (the controller decodes it for the job's restart budget).
std::string train_spec_json() {
  const auto parsed = core::parse_job_spec(
      R"({"name": "train", "tenant": "t1", "resources": {"gpus": 2, "gpuTypes": ["H100"]},
          "command": ["run"]})",
      core::SpecFormat::kJson);
  EXPECT_TRUE(parsed.ok());
  return parsed.ok() ? core::job_spec_to_json(*parsed.spec) : "";
}

// Writes `phase` (from pending) and attempt 1 to the job.
Status start_job(store::Tx& tx, core::JobId id, JobPhase phase) {
  CORRAL_ASSIGN_OR_RETURN(auto job, tx.jobs().get_job(id));
  if (!job) return core::not_found("job");
  store::JobRow next = *job;
  next.phase = phase;
  next.attempt = 1;
  CORRAL_ASSIGN_OR_RETURN(const bool won, tx.jobs().update_job(next, JobPhase::kPending));
  return won ? Status() : core::internal_error("seed raced");
}

// Two agent nodes; job 1 runs on n1 and n2 (a gang), job 2 is launching on n1 only.
Status seed(store::Store& store) {
  const std::string spec = train_spec_json();
  return store.transact([&](store::Tx& tx) {
    for (const auto& node : {kLost, kOther}) {
      CORRAL_RETURN_IF_ERROR(tx.nodes().upsert_node({.id = node, .spec_json = "{}"}));
      CORRAL_RETURN_IF_ERROR(
          tx.agents().upsert_agent_session({.node = node,
                                            .epoch = 1,
                                            .agent_url = "http://" + node.value,
                                            .joined_at = core::time_from_ms(1000),
                                            .heartbeat_at = core::time_from_ms(1000)}));
    }
    core::JobId ids[2];
    for (auto& id : ids) {
      CORRAL_ASSIGN_OR_RETURN(auto row, tx.jobs().insert_job({.tenant = core::TenantId("t1"),
                                                              .name = "train",
                                                              .priority_class = "standard",
                                                              .gpus = 2,
                                                              .spec_json = spec,
                                                              .now = core::time_from_ms(1000)}));
      id = row.id;
    }
    CORRAL_RETURN_IF_ERROR(start_job(tx, ids[0], JobPhase::kRunning));
    CORRAL_RETURN_IF_ERROR(start_job(tx, ids[1], JobPhase::kLaunching));
    const struct {
      core::JobId job;
      core::NodeId node;
      std::int32_t gpu;
    } held[] = {{ids[0], kLost, 0}, {ids[0], kOther, 0}, {ids[1], kLost, 1}};
    for (const auto& h : held) {
      CORRAL_RETURN_IF_ERROR(
          tx.allocations().insert_allocation({.job = h.job,
                                              .attempt = 1,
                                              .node = h.node,
                                              .gpu_index = h.gpu,
                                              .gpu_type = core::GpuTypeId("h100"),
                                              .epoch = 1,
                                              .created_at = core::time_from_ms(2000)}));
    }
    return Status();
  });
}

// Everything declare_node_lost may touch, as text: sessions, jobs, allocations, events
// and the audit log.
std::string dump(store::Store& store) {
  std::ostringstream out;
  const Status s = store.read([&](store::Tx& tx) {
    CORRAL_ASSIGN_OR_RETURN(auto sessions, tx.agents().list_agent_sessions());
    for (const auto& a : sessions)
      out << "session " << a.node.value << " " << a.epoch << " " << a.lost << "\n";
    CORRAL_ASSIGN_OR_RETURN(auto jobs, tx.jobs().list_jobs({}));
    for (const auto& j : jobs) {
      out << "job " << j.id.value << " " << core::to_string(j.phase) << " restarts=" << j.restarts
          << " attained=" << j.attained_gpu_ms << " reason=" << j.reason << "\n";
      CORRAL_ASSIGN_OR_RETURN(auto allocs, tx.allocations().list_allocations(j.id));
      for (const auto& a : allocs) {
        out << "  alloc " << a.node.value << "/" << a.gpu_index << " active=" << a.active << "\n";
      }
      CORRAL_ASSIGN_OR_RETURN(auto events, tx.records().list_job_events(j.id));
      for (const auto& e : events) out << "  event " << e.kind << ": " << e.message << "\n";
    }
    CORRAL_ASSIGN_OR_RETURN(auto audit, tx.audit().list_audit(0, 100));
    for (const auto& a : audit)
      out << "audit " << a.seq << " " << a.action << " " << a.after << "\n";
    CORRAL_ASSIGN_OR_RETURN(auto head, tx.audit().read_audit_head());
    out << "audit head " << head.next_seq << "\n";
    return Status();
  });
  EXPECT_TRUE(s.ok()) << s.to_string();
  return out.str();
}

// One sweep's transaction for n1, as NodeHealth::check_once runs it.
Status lose_node(store::Store& store, Effects& fx) {
  AssignmentBoard board(1);
  SpecCache specs;
  const AgentSettings settings;
  return store.transact([&](store::Tx& tx) {
    const LifecycleContext ctx{board, settings, kHealthNow, fx, specs};
    return declare_node_lost(tx, ctx, kLost, "no heartbeat for 49000 ms");
  });
}

template <typename Factory>
class NodeLostUnderFaults : public ::testing::Test {
 protected:
  // A fresh seeded store, in `factory_`/`store_`.
  void open_seeded() {
    factory_ = std::make_unique<Factory>();
    corral::testing::open_or_skip(*factory_, store_);
    if (::testing::Test::IsSkipped() || ::testing::Test::HasFatalFailure()) return;
    const Status s = seed(*store_);
    ASSERT_TRUE(s.ok()) << s.to_string();
  }

  // What the sweep leaves behind with no fault.
  std::string fault_free_result() {
    open_seeded();
    if (::testing::Test::IsSkipped() || ::testing::Test::HasFatalFailure()) return "";
    Effects fx;
    const Status s = lose_node(*store_, fx);
    EXPECT_TRUE(s.ok()) << s.to_string();
    return dump(*store_);
  }

  std::unique_ptr<Factory> factory_;
  std::unique_ptr<store::Store> store_;
};

TYPED_TEST_SUITE(NodeLostUnderFaults, corral::testing::Stores, corral::testing::StoreNames);

TYPED_TEST(NodeLostUnderFaults, EachFailedWriteLeavesStateUnchangedAndARetrySucceeds) {
  const std::string expected = this->fault_free_result();
  if (this->IsSkipped() || this->HasFatalFailure()) return;
  ASSERT_NE(expected.find("session n1 2 1"), std::string::npos) << expected;

  std::int64_t writes = 0;
  for (std::int64_t nth = 1;; ++nth) {
    SCOPED_TRACE("failing write " + std::to_string(nth));
    this->open_seeded();
    const std::string before = dump(*this->store_);
    FaultyStore faulty(*this->store_, Fault{.nth = nth});
    Effects fx;
    const Status first = lose_node(faulty, fx);
    if (faulty.failures() == 0) {
      // Past the sweep's last write: nothing failed and it all happened.
      ASSERT_TRUE(first.ok()) << first.to_string();
      EXPECT_EQ(dump(*this->store_), expected);
      writes = faulty.writes();
      break;
    }
    EXPECT_EQ(first.code(), StatusCode::kUnavailable) << first.to_string();
    EXPECT_EQ(dump(*this->store_), before);

    Effects retry_fx;
    const Status retry = lose_node(faulty, retry_fx);
    ASSERT_TRUE(retry.ok()) << retry.to_string();
    EXPECT_EQ(dump(*this->store_), expected);
    EXPECT_TRUE(retry_fx.wake_scheduler);
    EXPECT_EQ(retry_fx.bump.count(kLost.value), 1u);
  }
  // The fence, the release, the audit (head and entry), both jobs' events and updates:
  // each of them was failed once above.
  EXPECT_GE(writes, 6);
}

TYPED_TEST(NodeLostUnderFaults, PersistentFaultKeepsFailingWithoutChangingState) {
  this->open_seeded();
  if (this->IsSkipped() || this->HasFatalFailure()) return;
  const std::string before = dump(*this->store_);
  FaultyStore faulty(*this->store_, Fault{.nth = 3, .persistent = true});
  for (int attempt = 0; attempt < 3; ++attempt) {
    Effects fx;
    const Status s = lose_node(faulty, fx);
    EXPECT_EQ(s.code(), StatusCode::kUnavailable) << s.to_string();
    EXPECT_EQ(dump(*this->store_), before);
  }
  EXPECT_EQ(faulty.failures(), 3);
}

TYPED_TEST(NodeLostUnderFaults, LostCommitLeavesNothingAndARetrySucceeds) {
  const std::string expected = this->fault_free_result();
  if (this->IsSkipped() || this->HasFatalFailure()) return;
  this->open_seeded();
  const std::string before = dump(*this->store_);
  FaultyStore faulty(*this->store_, Fault{.unit = Fault::Unit::kTransact, .nth = 1});
  Effects fx;
  const Status first = lose_node(faulty, fx);
  EXPECT_EQ(first.code(), StatusCode::kUnavailable) << first.to_string();
  EXPECT_EQ(dump(*this->store_), before);
  Effects retry_fx;
  ASSERT_TRUE(lose_node(faulty, retry_fx).ok());
  EXPECT_EQ(dump(*this->store_), expected);
  EXPECT_EQ(faulty.writes(), 2);
}

}  // namespace
}  // namespace corral::server
