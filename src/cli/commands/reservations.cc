// `corral reservations [-w]` lists reservations; `corral reservation create|get|delete
// ID` makes, shows and removes one (admin). Times are written as people write them:
// "now", "+2h", "2026-12-03T14:00" (local, or UTC with --utc or a trailing Z).
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "cli/commands/remote.h"
#include "cli/commands/remote_commands.h"
#include "cli/commands/validate.h"
#include "cli/views/reservations_view.h"
#include "core/gpu_type.h"
#include "core/units.h"

namespace corral::cli {
namespace {

using nlohmann::json;

struct NewReservation {
  std::string id, tenant, gpu_type, start = "now", end, duration;
  int count = 0;
  std::vector<std::string> nodes;
  bool overcommit = false;
};

// The API's body for `r`, or a usage error naming the flag.
core::Result<json> reservation_body(const NewReservation& r, const TimeStyle& style) {
  json body = {{"id", r.id}, {"tenant", r.tenant}};
  if (r.gpu_type.empty() == r.nodes.empty()) {
    return core::invalid_argument("--gpu-type", "give --gpu-type with --count, or --node NAME...");
  }
  if (!r.gpu_type.empty()) {
    if (!core::find_builtin_gpu_type(r.gpu_type)) {
      return core::invalid_argument("--gpu-type", "unknown GPU type \"" + r.gpu_type + "\"");
    }
    if (r.count < 1) return core::invalid_argument("--count", "must be at least 1 with --gpu-type");
    body["gpuType"] = r.gpu_type;
    body["count"] = r.count;
  } else {
    body["nodes"] = r.nodes;
  }
  const auto start = parse_when(r.start, style);
  if (!start.ok()) return core::invalid_argument("--start", start.status().message());
  if (r.end.empty() == r.duration.empty()) {
    return core::invalid_argument("--end", "give --end or --duration, one of them");
  }
  core::Time end;
  if (!r.end.empty()) {
    const auto e = parse_when(r.end, style);
    if (!e.ok()) return core::invalid_argument("--end", e.status().message());
    end = *e;
  } else {
    const auto d = core::parse_duration(r.duration);
    if (!d.ok()) return core::invalid_argument("--duration", d.status().message());
    end = *start + *d;
  }
  if (end <= *start) return core::invalid_argument("--end", "must be after --start");
  body["startMs"] = core::to_ms(*start);
  body["endMs"] = core::to_ms(end);
  if (r.overcommit) body["overcommit"] = true;
  return body;
}

int create(const RemoteOptions& o, const NewReservation& r) {
  const TimeStyle style = time_style(o);
  const auto body = reservation_body(r, style);
  if (!body.ok()) return usage_error("reservation create", body.status().to_string());
  const Answer a = call(o, "POST", "/v1/reservations", body->dump());
  if (a.status != 201) return report_failure("reservation create", a, std::cerr);
  print_output(std::cout, o, a.body, [&](bool) { return reservation_text(a.body, style); });
  return kExitOk;
}

// GET or DELETE of one reservation, printed as it is (or was).
int one(const RemoteOptions& o, const std::string& method, const std::string& id) {
  const std::string command = method == "GET" ? "reservation get" : "reservation delete";
  const Answer a = call(o, method, "/v1/reservations/" + query_value(id));
  if (a.status != 200) return report_failure(command, a, std::cerr);
  const TimeStyle style = time_style(o);
  print_output(std::cout, o, a.body, [&](bool) {
    return (method == "DELETE" ? "deleted " : "") + reservation_text(a.body, style);
  });
  return kExitOk;
}

}  // namespace

void add_reservations_commands(CLI::App& app, const CommandEnv& env) {
  add_remote_command(
      app, env, "reservations", "List reservations: who, what, when, and whether active",
      [](const RemoteOptions& o) {
        return run_watched(o, [&](std::ostream& out) {
          const Answer a = call_list(o, "/v1/reservations", "reservations");
          if (a.status != 200) return report_failure("reservations", a, std::cerr);
          const TimeStyle style = time_style(o);
          print_output(out, o, a.body, [&](bool wide) {
            return table_text(reservations_table(a.body["reservations"], style, wide));
          });
          return kExitOk;
        });
      },
      nullptr, /*watchable=*/true);

  CLI::App* group = app.add_subcommand("reservation", "Create, show or delete a reservation");
  group->require_subcommand(1);
  auto r = std::make_shared<NewReservation>();
  CLI::App* make = add_remote_command(*group, env, "create", "Reserve GPUs for a tenant (admin)",
                                      [r](const RemoteOptions& o) { return create(o, *r); });
  make->add_option("id", r->id, "reservation name")->required();
  make->add_option("--tenant", r->tenant, "the tenant it is for")->required();
  make->add_option("--gpu-type", r->gpu_type, "GPU type, with --count");
  make->add_option("--count", r->count, "GPUs of --gpu-type")->check(CLI::PositiveNumber);
  make->add_option("--node", r->nodes, "every GPU of these nodes (repeatable)")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  make->add_option("--start", r->start, "now, +2h, or a date like 2026-12-03T14:00 (default now)");
  make->add_option("--end", r->end, "+4h, or a date like 2026-12-03T18:00");
  make->add_option("--duration", r->duration, "instead of --end: 4h, 2d, 1h30m");
  make->add_flag("--overcommit", r->overcommit,
                 "accept it even where reservations already hold those GPUs");
  for (const char* verb : {"get", "delete"}) {
    auto id = std::make_shared<std::string>();
    const std::string method = std::string(verb) == "get" ? "GET" : "DELETE";
    add_remote_command(*group, env, verb,
                       method == "GET" ? "Show a reservation" : "Delete a reservation (admin)",
                       [id, method](const RemoteOptions& o) { return one(o, method, *id); })
        ->add_option("id", *id, "reservation")
        ->required();
  }
}

}  // namespace corral::cli
