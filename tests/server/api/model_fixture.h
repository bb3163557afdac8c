// The fixture of the model registry's and drift's tests (model_api_test.cc,
// drift_api_test.cc): RunFixture's corrald and tenants, and helpers that train a run which
// reports a model, register versions of it, promote and approve them.
#pragma once

#include <string>

#include "run_fixture.h"

namespace corral::testing {

template <typename Factory>
class ModelFixture : public RunFixture<Factory> {
 protected:
  // A run that reported eval/accuracy `accuracy` and its model at s3://nlp/models/NAME.
  std::int64_t trained(FakeAgent& n1, const std::string& name, double accuracy) {
    const std::int64_t id = this->submit_run();
    EXPECT_TRUE(this->wait_phase(id, "launching"));
    n1.round();
    const json model = {{"name", "model"},
                        {"uri", "s3://nlp/models/" + name},
                        {"digest", digest_of(name)},
                        {"bytes", 1000}};
    const auto r = this->report(
        n1, id, 1,
        {{"metrics", points(10, 10, accuracy, "eval/accuracy")}, {"artifacts", {model}}});
    EXPECT_EQ(r.status, 200) << r.body;
    return id;
  }
  static std::string digest_of(const std::string& name) {
    return "sha256:" + std::string(63, 'a') +
           std::string(1, static_cast<char>('0' + name.size() % 10));
  }
  json version(const std::string& v, std::int64_t run, const std::string& name,
               const json& output = {{"logits", "float32[]"}}) {
    return {{"version", v},
            {"run", run},
            {"artifactUri", "s3://nlp/models/" + name},
            {"digest", digest_of(name)},
            {"inputSchema", {{"tokens", "int32[]"}}},
            {"outputSchema", output},
            {"gates",
             {{"metrics", {{{"metric", "eval/accuracy"}, {"min", 0.85}}}},
              {"improvement", {{{"metric", "eval/accuracy"}, {"minDelta", 0.01}}}},
              {"schemaCompatible", true},
              {"approvals", {"safety"}}}}};
  }
  HttpReply reg(const json& v, const std::string& token = "") {
    return this->as(token.empty() ? this->nlp_ : token).post("/v1/models/llm/versions", v.dump());
  }
  HttpReply alias(const std::string& name, const json& b, const std::string& token = "") {
    return this->as(token.empty() ? this->nlp_ : token)
        .post("/v1/models/llm/aliases/" + name, b.dump());
  }
  // The safety approval of `v`, by an admin (the registrant may not approve).
  HttpReply approve(const std::string& v) {
    return this->admin().post("/v1/models/llm/versions/" + v + "/approvals",
                              json{{"name", "safety"}, {"reason", "red-teamed"}}.dump());
  }
  json history(const std::string& name) {
    return body(this->as(this->nlp_).get("/v1/models/llm/aliases/" + name + "/history"))["moves"];
  }
};

// ((i * mul) % mod) / div + shift: the inputs of tests/registry/drift_stats_test.cc, whose SciPy
// figures the drift tests check again through the API.
inline json sample(int n, long mul, long mod, double div, double shift) {
  json out = json::array();
  for (long i = 0; i < n; ++i) out.push_back(static_cast<double>((i * mul) % mod) / div + shift);
  return out;
}

}  // namespace corral::testing
