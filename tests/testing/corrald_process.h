// A real corrald process for integration and crash tests: started on 127.0.0.1 with
// port 0 (it writes the port it got to DATA_DIR/corrald.addr), polled until /healthz
// answers, stopped with SIGTERM or killed with SIGKILL.
//
// Thread safety: one test thread drives a CorraldProcess.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <sys/types.h>

#include "core/result.h"

namespace httplib {
class Client;
}  // namespace httplib

namespace corral::testing {

struct HttpReply {
  int status = 0;  // 0: no answer (connection refused, reset, timeout)
  std::string body;
  std::map<std::string, std::string> headers;
};

// A reply's body as JSON; null when it is not JSON (no answer, a proxy's page), for the
// test to fail on the value it expected rather than throw.
nlohmann::json body(const std::string& text);
inline nlohmann::json body(const HttpReply& r) { return body(r.body); }

// A tiny HTTP client over httplib for tests: bearer token, JSON bodies, extra headers.
// Thread safety: needs external synchronization; make one per thread.
class TestClient {
 public:
  TestClient(std::string addr, std::string token);
  ~TestClient();
  TestClient(TestClient&&) noexcept;
  HttpReply get(const std::string& path);
  HttpReply post(const std::string& path, const std::string& body,
                 const std::map<std::string, std::string>& headers = {},
                 const std::string& content_type = "application/json");
  HttpReply put(const std::string& path, const std::string& body);
  HttpReply del(const std::string& path);
  HttpReply send(const std::string& method, const std::string& path, const std::string& body,
                 const std::map<std::string, std::string>& headers,
                 const std::string& content_type);
  void set_token(std::string token) { token_ = std::move(token); }

 private:
  std::string addr_;
  std::string token_;
  std::unique_ptr<httplib::Client> client_;
};

class CorraldProcess {
 public:
  // `store` empty: SQLite in `data_dir`.
  CorraldProcess(std::filesystem::path data_dir, std::string store = {});
  ~CorraldProcess();
  CorraldProcess(const CorraldProcess&) = delete;
  CorraldProcess& operator=(const CorraldProcess&) = delete;

  // Starts it and waits (up to `deadline`) until /healthz answers.
  core::Status start(std::chrono::milliseconds deadline = std::chrono::seconds(30));
  void kill9();
  void stop();  // SIGTERM, then wait
  // Extra command-line arguments for the next start() (e.g. {"--config", path}).
  void set_extra_args(std::vector<std::string> args) { extra_args_ = std::move(args); }
  // --listen for the next start() (default 127.0.0.1:0): a replica restarted where its
  // agents and clients know it, as an operator's fixed address is.
  void set_listen(std::string host_port) { listen_ = std::move(host_port); }
  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }  // -1: not running

  const std::string& addr() const { return addr_; }
  std::string admin_token() const;
  std::string join_token() const;  // DATA_DIR/join.token: agents join with it
  TestClient client(const std::string& token) const { return TestClient(addr_, token); }
  TestClient admin() const { return client(admin_token()); }

 private:
  std::string read_token(const char* file) const;

  std::filesystem::path data_dir_;
  std::string store_;
  pid_t pid_ = -1;
  std::string addr_;
  std::vector<std::string> extra_args_;
  std::string listen_ = "127.0.0.1:0";
};

// The value of an unlabelled metric in GET /metrics as `c` reads it; -1 when absent.
std::int64_t scrape_metric(TestClient& c, const std::string& name);

// Waits (at most 15 s) until the scheduler loop of the corrald `c` reaches has run `n`
// more cycles; false when fewer ran. Each cycle was a chance to act on what the test set
// up, so a test that checks that something did not happen waits on the cycles
// themselves, not on a guess of how long they take.
bool wait_cycles(TestClient& c, int n);

// Runs raw SQL against a store URL or SQLite path (tests tamper with rows this way, and
// read what the database shows, such as PostgreSQL's lock waits). query_sql gives the
// first column of the first row, "" when there is none.
core::Status exec_sql(const std::string& url_or_path, const std::string& sql);
core::Result<std::string> query_sql(const std::string& url_or_path, const std::string& sql);

// Polls `cond` until it holds or `deadline` passes; true when it held.
template <typename F>
bool eventually(F cond, std::chrono::milliseconds deadline = std::chrono::seconds(20)) {
  const auto end = std::chrono::steady_clock::now() + deadline;
  while (std::chrono::steady_clock::now() < end) {
    if (cond()) return true;
    struct timespec ts {
      0, 10'000'000
    };
    nanosleep(&ts, nullptr);
  }
  return cond();
}

}  // namespace corral::testing
