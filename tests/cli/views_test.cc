// Golden outputs of the CLI's views: each case renders a fixture from tests/cli/testdata
// (API answers as corrald writes them) with now frozen at 2026-12-03 14:05:00 UTC, and
// compares the text with tests/cli/golden/<case>.txt. CORRAL_UPDATE_GOLDEN=1 rewrites
// the golden files instead (review the diff before committing them).
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/format/output.h"
#include "cli/format/table.h"
#include "cli/format/time_text.h"
#include "cli/views/audit_view.h"
#include "cli/views/drift_view.h"
#include "cli/views/jobs_view.h"
#include "cli/views/models_view.h"
#include "cli/views/nodes_view.h"
#include "cli/views/racks_view.h"
#include "cli/views/reservations_view.h"
#include "cli/views/runs_view.h"
#include "cli/views/session_view.h"
#include "cli/views/tenants_view.h"
#include "cli/views/tokens_view.h"

namespace corral::cli {
namespace {

using nlohmann::json;

const std::string kDir = std::string(CORRAL_SOURCE_DIR) + "/tests/cli/";
constexpr std::int64_t kViewsNowMs = 1796306700000;  // 2026-12-03 14:05:00 UTC

// Local time in the goldens is a fixed UTC+1 (as Europe/Berlin in December), so they
// do not depend on the machine's TZ; "utc" cases use --utc's zone.
TimeStyle local_style() {
  return {.now = core::time_from_ms(kViewsNowMs), .zone = Zone::fixed(60)};
}
TimeStyle utc_style() { return {.now = core::time_from_ms(kViewsNowMs), .zone = Zone::utc()}; }

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

json fixture(const std::string& name) {
  return json::parse(read_file(kDir + "testdata/" + name + ".json"));
}

struct GoldenCase {
  std::string name;
  std::function<std::string()> render;
};

std::vector<GoldenCase> golden_cases() {
  const json jobs = fixture("jobs")["jobs"];
  const json allocations = fixture("allocations")["allocations"];
  const json job = fixture("job");
  const json nodes = fixture("nodes")["nodes"];
  const json tenants = fixture("tenants")["tenants"];
  const json shares = fixture("shares");
  const json reservations = fixture("reservations")["reservations"];
  const json tokens = fixture("tokens")["tokens"];
  const json audit = fixture("audit")["entries"];
  const TimeStyle local = local_style();
  const TimeStyle utc = utc_style();
  const auto table = [](const Table& t) { return table_text(t); };
  return {
      {"jobs", [=] { return table(jobs_table(jobs, allocations, local, false)); }},
      {"jobs_wide", [=] { return table(jobs_table(jobs, allocations, local, true)); }},
      {"job", [=] { return job_text(job["job"], job["events"], local); }},
      {"job_utc", [=] { return job_text(job["job"], job["events"], utc); }},
      {"queue_wide", [=] { return table(queue_table(fixture("queue")["queue"], local, true)); }},
      {"nodes", [=] { return table(nodes_table(nodes, local, false)); }},
      {"nodes_wide", [=] { return table(nodes_table(nodes, local, true)); }},
      {"node", [=] { return node_text(nodes[1], local, false); }},
      {"racks", [=] { return table(racks_table(fixture("racks")["racks"])); }},
      {"node_draining_unhealthy", [=] { return node_text(nodes[3], local, true); }},
      {"node_no_agent", [=] { return node_text(nodes[6], local, false); }},
      {"tenants", [=] { return table(tenants_table(tenants, shares, false)); }},
      {"tenants_wide", [=] { return table(tenants_table(tenants, shares, true)); }},
      {"tenant", [=] { return tenant_text(tenants[1], shares); }},
      {"reservations", [=] { return table(reservations_table(reservations, local, false)); }},
      {"reservations_wide_utc", [=] { return table(reservations_table(reservations, utc, true)); }},
      {"reservation", [=] { return reservation_text(reservations[1], local); }},
      {"tokens", [=] { return table(tokens_table(tokens, local, false)); }},
      {"token_created", [=] { return token_text(fixture("token_created"), local); }},
      {"audit", [=] { return table(audit_table(audit, local, false)); }},
      {"audit_wide_utc", [=] { return table(audit_table(audit, utc, true)); }},
      {"model_version",
       [=] { return model_version_text(fixture("model_version"), "registered", local); }},
      {"drift_report", [=] { return drift_report_text(fixture("drift_report"), local); }},
      {"reservations_yaml",
       [=] { return output_text(Format::kYaml, fixture("reservations"), nullptr); }},
  };
}

TEST(Views, MatchGoldenOutputs) {
  const bool update = std::getenv("CORRAL_UPDATE_GOLDEN") != nullptr;
  for (const GoldenCase& c : golden_cases()) {
    SCOPED_TRACE(c.name);
    const std::string path = kDir + "golden/" + c.name + ".txt";
    const std::string got = c.render();
    if (update) {
      std::ofstream(path) << got;
      continue;
    }
    EXPECT_EQ(read_file(path), got)
        << "golden " << path << " differs; CORRAL_UPDATE_GOLDEN=1 rewrites it";
  }
}

TEST(Views, NodeStateTellsDrainedFromDrainingAndLostFromActive) {
  const json nodes = fixture("nodes")["nodes"];
  std::vector<std::string> states;
  for (const auto& n : nodes) states.push_back(node_state(n));
  // dgx03 drains with nothing left on it; dgx06's agent was fenced; dgx05's state is the
  // server's own "state".
  EXPECT_EQ(states, (std::vector<std::string>{"active", "active", "drained", "draining", "cordoned",
                                              "lost", "active"}));
  json told = nodes[2];
  told["state"] = "draining";  // the server's word wins over the fallback
  EXPECT_EQ(node_state(told), "draining");
}

TEST(Views, ReservationAndTokenStatesFollowNow) {
  const json r = {{"startMs", kViewsNowMs + 1000}, {"endMs", kViewsNowMs + 2000}};
  EXPECT_EQ(reservation_state(r, core::time_from_ms(kViewsNowMs)), "upcoming");
  EXPECT_EQ(reservation_state(r, core::time_from_ms(kViewsNowMs + 1000)), "active");
  EXPECT_EQ(reservation_state(r, core::time_from_ms(kViewsNowMs + 2000)), "ended");
  const json t = {{"expiresAtMs", kViewsNowMs}, {"revokedAtMs", nullptr}};
  EXPECT_EQ(token_status(t, core::time_from_ms(kViewsNowMs - 1)), "active");
  EXPECT_EQ(token_status(t, core::time_from_ms(kViewsNowMs)), "expired");
  EXPECT_EQ(token_status({{"revokedAtMs", 5}}, core::time_from_ms(0)), "revoked");
}

// A GPU another tenant's job holds comes without the job's id (api_nodes.cc): its JOB
// cell says held, and the node counts it as allocated.
TEST(Views, AnotherTenantsGpuReadsHeld) {
  const json node = {
      {"id", "n1"},
      {"admin", "active"},
      {"gpus", json::array({{{"index", 0}, {"type", "H100"}}, {{"index", 1}, {"type", "H100"}}})},
      {"allocated",
       json::array({{{"index", 0}, {"held", true}}, {{"index", 1}, {"held", true}, {"job", 7}}})}};
  const std::string text = node_text(node, local_style(), false);
  EXPECT_NE(text.find("2 allocated"), std::string::npos) << text;
  std::istringstream lines(text);
  std::map<std::string, std::string> job_of;
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with("0 ") && !line.starts_with("1 ")) continue;
    std::istringstream cells(line);
    std::string cell, last;
    while (cells >> cell) last = cell;  // JOB is the last column
    job_of[line.substr(0, 1)] = last;
  }
  EXPECT_EQ(job_of["0"], "held") << text;
  EXPECT_EQ(job_of["1"], "7") << text;
}

TEST(Views, FieldsAnOlderServerLacksShowAsDashes) {
  // No state, agent, observed, labels or allocated: nothing asserts, cells read "-".
  const json bare = json::array({{{"id", "n1"}, {"admin", "active"}, {"gpus", json::array()}}});
  const std::string text = table_text(nodes_table(bare, local_style(), true));
  EXPECT_NE(text.find("n1    active"), std::string::npos) << text;
  const json job = json::array({{{"id", 1}, {"phase", "running"}}});
  EXPECT_NE(table_text(jobs_table(job, json::array(), local_style(), true)).find("1   -"),
            std::string::npos);
}

// `corral session`: where a placed session runs, by node, and the commands that exist to
// reach and end it; while it waits, its reason and position.
TEST(Views, SessionSaysWhereItRunsAndHowToReachIt) {
  const json job = json::parse(R"({"id": 57, "name": "nb", "tenant": "nlp", "phase": "launching",
      "allocation": {"gpuType": "H100", "gpus": [{"node": "dgx03", "index": 5},
                                                  {"node": "dgx03", "index": 6},
                                                  {"node": "dgx04", "index": 0}]}})");
  EXPECT_EQ(session_text(job),
            "session 57 (nb, tenant nlp) is launching on H100\n"
            "  node dgx03: GPUs 5,6\n"
            "  node dgx04: GPU 0\n"
            "Its command runs there with those GPUs in CUDA_VISIBLE_DEVICES and "
            "CORRAL_JOB_ID=57.\n"
            "  corral logs 57      what it prints (a notebook server's URL and token)\n"
            "  corral job 57       its state and events (an idle warning shows here)\n"
            "  corral cancel 57    end it and give its GPUs back\n"
            "It is reclaimed when its GPUs stay idle (session_idle_warning first).\n");
  const json waiting = json::parse(
      R"({"id": 58, "phase": "pending", "queuePosition": 0, "reason": "session limit: ..."})");
  EXPECT_EQ(session_wait_text(waiting), "session 58 pending: session limit: ...");
}

TEST(Views, SweepNamesItsBestTrialAndEachTrialsRungs) {
  const json sweep = json::parse(R"({"id": 13, "name": "lr-sweep", "tenant": "research",
      "method": "grid", "trials": 2, "maxRunning": 0,
      "metric": {"name": "loss", "goal": "minimize"},
      "earlyStopping": {"rule": "asha", "minStep": 40, "maxStep": 360, "reductionFactor": 3,
                        "rungSteps": [40, 120]},
      "phases": {"succeeded": 1, "cancelled": 1}, "stoppedEarly": 1, "gpuMs": 7200000,
      "best": {"index": 1, "job": 14, "parameters": {"lr": 0.05, "opt": "adam"}, "step": 360,
               "value": 0.0125,
               "run": {"manifest": {"datasets": [{"ref": "webtext@v1"}],
                                    "code": {"repo": "github.com/acme/llm",
                                             "commit": "3f2c9d1e0b7a6c5d4e3f"},
                                    "configHash": "sha256:8fdeb30bf183aaaaaaaa"},
                       "artifacts": [{"kind": "artifact", "name": "model",
                                      "uri": "/ckpt/model", "bytes": 2048}]}},
      "trialList": [
        {"index": 0, "job": 13, "phase": "cancelled", "parameters": {"lr": 0.5, "opt": "adam"},
         "lastStep": 40, "lastValue": 0.4, "rungsPassed": 0, "stoppedAtRung": 0, "gpuMs": 0},
        {"index": 1, "job": 14, "phase": "succeeded", "parameters": {"lr": 0.05, "opt": "adam"},
         "lastStep": 360, "lastValue": 0.0125, "rungsPassed": 2, "stoppedAtRung": null,
         "gpuMs": 7200000}]})");
  EXPECT_EQ(sweep_text(sweep),
            "sweep 13 lr-sweep (research): grid, 2 trials, no limit on how many run\n"
            "metric:     loss (minimize)\n"
            "stopping:   ASHA, rungs at steps 40, 120, the best 1/3 go on\n"
            "trials:     1 succeeded, 1 cancelled; 1 stopped early; 2.00 GPU-hours\n"
            "best:       trial 1 (job 14): loss 0.0125 at step 360; lr=0.05 opt=adam\n"
            "best run:   datasets webtext@v1, code github.com/acme/llm@3f2c9d1e0b7a, config "
            "sha256:8fdeb30bf183\n"
            "artifact:   model /ckpt/model (2.0 KiB)\n"
            "\n"
            "INDEX  JOB  STATE      PARAMETERS        RUNGS            STEP  VALUE   GPU-HOURS\n"
            "0      13   cancelled  lr=0.5 opt=adam   0, stopped at 0  40    0.4     0.00\n"
            "1      14   succeeded  lr=0.05 opt=adam  2                360   0.0125  2.00\n");
}

// `corral model register` of a version with no gates or schemas, and `corral drift report`
// of a labels report that did not drift: the lines they lack read as such, not as blanks.
TEST(Views, AVersionWithoutGatesAndAReportOfLabels) {
  const json version = json::parse(R"({"model": "llm", "version": "v2", "tenant": "nlp",
      "run": 43, "artifactUri": "/ckpt/43/model.pt", "digest": "sha256:ab",
      "inputSchema": {}, "outputSchema": {}, "createdBy": "token:ci-bot",
      "createdAtMs": 1796306700000, "approved": []})");
  const std::string text = model_version_text(version, "already registered", utc_style());
  EXPECT_NE(text.find("model llm@v2: already registered\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\ninput:      -\noutput:     -\ngates:      none\n"), std::string::npos)
      << text;
  const json labels = json::parse(R"({"id": 9, "kind": "labels", "model": "llm",
      "version": "v2", "segment": "", "drifted": false, "atMs": 1796306700000,
      "features": {"label": {"method": "ks", "threshold": 0.05, "drifted": false,
                             "ksP": 0.62, "psi": 0.01, "jensenShannon": 0.03,
                             "referenceValues": 200, "currentValues": 40}},
      "performance": {"labeled": 40, "mae": 0.125, "rmse": 0.2, "accuracy": 0.95}})");
  EXPECT_EQ(drift_report_text(labels, utc_style()),
            "drift report 9 of llm@v2\n"
            "when:        2026-12-03 14:05:00 UTC (now)\n"
            "drifted:     none of 1\n"
            "performance: 40 labels, mae 0.125, accuracy 95.0%\n"
            "\n"
            "FEATURE  DRIFTED  STATISTIC   VALUE  THRESHOLD  PSI   JENSEN-SHANNON  REFERENCE  "
            "CURRENT\n"
            "label    no       KS p-value  0.62   0.05       0.01  0.03            200        "
            "40\n");
}

}  // namespace
}  // namespace corral::cli
