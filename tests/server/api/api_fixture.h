// The fixture of the API tests (api_test.cc, admin_api_test.cc): a real corrald process
// on loopback over a real store, an admin client, and helpers that make tenants, nodes
// and tokens through the API itself.
#pragma once

#include <fstream>
#include <memory>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "testing/corrald_process.h"
#include "testing/store_fixture.h"

namespace corral::testing {

using nlohmann::json;

inline std::string job_for(const std::string& tenant, int gpus = 1) {
  return json{{"name", "j"},
              {"tenant", tenant},
              {"resources", {{"gpus", gpus}, {"gpuTypes", {"H100"}}}},
              {"command", {"true"}}}
      .dump();
}

template <typename Factory>
class ApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string url;
    store_url_or_skip<Factory>(url);
    if (this->IsSkipped() || this->HasFatalFailure()) return;
    store_url_ = url.empty() ? (dir_.path() / "corral.db").string() : url;
    server_ = std::make_unique<CorraldProcess>(dir_.path(), url);
    // A cycle at least every 100 ms, not the default 2 s: tests that wait for cycles
    // (wait_cycles) wait a tenth as long and the same cycles run.
    std::ofstream(config_path()) << "scheduler: {tickMs: 100}\n";
    server_->set_extra_args({"--config", config_path()});
    const auto s = server_->start();
    ASSERT_TRUE(s.ok()) << s.to_string();
    admin_token_ = server_->admin_token();
    ASSERT_FALSE(admin_token_.empty());
  }
  void TearDown() override {
    if (server_) server_->stop();
  }

  TestClient admin() { return server_->client(admin_token_); }
  // corrald's --config, outside its data dir (whose files must all be private).
  std::string config_path() const { return (config_dir_.path() / "config.yaml").string(); }

  // A token of `role` minted by the admin.
  std::string token(const json& request) {
    auto r = admin().post("/v1/tokens", request.dump());
    EXPECT_EQ(r.status, 201) << r.body;
    return body(r).value("token", "");
  }

  void make_tenant(const std::string& name, const std::string& extra = "{}") {
    auto r = admin().put("/v1/tenants/" + name, extra);
    ASSERT_TRUE(r.status == 200 || r.status == 201) << r.body;
  }

  void add_node(const std::string& id, int gpus = 8) {
    auto r =
        admin().post("/v1/nodes", json{{"id", id}, {"gpuType", "H100"}, {"gpuCount", gpus}}.dump());
    ASSERT_TRUE(r.status == 201 || r.status == 200) << r.body;
  }

  std::int64_t count(const std::string& path, const std::string& key) {
    return static_cast<std::int64_t>(body(admin().get(path)).value(key, json::array()).size());
  }

  TempDir dir_;
  TempDir config_dir_;
  std::string store_url_;
  std::unique_ptr<CorraldProcess> server_;
  std::string admin_token_;
};

// ApiTest with two tenants, nlp and vision, and a member token of each: the fixture of
// the tests that check one tenant's objects never reach the other (datasets, features).
template <typename Factory>
class TwoTenantApiTest : public ApiTest<Factory> {
 protected:
  void SetUp() override {
    ApiTest<Factory>::SetUp();
    if (this->IsSkipped() || this->HasFatalFailure()) return;
    this->make_tenant("nlp");
    this->make_tenant("vision");
    nlp_ = this->token({{"role", "member"}, {"tenant", "nlp"}});
    vision_ = this->token({{"role", "member"}, {"tenant", "vision"}});
  }

  TestClient as(const std::string& token) { return this->server_->client(token); }

  std::string nlp_;
  std::string vision_;
};

}  // namespace corral::testing
