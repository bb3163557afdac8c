// The HTTP/JSON user API under /v1 (docs/api/openapi.yaml), served by cpp-httplib
// through the RequestPipeline (request_pipeline.h: authentication, per-route roles,
// idempotency, audit, the error body). Its routes live in one file per kind of state
// (api_routes.h); business actions in the controllers (lifecycle.h, node_admin.h).
//
// Roles: admin (everything), member (its own tenant's jobs; other tenants' job ids are
// 404), agent (reports for its own node only), join (POST /v1/agents/join and nothing
// else; every other route answers 403).
//
// Thread safety: handlers run on httplib's worker threads; Api is safe for that use.
#pragma once

#include "server/api/api_routes.h"
#include "server/http/admission.h"

namespace httplib {
class Server;
}  // namespace httplib

namespace corral::server {

class Api {
 public:
  Api(RequestPipeline& pipeline, Scheduler& loop, Metrics& metrics, AssignmentBoard& board,
      SpecCache& specs, AgentSettings agent_settings, BillingSettings billing,
      DashboardSettings dashboard);
  Api(const Api&) = delete;
  Api& operator=(const Api&) = delete;

  // Registers the user API's routes on `http` (the agent protocol's are AgentApi's,
  // installed first by run_corrald: /v1/jobs/{id}/logs must not be taken by a broader
  // pattern), and the pipeline's fallbacks.
  void install(httplib::Server& http);

 private:
  AdmissionControl admission_;
  ApiContext context_;
};

}  // namespace corral::server
