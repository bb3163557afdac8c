#include "agent/local_server.h"

#include <chrono>
#include <fstream>
#include <httplib.h>
#include <thread>

#include <nlohmann/json.hpp>

namespace corral::agent {
namespace {

constexpr std::int64_t kDefaultTailBytes = 1 << 20;

std::string bearer_token(const httplib::Request& req) {
  const std::string auth = req.get_header_value("Authorization");
  const std::string prefix = "Bearer ";
  return auth.rfind(prefix, 0) == 0 ? auth.substr(prefix.size()) : std::string();
}

// Compares without an early exit, so response time does not leak a prefix match.
bool same_secret(const std::string& a, const std::string& b) {
  if (a.size() != b.size() || a.empty()) return false;
  unsigned char diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  }
  return diff == 0;
}

void error(httplib::Response& res, int status, const std::string& code, const std::string& message,
           const std::string& field = {}) {
  nlohmann::json body = {{"error", {{"code", code}, {"message", message}}}};
  if (!field.empty()) body["error"]["field"] = field;
  res.status = status;
  res.set_content(body.dump(), "application/json");
}

}  // namespace

std::optional<std::string> read_tail(const std::string& path, std::int64_t tail_bytes) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return std::nullopt;
  const std::int64_t size = in.tellg();
  const std::int64_t from = std::max<std::int64_t>(0, size - tail_bytes);
  in.seekg(from);
  std::string out(static_cast<std::size_t>(size - from), '\0');
  in.read(out.data(), static_cast<std::streamsize>(out.size()));
  out.resize(static_cast<std::size_t>(in.gcount()));
  return out;
}

LocalServer::LocalServer(Hooks hooks)
    : hooks_(std::move(hooks)), http_(std::make_unique<httplib::Server>()) {
  // Both reports are queued for the agent to forward, retrying while corrald is away: 202.
  const auto report_route = [this](const char* path, auto decode, auto on_report) {
    http_->Post(
        path, [this, decode, on_report](const httplib::Request& req, httplib::Response& res) {
          const std::string token = bearer_token(req);
          const auto unauthenticated = [&res] {
            error(res, 401, "unauthenticated", "a worker token (CORRAL_WORKER_TOKEN) is required");
          };
          if (!hooks_.worker_for_token(token)) return unauthenticated();
          auto report = decode(req.body);
          if (!report.ok()) {
            error(res, 400, "invalid_argument", report.status().message(), report.status().field());
            return;
          }
          if (const core::Status queued = (hooks_.*on_report)(token, *report); !queued.ok()) {
            if (queued.code() == core::StatusCode::kUnauthenticated) return unauthenticated();
            error(res, 429, "resource_exhausted", queued.message());
            return;
          }
          res.status = 202;
          res.set_content(R"({"queued":true})", "application/json");
        });
  };
  report_route("/local/checkpoint", core::decode_checkpoint_report, &Hooks::on_checkpoint);
  report_route("/local/run", core::decode_run_report, &Hooks::on_run_report);
  // A lookup is answered, not queued: the worker waits for corrald's answer, whatever it
  // is (a 404 for a set its tenant does not have, a 400 naming a row), or gets 503.
  http_->Post(
      "/local/features/lookup", [this](const httplib::Request& req, httplib::Response& res) {
        const std::string token = bearer_token(req);
        const auto unauthenticated = [&res] {
          error(res, 401, "unauthenticated", "a worker token (CORRAL_WORKER_TOKEN) is required");
        };
        if (!hooks_.worker_for_token(token)) return unauthenticated();
        const auto request = core::decode_feature_lookup_request(req.body);
        if (!request.ok()) {
          error(res, 400, "invalid_argument", request.status().message(), request.status().field());
          return;
        }
        const auto answer = hooks_.on_feature_lookup(token, *request);
        if (!answer.ok()) {
          if (answer.status().code() == core::StatusCode::kUnauthenticated) {
            return unauthenticated();
          }
          error(res, 503, "unavailable", answer.status().message());
          return;
        }
        res.status = answer->status;
        res.set_content(answer->body, "application/json");
      });
  http_->Get(R"(/local/logs/(\d+)/(\d+)/(\d+))", [this](const httplib::Request& req,
                                                        httplib::Response& res) {
    const LogAccess access = hooks_.log_access();
    if (!same_secret(bearer_token(req), access.key)) {
      error(res, 401, "unauthenticated", "the log key is required");
      return;
    }
    std::int64_t tail = kDefaultTailBytes;
    if (req.has_param("tailBytes")) {
      try {
        tail = std::stoll(req.get_param_value("tailBytes"));
      } catch (const std::exception&) {
        tail = -1;
      }
      if (tail < 0) {
        error(res, 400, "invalid_argument", "must be a non-negative integer", "tailBytes");
        return;
      }
    }
    const std::string path = access.logs_dir + "/" + req.matches[1].str() + "/attempt-" +
                             req.matches[2].str() + "/rank-" + req.matches[3].str() + ".log";
    const auto text = read_tail(path, tail);
    if (!text) {
      error(res, 404, "not_found", "no log for that job, attempt and rank on this node");
      return;
    }
    res.set_content(*text, "text/plain");
  });
}

LocalServer::~LocalServer() { stop(); }

core::Result<int> LocalServer::start(const std::string& host, int port) {
  int bound = port;
  if (port == 0) {
    bound = http_->bind_to_any_port(host.c_str());
  } else if (!http_->bind_to_port(host.c_str(), port)) {
    bound = -1;
  }
  if (bound <= 0) {
    return core::invalid_argument("--listen",
                                  "cannot listen on " + host + ":" + std::to_string(port));
  }
  thread_ = std::thread([this] {
    http_->listen_after_bind();
    listen_returned_ = true;
  });
  return bound;
}

void LocalServer::stop() {
  if (thread_.joinable()) {
    // httplib's stop() does nothing before listen_after_bind() is running, and the listen
    // would then never end: an agent whose join is refused at once (milliseconds after
    // start()) hung here. Wait for it to run first.
    while (!http_->is_running() && !listen_returned_) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    http_->stop();
    thread_.join();
  }
}

}  // namespace corral::agent
