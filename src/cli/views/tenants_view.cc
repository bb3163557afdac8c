#include "cli/views/tenants_view.h"

#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "cli/format/units_text.h"
#include "core/tenant.h"

namespace corral::cli {
namespace {

using nlohmann::json;

std::string number_text(const json& v) {
  if (!v.is_number()) return text(v);
  const double d = v.get<double>();
  return d == static_cast<double>(static_cast<std::int64_t>(d)) ? fmt::format("{:.0f}", d)
                                                                : fmt::format("{:g}", d);
}

std::string limit_text(const json& limit) {
  if (!limit.is_number() || limit.get<double>() >= static_cast<double>(core::kUnlimited)) {
    return "unlimited";
  }
  return number_text(limit);
}

const json& share_of(const json& shares, const std::string& tenant) {
  for (const auto& s : field(shares, "tenants")) {
    if (text(field(s, "tenant")) == tenant) return s;
  }
  static const json kNone;
  return kNone;
}

struct TypeRow {
  std::string type, used, guaranteed, limit, borrowed, lent;
};

// Per GPU type: its quota (configured, else as the shares report it) and its use. A
// tenant with neither shows one row for its default quota, type "*".
std::vector<TypeRow> type_rows(const json& tenant, const json& share) {
  std::map<std::string, TypeRow> rows;
  for (const auto& [type, q] : field(tenant, "quotas").items()) {
    rows[type] = {.type = type,
                  .used = "0",
                  .guaranteed = number_text(field(q, "guaranteed")),
                  .limit = limit_text(field(q, "borrowLimit")),
                  .borrowed = "0",
                  .lent = "0"};
  }
  for (const auto& g : field(share, "gpus")) {
    const std::string type = text(field(g, "type"));
    rows[type] = {.type = type,
                  .used = number_text(field(g, "allocated")),
                  .guaranteed = number_text(field(g, "guaranteed")),
                  .limit = limit_text(field(g, "borrowLimit")),
                  .borrowed = number_text(field(g, "borrowed")),
                  .lent = number_text(field(g, "lent"))};
  }
  std::vector<TypeRow> out;
  for (auto& [type, row] : rows) out.push_back(std::move(row));
  if (out.empty()) {
    const json& q = field(tenant, "defaultQuota");
    out.push_back({.type = "*",
                   .used = "0",
                   .guaranteed = q.is_object() ? number_text(field(q, "guaranteed")) : "0",
                   .limit = limit_text(field(q, "borrowLimit")),
                   .borrowed = "0",
                   .lent = "0"});
  }
  return out;
}

std::string pending_text(const json& tenant, const json& share) {
  if (field(share, "pendingJobs").is_number()) return text(field(share, "pendingJobs"));
  return text(field(tenant, "pendingJobs"));
}

}  // namespace

Table tenants_table(const json& tenants, const json& shares, bool wide) {
  Table t{.headers = {"TENANT", "PARENT", "WEIGHT", "GPU", "USED", "GUARANTEED", "BORROW LIMIT",
                      "PENDING"}};
  if (wide) {
    t.headers.insert(t.headers.end(), {"BORROWED", "LENT", "SHARE", "MAX PENDING", "SUBMIT/S"});
  }
  for (const auto& tenant : tenants) {
    const std::string name = text(field(tenant, "name"));
    const json& share = share_of(shares, name);
    for (const TypeRow& r : type_rows(tenant, share)) {
      std::vector<std::string> row = {name,
                                      text(field(tenant, "parent")),
                                      number_text(field(tenant, "weight")),
                                      r.type,
                                      r.used,
                                      r.guaranteed,
                                      r.limit,
                                      pending_text(tenant, share)};
      if (wide) {
        const json& s = field(share, "share");
        row.insert(row.end(),
                   {r.borrowed, r.lent, s.is_number() ? fmt::format("{:.3f}", s.get<double>()) : "",
                    number_text(field(tenant, "maxPendingJobs")),
                    number_text(field(tenant, "submitRatePerSecond"))});
      }
      t.rows.push_back(std::move(row));
    }
  }
  return t;
}

std::string tenant_text(const json& tenant, const json& shares) {
  std::ostringstream out;
  const auto line = [&](const char* key, const std::string& value) {
    if (!value.empty()) out << fmt::format("{:<15}{}\n", std::string(key) + ":", value);
  };
  const std::string name = text(field(tenant, "name"));
  const json& share = share_of(shares, name);
  out << "tenant " << name << "\n";
  line("parent", text(field(tenant, "parent")));
  line("weight", number_text(field(tenant, "weight")));
  line("pending jobs", pending_text(tenant, share) + " (at most " +
                           number_text(field(tenant, "maxPendingJobs")) + ")");
  line("submit rate", number_text(field(tenant, "submitRatePerSecond")) + "/s, burst " +
                          number_text(field(tenant, "submitBurst")));
  const json& q = field(tenant, "defaultQuota");
  if (q.is_object()) {
    line("default quota", text(field(q, "guaranteed")) + " guaranteed, borrow limit " +
                              limit_text(field(q, "borrowLimit")));
  }
  Table t{.headers = {"GPU", "USED", "GUARANTEED", "BORROW LIMIT", "BORROWED", "LENT"}};
  for (const TypeRow& r : type_rows(tenant, share)) {
    t.rows.push_back({r.type, r.used, r.guaranteed, r.limit, r.borrowed, r.lent});
  }
  out << "\n" << table_text(t);
  return out.str();
}

}  // namespace corral::cli
