#include "agent/client.h"

#include <algorithm>
#include <httplib.h>

#include <nlohmann/json.hpp>

#include "agent/cluster_scope.h"

namespace corral::agent {
namespace {

using nlohmann::json;

// The error corrald put in `{"error": {"code", "message"}}`; a body that is not one
// gives an empty code and its first bytes as the message.
struct ErrorBody {
  std::string code;
  std::string text;  // "code: message"
};

ErrorBody error_body(const httplib::Result& res) {
  try {
    const json j = json::parse(res->body);
    std::string code = j.at("error").value("code", std::string());
    std::string text = code + ": " + j.at("error").value("message", std::string());
    return {std::move(code), std::move(text)};
  } catch (const json::exception&) {
    return {"", res->body.substr(0, 200)};
  }
}

core::Status status_of(const httplib::Result& res, const char* call) {
  if (!res) {
    return core::Status(
        core::StatusCode::kUnavailable,
        std::string(call) + ": corrald unreachable (" + httplib::to_string(res.error()) + ")");
  }
  const int code = res->status;
  if (code >= 200 && code < 300) return core::ok_status();
  const ErrorBody error = error_body(res);
  const std::string what = std::string(call) + ": HTTP " + std::to_string(code) + " " + error.text;
  if (code == 409 && error.code == "fenced") return core::fenced(what);
  if (code == 401) return core::Status(core::StatusCode::kUnauthenticated, what);
  if (code >= 500 || code == 429 || code == 408) {
    return core::Status(core::StatusCode::kUnavailable, what);
  }
  return core::failed_precondition(what);
}

httplib::Headers bearer(const std::string& token) { return {{"Authorization", "Bearer " + token}}; }

// A body corrald should never have sent: named as the call's, with the field kept.
core::Status bad_answer(const char* call, const core::Status& s) {
  return core::invalid_argument(
      s.field().empty() ? call : s.field(),
      std::string("bad answer from corrald to ") + call + ": " + s.message());
}

}  // namespace

core::Result<std::pair<std::string, int>> parse_host_port(const std::string& text,
                                                          const std::string& field) {
  std::string rest = text;
  if (rest.rfind("http://", 0) == 0) rest = rest.substr(7);
  while (!rest.empty() && rest.back() == '/') rest.pop_back();
  const std::size_t colon = rest.rfind(':');
  if (colon == std::string::npos || colon == 0 || rest.find('/') != std::string::npos) {
    return core::invalid_argument(field,
                                  "must be HOST:PORT (or http://HOST:PORT), got '" + text + "'");
  }
  int port = -1;
  try {
    std::size_t used = 0;
    port = std::stoi(rest.substr(colon + 1), &used);
    if (used != rest.size() - colon - 1) port = -1;
  } catch (const std::exception&) {
    port = -1;
  }
  if (port < 0 || port > 65535) {
    return core::invalid_argument(field,
                                  "port must be 0..65535, got '" + rest.substr(colon + 1) + "'");
  }
  return std::make_pair(rest.substr(0, colon), port);
}

core::Result<std::shared_ptr<ServerList>> ServerList::parse(const std::string& urls) {
  auto list = std::make_shared<ServerList>();
  std::size_t begin = 0;
  while (begin <= urls.size()) {
    const std::size_t comma = std::min(urls.find(',', begin), urls.size());
    const std::string url = urls.substr(begin, comma - begin);
    if (url.rfind("https://", 0) == 0) {
      return core::invalid_argument("--server", "https is not supported yet, got '" + url + "'");
    }
    CORRAL_ASSIGN_OR_RETURN(const auto host_port, parse_host_port(url, "--server"));
    if (host_port.second == 0) {
      return core::invalid_argument("--server", "port must not be 0, got '" + url + "'");
    }
    list->servers_.push_back(host_port);
    begin = comma + 1;
  }
  return list;
}

ServerList::Current ServerList::current() const {
  const std::uint64_t g = generation_.load();
  const auto& [host, port] = servers_[g % servers_.size()];
  return {.host = host, .port = port, .generation = g};
}

void ServerList::failed(std::uint64_t generation) {
  if (servers_.size() < 2) return;
  std::uint64_t expected = generation;
  generation_.compare_exchange_strong(expected, generation + 1);
}

std::string ServerList::url() const {
  const Current c = current();
  return "http://" + c.host + ":" + std::to_string(c.port);
}

std::int64_t retry_backoff_ms(int tries) {
  return std::min<std::int64_t>(5000, 100LL << std::min(tries, 6));
}

core::Result<std::unique_ptr<CorraldClient>> CorraldClient::connect(const std::string& server_url,
                                                                    Connection connection) {
  CORRAL_ASSIGN_OR_RETURN(auto servers, ServerList::parse(server_url));
  return connect(std::move(servers), connection);
}

core::Result<std::unique_ptr<CorraldClient>> CorraldClient::connect(
    std::shared_ptr<ServerList> servers, Connection connection) {
  return std::unique_ptr<CorraldClient>(new CorraldClient(std::move(servers), connection));
}

CorraldClient::CorraldClient(std::shared_ptr<ServerList> servers, Connection connection)
    : servers_(std::move(servers)), connection_(connection) {}
CorraldClient::~CorraldClient() = default;

httplib::Client& CorraldClient::http() {
  std::lock_guard lock(mu_);
  const ServerList::Current now = servers_->current();
  if (http_ == nullptr || now.generation != generation_) {
    auto http = std::make_unique<httplib::Client>(now.host, now.port);
    http->set_keep_alive(connection_ == Connection::kKeepAlive);
    http->set_tcp_nodelay(true);  // small request/answer pairs: no Nagle delay
    // A hung replica (paused, swapping) must not hold a heartbeat long: after 5 s the
    // agent tries the next one, well within agents.nodeLostAfterMs.
    http->set_connection_timeout(2, 0);
    http->set_read_timeout(5, 0);
    http->set_write_timeout(5, 0);
    if (cancelled_) http->stop();
    http_ = std::move(http);  // the old one's call, if any, has returned: one thread calls
    generation_ = now.generation;
  }
  return *http_;
}

core::Status CorraldClient::check(const httplib::Result& res, const char* call) {
  // Unreachable, or 503 (a replica going away): the next replica. Any other answer is
  // the cluster's, whichever replica gave it.
  if (!res || res->status == 503) servers_->failed(generation_);
  return status_of(res, call);
}

void CorraldClient::cancel() {
  std::lock_guard lock(mu_);
  cancelled_ = true;
  if (http_ != nullptr) http_->stop();
}

core::Result<core::JoinAnswer> CorraldClient::join(const std::string& join_token,
                                                   const core::JoinRequest& request) {
  const auto res = http().Post("/v1/agents/join", bearer(join_token),
                               core::encode_join_request(request), "application/json");
  CORRAL_RETURN_IF_ERROR(check(res, "join"));
  auto answer = core::decode_join_answer(res->body);
  if (!answer.ok()) return bad_answer("join", answer.status());
  // It names a directory of the state dir: never trust it as a path.
  if (!valid_cluster_id(answer->cluster_id)) {
    return core::invalid_argument(
        "clusterId", "bad answer from corrald: must be 1..64 letters, digits or '-', got '" +
                         answer->cluster_id.substr(0, 80) + "'");
  }
  return answer;
}

core::Result<core::Assignments> CorraldClient::assignments(const std::string& node,
                                                           const std::string& token,
                                                           std::int64_t since,
                                                           std::int64_t wait_ms) {
  httplib::Client& http = this->http();
  http.set_read_timeout(static_cast<time_t>(wait_ms / 1000 + 10), 0);
  const std::string path = "/v1/agents/" + node + "/assignments?since=" + std::to_string(since) +
                           "&waitMs=" + std::to_string(wait_ms);
  const auto res = http.Get(path.c_str(), bearer(token));
  CORRAL_RETURN_IF_ERROR(check(res, "assignments"));
  auto answer = core::decode_assignments(res->body);
  if (!answer.ok()) return bad_answer("assignments", answer.status());
  return answer;
}

core::Result<std::int64_t> CorraldClient::heartbeat(const std::string& node,
                                                    const std::string& token,
                                                    const core::Heartbeat& heartbeat) {
  const auto res = http().Post(("/v1/agents/" + node + "/heartbeat").c_str(), bearer(token),
                               core::encode_heartbeat(heartbeat), "application/json");
  CORRAL_RETURN_IF_ERROR(check(res, "heartbeat"));
  // The report was accepted; an answer without a version only costs an early re-poll.
  const auto answer = core::decode_heartbeat_answer(res->body);
  return answer.ok() ? answer->version : std::int64_t{-1};
}

core::Status CorraldClient::checkpoint(const std::string& node, const std::string& token,
                                       const core::WorkerCheckpoint& checkpoint) {
  const auto res = http().Post(("/v1/agents/" + node + "/checkpoints").c_str(), bearer(token),
                               core::encode_worker_checkpoint(checkpoint), "application/json");
  return check(res, "checkpoint");
}

core::Status CorraldClient::run_report(const std::string& node, const std::string& token,
                                       const core::WorkerRunReport& report) {
  const auto res = http().Post(("/v1/agents/" + node + "/runs").c_str(), bearer(token),
                               core::encode_worker_run_report(report), "application/json");
  return check(res, "run report");
}

core::Result<CorraldClient::Answer> CorraldClient::feature_lookup(
    const std::string& node, const std::string& token, const core::WorkerFeatureLookup& lookup) {
  const auto res = http().Post(("/v1/agents/" + node + "/features/lookup").c_str(), bearer(token),
                               core::encode_worker_feature_lookup(lookup), "application/json");
  const core::Status s = check(res, "feature lookup");
  if (!res) return s;
  return Answer{.status = res->status, .body = res->body};
}

core::Status CorraldClient::telemetry(const std::string& node, const std::string& token,
                                      const core::TelemetryBatch& batch) {
  const auto res = http().Post(("/v1/agents/" + node + "/telemetry").c_str(), bearer(token),
                               core::encode_telemetry_batch(batch), "application/json");
  return check(res, "telemetry");
}

}  // namespace corral::agent
