// The one way corrald serves a request, on both surfaces (the user API, api.h, and the
// agent protocol, agent_api.h). A surface is a table of Routes; the pipeline turns each
// into an httplib handler that, in order:
//
//   1. gives the request an id (X-Request-Id on every answer);
//   2. authenticates the bearer token and checks the caller's Role against the roles the
//      route declares (and, for a node-scoped route, that an agent acts for its own node);
//      refuses a body whose Content-Type is not JSON (or YAML, where the route takes it):
//      400 naming Content-Type, the same for every route;
//   3. runs the handler: a read in one read transaction; a write in one transaction
//      together with its audit entry and, when the caller sent an Idempotency-Key, the
//      stored answer (a retry gets the first answer back and creates nothing); a call
//      with no transaction of its own (long polls, captures), which commits through
//      change();
//   4. after a commit, applies the reply's Effects (agents' desired workers) and tells
//      the scheduler loop what changed;
//   5. answers: the reply, or the Status as the JSON error body (http_status.h) with
//      Retry-After when it carries one; counts the answer in /metrics. A GET's 200 carries
//      an ETag, and a GET whose If-None-Match names it gets 304 and no body: the
//      dashboard polls every few seconds and most answers have not changed.
//
// Thread safety: handlers run on httplib's worker threads; the pipeline is safe for that.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/clock.h"
#include "core/result.h"
#include "server/base/key_ring.h"
#include "server/base/log.h"
#include "server/base/metrics.h"
#include "server/base/role.h"
#include "server/controllers/assignment_board.h"
#include "server/controllers/audit_anchor.h"
#include "server/controllers/effects.h"
#include "server/controllers/scheduler_signals.h"
#include "server/http/list_page.h"
#include "server/http/token_auth.h"
#include "store/store.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace corral::server {

inline constexpr std::size_t kMaxBodyBytes = 1 << 20;

// 403: the caller is known but may not do this.
inline core::Status permission_denied(std::string message) {
  return core::Status(core::StatusCode::kPermissionDenied, std::move(message));
}

// What a handler answers. Errors travel as a Status instead.
struct Reply {
  int status = 200;
  std::string body;
  const char* content_type = "application/json";
  Effects effects;                 // applied after the commit
  bool wake_scheduler = false;     // the change may touch any pending job: re-read the queue
  std::int64_t submitted_job = 0;  // ... unless it only added this one: read just it
  std::vector<std::pair<std::string, std::string>> headers;  // sent besides the standard ones
};

// `body` as a JSON answer (json_text: never broken by the bytes it quotes).
Reply json_reply(const nlohmann::json& body, int status = 200);

// The roles a route admits.
class RoleSet {
 public:
  constexpr RoleSet(std::initializer_list<Role> roles) {
    for (const Role r : roles) bits_ |= bit(r);
  }
  constexpr bool has(Role r) const { return (bits_ & bit(r)) != 0; }

 private:
  static constexpr unsigned bit(Role r) { return 1u << static_cast<unsigned>(r); }
  unsigned bits_ = 0;
};

inline constexpr RoleSet kAdmins{Role::kAdmin};
inline constexpr RoleSet kUsers{Role::kAdmin, Role::kMember};
// Every authenticated caller but a join token (handlers narrow what each one sees).
inline constexpr RoleSet kCallers{Role::kAdmin, Role::kMember, Role::kAgent};

// One request as a handler sees it, once authenticated and admitted.
struct Call {
  const httplib::Request& req;
  const Principal& who;
  const std::string& request_id;
  // The action lines of the audit entries this call appended (RequestPipeline::audit),
  // written once the transaction that holds them commits.
  std::vector<LogEvent>* actions = nullptr;

  // The path's i-th capture group.
  std::string path_param(int i) const;
  // The query parameter `name`, nullopt when absent.
  std::optional<std::string> query(const char* name) const;
  std::string header(const char* name) const;
  const std::string& body() const;
  // The list's `limit` and `cursor` (list_page.h).
  core::Result<PageRequest> page() const;
  // "token:abc(member:team-a)", as audit entries name their actor.
  std::string actor() const;
};

struct Route {
  enum class Kind {
    kRead,    // in one read transaction
    kWrite,   // in one transaction with its audit entry and idempotency row
    kCall,    // no transaction opened for it; commits through RequestPipeline::change()
    kPublic,  // no authentication (health, metrics): kCall without a caller
  };
  using InTx = std::function<core::Result<Reply>(const Call&, store::Tx&)>;
  using Direct = std::function<core::Result<Reply>(const Call&)>;
  // Runs after admission, before the transaction: a refusal costs no commit slot.
  using Precheck = std::function<core::Status(const Call&)>;

  const char* method;  // "GET", "POST", "PUT"
  std::string pattern;
  Kind kind;
  RoleSet roles;
  InTx in_tx;     // kRead, kWrite
  Direct direct;  // kCall, kPublic
  Precheck precheck = nullptr;
  // The path's first capture group names a node, and an agent may act only for its own.
  bool node_scoped = false;
  // A body may be YAML too (application/yaml, application/x-yaml, text/yaml); every
  // other route's body is JSON. The pipeline refuses any other Content-Type (step 2).
  bool takes_yaml = false;
};

// Whether `req`'s body is YAML (application/yaml, application/x-yaml, text/yaml), by the
// rule the pipeline checks a route's Content-Type with; otherwise it is JSON.
bool yaml_body(const httplib::Request& req);

Route read_route(const char* method, std::string pattern, RoleSet roles, Route::InTx fn);
Route write_route(const char* method, std::string pattern, RoleSet roles, Route::InTx fn,
                  Route::Precheck precheck = nullptr);
Route call_route(const char* method, std::string pattern, RoleSet roles, Route::Direct fn);
// A kCall route whose path's first capture group names the node an agent acts for.
Route node_route(const char* method, std::string pattern, RoleSet roles, Route::Direct fn);
// A kPublic route: no authentication (health, metrics).
Route public_route(const char* method, std::string pattern, Route::Direct fn);

class RequestPipeline {
 public:
  RequestPipeline(store::Store& store, const core::Clock& clock, Metrics& metrics, TokenAuth& auth,
                  AssignmentBoard& board, SchedulerSignals& loop, const KeyRing& keys);
  RequestPipeline(const RequestPipeline&) = delete;
  RequestPipeline& operator=(const RequestPipeline&) = delete;

  // Registers `routes` on `http`, in order (httplib tries patterns in registration order).
  // REQUIRES: before serving starts (install is not synchronized with installed()).
  void install(httplib::Server& http, const std::vector<Route>& routes);
  // Every route installed so far, as (method, pattern), in registration order: what the
  // API document must describe (tests/server/openapi_test.cc).
  const std::vector<std::pair<std::string, std::string>>& installed() const { return installed_; }
  // Unmatched routes, oversized bodies, malformed requests and escaped exceptions still
  // answer in the API's error format; bodies over kMaxBodyBytes are refused before
  // parsing; a request with neither Content-Length nor Transfer-Encoding has no body
  // (RFC 9112 section 6.3), so `curl -X POST` of an undrain is an empty body, not a wait
  // for one. Once per server.
  void install_fallbacks(httplib::Server& http);

  // An audit entry of `call`'s caller, in the caller's transaction; once that commits,
  // its `action` line goes to the log (actor, action, target and request, never the
  // before and after texts).
  core::Status audit(store::Tx& tx, const Call& call, std::string action, std::string target,
                     std::string before, std::string after) const;
  // For kCall routes: runs `fn` in one transaction, then applies its Effects as a write's.
  core::Status change(const std::function<core::Status(store::Tx&, Effects&)>& fn);

  store::Store& store() { return store_; }
  const core::Clock& clock() const { return clock_; }
  TokenAuth& auth() { return auth_; }
  // Seals job secrets at rest (key_ring.h).
  const KeyRing& keys() const { return keys_; }
  // Poked after every commit; nullptr (tests): the audit is not anchored.
  void set_audit_anchor(AuditAnchor* anchor) { anchor_ = anchor; }
  const AuditAnchor* audit_anchor() const { return anchor_; }
  Metrics& metrics() { return metrics_; }

 private:
  void serve(const Route& route, const httplib::Request& req, httplib::Response& res);
  core::Result<Reply> run_write(const Route& route, const Call& call, bool& replayed);
  void committed(const Reply& reply);
  void send(httplib::Response& res, const std::string& request_id, const Reply& reply);
  void fail(httplib::Response& res, const std::string& request_id, const core::Status& s);
  std::string new_request_id();

  store::Store& store_;
  const core::Clock& clock_;
  Metrics& metrics_;
  TokenAuth& auth_;
  AssignmentBoard& board_;
  SchedulerSignals& loop_;
  const KeyRing& keys_;
  AuditAnchor* anchor_ = nullptr;                               // set before serving starts
  std::vector<std::pair<std::string, std::string>> installed_;  // written by install() only
  std::atomic<std::int64_t> next_request_{0};
  const std::string request_prefix_;
};

}  // namespace corral::server
