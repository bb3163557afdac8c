// docs/api/openapi.yaml against the running server: every route corrald installs is a
// path and method in the document, every path and method in the document is a route, and
// the document's enums for an error's code and a job's pendingKind are exactly the
// values the code can answer. A route added without its page, or a page left after its
// route went, fails here (tests/api/openapi_validate.sh checks the document's form).
#include <filesystem>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "core/clock.h"
#include "core/status.h"
#include "sched/decisions.h"
#include "testing/in_process_corrald.h"
#include "testing/store_fixture.h"

namespace corral::testing {
namespace {

const std::filesystem::path kDoc =
    std::filesystem::path(CORRAL_SOURCE_DIR) / "docs/api/openapi.yaml";

using Endpoint = std::pair<std::string, std::string>;  // method, path with {} for each part

// A route's regex as the paths it serves, each capture group as {}, except a group of
// literal alternatives, which is each of them: R"(/v1/jobs/(\d+)/logs)" -> /v1/jobs/{}/logs,
// R"(/v1/nodes/([^/]+)/(cordon|drain))" -> /v1/nodes/{}/cordon and /v1/nodes/{}/drain.
std::vector<std::string> route_shapes(const std::string& pattern) {
  std::vector<std::string> out = {""};
  static const std::regex kLiterals("^[a-z]+(\\|[a-z]+)*$");
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '(') {
      for (std::string& o : out) o += pattern[i];
      continue;
    }
    std::size_t end = i;
    for (int depth = 0; end < pattern.size(); ++end) {
      depth += pattern[end] == '(' ? 1 : pattern[end] == ')' ? -1 : 0;
      if (depth == 0) break;
    }
    const std::string group = pattern.substr(i + 1, end - i - 1);
    std::vector<std::string> alternatives = {"{}"};
    if (std::regex_match(group, kLiterals)) {
      alternatives.clear();
      std::stringstream words(group);
      for (std::string w; std::getline(words, w, '|');) alternatives.push_back(w);
    }
    std::vector<std::string> next;
    for (const std::string& o : out) {
      for (const std::string& a : alternatives) next.push_back(o + a);
    }
    out = std::move(next);
    i = end;
  }
  return out;
}

// A document path with each {name} as {}.
std::string doc_shape(const std::string& path) {
  return std::regex_replace(path, std::regex(R"(\{[^}]+\})"), "{}");
}

std::set<Endpoint> documented(const YAML::Node& doc) {
  std::set<Endpoint> out;
  for (const auto& path : doc["paths"]) {
    for (const auto& op : path.second) {
      std::string method = op.first.as<std::string>();
      if (method == "parameters") continue;  // shared by the path's operations
      for (char& c : method) c = static_cast<char>(std::toupper(c));
      out.emplace(method, doc_shape(path.first.as<std::string>()));
    }
  }
  return out;
}

std::set<std::string> enum_of(const YAML::Node& node) {
  std::set<std::string> out;
  for (const auto& value : node["enum"]) out.insert(value.as<std::string>());
  return out;
}

TEST(OpenApiDoc, EveryRouteIsDocumentedAndEveryDocumentedPathIsARoute) {
  TempDir dir;
  core::ManualClock clock{core::time_from_ms(1'780'000'000'000)};
  auto corrald = InProcessCorrald::start(dir.path(), clock, "");
  ASSERT_TRUE(corrald.ok()) << corrald.status().to_string();
  std::set<Endpoint> served;
  for (const auto& [method, pattern] : (*corrald)->routes()) {
    // The dashboard's page and files (/, /ui/...) are a web page, not the API.
    if (pattern == "/" || pattern.starts_with("/ui/")) continue;
    for (const std::string& shape : route_shapes(pattern)) served.emplace(method, shape);
  }
  ASSERT_GT(served.size(), 40u);  // the table was read, not an empty one
  const std::set<Endpoint> doc = documented(YAML::LoadFile(kDoc.string()));
  for (const Endpoint& e : served) {
    EXPECT_TRUE(doc.contains(e)) << e.first << " " << e.second << " is served but not in " << kDoc;
  }
  for (const Endpoint& e : doc) {
    EXPECT_TRUE(served.contains(e))
        << e.first << " " << e.second << " is in " << kDoc << " but corrald serves no such route";
  }
}

TEST(OpenApiDoc, TheErrorCodeEnumIsEveryCodeTheServerAnswers) {
  const YAML::Node doc = YAML::LoadFile(kDoc.string());
  const auto documented_codes =
      enum_of(doc["components"]["schemas"]["Error"]["properties"]["error"]["properties"]["code"]);
  std::set<std::string> codes = {"stale", "fenced"};  // ErrorReason's own codes (http_status.cc)
  using core::StatusCode;
  for (const StatusCode c :
       {StatusCode::kInvalidArgument, StatusCode::kUnauthenticated, StatusCode::kPermissionDenied,
        StatusCode::kNotFound, StatusCode::kAlreadyExists, StatusCode::kAborted,
        StatusCode::kFailedPrecondition, StatusCode::kResourceExhausted, StatusCode::kUnavailable,
        StatusCode::kInternal, StatusCode::kDataLoss}) {
    codes.insert(std::string(core::to_string(c)));
  }
  EXPECT_EQ(documented_codes, codes);
}

TEST(OpenApiDoc, ThePendingKindEnumIsEveryKindAJobCanWaitFor) {
  const YAML::Node doc = YAML::LoadFile(kDoc.string());
  const auto documented_kinds =
      enum_of(doc["components"]["schemas"]["Job"]["properties"]["pendingKind"]);
  // "held" is corrald's own (a dataset gate, server/controllers/dataset_gate.h); "" not yet seen.
  std::set<std::string> kinds = {"held", ""};
  using sched::PendingKind;
  for (const PendingKind k :
       {PendingKind::kQuota, PendingKind::kCapacity, PendingKind::kTopology, PendingKind::kPower,
        PendingKind::kUnschedulable, PendingKind::kWaiting, PendingKind::kReservation,
        PendingKind::kDependency, PendingKind::kArrayLimit, PendingKind::kSessionLimit}) {
    kinds.insert(std::string(sched::to_string(k)));
  }
  EXPECT_EQ(documented_kinds, kinds);
}

}  // namespace
}  // namespace corral::testing
