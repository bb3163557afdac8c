// Job arrays and dependencies in the spec, and workflows of several specs in one
// document: what parses, what is refused and with which path.
#include "core/workflow_parse.h"

#include <filesystem>
#include <fstream>
#include <iterator>

#include <gtest/gtest.h>

#include "core/job_spec_parse.h"

namespace corral::core {
namespace {

std::string spec(const std::string& extra) {
  return "name: j\nresources: {gpus: 1}\ncommand: [run]\n" + extra;
}

std::vector<std::string> paths(const std::vector<FieldError>& errors) {
  std::vector<std::string> out;
  for (const FieldError& e : errors) out.push_back(e.path + ": " + e.reason);
  return out;
}

TEST(ArraySpec, ParsesAndRoundTrips) {
  const ParseOutcome p =
      parse_job_spec(spec("array: {count: 200, maxRunning: 16}\n"), SpecFormat::kYaml);
  ASSERT_TRUE(p.ok()) << testing::PrintToString(paths(p.errors));
  ASSERT_TRUE(p.spec->array.has_value());
  EXPECT_EQ(p.spec->array->count, 200);
  EXPECT_EQ(p.spec->array->max_running, 16);
  const ParseOutcome again = parse_job_spec(job_spec_to_json(*p.spec), SpecFormat::kJson);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again.spec, *p.spec);
}

TEST(ArraySpec, RefusesWhatCannotBeAnArray) {
  const auto errors_of = [](const std::string& extra) {
    return paths(parse_job_spec(spec(extra), SpecFormat::kYaml).errors);
  };
  EXPECT_EQ(errors_of("array: {count: 0}\n"),
            std::vector<std::string>{"array.count: must be between 1 and 10000, got 0"});
  EXPECT_EQ(errors_of("array: {count: 4, maxRunning: 5}\n"),
            std::vector<std::string>{"array.maxRunning: must not exceed array.count (4), got 5"});
  EXPECT_EQ(errors_of("array: {maxRunning: 5}\n"),
            std::vector<std::string>{"array.count: is required"});
  EXPECT_EQ(
      errors_of("array: {count: 2, every: 3}\n"),
      std::vector<std::string>{"array.every: unknown field, expected one of count, maxRunning"});
}

TEST(SpecDependencies, ParseByIdOrNameAndRoundTrip) {
  const ParseOutcome p = parse_job_spec(
      spec("array: {count: 2}\ndependsOn:\n  - {job: 41}\n  - {job: \"42\", on: finish}\n"
           "  - {job: prep, on: failure, elementwise: true}\n"),
      SpecFormat::kYaml);
  ASSERT_TRUE(p.ok()) << testing::PrintToString(paths(p.errors));
  ASSERT_EQ(p.spec->depends_on.size(), 3u);
  EXPECT_EQ(p.spec->depends_on[0].id, JobId(41));
  EXPECT_EQ(p.spec->depends_on[0].on, DependencyCondition::kSuccess);
  EXPECT_EQ(p.spec->depends_on[1].id, JobId(42));
  EXPECT_EQ(p.spec->depends_on[1].on, DependencyCondition::kFinish);
  EXPECT_FALSE(p.spec->depends_on[2].id.has_value());
  EXPECT_EQ(p.spec->depends_on[2].name, "prep");
  EXPECT_TRUE(p.spec->depends_on[2].elementwise);
  const ParseOutcome again = parse_job_spec(job_spec_to_json(*p.spec), SpecFormat::kJson);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again.spec, *p.spec);
}

TEST(SpecDependencies, RefusalsNameTheField) {
  const auto errors_of = [](const std::string& extra) {
    return paths(parse_job_spec(spec(extra), SpecFormat::kYaml).errors);
  };
  EXPECT_EQ(errors_of("dependsOn: [{on: success}]\n"),
            std::vector<std::string>{"dependsOn[0].job: is required"});
  EXPECT_EQ(errors_of("dependsOn: [{job: 0}]\n"),
            std::vector<std::string>{
                "dependsOn[0].job: must be between 1 and 9223372036854775807, got 0"});
  EXPECT_EQ(errors_of("dependsOn: [{job: Bad_Name}]\n").size(), 1u);
  EXPECT_EQ(errors_of("dependsOn: [{job: 4, on: later}]\n"),
            std::vector<std::string>{"dependsOn[0].on: must be one of success, failure, finish, "
                                     "start, got \"later\""});
  EXPECT_EQ(errors_of("dependsOn: [{job: 4, elementwise: true}]\n"),
            std::vector<std::string>{"dependsOn[0].elementwise: needs an array job (array.count): "
                                     "task i waits for task i of the job named"});
  EXPECT_EQ(errors_of("dependsOn: {job: 4}\n"),
            std::vector<std::string>{"dependsOn: must be a list of {job, on} mappings, got a "
                                     "mapping"});
}

TEST(RetrySpec, ParsesRoundTripsAndRefusesWithPaths) {
  const ParseOutcome p = parse_job_spec(
      spec("retry: {onExitCodes: [75, 1, 75], onNodeFailure: 10, onOutOfMemory: 2,\n"
           "        expedite: false, backoff: {initialSeconds: 30, maxSeconds: 600}}\n"),
      SpecFormat::kYaml);
  ASSERT_TRUE(p.ok()) << testing::PrintToString(paths(p.errors));
  ASSERT_TRUE(p.spec->retry.has_value());
  EXPECT_EQ(p.spec->retry->on_exit_codes, (std::vector<std::int32_t>{1, 75}));  // sorted, once
  EXPECT_EQ(p.spec->retry->on_node_failure, 10);
  EXPECT_EQ(p.spec->retry->on_out_of_memory, 2);
  EXPECT_FALSE(p.spec->retry->expedite);
  EXPECT_EQ(p.spec->retry->backoff_max, seconds(600));
  const ParseOutcome again = parse_job_spec(job_spec_to_json(*p.spec), SpecFormat::kJson);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again.spec, *p.spec);
  // Left out: the behaviour of a spec without retry, and the default expedite.
  const ParseOutcome bare = parse_job_spec(spec("retry: {}\n"), SpecFormat::kYaml);
  ASSERT_TRUE(bare.ok());
  EXPECT_EQ(bare.spec->retry->on_node_failure, -1);
  EXPECT_TRUE(bare.spec->retry->expedite);
  EXPECT_EQ(paths(parse_job_spec(spec("retry: {onExitCodes: [0]}\n"), SpecFormat::kYaml).errors),
            std::vector<std::string>{"retry.onExitCodes[0]: must be between 1 and 255, got 0"});
  EXPECT_EQ(
      paths(parse_job_spec(spec("retry: {backoff: {initialSeconds: 60, maxSeconds: 10}}\n"),
                           SpecFormat::kYaml)
                .errors),
      std::vector<std::string>{
          "retry.backoff.maxSeconds: must be at least retry.backoff.initialSeconds (60), got 10"});
}

// retry.onPreemption: always (-1, also when left out), never (0) or a count; each writes
// back as it reads.
TEST(RetrySpec, OnPreemptionIsAlwaysNeverOrACount) {
  const struct {
    const char* text;
    std::int32_t want;
  } cases[] = {{"always", -1}, {"never", 0}, {"3", 3}, {"0", 0}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    const ParseOutcome p = parse_job_spec(
        spec(std::string("retry: {onPreemption: ") + c.text + "}\n"), SpecFormat::kYaml);
    ASSERT_TRUE(p.ok()) << testing::PrintToString(paths(p.errors));
    EXPECT_EQ(p.spec->retry->on_preemption, c.want);
    const ParseOutcome again = parse_job_spec(job_spec_to_json(*p.spec), SpecFormat::kJson);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(*again.spec, *p.spec);
  }
  EXPECT_EQ(parse_job_spec(spec("retry: {}\n"), SpecFormat::kYaml).spec->retry->on_preemption, -1);
  EXPECT_EQ(
      paths(parse_job_spec(spec("retry: {onPreemption: sometimes}\n"), SpecFormat::kYaml).errors),
      std::vector<std::string>{
          "retry.onPreemption: must be always, never or a count from 0 to 100, got "
          "\"sometimes\""});
  EXPECT_EQ(paths(parse_job_spec(spec("retry: {onPreemption: 101}\n"), SpecFormat::kYaml).errors),
            std::vector<std::string>{"retry.onPreemption: must be between 0 and 100, got 101"});
}

// priorityClass interactive, with or without a session mapping; the rules a session keeps.
TEST(SessionSpec, ParsesRoundTripsAndRefusesWithPaths) {
  const ParseOutcome p = parse_job_spec(
      spec("priorityClass: interactive\nsession: {idleTimeout: 2h}\n"), SpecFormat::kYaml);
  ASSERT_TRUE(p.ok()) << testing::PrintToString(paths(p.errors));
  EXPECT_FALSE(p.spec->preemptible);
  ASSERT_TRUE(p.spec->session.has_value());
  EXPECT_EQ(p.spec->session->idle_timeout, seconds(7200));
  const ParseOutcome again = parse_job_spec(job_spec_to_json(*p.spec), SpecFormat::kJson);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again.spec, *p.spec);
  const ParseOutcome bare = parse_job_spec(spec("priorityClass: interactive\n"), SpecFormat::kYaml);
  ASSERT_TRUE(bare.ok());
  EXPECT_FALSE(bare.spec->session.has_value());  // corrald's idle timeout

  const auto errors = [](const std::string& extra) {
    return paths(parse_job_spec(spec(extra), SpecFormat::kYaml).errors);
  };
  EXPECT_EQ(errors("session: {idleTimeout: 1h}\n"),
            std::vector<std::string>{"session: needs priorityClass interactive, got \"standard\""});
  EXPECT_EQ(
      errors("priorityClass: interactive\nsession: {idleTimeout: 30s}\n"),
      std::vector<std::string>{"session.idleTimeout: must be between 1m and 7d, got \"30s\""});
  EXPECT_EQ(errors("priorityClass: interactive\nsession: {idle: 1h}\n").size(), 1u);
  EXPECT_EQ(errors("priorityClass: interactive\npreemptible: true\n"),
            std::vector<std::string>{
                "preemptible: must be false for priority class \"interactive\", got true"});
  EXPECT_EQ(errors("priorityClass: interactive\narray: {count: 4}\n"),
            std::vector<std::string>{
                "array: is not allowed for priority class \"interactive\" (a session is one "
                "job)"});
}

TEST(Workflow, StepsComeAfterTheStepsTheyName) {
  const WorkflowOutcome w = parse_workflow(R"(
steps:
  - {name: eval, resources: {gpus: 1}, command: [run], dependsOn: [{job: train}]}
  - {name: train, resources: {gpus: 8}, command: [run], dependsOn: [{job: prep}, {job: 12}]}
  - {name: prep, resources: {gpus: 1}, command: [run]}
  - {name: report, resources: {gpus: 1}, command: [run], dependsOn: [{job: older-job}]}
)",
                                           SpecFormat::kYaml);
  ASSERT_TRUE(w.ok()) << testing::PrintToString(paths(w.errors));
  std::vector<std::string> names;
  for (const JobSpec& s : w.steps) names.push_back(s.name);
  EXPECT_EQ(names, (std::vector<std::string>{"prep", "train", "eval", "report"}));
}

TEST(Workflow, RefusesACycleDuplicateNamesAndBadStepsWithTheirPaths) {
  const WorkflowOutcome cycle = parse_workflow(R"(
steps:
  - {name: a, resources: {gpus: 1}, command: [run], dependsOn: [{job: c}]}
  - {name: b, resources: {gpus: 1}, command: [run], dependsOn: [{job: a}]}
  - {name: c, resources: {gpus: 1}, command: [run], dependsOn: [{job: b}]}
)",
                                               SpecFormat::kYaml);
  EXPECT_EQ(
      paths(cycle.errors),
      std::vector<std::string>{"steps: the steps' dependencies form a cycle: a -> c -> b -> a"});
  const WorkflowOutcome twice = parse_workflow(R"(
steps:
  - {name: a, resources: {gpus: 1}, command: [run]}
  - {name: a, resources: {gpus: 0}, command: [run]}
  - {name: a, resources: {gpus: 2}, command: [run]}
)",
                                               SpecFormat::kYaml);
  EXPECT_EQ(paths(twice.errors),
            (std::vector<std::string>{
                "steps[1].resources.gpus: must be between 1 and 16384, got 0",
                "steps[2].name: \"a\" is also steps[0]'s name; step names are unique"}));
  EXPECT_EQ(paths(parse_workflow("steps: []", SpecFormat::kYaml).errors),
            std::vector<std::string>{"steps: must be a non-empty list of job specs, got a list"});
  EXPECT_EQ(paths(parse_workflow("{\"jobs\": []}", SpecFormat::kJson).errors),
            std::vector<std::string>{"jobs: unknown field, expected steps"});
}

TEST(Workflow, EveryExampleParses) {
  const auto dir = std::filesystem::path(CORRAL_SOURCE_DIR) / "examples" / "workflows";
  int seen = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    SCOPED_TRACE(entry.path().string());
    std::ifstream in(entry.path());
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const WorkflowOutcome w = parse_workflow(text, SpecFormat::kYaml);
    EXPECT_TRUE(w.ok()) << testing::PrintToString(paths(w.errors));
    EXPECT_GE(w.steps.size(), 2u);
    ++seen;
  }
  EXPECT_GE(seen, 1);
}

}  // namespace
}  // namespace corral::core
