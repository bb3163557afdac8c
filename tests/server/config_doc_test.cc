// docs/config.md against the parser: its reference file loads through
// load_server_config() and equals the compiled defaults, and every key the parsers
// accept appears on the page. A key added to the parser without a line in the doc, or
// a default changed in code but not in the doc, fails here.
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "cycle/capture.h"
#include "cycle/scheduler_config.h"
#include "server/config.h"
#include "testing/store_fixture.h"

namespace corral::testing {
namespace {

const std::filesystem::path kSource = CORRAL_SOURCE_DIR;

std::string read(const std::filesystem::path& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in) << path;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The ```yaml block under "## Every key at its default".
std::string reference_file(const std::string& doc) {
  const auto section = doc.find("## Every key at its default");
  const auto start = doc.find("```yaml\n", section);
  const auto end = doc.find("```", start + 8);
  if (section == std::string::npos || start == std::string::npos || end == std::string::npos) {
    return "";
  }
  return doc.substr(start + 8, end - start - 8);
}

// Every match of `re`'s first group in `text`.
std::set<std::string> captures(const std::string& text, const std::string& re) {
  std::set<std::string> out;
  const std::regex pattern(re);
  for (std::sregex_iterator it(text.begin(), text.end(), pattern), end; it != end; ++it) {
    out.insert((*it)[1].str());
  }
  return out;
}

// The config's settings as comparable text: the scheduler's knobs through the capture
// codec (every field of SchedulerConfig), the other sections field by field.
std::string settings_text(const server::ServerConfig& c) {
  std::ostringstream out;
  out << cycle::to_json(cycle::CapturedCycle{.config = c.sched.config}) << "\n";
  const server::AgentSettings& a = c.agents;
  out << "agents " << a.node_lost_after_ms << " " << a.stop_grace_ms << " " << a.restart_backoff_ms
      << " " << a.restart_backoff_max_ms << " " << a.hot_temperature_c << " "
      << a.throttle_drain_after_ms;
  for (const std::string& r : a.throttle_reasons) out << " " << r;
  const server::TelemetrySettings& t = c.telemetry;
  out << "\ntelemetry " << t.raw_retention_ms << " " << t.minute_retention_ms << " "
      << t.hour_retention_ms << " " << t.node_samples_per_minute << " " << t.queue_samples << " "
      << t.flush_ms << " " << t.prune_every_ms;
  const server::SessionSettings& s = c.sessions;
  out << "\nsessions " << s.idle_timeout_ms << " " << s.grace_ms << " " << s.idle_below << " "
      << s.check_every_ms;
  out << "\nloop " << c.sched.batch_window.count() << " " << c.sched.tick.count();
  const server::BillingSettings& b = c.billing;
  out << "\nbilling " << b.currency << " " << b.period.count() << " " << b.grace.count() << " "
      << b.idle_below << " " << static_cast<int>(b.attribution) << " " << b.region;
  out << "\nmetrics " << c.metrics.refresh_ms;
  out << "\ndashboard " << c.dashboard.history_ms << " " << c.dashboard.history_retention_days
      << " " << c.dashboard.chart_js;
  out << "\nreplica " << c.replica.name << " " << c.replica.lease.count();
  out << "\nsecurity " << c.security.key_file << " " << c.security.anchor_file << " "
      << c.security.anchor_syslog;
  out << "\nlog " << static_cast<int>(c.log.format) << "\n";
  return out.str();
}

TEST(ConfigDoc, TheReferenceFileLoadsAndHoldsTheDefaults) {
  const std::string reference = reference_file(read(kSource / "docs/config.md"));
  ASSERT_FALSE(reference.empty()) << "docs/config.md has no reference file";
  TempDir dir;
  const auto path = dir.path() / "corrald.yaml";
  std::ofstream(path) << reference;
  const auto loaded = server::load_server_config(path.string());
  ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
  EXPECT_EQ(settings_text(*loaded), settings_text(server::default_server_config()));
  // The default tenant as the page shows it is the one corrald creates.
  const auto is_default = [](const server::TenantConfig& t) {
    return t.tenant.id.value == "default";
  };
  const auto& tenants = loaded->tenants;
  const auto it = std::find_if(tenants.begin(), tenants.end(), is_default);
  ASSERT_NE(it, tenants.end());
  const server::TenantConfig fresh = server::default_server_config().tenants.front();
  EXPECT_EQ(it->tenant.weight, fresh.tenant.weight);
  EXPECT_EQ(it->tenant.default_quota.guaranteed_milli, fresh.tenant.default_quota.guaranteed_milli);
  EXPECT_EQ(it->tenant.default_quota.borrow_limit_milli,
            fresh.tenant.default_quota.borrow_limit_milli);
  EXPECT_EQ(it->max_pending_jobs, fresh.max_pending_jobs);
  EXPECT_EQ(it->submit.rate_per_second, fresh.submit.rate_per_second);
  EXPECT_EQ(it->submit.burst, fresh.submit.burst);
}

TEST(ConfigDoc, EveryKeyTheParsersAcceptIsOnThePage) {
  const std::string doc = read(kSource / "docs/config.md");
  std::set<std::string> keys;
  for (const char* file : {"src/server/config.cc", "src/server/billing/billing_config.cc"}) {
    const std::string text = read(kSource / file);
    for (const std::string& k : captures(text, R"re(\bk(?:ey)? [!=]= "(\w+)")re")) keys.insert(k);
    // The sections read through core::YamlFields name their keys in its calls.
    for (const std::string& k : captures(
             text, R"re(\b(?:f\.(?:read_\w+|integer|number|str|has)\(|read_path\(f, )"(\w+)")re")) {
      keys.insert(k);
    }
    for (const std::string& list : captures(text, R"(f\.only\(\{([^}]*)\}\))")) {
      for (const std::string& k : captures(list, R"re("(\w+)")re")) keys.insert(k);
    }
  }
  for (const std::string& k :
       captures(read(kSource / "src/cycle/internal/knobs.h"), R"re(\bv\("(\w+)")re")) {
    keys.insert(k);
  }
  for (const std::string_view k : cycle::kSchedulerLoopKeys) keys.emplace(k);
  // A tenant's keys: the only_fields lists of tenant_config_from_json and read_quota.
  const std::string model = read(kSource / "src/server/base/model_json.cc");
  const auto between = [&](const std::string& from, const std::string& to) {
    const auto start = model.find(from);
    EXPECT_NE(start, std::string::npos) << from;
    return start == std::string::npos ? "" : model.substr(start, model.find(to, start) - start);
  };
  for (const std::string& body :
       {between("Status read_quota(", "json quota_json("),
        between("Result<TenantConfig> tenant_config_from_json(", "tenant_config_to_json(")}) {
    for (const std::string& list : captures(body, R"(only_fields\([^{]*\{([^}]*)\})")) {
      for (const std::string& k : captures(list, R"re("(\w+)")re")) keys.insert(k);
    }
  }
  ASSERT_GT(keys.size(), 60u) << "the key patterns no longer match the parsers";
  for (const std::string k : {"nodeLostAfterMs", "leaseMs", "borrowLimit", "tickMs", "graceMs"}) {
    EXPECT_TRUE(keys.contains(k)) << k << " not found in the parsers' sources";
  }
  keys.erase("name");  // a tenant's name is its map key; `replica.name` and `shards` cover it
  for (const std::string& k : keys) {
    // In a table: `key`, or a nested one's last part (`quotas.TYPE.guaranteed`).
    const bool found = doc.find("`" + k + "`") != std::string::npos ||
                       doc.find("." + k + "`") != std::string::npos;
    EXPECT_TRUE(found) << "docs/config.md does not document `" << k << "`";
  }
}

// The sections read through core::YamlFields: every error names the key's path, a null
// value keeps the default, and a key nobody reads is refused.
TEST(ConfigLoad, ErrorsNameTheKeyAndANullKeepsTheDefault) {
  TempDir dir;
  const auto load = [&](const std::string& text) {
    const auto path = dir.path() / "corrald.yaml";
    std::ofstream(path) << text;
    return server::load_server_config(path.string());
  };
  const auto out_of_range = load("agents: {nodeLostAfterMs: 10}\n");
  ASSERT_FALSE(out_of_range.ok());
  EXPECT_EQ(out_of_range.status().field(), "agents.nodeLostAfterMs");
  EXPECT_EQ(out_of_range.status().message(), "must be between 50 and 3600000, got 10");

  const auto null_kept = load("agents: {nodeLostAfterMs: ~, stopGraceMs: 5}\n");
  ASSERT_TRUE(null_kept.ok()) << null_kept.status().to_string();
  EXPECT_EQ(null_kept->agents.node_lost_after_ms,
            server::default_server_config().agents.node_lost_after_ms);
  EXPECT_EQ(null_kept->agents.stop_grace_ms, 5);

  const auto typo = load("telemetry: {flushMs: 10, flushMS: 20}\n");
  ASSERT_FALSE(typo.ok());
  EXPECT_EQ(typo.status().field(), "telemetry.flushMS");
  EXPECT_EQ(typo.status().message(), "unknown field");

  const auto not_bool = load("security: {auditAnchorSyslog: maybe}\n");
  ASSERT_FALSE(not_bool.ok());
  EXPECT_EQ(not_bool.status().field(), "security.auditAnchorSyslog");
  EXPECT_EQ(not_bool.status().message(), "must be true or false");

  const auto rack = load("racks: {r1: {powerCapWatts: 40000, watts: 1}}\n");
  ASSERT_FALSE(rack.ok());
  EXPECT_EQ(rack.status().field(), "racks.r1.watts");

  const auto shard = load("shards: [{name: a, minGpus: many}]\n");
  ASSERT_FALSE(shard.ok());
  EXPECT_EQ(shard.status().field(), "shards[0].minGpus");
  EXPECT_EQ(shard.status().message(), "must be an integer, got 'many'");
}

}  // namespace
}  // namespace corral::testing
