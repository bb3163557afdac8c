// Fresh, empty stores for tests: a SQLite file in a temp directory, or a new database
// on the PostgreSQL server named by CORRAL_TEST_POSTGRES_URL (scripts/with_postgres.sh
// starts one). Shared by the store conformance suite and the server tests.
//
// Thread safety: a factory is used by one test at a time.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

#include <gtest/gtest.h>

#include "core/result.h"
#include "store/store.h"

namespace corral::testing {

// A new directory under the system temp dir, removed when the object dies.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// The URL of a new, empty database on the test PostgreSQL server; NotFound when
// CORRAL_TEST_POSTGRES_URL is unset (a developer running ctest by hand), Unavailable
// when the server cannot be reached.
core::Result<std::string> fresh_postgres_database();

struct SqliteFactory {
  static constexpr const char* kName = "Sqlite";
  TempDir dir;
  std::string url() const { return (dir.path() / "corral.db").string(); }
  core::Result<std::unique_ptr<store::Store>> open() { return store::open_sqlite_store(url()); }
};

struct PostgresFactory {
  static constexpr const char* kName = "Postgres";
  std::string url_;
  core::Result<std::unique_ptr<store::Store>> open() {
    auto url = fresh_postgres_database();
    if (!url.ok()) return url.status();
    url_ = *url;
    return store::open_postgres_store(url_);
  }
  const std::string& url() const { return url_; }
};

// Opens `factory`'s store into `store` for a test's SetUp(); skips the test when the
// store's server is not configured (NotFound). Callers return when IsSkipped() or
// HasFatalFailure().
template <typename Factory>
void open_or_skip(Factory& factory, std::unique_ptr<store::Store>& store) {
  auto opened = factory.open();
  if (!opened.ok() && opened.status().code() == core::StatusCode::kNotFound) {
    GTEST_SKIP() << opened.status().message();
  }
  ASSERT_TRUE(opened.ok()) << opened.status().to_string();
  store = std::move(*opened);
}

// For the SetUp() of a typed suite that starts a corrald: leaves `url` "" with
// SqliteFactory (corrald makes its own file) and sets a fresh database's URL with
// PostgresFactory; skips the test when no PostgreSQL is configured (NotFound). Callers
// return when IsSkipped() or HasFatalFailure().
template <typename Factory>
void store_url_or_skip(std::string& url) {
  if constexpr (std::is_same_v<Factory, PostgresFactory>) {
    auto fresh = fresh_postgres_database();
    if (!fresh.ok() && fresh.status().code() == core::StatusCode::kNotFound) {
      GTEST_SKIP() << fresh.status().message();
    }
    ASSERT_TRUE(fresh.ok()) << fresh.status().to_string();
    url = *fresh;
  }
}

// Every store a typed suite runs on: TYPED_TEST_SUITE(Suite, Stores, StoreNames) names
// its tests .../Sqlite and .../Postgres.
using Stores = ::testing::Types<SqliteFactory, PostgresFactory>;
struct StoreNames {
  template <typename T>
  static std::string GetName(int) {
    return T::kName;
  }
};

}  // namespace corral::testing
