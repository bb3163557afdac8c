#include "testing/store_fixture.h"

#include <atomic>
#include <cstdlib>
#include <random>
#include <string>
#include <unistd.h>

#include <libpq-fe.h>

namespace corral::testing {

TempDir::TempDir() {
  std::random_device rd;
  for (int attempt = 0; attempt < 100; ++attempt) {
    auto candidate = std::filesystem::temp_directory_path() /
                     ("corral-test-" + std::to_string(getpid()) + "-" + std::to_string(rd()));
    std::error_code ec;
    if (std::filesystem::create_directory(candidate, ec)) {
      path_ = candidate;
      return;
    }
  }
  std::abort();
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

core::Result<std::string> fresh_postgres_database() {
  const char* base = std::getenv("CORRAL_TEST_POSTGRES_URL");
  if (base == nullptr || *base == '\0') {
    return core::Status(core::StatusCode::kNotFound,
                        "CORRAL_TEST_POSTGRES_URL is unset, so the PostgreSQL tests are skipped; "
                        "scripts/test.sh starts a server and runs them");
  }
  const std::string url = base;
  PGconn* conn = PQconnectdb(url.c_str());
  if (PQstatus(conn) != CONNECTION_OK) {
    std::string message = PQerrorMessage(conn);
    PQfinish(conn);
    return core::Status(core::StatusCode::kUnavailable,
                        "test postgresql at " + url + " unreachable: " + message);
  }
  static std::atomic<int> counter{0};
  std::random_device rd;
  const std::string name = "corral_t" + std::to_string(getpid()) + "_" + std::to_string(counter++) +
                           "_" + std::to_string(rd() % 100000);
  PGresult* res = PQexec(conn, ("CREATE DATABASE " + name).c_str());
  const bool ok = PQresultStatus(res) == PGRES_COMMAND_OK;
  std::string message = ok ? "" : PQerrorMessage(conn);
  PQclear(res);
  PQfinish(conn);
  if (!ok) return core::internal_error("create database " + name + ": " + message);
  // Replace the database part of the URL (after the last '/' past the host).
  const std::size_t scheme = url.find("://");
  const std::size_t slash = url.find('/', scheme == std::string::npos ? 0 : scheme + 3);
  const std::size_t query = url.find('?');
  std::string out = slash == std::string::npos ? url.substr(0, query) : url.substr(0, slash);
  out += "/" + name;
  if (query != std::string::npos) out += url.substr(query);
  return out;
}

}  // namespace corral::testing
