#include "testing/corrald_process.h"

#include <fcntl.h>
#include <fstream>
#include <httplib.h>
#include <signal.h>
#include <sstream>
#include <time.h>
#include <unistd.h>
#include <vector>

#include <libpq-fe.h>
#include <sqlite3.h>
#include <sys/wait.h>

namespace corral::testing {

TestClient::TestClient(std::string addr, std::string token)
    : addr_(std::move(addr)), token_(std::move(token)) {
  client_ = std::make_unique<httplib::Client>("http://" + addr_);
  client_->set_connection_timeout(5, 0);
  client_->set_tcp_nodelay(true);
  client_->set_read_timeout(30, 0);
  client_->set_write_timeout(30, 0);
}
TestClient::~TestClient() = default;
TestClient::TestClient(TestClient&&) noexcept = default;

HttpReply TestClient::send(const std::string& method, const std::string& path,
                           const std::string& body,
                           const std::map<std::string, std::string>& headers,
                           const std::string& content_type) {
  httplib::Headers h;
  if (!token_.empty()) h.emplace("Authorization", "Bearer " + token_);
  for (const auto& [k, v] : headers) h.emplace(k, v);
  httplib::Result r = method == "GET"      ? client_->Get(path, h)
                      : method == "PUT"    ? client_->Put(path, h, body, content_type)
                      : method == "DELETE" ? client_->Delete(path, h)
                                           : client_->Post(path, h, body, content_type);
  HttpReply reply;
  if (!r) return reply;
  reply.status = r->status;
  reply.body = r->body;
  for (const auto& [k, v] : r->headers) reply.headers[k] = v;
  return reply;
}

HttpReply TestClient::get(const std::string& path) { return send("GET", path, "", {}, ""); }
HttpReply TestClient::post(const std::string& path, const std::string& body,
                           const std::map<std::string, std::string>& headers,
                           const std::string& content_type) {
  return send("POST", path, body, headers, content_type);
}
HttpReply TestClient::put(const std::string& path, const std::string& body) {
  return send("PUT", path, body, {}, "application/json");
}

HttpReply TestClient::del(const std::string& path) { return send("DELETE", path, "", {}, ""); }

CorraldProcess::CorraldProcess(std::filesystem::path data_dir, std::string store)
    : data_dir_(std::move(data_dir)), store_(std::move(store)) {}

CorraldProcess::~CorraldProcess() {
  if (pid_ > 0) kill9();
}

core::Status CorraldProcess::start(std::chrono::milliseconds deadline) {
  // corrald makes its data dir, but the log below is opened before it runs: without the
  // dir, what a first start that refuses says would go to the test's output, not the log.
  std::filesystem::create_directories(data_dir_);
  std::filesystem::remove(data_dir_ / "corrald.addr");
  std::vector<std::string> args{CORRAL_CORRALD_PATH, "--data-dir", data_dir_.string(), "--listen",
                                listen_};
  if (!store_.empty()) {
    args.emplace_back("--store");
    args.push_back(store_);
  }
  args.insert(args.end(), extra_args_.begin(), extra_args_.end());
  const std::string log = (data_dir_ / "corrald.log").string();
  pid_ = fork();
  if (pid_ == 0) {
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  const bool up = eventually(
      [&] {
        int status = 0;
        if (waitpid(pid_, &status, WNOHANG) == pid_) {
          pid_ = -1;
          return true;  // exited: stop waiting
        }
        std::ifstream in(data_dir_ / "corrald.addr");
        std::string addr;
        if (!(in >> addr)) return false;
        addr_ = addr;
        TestClient c(addr_, "");
        return c.get("/healthz").status == 200;
      },
      deadline);
  if (pid_ <= 0) {
    std::ifstream in(log);
    std::stringstream text;
    text << in.rdbuf();
    return core::internal_error("corrald exited at start: " + text.str());
  }
  if (!up) return core::internal_error("corrald did not answer /healthz in time");
  return core::Status();
}

void CorraldProcess::kill9() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
}

void CorraldProcess::stop() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  const bool exited = eventually([&] {
    int status = 0;
    return waitpid(pid_, &status, WNOHANG) == pid_;
  });
  if (!exited) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
  }
  pid_ = -1;
}

std::string CorraldProcess::admin_token() const { return read_token("admin.token"); }

std::string CorraldProcess::join_token() const { return read_token("join.token"); }

std::string CorraldProcess::read_token(const char* file) const {
  std::ifstream in(data_dir_ / file);
  std::string token;
  in >> token;
  return token;
}

core::Result<std::string> query_sql(const std::string& url, const std::string& sql) {
  std::string first;
  if (url.starts_with("postgres")) {
    PGconn* conn = PQconnectdb(url.c_str());
    PGresult* res = PQexec(conn, sql.c_str());
    const bool ok =
        PQresultStatus(res) == PGRES_COMMAND_OK || PQresultStatus(res) == PGRES_TUPLES_OK;
    if (ok && PQntuples(res) > 0 && PQnfields(res) > 0) first = PQgetvalue(res, 0, 0);
    std::string message = PQerrorMessage(conn);
    PQclear(res);
    PQfinish(conn);
    if (!ok) return core::internal_error(message);
    return first;
  }
  sqlite3* db = nullptr;
  sqlite3_open(url.c_str(), &db);
  sqlite3_busy_timeout(db, 10000);  // corrald holds the database too
  char* error = nullptr;
  const auto keep_first = [](void* out, int columns, char** values, char**) {
    auto& kept = *static_cast<std::string*>(out);
    if (kept.empty() && columns > 0 && values[0] != nullptr) kept = values[0];
    return 0;
  };
  const int rc = sqlite3_exec(db, sql.c_str(), keep_first, &first, &error);
  std::string message = error != nullptr ? error : "";
  sqlite3_free(error);
  sqlite3_close(db);
  if (rc != SQLITE_OK) return core::internal_error(message);
  return first;
}

core::Status exec_sql(const std::string& url_or_path, const std::string& sql) {
  return query_sql(url_or_path, sql).status();
}

std::int64_t scrape_metric(TestClient& c, const std::string& name) {
  const std::string text = c.get("/metrics").body;
  const auto at = text.find("\n" + name + " ");
  if (at == std::string::npos) return -1;
  return std::stoll(text.substr(at + name.size() + 2));
}

bool wait_cycles(TestClient& c, int n) {
  const std::int64_t from = scrape_metric(c, "corral_sched_cycles_total");
  return eventually([&] { return scrape_metric(c, "corral_sched_cycles_total") >= from + n; },
                    std::chrono::seconds(15));
}

nlohmann::json body(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  return j.is_discarded() ? nlohmann::json() : j;
}

}  // namespace corral::testing
