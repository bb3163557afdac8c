// `corral tenants [-w]` lists tenants with current use against guarantee and borrow
// limit per GPU type; `corral tenant get|set|delete NAME` reads, creates or changes
// (flags, or -f FILE with the API's tenant fields), and deletes one (admin only).
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands/input_file.h"
#include "cli/commands/remote.h"
#include "cli/commands/remote_commands.h"
#include "cli/commands/validate.h"
#include "cli/views/tenants_view.h"
#include "core/gpu_type.h"
#include "core/tenant.h"

namespace corral::cli {
namespace {

using nlohmann::json;

struct TenantEdit {
  std::string name, file, parent;
  double weight = 1, submit_rate = 0, submit_burst = 1;
  std::int64_t max_pending = 0;
  std::vector<std::string> quotas, removed;
  CLI::Option *weight_opt = nullptr, *parent_opt = nullptr, *max_pending_opt = nullptr,
              *rate_opt = nullptr, *burst_opt = nullptr;
};

json shares_of(const RemoteOptions& o) {
  const Answer s = call(o, "GET", "/v1/shares");
  return s.status == 200 ? s.body : json(nullptr);
}

// "H100=16" or "H100=16:8" (or "H100=16:unlimited") into quotas[H100]; a borrow limit
// left out keeps the one the type has, else unlimited.
core::Status apply_quota(const std::string& spec, json& quotas) {
  const auto eq = spec.find('=');
  const std::string type = spec.substr(0, eq);
  const auto bad = [&](const std::string& why) { return core::invalid_argument("--quota", why); };
  if (eq == std::string::npos)
    return bad("must be TYPE=GUARANTEED[:BORROW_LIMIT], got \"" + spec + "\"");
  if (!core::find_builtin_gpu_type(type)) return bad("unknown GPU type \"" + type + "\"");
  const std::string rest = spec.substr(eq + 1);
  const auto colon = rest.find(':');
  // GPUs, whole or with up to three decimals (3.5: shares of a GPU fill a guarantee
  // exactly); corrald checks the range.
  const auto number = [&](const std::string& s, json& out) {
    if (s == "unlimited") return (out = core::kUnlimited), true;
    const auto dot = s.find('.');
    const std::string whole = s.substr(0, dot);
    const std::string part = dot == std::string::npos ? "" : s.substr(dot + 1);
    const auto digits = [](const std::string& d) {
      return d.find_first_not_of("0123456789") == std::string::npos;
    };
    if (whole.empty() || whole.size() > 9 || !digits(whole) || !digits(part) || part.size() > 3 ||
        (dot != std::string::npos && part.empty())) {
      return false;
    }
    out = part.empty() ? json(std::stoll(whole)) : json(std::stod(s));
    return true;
  };
  json guaranteed = 0;
  json limit = field(field(quotas, type.c_str()), "borrowLimit").is_number()
                   ? quotas[type]["borrowLimit"]
                   : json(core::kUnlimited);
  if (rest.substr(0, colon) == "unlimited" || !number(rest.substr(0, colon), guaranteed) ||
      (colon != std::string::npos && !number(rest.substr(colon + 1), limit))) {
    return bad(
        "counts must be numbers of GPUs, whole or with up to three decimals (or unlimited "
        "for the borrow limit), got \"" +
        spec + "\"");
  }
  quotas[type] = {{"guaranteed", guaranteed}, {"borrowLimit", limit}};
  return core::Status();
}

int set_tenant(const RemoteOptions& o, const TenantEdit& e) {
  json doc = json::object();
  if (!e.file.empty()) {
    auto read = read_document(e.file);
    if (!read.ok()) return usage_error("tenant set", read.status().to_string());
    doc = *read;
  } else {
    const Answer a = call(o, "GET", "/v1/tenants/" + query_value(e.name));
    if (a.status == 200) {
      doc = a.body;
    } else if (a.status != 404) {
      return report_failure("tenant set", a, std::cerr);
    }
  }
  doc.erase("pendingJobs");  // a view's field, not configuration
  if (e.weight_opt->count() > 0) doc["weight"] = e.weight;
  if (e.parent_opt->count() > 0) doc["parent"] = e.parent.empty() ? json(nullptr) : json(e.parent);
  if (e.max_pending_opt->count() > 0) doc["maxPendingJobs"] = e.max_pending;
  if (e.rate_opt->count() > 0) doc["submitRatePerSecond"] = e.submit_rate;
  if (e.burst_opt->count() > 0) doc["submitBurst"] = e.submit_burst;
  if (!doc.contains("quotas") || !doc["quotas"].is_object()) doc["quotas"] = json::object();
  for (const auto& q : e.quotas) {
    if (const core::Status s = apply_quota(q, doc["quotas"]); !s.ok()) {
      return usage_error("tenant set", s.to_string());
    }
  }
  for (const auto& type : e.removed) doc["quotas"].erase(type);
  const Answer a = call(o, "PUT", "/v1/tenants/" + query_value(e.name), doc.dump());
  if (a.status != 200 && a.status != 201) return report_failure("tenant set", a, std::cerr);
  print_output(std::cout, o, a.body, [&](bool) {
    return fmt::format("tenant {} {}\n", e.name, a.status == 201 ? "created" : "updated") +
           tenant_text(a.body, shares_of(o));
  });
  return kExitOk;
}

void add_tenant_group(CLI::App& app, const CommandEnv& env) {
  CLI::App* group = app.add_subcommand("tenant", "Show, create, change or delete a tenant");
  group->require_subcommand(1);

  auto get_name = std::make_shared<std::string>();
  add_remote_command(*group, env, "get", "Show a tenant's configuration and use",
                     [get_name](const RemoteOptions& o) {
                       const Answer a = call(o, "GET", "/v1/tenants/" + query_value(*get_name));
                       if (a.status != 200) return report_failure("tenant get", a, std::cerr);
                       print_output(std::cout, o, a.body,
                                    [&](bool) { return tenant_text(a.body, shares_of(o)); });
                       return kExitOk;
                     })
      ->add_option("name", *get_name, "tenant")
      ->required();

  auto e = std::make_shared<TenantEdit>();
  CLI::App* set =
      add_remote_command(*group, env, "set", "Create or change a tenant (admin): flags, or -f FILE",
                         [e](const RemoteOptions& o) { return set_tenant(o, *e); });
  set->add_option("name", e->name, "tenant (a DNS label for a new one)")->required();
  set->add_option("-f,--file", e->file, "the tenant's fields as YAML or JSON; - reads stdin");
  e->weight_opt = set->add_option("--weight", e->weight, "fair-share weight (> 0)");
  e->parent_opt = set->add_option("--parent", e->parent, "parent tenant (\"\" for none)");
  set->add_option("--quota", e->quotas,
                  "TYPE=GUARANTEED[:BORROW_LIMIT], e.g. H100=16:8 (repeatable)")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  set->add_option("--remove-quota", e->removed, "drop TYPE's quota (repeatable)")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  e->max_pending_opt = set->add_option("--max-pending", e->max_pending, "most pending jobs")
                           ->check(CLI::NonNegativeNumber);
  e->rate_opt = set->add_option("--submit-rate", e->submit_rate, "submissions per second");
  e->burst_opt = set->add_option("--submit-burst", e->submit_burst, "submissions in a burst");

  auto delete_name = std::make_shared<std::string>();
  add_remote_command(*group, env, "delete",
                     "Delete a tenant (admin) with no children, unfinished jobs or reservations",
                     [delete_name](const RemoteOptions& o) {
                       const Answer a =
                           call(o, "DELETE", "/v1/tenants/" + query_value(*delete_name));
                       if (a.status != 200) return report_failure("tenant delete", a, std::cerr);
                       print_output(std::cout, o, a.body,
                                    [&](bool) { return "tenant " + *delete_name + " deleted\n"; });
                       return kExitOk;
                     })
      ->add_option("name", *delete_name, "tenant")
      ->required();
}

}  // namespace

void add_tenants_commands(CLI::App& app, const CommandEnv& env) {
  add_remote_command(
      app, env, "tenants", "List tenants: use against guarantee and borrow limit per GPU type",
      [](const RemoteOptions& o) {
        return run_watched(o, [&](std::ostream& out) {
          const Answer a = call_list(o, "/v1/tenants", "tenants");
          if (a.status != 200) return report_failure("tenants", a, std::cerr);
          const json shares = shares_of(o);
          json doc = a.body;
          doc["shares"] = shares;
          print_output(out, o, doc, [&](bool wide) {
            return table_text(tenants_table(a.body["tenants"], shares, wide));
          });
          return kExitOk;
        });
      },
      nullptr, /*watchable=*/true);
  add_tenant_group(app, env);
}

}  // namespace corral::cli
