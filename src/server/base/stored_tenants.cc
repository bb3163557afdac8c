#include "server/base/stored_tenants.h"

#include <mutex>
#include <set>
#include <string>

#include "server/base/log.h"

namespace corral::server {
namespace {

// Whether this process has not yet reported the row `id` holding `text`.
bool first_report(const std::string& id, const std::string& text) {
  static std::mutex mu;
  static std::set<std::string> reported;
  const std::lock_guard<std::mutex> lock(mu);
  return reported.insert(id + '\n' + text).second;
}

}  // namespace

std::vector<TenantConfig> stored_tenants(const std::vector<store::TenantRow>& rows) {
  std::vector<TenantConfig> out;
  out.reserve(rows.size());
  for (const auto& row : rows) {
    auto cfg = tenant_config_from_json(row.id.value, row.config_json);
    if (cfg.ok()) {
      out.push_back(*std::move(cfg));
    } else if (first_report(row.id.value, row.config_json)) {
      process_log().write(LogEvent("unreadable_row", LogLevel::kError)
                              .add("table", "tenants")
                              .add("id", row.id.value)
                              .add("why", cfg.status().to_string()));
    }
  }
  return out;
}

}  // namespace corral::server
