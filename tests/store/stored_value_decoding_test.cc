// Stored values that do not decode are DataLoss naming the column and the value, for both
// stores. Each test writes a bad value with raw SQL on a second connection to the real
// database (as a buggy older build or a hand edit would), then reads it through the Store.
// Before this was checked, an unknown job phase read as kFailed, an unknown admin state as
// kActive, an int32 column kept the low bits of a wider number, and a non-numeric integer
// threw std::invalid_argument out of std::stoll.
#include <memory>
#include <string>
#include <utility>

#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <sqlite3.h>

#include "store/store.h"
#include "testing/store_fixture.h"

namespace corral::store {
namespace {

using core::Status;
using core::StatusCode;
using testing::PostgresFactory;
using testing::SqliteFactory;

// Runs `sql` on a connection of its own, beside the store's.
Status exec_raw(const SqliteFactory& factory, const std::string& sql) {
  sqlite3* db = nullptr;
  if (sqlite3_open(factory.url().c_str(), &db) != SQLITE_OK) {
    sqlite3_close(db);
    return core::internal_error("open " + factory.url());
  }
  sqlite3_busy_timeout(db, 5000);
  char* error = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error);
  std::string message = error != nullptr ? error : "";
  sqlite3_free(error);
  sqlite3_close(db);
  return rc == SQLITE_OK ? Status() : core::internal_error(sql + ": " + message);
}

Status exec_raw(const PostgresFactory& factory, const std::string& sql) {
  PGconn* conn = PQconnectdb(factory.url().c_str());
  if (PQstatus(conn) != CONNECTION_OK) {
    std::string message = PQerrorMessage(conn);
    PQfinish(conn);
    return core::internal_error("connect: " + message);
  }
  PGresult* res = PQexec(conn, sql.c_str());
  const bool ok = PQresultStatus(res) == PGRES_COMMAND_OK;
  std::string message = ok ? "" : PQerrorMessage(conn);
  PQclear(res);
  PQfinish(conn);
  return ok ? Status() : core::internal_error(sql + ": " + message);
}

template <typename Factory>
class StoredValueDecoding : public ::testing::Test {
 protected:
  void SetUp() override { corral::testing::open_or_skip(factory_, store_); }

  core::JobId insert_job() {
    core::JobId id;
    const Status s = store_->transact([&](Tx& tx) {
      CORRAL_ASSIGN_OR_RETURN(auto row, tx.jobs().insert_job({.tenant = core::TenantId("t1"),
                                                              .name = "train",
                                                              .priority_class = "standard",
                                                              .gpus = 1,
                                                              .spec_json = "{}",
                                                              .now = core::time_from_ms(1000)}));
      id = row.id;
      return Status();
    });
    EXPECT_TRUE(s.ok()) << s.to_string();
    return id;
  }

  void raw(const std::string& sql) {
    const Status s = exec_raw(factory_, sql);
    ASSERT_TRUE(s.ok()) << s.to_string();
  }

  // The Status of reading job `id` back.
  Status read_job(core::JobId id) {
    return store_->transact([&](Tx& tx) { return tx.jobs().get_job(id).status(); });
  }

  Factory factory_;
  std::unique_ptr<Store> store_;
};

TYPED_TEST_SUITE(StoredValueDecoding, corral::testing::Stores, corral::testing::StoreNames);

// Expects DataLoss whose message names `column` and holds `value`.
void expect_data_loss(const Status& s, const std::string& column, const std::string& value) {
  EXPECT_EQ(s.code(), StatusCode::kDataLoss) << s.to_string();
  EXPECT_NE(s.message().find(column), std::string::npos) << s.message();
  EXPECT_NE(s.message().find(value), std::string::npos) << s.message();
}

TYPED_TEST(StoredValueDecoding, UnknownJobPhaseIsDataLossNotFailed) {
  const core::JobId id = this->insert_job();
  this->raw("UPDATE jobs SET phase = 'hibernating' WHERE id = " + std::to_string(id.value));
  expect_data_loss(this->read_job(id), "jobs.phase", "\"hibernating\"");
  // Every read path of the row decodes it the same way.
  const Status listed =
      this->store_->transact([](Tx& tx) { return tx.jobs().list_jobs({}).status(); });
  expect_data_loss(listed, "jobs.phase", "hibernating");
}

TYPED_TEST(StoredValueDecoding, UnknownNodeAdminStateIsDataLossNotActive) {
  ASSERT_TRUE(this->store_
                  ->transact([](Tx& tx) {
                    return tx.nodes().upsert_node({.id = core::NodeId("n1"), .spec_json = "{}"});
                  })
                  .ok());
  this->raw("UPDATE nodes SET admin = 'paused' WHERE name = 'n1'");
  const Status got = this->store_->transact(
      [](Tx& tx) { return tx.nodes().get_node(core::NodeId("n1")).status(); });
  expect_data_loss(got, "nodes.admin", "\"paused\"");
  const Status listed =
      this->store_->transact([](Tx& tx) { return tx.nodes().list_nodes().status(); });
  expect_data_loss(listed, "nodes.admin", "paused");
}

TYPED_TEST(StoredValueDecoding, UnknownGpuConditionOrUndecodableObservationIsDataLoss) {
  const store::ObservedNode observed{.node = core::NodeId("n1"),
                                     .gpus = {{.index = 0, .condition = core::GpuCondition::kOk}},
                                     .heartbeat_at = core::time_from_ms(1000)};
  ASSERT_TRUE(
      this->store_->transact([&](Tx& tx) { return tx.nodes().upsert_observed(observed); }).ok());
  const auto read = [&] {
    return this->store_->transact(
        [](Tx& tx) { return tx.nodes().get_observed(core::NodeId("n1")).status(); });
  };
  const auto listed = [&] {
    return this->store_->transact([](Tx& tx) { return tx.nodes().list_observed().status(); });
  };
  // A condition this build does not know is not read as ok (or as anything else).
  this->raw("UPDATE gpu_conditions SET health = 'tired' WHERE node = 'n1'");
  expect_data_loss(read(), "gpu_conditions.health", "\"tired\"");
  expect_data_loss(listed(), "gpu_conditions.health", "tired");
  this->raw("UPDATE gpu_conditions SET health = 'ok' WHERE node = 'n1'");
  ASSERT_TRUE(read().ok());
  this->raw("UPDATE node_observations SET inventory_json = '{\"gpus\": 3}' WHERE node = 'n1'");
  expect_data_loss(read(), "node_observations.inventory_json", "gpus");
  this->raw("UPDATE node_observations SET inventory_json = '{}', readings_json = 'not json'");
  expect_data_loss(listed(), "node_observations.readings_json", "not json");
}

TYPED_TEST(StoredValueDecoding, UnknownWorkerStateIsDataLoss) {
  const core::JobId id = this->insert_job();
  ASSERT_TRUE(this->store_
                  ->transact([&](Tx& tx) {
                    return tx.agents().upsert_worker(
                        {.job = id, .attempt = 1, .node = core::NodeId("n1"), .pid = 7});
                  })
                  .ok());
  // A worker read as running when it is not would keep its GPUs held forever.
  this->raw("UPDATE workers SET state = 'zombie'");
  const Status s =
      this->store_->transact([&](Tx& tx) { return tx.agents().list_workers(id).status(); });
  expect_data_loss(s, "workers.state", "\"zombie\"");
}

TYPED_TEST(StoredValueDecoding, FlagOtherThanZeroOrOneIsDataLoss) {
  const core::JobId id = this->insert_job();
  ASSERT_TRUE(this->store_
                  ->transact([&](Tx& tx) {
                    return tx.allocations().insert_allocation(
                        {.job = id,
                         .node = core::NodeId("n1"),
                         .gpu_type = core::GpuTypeId("h100"),
                         .created_at = core::time_from_ms(1000)});
                  })
                  .ok());
  this->raw("UPDATE allocations SET borrowed = 7");
  const Status s = this->store_->transact(
      [&](Tx& tx) { return tx.allocations().list_allocations(id).status(); });
  expect_data_loss(s, "allocations.borrowed", "\"7\"");
}

// SQLite keeps whatever is written into an INTEGER or REAL column, text or a wider number
// (PostgreSQL's typed columns refuse it at the write), so only SQLite can hold these.
class SqliteStoredValueDecoding : public StoredValueDecoding<SqliteFactory> {};

TEST_F(SqliteStoredValueDecoding, Int32ColumnOutOfRangeIsDataLossNotTruncated) {
  const core::JobId id = insert_job();
  // 2^32 + 3 would read as tier 3 if narrowed. (PostgreSQL's INTEGER column refuses it.)
  raw("UPDATE jobs SET tier = 4294967299 WHERE id = " + std::to_string(id.value));
  expect_data_loss(read_job(id), "jobs.tier", "4294967299");
}

TEST_F(SqliteStoredValueDecoding, NonNumericIntegerIsDataLossNotAnException) {
  const core::JobId id = insert_job();
  raw("UPDATE jobs SET attempt = 'x1' WHERE id = " + std::to_string(id.value));
  expect_data_loss(read_job(id), "jobs.attempt", "\"x1\"");
}

TEST_F(SqliteStoredValueDecoding, PartlyNumericIntegerIsDataLoss) {
  const core::JobId id = insert_job();
  raw("UPDATE jobs SET created_at = '12abc' WHERE id = " + std::to_string(id.value));
  expect_data_loss(read_job(id), "jobs.created_at", "\"12abc\"");
}

TEST_F(SqliteStoredValueDecoding, NonNumericDoubleIsDataLossNotAnException) {
  ASSERT_TRUE(store_
                  ->transact([](Tx& tx) {
                    return tx.scheduler().put_tenant_usage({.tenant = core::TenantId("t1"),
                                                            .gpu_seconds = 1.5,
                                                            .as_of = core::time_from_ms(1000)});
                  })
                  .ok());
  raw("UPDATE tenant_usage SET gpu_seconds = 'lots' WHERE tenant = 't1'");
  const Status s =
      store_->transact([](Tx& tx) { return tx.scheduler().list_tenant_usage().status(); });
  expect_data_loss(s, "tenant_usage.gpu_seconds", "\"lots\"");
}

TEST_F(SqliteStoredValueDecoding, GoodValuesStillRoundTrip) {
  ASSERT_TRUE(store_
                  ->transact([](Tx& tx) {
                    return tx.scheduler().put_tenant_usage({.tenant = core::TenantId("t1"),
                                                            .gpu_seconds = 0.1 + 0.2,
                                                            .as_of = core::time_from_ms(-5)});
                  })
                  .ok());
  std::vector<TenantUsageRow> rows;
  ASSERT_TRUE(store_
                  ->transact([&](Tx& tx) {
                    CORRAL_ASSIGN_OR_RETURN(rows, tx.scheduler().list_tenant_usage());
                    return Status();
                  })
                  .ok());
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_DOUBLE_EQ(rows[0].gpu_seconds, 0.1 + 0.2);
  EXPECT_EQ(core::to_ms(rows[0].as_of), -5);
}

}  // namespace
}  // namespace corral::store
