#include "cli/views/models_view.h"

#include <algorithm>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "cli/format/units_text.h"

namespace corral::cli {
namespace {

using nlohmann::json;

// "3 of 4 passed", or "-" for a move that evaluated nothing.
std::string evaluation_text(const json& evaluation) {
  if (!evaluation.is_array() || evaluation.empty()) return "-";
  std::size_t passed = 0;
  for (const json& e : evaluation) passed += field(e, "passed") == true ? 1 : 0;
  return fmt::format("{} of {} passed", passed, evaluation.size());
}

std::string gates_text(const json& gates) {
  std::string out;
  for (const char* kind : {"metrics", "improvement", "approvals"}) {
    const std::size_t n = field(gates, kind).size();
    if (n > 0) out += (out.empty() ? "" : ", ") + std::to_string(n) + " " + kind;
  }
  if (field(gates, "schemaCompatible") == true)
    out += std::string(out.empty() ? "" : ", ") + "schema";
  return out.empty() ? "-" : out;
}

// "tokens int32[], mask bool[]", or "-" for none.
std::string schema_text(const json& schema) {
  std::string out;
  if (schema.is_object()) {
    for (const auto& [name, type] : schema.items()) {
      out += (out.empty() ? "" : ", ") + name + " " + text(type);
    }
  }
  return out.empty() ? "-" : out;
}

// Each gate as the server names it when it judges a promotion (registry/model.cc), an
// approval with who recorded it, or who may.
std::vector<std::string> gate_lines(const json& gates, const json& approved,
                                    const TimeStyle& style) {
  std::vector<std::string> out;
  for (const json& m : field(gates, "metrics")) {
    const bool min = field(m, "min").is_number();
    out.push_back(fmt::format("metric {} {} {}", text(field(m, "metric")),
                              min ? ">=" : "<=", text(field(m, min ? "min" : "max"))));
  }
  for (const json& m : field(gates, "improvement")) {
    out.push_back(fmt::format("improvement {} by at least {} ({} is better)",
                              text(field(m, "metric")), text(field(m, "minDelta")),
                              text(field(m, "direction"))));
  }
  if (field(gates, "schemaCompatible") == true) out.emplace_back("schema compatible");
  for (const json& a : field(gates, "approvals")) {
    const std::string name = a.is_object() ? text(field(a, "name")) : text(a);
    std::string line = "approval " + name + ": ";
    const auto done = std::find_if(approved.begin(), approved.end(),
                                   [&](const json& r) { return text(field(r, "name")) == name; });
    if (done != approved.end()) {
      line +=
          "approved by " + text(field(*done, "by")) + ", " + when_text(field(*done, "atMs"), style);
      const std::string reason = text(field(*done, "reason"));
      if (!reason.empty()) line += ": " + reason;
    } else {
      std::string who;
      for (const json& o : field(a, "approvers")) who += (who.empty() ? "" : ", ") + text(o);
      line += "not yet (" + (who.empty() ? "an admin" : who) + ")";
    }
    out.push_back(std::move(line));
  }
  return out;
}

}  // namespace

Table models_table(const json& models, const TimeStyle& style) {
  Table t{.headers = {"ID", "TENANT", "VERSIONS", "LATEST"}};
  for (const auto& m : models) {
    t.rows.push_back({text(field(m, "id")), text(field(m, "tenant")), text(field(m, "versions")),
                      age_text(field(m, "latestAtMs"), style)});
  }
  return t;
}

std::string model_text(const json& m, const TimeStyle& style) {
  std::ostringstream out;
  out << "model " << text(field(m, "id")) << " (tenant " << text(field(m, "tenant")) << ")\n\n";
  Table versions{.headers = {"VERSION", "RUN", "DIGEST", "GATES", "APPROVED", "CREATED"}};
  for (const json& v : field(m, "versions")) {
    std::string approved;
    for (const json& a : field(v, "approved"))
      approved += (approved.empty() ? "" : ",") + text(field(a, "name"));
    versions.rows.push_back({text(field(v, "version")), text(field(v, "run")),
                             text(field(v, "digest")).substr(0, 19), gates_text(field(v, "gates")),
                             approved.empty() ? "-" : approved,
                             age_text(field(v, "createdAtMs"), style)});
  }
  out << table_text(versions) << "\n";
  Table aliases{.headers = {"ALIAS", "VERSION", "CANARY", "ENDPOINT", "GATED", "MOVED"}};
  for (const json& a : field(m, "aliases")) {
    const json& canary = field(a, "canary");
    aliases.rows.push_back(
        {text(field(a, "alias")), text(field(a, "version")),
         canary.is_object() ? fmt::format("{} ({:.0f}%)", text(field(canary, "version")),
                                          field(canary, "weight").get<double>() * 100)
                            : "-",
         text(field(a, "endpoint")).empty() ? "-" : text(field(a, "endpoint")),
         field(a, "gated") == true ? "yes" : "no", age_text(field(a, "updatedAtMs"), style)});
  }
  out << table_text(aliases);
  return out.str();
}

std::string model_version_text(const json& v, const std::string& what, const TimeStyle& style) {
  std::ostringstream out;
  const auto line = [&](const char* key, const std::string& value) {
    out << fmt::format("{:<12}{}\n", std::string(key) + ":", value);
  };
  out << "model " << text(field(v, "model")) << "@" << text(field(v, "version")) << ": " << what
      << "\n";
  line("tenant", text(field(v, "tenant")));
  line("run", text(field(v, "run")));
  line("artifact", text(field(v, "artifactUri")));
  line("digest", text(field(v, "digest")));
  line("input", schema_text(field(v, "inputSchema")));
  line("output", schema_text(field(v, "outputSchema")));
  const std::vector<std::string> gates = gate_lines(field(v, "gates"), field(v, "approved"), style);
  if (gates.empty()) line("gates", "none");
  for (const std::string& g : gates) line("gate", g);
  line("created", text(field(v, "createdBy")) + ", " + when_text(field(v, "createdAtMs"), style));
  return out.str();
}

Table alias_history_table(const json& moves, const TimeStyle& style) {
  Table t{.headers = {"WHEN", "KIND", "FROM", "TO", "BY", "REASON", "GATES"}};
  for (const auto& m : moves) {
    const json& from = field(m, "from");
    t.rows.push_back({when_text(field(m, "atMs"), style), text(field(m, "kind")),
                      from.is_null() ? "-" : text(from), text(field(m, "to")), text(field(m, "by")),
                      text(field(m, "reason")).empty() ? "-" : text(field(m, "reason")),
                      evaluation_text(field(m, "evaluation"))});
  }
  return t;
}

}  // namespace corral::cli
