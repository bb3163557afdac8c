// Sweeps in the spec (docs/jobspec.md#sweeps): what parses and round-trips, what is
// refused with which path, and the trials' parameters: a grid's points in order, random
// draws that the seed alone decides, and ASHA's rungs.
#include <set>

#include <gtest/gtest.h>

#include "core/job_spec_parse.h"
#include "core/sweep.h"

namespace corral::core {
namespace {

std::string sweep_spec(const std::string& sweep) {
  return "name: j\nresources: {gpus: 1}\ncommand: [run]\nsweep:\n" + sweep;
}

std::vector<std::string> sweep_errors(const std::string& sweep) {
  std::vector<std::string> out;
  for (const FieldError& e : parse_job_spec(sweep_spec(sweep), SpecFormat::kYaml).errors) {
    out.push_back(e.path + ": " + e.reason);
  }
  return out;
}

constexpr const char* kRandomSweep =
    "  method: random\n  trials: 20\n  seed: 7\n  maxRunning: 4\n"
    "  parameters:\n    lr: {min: 0.0001, max: 0.1, log: true}\n"
    "    optimizer: {values: [adam, sgd]}\n    dropout: {min: 0, max: 0.5}\n"
    "  metric: {name: eval/loss}\n"
    "  earlyStopping: {rule: asha, minStep: 100, maxStep: 2700, reductionFactor: 3}\n";

TEST(SweepSpec, ParsesIntoAnArrayOfItsTrialsAndRoundTrips) {
  const ParseOutcome p = parse_job_spec(sweep_spec(kRandomSweep), SpecFormat::kYaml);
  ASSERT_TRUE(p.ok()) << testing::PrintToString(sweep_errors(kRandomSweep));
  const SweepSpec& s = *p.spec->sweep;
  EXPECT_EQ(s.method, SweepMethod::kRandom);
  EXPECT_EQ(s.trials, 20);
  EXPECT_EQ(s.goal, MetricGoal::kMinimize);
  ASSERT_EQ(s.parameters.size(), 3u);
  EXPECT_EQ(s.parameters[0].name, "dropout");  // by name, whatever the document's order
  EXPECT_EQ(s.parameters[2].values, (std::vector<std::string>{"\"adam\"", "\"sgd\""}));
  ASSERT_TRUE(p.spec->array.has_value());
  EXPECT_EQ(p.spec->array->count, 20);
  EXPECT_EQ(p.spec->array->max_running, 4);
  const std::string text = job_spec_to_json(*p.spec);
  EXPECT_EQ(text.find("\"array\""), std::string::npos) << text;  // the sweep says it
  const ParseOutcome again = parse_job_spec(text, SpecFormat::kJson);
  ASSERT_TRUE(again.ok()) << text;
  EXPECT_EQ(*again.spec, *p.spec);
}

TEST(SweepSpec, RefusalsNameTheField) {
  const std::string metric = "  metric: {name: loss}\n";
  EXPECT_EQ(sweep_errors("  parameters: {lr: {values: [1, 2]}}\n" + metric),
            std::vector<std::string>{"sweep.trials: is required for method random"});
  EXPECT_EQ(sweep_errors("  method: grid\n  parameters: {lr: {min: 0, max: 1}}\n" + metric),
            std::vector<std::string>{"sweep.parameters.lr: needs values for method grid (a "
                                     "range is drawn from only by method random)"});
  EXPECT_EQ(
      sweep_errors("  method: grid\n  trials: 3\n  parameters: {lr: {values: [1, 2]}}\n" + metric),
      std::vector<std::string>{
          "sweep.trials: is the grid's size for method grid (2), or left out; got 3"});
  EXPECT_EQ(sweep_errors("  trials: 2\n  parameters: {lr: {min: 0, max: 1, log: true}}\n" + metric),
            std::vector<std::string>{"sweep.parameters.lr.min: must be above 0 for log: true, "
                                     "got 0"});
  EXPECT_EQ(sweep_errors("  trials: 2\n  parameters: {LR: {values: [1]}}\n" + metric).size(), 1u);
  EXPECT_EQ(sweep_errors("  trials: 2\n  parameters: {lr: {values: [1]}}\n"),
            std::vector<std::string>{"sweep.metric: is required"});
  EXPECT_EQ(
      sweep_errors("  trials: 2\n  maxRunning: 3\n  parameters: {lr: {values: [1]}}\n" + metric),
      std::vector<std::string>{"sweep.maxRunning: must not exceed the sweep's 2 trials, got 3"});
  EXPECT_EQ(sweep_errors("  trials: 2\n  parameters: {lr: {values: [1]}}\n" + metric +
                         "  earlyStopping: {minStep: 100, maxStep: 100}\n"),
            std::vector<std::string>{"sweep.earlyStopping.maxStep: must be above minStep (100): "
                                     "the first rung is at minStep, got 100"});
  EXPECT_EQ(
      sweep_errors("  method: grid\n  parameters: {a: {values: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]}, "
                   "b: {values: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]}, c: {values: [1, 2, 3, 4, 5, "
                   "6, 7, 8, 9, 10]}, d: {values: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]}, e: "
                   "{values: [1, 2]}}\n" +
                   metric),
      std::vector<std::string>{"sweep.parameters: make a grid of more than 10000 trials"});
  const ParseOutcome both = parse_job_spec(
      "name: j\nresources: {gpus: 1}\ncommand: [run]\narray: {count: 2}\nsweep:\n  trials: 2\n"
      "  parameters: {lr: {values: [1]}}\n" +
          metric,
      SpecFormat::kYaml);
  ASSERT_EQ(both.errors.size(), 1u);
  EXPECT_EQ(both.errors[0].path, "array");
}

TEST(SweepTrials, AGridEnumeratesEveryPointOnceTheLastParameterFastest) {
  const ParseOutcome p = parse_job_spec(
      sweep_spec(
          "  method: grid\n  parameters: {lr: {values: [0.1, 0.01]}, opt: {values: [adam, sgd, "
          "lamb]}}\n  metric: {name: loss}\n"),
      SpecFormat::kYaml);
  ASSERT_TRUE(p.ok());
  const SweepSpec& s = *p.spec->sweep;
  ASSERT_EQ(s.trials, 6);
  EXPECT_EQ(parameters_json(trial_parameters(s, 0)), R"({"lr":0.1,"opt":"adam"})");
  EXPECT_EQ(parameters_json(trial_parameters(s, 1)), R"({"lr":0.1,"opt":"sgd"})");
  EXPECT_EQ(parameters_json(trial_parameters(s, 5)), R"({"lr":0.01,"opt":"lamb"})");
  std::set<std::string> seen;
  for (std::int32_t i = 0; i < s.trials; ++i) seen.insert(parameters_json(trial_parameters(s, i)));
  EXPECT_EQ(seen.size(), 6u);
  EXPECT_EQ(parameter_env_text("\"adam\""), "adam");
  EXPECT_EQ(parameter_env_text("0.1"), "0.1");
}

TEST(SweepTrials, AFloatChoiceStaysAFloat) {
  const ParseOutcome p =
      parse_job_spec(sweep_spec("  method: grid\n  parameters: {scale: {values: [1.0, 2, 0.5]}}\n"
                                "  metric: {name: loss}\n"),
                     SpecFormat::kYaml);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p.spec->sweep->parameters[0].values, (std::vector<std::string>{"1.0", "2", "0.5"}));
  const ParseOutcome again = parse_job_spec(job_spec_to_json(*p.spec), SpecFormat::kJson);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again.spec, *p.spec);
}

TEST(SweepTrials, RandomDrawsStayInTheirRangesAndTheSeedDecidesThem) {
  ParseOutcome p = parse_job_spec(sweep_spec(kRandomSweep), SpecFormat::kYaml);
  ASSERT_TRUE(p.ok());
  SweepSpec s = *p.spec->sweep;
  s.trials = 2000;
  std::set<std::string> optimizers;
  int low_decade = 0;  // lr below 0.001: a third of a log-uniform draw over three decades
  for (std::int32_t i = 0; i < s.trials; ++i) {
    const auto params = trial_parameters(s, i);
    EXPECT_EQ(params, trial_parameters(s, i));  // pure
    const double lr = std::stod(params.at("lr"));
    const double dropout = std::stod(params.at("dropout"));
    EXPECT_GE(lr, 0.0001 * 0.99999);
    EXPECT_LE(lr, 0.1 * 1.00001);
    EXPECT_GE(dropout, 0.0);
    EXPECT_LE(dropout, 0.5);
    optimizers.insert(params.at("optimizer"));
    low_decade += lr < 0.001;
  }
  EXPECT_EQ(optimizers, (std::set<std::string>{"\"adam\"", "\"sgd\""}));
  EXPECT_NEAR(low_decade / 2000.0, 1.0 / 3.0, 0.05);
  SweepSpec other = s;
  other.seed = 8;
  EXPECT_NE(trial_parameters(other, 0), trial_parameters(s, 0));
}

TEST(SweepTrials, RungsAreMinStepTimesTheFactorBelowMaxStep) {
  EXPECT_EQ(rung_steps({.min_step = 100, .max_step = 2700, .reduction_factor = 3}),
            (std::vector<std::int64_t>{100, 300, 900}));
  EXPECT_EQ(rung_steps({.min_step = 10, .max_step = 41, .reduction_factor = 2}),
            (std::vector<std::int64_t>{10, 20, 40}));
  EXPECT_EQ(
      rung_steps({.min_step = 1, .max_step = 1'000'000'000'000, .reduction_factor = 100}).size(),
      6u);
}

}  // namespace
}  // namespace corral::core
