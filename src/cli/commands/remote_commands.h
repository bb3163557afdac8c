// The commands that talk to corrald, one file each (submit.cc, jobs.cc, cancel.cc,
// queue.cc, nodes.cc, tenants.cc, reservations.cc, audit.cc, logs.cc,
// cost.cc). Every one takes --server,
// --token and -o json|table (remote.h), exits 0 on success, 1 when the server refused
// the request (its error printed), 2 when it could not be asked.
#pragma once

#include <functional>

namespace CLI {  // NOLINT(readability-identifier-naming): CLI11 names it, not us
class App;
}  // namespace CLI

namespace corral::cli {

void add_submit_command(CLI::App& app, std::function<int()>& run);
void add_jobs_commands(CLI::App& app, std::function<int()>& run);  // jobs, job
void add_cancel_command(CLI::App& app, std::function<int()>& run);
void add_queue_command(CLI::App& app, std::function<int()>& run);
void add_nodes_commands(CLI::App& app, std::function<int()>& run);  // nodes, cordon, drain, undrain
void add_tenants_command(CLI::App& app, std::function<int()>& run);
void add_reservations_command(CLI::App& app, std::function<int()>& run);
void add_audit_command(CLI::App& app, std::function<int()>& run);  // audit [verify]
void add_logs_command(CLI::App& app, std::function<int()>& run);
void add_cost_command(CLI::App& app, std::function<int()>& run);  // chargeback

// All of the above.
inline void add_remote_commands(CLI::App& app, std::function<int()>& run) {
  add_submit_command(app, run);
  add_jobs_commands(app, run);
  add_cancel_command(app, run);
  add_queue_command(app, run);
  add_nodes_commands(app, run);
  add_tenants_command(app, run);
  add_reservations_command(app, run);
  add_audit_command(app, run);
  add_logs_command(app, run);
  add_cost_command(app, run);
}

}  // namespace corral::cli
