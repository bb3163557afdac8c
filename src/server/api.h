// The HTTP/JSON API under /v1 (docs/api/openapi.yaml), served by cpp-httplib.
//
// Every handler goes through one wrapper that: assigns a request id; authenticates the
// bearer token (stored hashed); for mutating calls, runs the change in ONE store
// transaction together with its audit entry and, when the caller sent an
// Idempotency-Key, the stored answer (a retry gets the first answer back and creates
// nothing); and turns any Status into the JSON error body with the status from
// http_status(). Bodies over kMaxBodyBytes are refused with 413 before parsing.
//
// Roles: admin (everything), member (its own tenant's jobs; other tenants' job ids are
// 404), agent (reports for its own node only), join (POST /v1/agents/join and nothing
// else; every other route answers 403).
//
// Thread safety: handlers run on httplib's worker threads; Api is safe for that use.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "core/clock.h"
#include "server/admission.h"
#include "server/assignment_board.h"
#include "server/lifecycle.h"
#include "server/metrics.h"
#include "server/sched_loop.h"
#include "server/spec_cache.h"
#include "server/token_auth.h"
#include "store/store.h"

namespace httplib {
class Server;
}  // namespace httplib

namespace corral::server {

inline constexpr std::size_t kMaxBodyBytes = 1 << 20;

struct ApiRoutes;

class Api {
 public:
  Api(store::Store& store, const core::Clock& clock, SchedLoop& loop, Metrics& metrics,
      AssignmentBoard& board, SpecCache& specs, AgentSettings agent_settings, TokenAuth& auth);
  ~Api();
  Api(const Api&) = delete;
  Api& operator=(const Api&) = delete;

  // Registers the user API's routes on `http` (the agent protocol's are AgentApi's,
  // installed first by run_corrald: /v1/jobs/{id}/logs must not be taken by a broader
  // pattern).
  void install(httplib::Server& http);

 private:
  friend struct ApiRoutes;
  store::Store& store_;
  const core::Clock& clock_;
  SchedLoop& loop_;
  Metrics& metrics_;
  AssignmentBoard& board_;
  SpecCache& specs_;
  const AgentSettings agent_settings_;
  AdmissionControl admission_;
  TokenAuth& auth_;
  std::unique_ptr<ApiRoutes> routes_;
};

}  // namespace corral::server
