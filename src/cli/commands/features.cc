// `corral features` lists feature set versions; `corral features write NAME@VERSION -f
// FILE` appends values (the API's {values, watermarks}); `corral feature lookup
// NAME@VERSION --entity E [--entity E2 ...] --at WHEN --ttl DURATION` reads them at an
// instant, as training does (docs/features.md).
#include <algorithm>
#include <iostream>
#include <memory>
#include <optional>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/commands/input_file.h"
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

// "/v1/features/NAME/versions/VERSION" of NAME@VERSION, or a usage error.
core::Result<std::string> set_path(const std::string& ref_text) {
  CORRAL_ASSIGN_OR_RETURN(const core::DatasetRef ref,
                          core::parse_dataset_ref(ref_text, "feature set"));
  return "/v1/features/" + query_value(ref.dataset) + "/versions/" + query_value(ref.version);
}

// What a write the server took wrote: its count (the answer), and from the request, the
// span of the values' event times and the watermarks it raised.
std::string written_text(const std::string& ref, const json& answer, const json& request,
                         const TimeStyle& style) {
  std::string out = "wrote " + text(field(answer, "written")) + " values to " + ref + "\n";
  std::optional<std::int64_t> first, last;
  for (const json& v : field(request, "values")) {
    const json& at = field(v, "eventTimeMs");
    if (!at.is_number_integer()) continue;
    first = std::min(first.value_or(at.get<std::int64_t>()), at.get<std::int64_t>());
    last = std::max(last.value_or(at.get<std::int64_t>()), at.get<std::int64_t>());
  }
  if (first) {
    out += "event times: " + when_text(json(*first), style) + " to " +
           when_text(json(*last), style) + "\n";
  }
  for (const auto& [source, ms] : field(request, "watermarks").items()) {
    out += "watermark:   " + source + " at " + when_text(ms, style) + "\n";
  }
  return out;
}

}  // namespace

void add_features_commands(CLI::App& app, const CommandEnv& env) {
  CLI::App* features = add_remote_command(
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

  // `corral features write`: a batch of values, written once however often it is retried.
  auto write = std::make_shared<std::pair<std::string, std::string>>();
  CLI::App* w = add_remote_command(
      *features, env, "write",
      "Append values with their event times, and raise the sources' watermarks (a YAML or "
      "JSON file)",
      [write](const RemoteOptions& o) {
        const auto path = set_path(write->first);
        if (!path.ok()) return usage_error("features write", "must be NAME@VERSION");
        const auto doc = read_document(write->second);
        if (!doc.ok()) return usage_error("features write", doc.status().to_string());
        const Answer a = post_once(o, *path + "/values", doc->dump());
        if (a.status != 201) return report_failure("features write", a, std::cerr);
        const TimeStyle style = time_style(o);
        print_output(std::cout, o, a.body,
                     [&](bool) { return written_text(write->first, a.body, *doc, style); });
        return kExitOk;
      });
  w->add_option("set", write->first, "NAME@VERSION")->required();
  w->add_option("-f,--file", write->second,
                "{values: [{entity, eventTimeMs, values: {feature: value}}], watermarks: "
                "{source: ms}}; - reads standard input")
      ->required();

  CLI::App* group = app.add_subcommand("feature", "Read a feature set's values at an instant");
  group->require_subcommand(1);
  auto l = std::make_shared<Lookup>();
  CLI::App* cmd = add_remote_command(
      *group, env, "lookup", "Each entity's latest value at or before --at, within --ttl",
      [l](const RemoteOptions& o) {
        const auto path = set_path(l->ref);
        if (!path.ok()) return usage_error("feature lookup", "must be NAME@VERSION");
        const TimeStyle style = time_style(o);
        const auto body = lookup_body(*l, style);
        if (!body.ok()) return usage_error("feature lookup", body.status().to_string());
        const Answer a = call(o, "POST", *path + "/lookup", body->dump());
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
