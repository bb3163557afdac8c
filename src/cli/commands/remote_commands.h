// The commands that talk to corrald, one file each (submit.cc; session.cc; jobs.cc: jobs, job,
// queue; cancel.cc; nodes.cc: nodes, node, cordon, drain, undrain; tenants.cc: tenants,
// tenant get|set|delete; reservations.cc: reservations, reservation
// create|get|delete; tokens.cc: tokens, token create|revoke; audit.cc; logs.cc;
// cost.cc). Every one takes --server, --token, --utc and -o table|wide|json|yaml
// (remote.h); the lists take -w. Exit 0 on success, 1 when the server refused the
// request (its error printed) or a bulk cancel was not confirmed, 2 for a usage error
// (the message names the flag and the valid values) or when corrald could not be asked.
// docs/cli.md shows every command.
#pragma once

#include "cli/commands/remote.h"

namespace corral::cli {

void add_submit_command(CLI::App& app, const CommandEnv& env);
void add_session_command(CLI::App& app, const CommandEnv& env);  // interactive sessions
void add_jobs_commands(CLI::App& app, const CommandEnv& env);    // jobs, job, queue
void add_cancel_command(CLI::App& app, const CommandEnv& env);
void add_nodes_commands(CLI::App& app, const CommandEnv& env);         // nodes, node, cordon, ...
void add_tenants_commands(CLI::App& app, const CommandEnv& env);       // tenants, tenant ...
void add_reservations_commands(CLI::App& app, const CommandEnv& env);  // reservations, ...
void add_tokens_commands(CLI::App& app, const CommandEnv& env);        // tokens, token ...
void add_datasets_commands(CLI::App& app, const CommandEnv& env);      // datasets, dataset ...
void add_runs_commands(CLI::App& app, const CommandEnv& env);          // runs, run ...
void add_models_commands(CLI::App& app, const CommandEnv& env);        // models, model ...
void add_features_commands(CLI::App& app, const CommandEnv& env);      // features, feature ...
void add_drift_commands(CLI::App& app, const CommandEnv& env);         // drift ...
void add_audit_command(CLI::App& app, const CommandEnv& env);          // audit [verify]
void add_logs_command(CLI::App& app, const CommandEnv& env);
void add_cost_command(CLI::App& app, const CommandEnv& env);  // chargeback

// All of the above.
inline void add_remote_commands(CLI::App& app, const CommandEnv& env) {
  add_submit_command(app, env);
  add_session_command(app, env);
  add_jobs_commands(app, env);
  add_cancel_command(app, env);
  add_nodes_commands(app, env);
  add_tenants_commands(app, env);
  add_reservations_commands(app, env);
  add_tokens_commands(app, env);
  add_datasets_commands(app, env);
  add_runs_commands(app, env);
  add_models_commands(app, env);
  add_features_commands(app, env);
  add_drift_commands(app, env);
  add_audit_command(app, env);
  add_logs_command(app, env);
  add_cost_command(app, env);
}

}  // namespace corral::cli
