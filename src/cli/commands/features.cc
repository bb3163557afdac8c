// `corral features` lists feature set versions; `corral feature lookup NAME@VERSION
// --entity E [--entity E2 ...] --at WHEN --ttl DURATION` reads their values at an instant,
// as training does (docs/features.md).
#include <iostream>
#include <memory>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/commands/remote.h"
#include "cli/commands/remote_commands.h"
#include "cli/commands/validate.h"
#include "cli/format/table.h"
#include "cli/format/units_text.h"
#include "core/dataset.h"
#include "core/units.h"

namespace corral::cli {
namespace {

using nlohmann::json;

struct Lookup {
  std::string ref, at, ttl = "1d";
  std::vector<std::string> entities;
};

// The request body of a lookup, or a usage error naming the flag.
core::Result<json> lookup_body(const Lookup& l, const TimeStyle& style) {
  const auto at = parse_when(l.at, style);
  if (!at.ok()) return core::invalid_argument("--at", at.status().message());
  const auto ttl = core::parse_duration(l.ttl);
  if (!ttl.ok()) return core::invalid_argument("--ttl", ttl.status().message());
  json rows = json::array();
  for (const std::string& e : l.entities)
    rows.push_back({{"entity", e}, {"atMs", core::to_ms(*at)}});
  return json{{"rows", rows}, {"ttlMs", core::to_ms(*ttl)}};
}

}  // namespace

void add_features_commands(CLI::App& app, const CommandEnv& env) {
  add_remote_command(
      app, env, "features", "List feature set versions: schema, source",
      [](const RemoteOptions& o) {
        const Answer a = call(o, "GET", "/v1/features");
        if (a.status != 200) return report_failure("features", a, std::cerr);
        const TimeStyle style = time_style(o);
        print_output(std::cout, o, a.body, [&](bool) {
          Table t{.headers = {"NAME", "VERSION", "TENANT", "FEATURES", "SOURCE", "CREATED"}};
          for (const json& s : a.body["featureSets"]) {
            t.rows.push_back({text(field(s, "name")), text(field(s, "version")),
                              text(field(s, "tenant")), std::to_string(field(s, "schema").size()),
                              text(field(s, "source")).empty() ? "-" : text(field(s, "source")),
                              age_text(field(s, "createdAtMs"), style)});
          }
          return table_text(t);
        });
        return kExitOk;
      });

  CLI::App* group = app.add_subcommand("feature", "Read a feature set's values at an instant");
  group->require_subcommand(1);
  auto l = std::make_shared<Lookup>();
  CLI::App* cmd = add_remote_command(
      *group, env, "lookup", "Each entity's latest value at or before --at, within --ttl",
      [l](const RemoteOptions& o) {
        const auto ref = core::parse_dataset_ref(l->ref, "feature set");
        if (!ref.ok()) return usage_error("feature lookup", "must be NAME@VERSION");
        const TimeStyle style = time_style(o);
        const auto body = lookup_body(*l, style);
        if (!body.ok()) return usage_error("feature lookup", body.status().to_string());
        const Answer a = call(o, "POST",
                              "/v1/features/" + query_value(ref->dataset) + "/versions/" +
                                  query_value(ref->version) + "/lookup",
                              body->dump());
        if (a.status != 200) return report_failure("feature lookup", a, std::cerr);
        print_output(std::cout, o, a.body, [&](bool) {
          Table t{.headers = {"ENTITY", "AT", "EVENT TIME", "VALUES"}};
          for (const json& r : a.body["results"]) {
            const json& event = field(r, "eventTimeMs");
            t.rows.push_back({text(field(r, "entity")), when_text(field(r, "atMs"), style),
                              event.is_null() ? "-" : when_text(event, style),
                              field(r, "values").is_null() ? "(none within the TTL)"
                                                           : field(r, "values").dump()});
          }
          return table_text(t);
        });
        return kExitOk;
      });
  cmd->add_option("set", l->ref, "NAME@VERSION")->required();
  cmd->add_option("--entity", l->entities, "an entity id (repeat for more)")->required();
  cmd->add_option("--at", l->at, "the instant: now, -1h, 2026-12-03T14:00 (local; Z for UTC)")
      ->required();
  cmd->add_option("--ttl", l->ttl, "how old a value may be, e.g. 1d (default), 30m");
}

}  // namespace corral::cli
