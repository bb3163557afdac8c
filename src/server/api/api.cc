#include "server/api/api.h"

#include <httplib.h>

namespace corral::server {

Api::Api(RequestPipeline& pipeline, Scheduler& loop, Metrics& metrics, AssignmentBoard& board,
         SpecCache& specs, AgentSettings agent_settings, BillingSettings billing,
         DashboardSettings dashboard)
    : admission_(pipeline.clock()),
      context_{pipeline,
               loop,
               metrics,
               board,
               specs,
               agent_settings,
               admission_,
               std::move(billing),
               std::move(dashboard)} {}

void Api::install(httplib::Server& http) {
  for (const auto& table :
       {job_routes(context_), workflow_routes(context_), sweep_routes(context_),
        node_routes(context_), tenant_routes(context_), reservation_routes(context_),
        admin_routes(context_), token_routes(context_), dataset_routes(context_),
        run_routes(context_), model_routes(context_), feature_routes(context_),
        drift_routes(context_), retraining_routes(context_), billing_routes(context_),
        dashboard_routes(context_)}) {
    context_.pipeline.install(http, table);
  }
  context_.pipeline.install_fallbacks(http);
}

}  // namespace corral::server
