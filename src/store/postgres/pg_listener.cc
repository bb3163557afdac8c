// Listener over libpq (store/listener.h): one connection that LISTENs, waits in poll()
// on its socket and on a pipe that send() writes to, and reconnects with backoff.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <deque>
#include <fcntl.h>
#include <mutex>
#include <poll.h>
#include <thread>
#include <unistd.h>
#include <utility>

#include <libpq-fe.h>

#include "store/listener.h"

namespace corral::store {
namespace {

bool is_postgres_url(const std::string& url) {
  return url.starts_with("postgresql://") || url.starts_with("postgres://");
}

class PgListener final : public Listener {
 public:
  PgListener(std::string url, std::vector<std::string> channels, Handler on_notify)
      : url_(std::move(url)), channels_(std::move(channels)), on_notify_(std::move(on_notify)) {
    if (::pipe2(wake_, O_NONBLOCK | O_CLOEXEC) != 0) wake_[0] = wake_[1] = -1;
    thread_ = std::thread([this] { run(); });
  }

  ~PgListener() override {
    stop_ = true;
    poke();
    thread_.join();
    if (conn_ != nullptr) PQfinish(conn_);
    for (const int fd : wake_) {
      if (fd >= 0) ::close(fd);
    }
  }

  void send(std::string channel, std::string payload) override {
    {
      std::lock_guard lock(mu_);
      outbox_.emplace_back(std::move(channel), std::move(payload));
    }
    poke();
  }

 private:
  void poke() {
    const char c = 1;
    if (wake_[1] >= 0) [[maybe_unused]]
      auto n = ::write(wake_[1], &c, 1);
  }

  bool connect() {
    if (conn_ != nullptr) PQfinish(conn_);
    conn_ = PQconnectdb(url_.c_str());
    if (PQstatus(conn_) != CONNECTION_OK) return false;
    for (const auto& ch : channels_) {
      char* quoted = PQescapeIdentifier(conn_, ch.data(), ch.size());
      if (quoted == nullptr) return false;
      PGresult* r = PQexec(conn_, ("LISTEN " + std::string(quoted)).c_str());
      PQfreemem(quoted);
      const bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
      PQclear(r);
      if (!ok) return false;
    }
    return true;
  }

  // Sends the queued notifications in one statement.
  bool flush() {
    std::deque<std::pair<std::string, std::string>> out;
    {
      std::lock_guard lock(mu_);
      out.swap(outbox_);
    }
    if (out.empty()) return true;
    std::string sql = "SELECT ";
    std::vector<std::string> values;
    for (auto& [channel, payload] : out) {
      values.push_back(std::move(channel));
      values.push_back(std::move(payload));
      const std::size_t n = values.size();
      if (n > 2) sql += ", ";
      sql += "pg_notify($" + std::to_string(n - 1) + ", $" + std::to_string(n) + ")";
    }
    std::vector<const char*> params;
    for (const auto& v : values) params.push_back(v.c_str());
    PGresult* r = PQexecParams(conn_, sql.c_str(), static_cast<int>(params.size()), nullptr,
                               params.data(), nullptr, nullptr, 0);
    const bool ok = PQresultStatus(r) == PGRES_TUPLES_OK;
    PQclear(r);
    return ok;
  }

  void drain_pipe() {
    char buf[256];
    while (::read(wake_[0], buf, sizeof buf) == static_cast<ssize_t>(sizeof buf)) {
    }
  }

  void run() {
    using namespace std::chrono_literals;
    auto backoff = 100ms;
    bool first = true;
    while (!stop_) {
      if (!connect()) {
        std::fprintf(stderr, "corrald: listener: cannot connect: %s", PQerrorMessage(conn_));
        std::this_thread::sleep_for(backoff);
        backoff = std::min<std::chrono::milliseconds>(backoff * 2, 5s);
        continue;
      }
      backoff = 100ms;
      if (!first) on_notify_("", "");  // we were away: notifications may be lost
      first = false;
      while (!stop_ && PQstatus(conn_) == CONNECTION_OK) {
        if (!flush()) break;
        pollfd fds[2] = {{.fd = PQsocket(conn_), .events = POLLIN, .revents = 0},
                         {.fd = wake_[0], .events = POLLIN, .revents = 0}};
        // The timeout only bounds how late a broken connection is noticed.
        if (::poll(fds, 2, 1000) < 0) continue;
        if ((fds[1].revents & POLLIN) != 0) drain_pipe();
        if ((fds[0].revents & (POLLIN | POLLERR | POLLHUP)) == 0) continue;
        if (PQconsumeInput(conn_) == 0) break;
        while (PGnotify* n = PQnotifies(conn_)) {
          on_notify_(n->relname, n->extra);
          PQfreemem(n);
        }
      }
    }
  }

  const std::string url_;
  const std::vector<std::string> channels_;
  const Handler on_notify_;
  std::atomic<bool> stop_{false};
  int wake_[2] = {-1, -1};
  std::mutex mu_;
  std::deque<std::pair<std::string, std::string>> outbox_;  // guarded by mu_
  PGconn* conn_ = nullptr;                                  // the thread's alone
  std::thread thread_;
};

}  // namespace

std::unique_ptr<Listener> open_listener(const std::string& url, std::vector<std::string> channels,
                                        Listener::Handler on_notify) {
  if (!is_postgres_url(url)) return nullptr;
  return std::make_unique<PgListener>(url, std::move(channels), std::move(on_notify));
}

}  // namespace corral::store
