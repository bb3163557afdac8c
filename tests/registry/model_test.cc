// The model registry's rules on hand-built versions: each gate's verdict against the
// version an alias points at now, and who may record an approval (separation of duties).
#include "registry/model.h"

#include <gtest/gtest.h>

namespace corral::registry {
namespace {

ModelVersion version(std::string name, ModelGates gates = {}) {
  ModelVersion v{.model = "llm", .version = std::move(name), .created_by = "token:alice"};
  v.content.run = core::JobId(7);
  v.content.gates = std::move(gates);
  return v;
}

TEST(ModelGates, AMetricGateIsJudgedOnTheRunsLastValue) {
  const ModelVersion v = version("v2", {.metrics = {{"eval/accuracy", true, 0.85},
                                                    {"eval/loss", false, 0.3},
                                                    {"eval/f1", true, 0.5}}});
  const auto results =
      evaluate_gates({&v, {{"eval/accuracy", 0.9}, {"eval/loss", 0.4}}}, std::nullopt, {});
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0], (GateResult{"metric eval/accuracy >= 0.85", true, "eval/accuracy is 0.9"}));
  EXPECT_EQ(results[1], (GateResult{"metric eval/loss <= 0.3", false, "eval/loss is 0.4"}));
  EXPECT_EQ(results[2], (GateResult{"metric eval/f1 >= 0.5", false, "run 7 reported no eval/f1"}));
}

TEST(ModelGates, AnImprovementIsMeasuredAgainstTheCurrentVersionEitherWay) {
  const ModelGates gates{
      .improvement = {{"eval/accuracy", 0.01, true}, {"eval/loss", 0.05, false}}};
  const ModelVersion to = version("v3", gates);
  const ModelVersion from = version("v2");
  const auto results =
      evaluate_gates({&to, {{"eval/accuracy", 0.92}, {"eval/loss", 0.30}}},
                     GatedVersion{&from, {{"eval/accuracy", 0.915}, {"eval/loss", 0.40}}}, {});
  ASSERT_EQ(results.size(), 2u);
  EXPECT_FALSE(results[0].passed) << results[0].detail;  // +0.005 is short of 0.01
  EXPECT_EQ(results[0].detail, "eval/accuracy 0.92 against 0.915 of v2");
  EXPECT_TRUE(results[1].passed) << results[1].detail;  // 0.10 lower, and lower is better
  EXPECT_EQ(results[1].gate, "improvement eval/loss by at least 0.05 (lower is better)");
  // A metric the current version's run never reported fails, naming where it is missing.
  const auto missing = evaluate_gates({&to, {{"eval/accuracy", 0.92}}},
                                      GatedVersion{&from, {{"eval/loss", 0.4}}}, {});
  EXPECT_EQ(missing[0].detail, "eval/accuracy missing from v2");
  EXPECT_EQ(missing[1].detail, "eval/loss missing from v3");
}

TEST(ModelGates, ComparisonGatesPassWhereThereIsNothingToCompareWith) {
  const ModelGates gates{.improvement = {{"eval/accuracy", 0.01, true}}, .schema_compatible = true};
  const ModelVersion to = version("v1", gates);
  for (const auto& from : {std::optional<GatedVersion>(), std::optional(GatedVersion{&to, {}})}) {
    const auto results = evaluate_gates({&to, {}}, from, {});
    ASSERT_EQ(results.size(), 2u);
    EXPECT_TRUE(results[0].passed);
    EXPECT_EQ(results[0].detail, "no other version to improve on");
    EXPECT_TRUE(results[1].passed);
    EXPECT_EQ(results[1].detail, "no other version to be compatible with");
  }
}

TEST(ModelGates, ASchemaIsCompatibleWhenItNeedsNoNewInputAndKeepsEveryOutput) {
  ModelVersion from = version("v1");
  from.content.input = {{"text", "string"}, {"lang", "string"}};
  from.content.output = {{"logits", "float[]"}, {"label", "string"}};
  ModelVersion to = version("v2", {.schema_compatible = true});
  to.content.input = {{"text", "string"}};  // takes less: fine
  to.content.output = {{"logits", "float[]"}, {"label", "string"}, {"score", "float"}};
  EXPECT_TRUE(evaluate_gates({&to, {}}, GatedVersion{&from, {}}, {})[0].passed);
  to.content.input["image"] = "bytes";        // a new input the callers do not send
  to.content.output["logits"] = "float16[]";  // an output retyped
  const GateResult r = evaluate_gates({&to, {}}, GatedVersion{&from, {}}, {})[0];
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.detail, "incompatible with v1: input image output logits");
}

TEST(ModelGates, AnApprovalGatePassesOnceRecorded) {
  const ModelVersion v = version("v2", {.approvals = {{"safety", {}}, {"legal", {"li"}}}});
  const auto results = evaluate_gates({&v, {}}, std::nullopt, {{"legal", "token:li"}});
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0], (GateResult{"approval safety", false, "not approved"}));
  EXPECT_EQ(results[1], (GateResult{"approval legal", true, "approved by token:li"}));
}

TEST(ModelApprovals, TheRegistrantNeverApprovesByAnyOfTheirTokens) {
  const ModelVersion v = version("v2");
  const ApprovalGate admin_gate{"safety", {}};
  EXPECT_EQ(
      may_approve({"token:alice", "alice@example.com", true}, v, "alice@example.com", admin_gate)
          .code(),
      core::StatusCode::kPermissionDenied);
  // Another token made for the same owner is the same person.
  const core::Status s =
      may_approve({"token:alice-2", "alice@example.com", true}, v, "alice@example.com", admin_gate);
  EXPECT_EQ(s.code(), core::StatusCode::kPermissionDenied);
  EXPECT_EQ(s.message(),
            "approval safety of llm@v2: its registrant cannot approve it; someone "
            "else must");
  EXPECT_TRUE(
      may_approve({"token:bob", "bob@example.com", true}, v, "alice@example.com", admin_gate).ok());
}

TEST(ModelApprovals, AGateWithoutApproversNeedsAnAdminAndOneWithThemNeedsOneOfThem) {
  const ModelVersion v = version("v2");
  EXPECT_EQ(may_approve({"token:bob", "bob", false}, v, "", {"safety", {}}).message(),
            "approval safety of llm@v2: needs an admin (the version names no approvers for it)");
  const ApprovalGate named{"legal", {"li@example.com", "kim@example.com"}};
  EXPECT_TRUE(may_approve({"token:kim", "kim@example.com", false}, v, "", named).ok());
  // Being an admin is not being named.
  EXPECT_EQ(may_approve({"token:root", "root", true}, v, "", named).message(),
            "approval legal of llm@v2: only its named approvers may approve it: "
            "[\"li@example.com\",\"kim@example.com\"]");
  // Owners are written as JSON strings, quotes and all.
  EXPECT_EQ(may_approve({"token:root", "root", true}, v, "", {"legal", {"o\"brien\\x"}}).message(),
            "approval legal of llm@v2: only its named approvers may approve it: "
            "[\"o\\\"brien\\\\x\"]");
  // A token with no owner matches no one.
  EXPECT_FALSE(may_approve({"token:anon", "", false}, v, "", {"legal", {""}}).ok());
}

}  // namespace
}  // namespace corral::registry
