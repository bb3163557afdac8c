#include "hostile_cases.h"

#include <tuple>
#include <utility>

#include <nlohmann/json.hpp>

namespace corral::testing {
namespace {

using nlohmann::json;

constexpr const char* kBad = "\xff\xfe";  // never UTF-8: 0xff and 0xfe begin no sequence
constexpr const char* kBadEncoded = "%FF%FE";
constexpr const char* kMark = "@@HOSTILE@@";

// "resources.gpuTypes[0]" -> "/resources/gpuTypes/0".
json::json_pointer pointer(const std::string& path) {
  std::string out;
  for (const char c : path) {
    if (c == '.' || c == '[') {
      out += '/';
    } else if (c != ']') {
      out += c;
    }
  }
  return json::json_pointer("/" + out);
}

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
}

// `base` with the value at `path` written as the raw JSON text `raw` (which need not be
// JSON nlohmann would write: 99999999999999999999, 1e400, bytes that are not UTF-8).
std::string with_raw(json base, const std::string& path, const std::string& raw) {
  base[pointer(path)] = kMark;
  std::string text = base.dump();
  replace_all(text, "\"" + std::string(kMark) + "\"", raw);
  return text;
}

// `base` with a key of raw bytes `key` added to the mapping at `path` ("" for the top).
std::string with_raw_key(json base, const std::string& path, const std::string& key) {
  (path.empty() ? base : base[pointer(path)])[kMark] = "v";
  std::string text = base.dump();
  replace_all(text, kMark, key);
  return text;
}

// The valid bodies each case breaks one field of.
json job_base() {
  return json::parse(R"({"name": "x", "tenant": "default", "priorityClass": "standard",
    "resources": {"gpus": 8, "gpuTypes": ["H100"], "gpusPerNode": 8, "cpusPerGpu": 1,
                  "memoryPerGpu": "8Gi"},
    "topology": {"pack": "none", "mode": "preferred"},
    "elastic": {"minGpus": 8, "maxGpus": 16, "step": 8}, "preemptible": false,
    "checkpoint": {"dir": "/ckpt/x", "intervalSeconds": 600, "restoreSeconds": 0},
    "maxRuntime": "24h", "expectedRuntime": "1h", "reservation": "r1", "processes": "perGpu",
    "maxRestarts": 3, "command": ["true"], "env": {"A": "1"}, "secretEnv": {"S": "2"},
    "lineage": {"dataset": "d", "code": "c"}, "labels": {"team": "t"}})");
}
json tenant_base() {
  return json::parse(R"({"weight": 1, "parent": "nlp",
    "quotas": {"H100": {"guaranteed": 1, "borrowLimit": 2}},
    "defaultQuota": {"guaranteed": 0, "borrowLimit": 10}, "maxPendingJobs": 10,
    "submitRatePerSecond": 1, "submitBurst": 5})");
}
json node_base() {
  return json::parse(R"({"id": "n9",
    "labels": {"region": "r", "cluster": "c", "spine": "s", "leaf": "l", "rack": "k",
               "nvlinkRack": "v"},
    "cpus": 64, "memoryMib": 1024,
    "gpus": [{"index": 0, "uuid": "GPU-0", "type": "H100", "nvlinkDomain": 0, "numaNode": 0,
              "healthy": true}]})");
}
json node_shortcut_base() {
  return json::parse(R"({"id": "n9", "gpuType": "H100", "gpuCount": 8})");
}
json reservation_base() {
  return json::parse(
      R"({"id": "r9", "tenant": "nlp", "gpuType": "H100", "count": 1, "startMs": 1,
                  "endMs": 4000000000000})");
}
json reservation_nodes_base() {
  return json::parse(R"({"id": "r9", "tenant": "nlp", "nodes": ["n1"], "startMs": 1,
                  "endMs": 4000000000000})");
}
json join_base() {
  return json::parse(R"({"agentUrl": "http://127.0.0.1:1", "rackPowerCapW": 1000,
    "node": {"id": "n8", "labels": {"rack": "k"}, "gpuType": "H100", "gpuCount": 1},
    "inventory": {"driver": "x"}})");
}
json heartbeat_base(std::int64_t epoch) {
  json b = json::parse(R"({"appliedVersion": 0, "agentUrl": "http://127.0.0.1:1",
    "gpus": [{"index": 0, "uuid": "GPU-n2-0", "present": true, "xidErrors": [13],
              "eccUncorrectable": 0, "remapFailed": false, "temperatureC": 40, "powerW": 100,
              "powerLimitW": 700}],
    "workers": [{"job": 1, "attempt": 1, "rank": 0, "state": "exited", "pid": 5, "exitCode": 0,
                 "signal": 0, "startedAtMs": 1, "exitedAtMs": 2}]})");
  b["epoch"] = epoch;
  return b;
}
json checkpoint_base(std::int64_t epoch) {
  json b = json::parse(R"({"job": 1, "attempt": 1, "rank": 0, "step": 10, "path": "/ckpt/x",
    "bytes": 100, "checksum": "abc"})");
  b["epoch"] = epoch;
  return b;
}

// Where a body goes: method, path, token.
struct Target {
  std::string name;
  std::string method;
  std::string path;
  std::string token;
  json base;
  std::string field_prefix;  // error fields of a nested body read "node.<field>"
};

std::vector<Target> targets(const HostileWorld& w) {
  return {
      {"job", "POST", "/v1/jobs", "admin", job_base(), ""},
      {"tenant", "PUT", "/v1/tenants/t9", "admin", tenant_base(), ""},
      {"node", "POST", "/v1/nodes", "admin", node_base(), ""},
      {"node shortcut", "POST", "/v1/nodes", "admin", node_shortcut_base(), ""},
      {"reservation", "POST", "/v1/reservations", "admin", reservation_base(), ""},
      {"reservation on nodes", "POST", "/v1/reservations", "admin", reservation_nodes_base(), ""},
      {"join", "POST", "/v1/agents/join", "join", join_base(), ""},
      {"heartbeat", "POST", "/v1/agents/n2/heartbeat", "n2", heartbeat_base(w.n2_epoch), ""},
      {"checkpoint", "POST", "/v1/agents/n2/checkpoints", "n2", checkpoint_base(w.n2_epoch), ""},
      {"token", "POST", "/v1/tokens", "admin", json{{"role", "member"}, {"tenant", "nlp"}}, ""},
      {"cancel", "POST", "/v1/jobs/1/cancel", "admin", json{{"reason", "why"}}, ""},
  };
}

const Target& target(const std::vector<Target>& all, const std::string& name) {
  for (const auto& t : all) {
    if (t.name == name) return t;
  }
  return all.front();  // unreachable: every name below is in targets()
}

// Values no integer field takes, whatever its range: too big for int64 and for uint64,
// fractions, exponents and numbers written as strings.
const std::vector<std::string> kNeverIntegers = {
    "9223372036854775808", "18446744073709551615", "99999999999999999999", "1.5", "1e3", "\"1\""};

}  // namespace

std::vector<Hostile> utf8_cases(const HostileWorld& world) {
  std::vector<Hostile> out;
  const auto all = targets(world);
  // 1. Path parameters: ids that are no id answer 404, names 404, a tenant to create 400.
  const std::string bad = kBadEncoded;
  const std::string half_e = std::string(31, '1') + "%C3%A9";  // cut after 32 bytes: half an é
  for (const auto& [method, path, token, want] :
       std::vector<std::tuple<std::string, std::string, std::string, int>>{
           {"GET", "/v1/jobs/" + bad, "admin", 404},
           {"GET", "/v1/jobs/" + half_e, "admin", 404},
           {"GET", "/v1/jobs/" + bad + "/events", "admin", 404},
           {"POST", "/v1/jobs/" + bad + "/cancel", "admin", 404},
           {"GET", "/v1/jobs/" + bad + "/logs", "admin", 404},
           {"GET", "/v1/jobs/" + half_e + "/logs", "admin", 404},
           {"GET", "/v1/nodes/" + bad, "admin", 404},
           {"POST", "/v1/nodes/" + bad + "/cordon", "admin", 404},
           {"POST", "/v1/nodes/" + bad + "/drain", "admin", 404},
           {"POST", "/v1/nodes/" + bad + "/undrain", "admin", 404},
           {"GET", "/v1/tenants/" + bad, "admin", 404},
           {"GET", "/v1/agents/" + bad + "/assignments", "n2", 403},
           {"POST", "/v1/agents/" + bad + "/heartbeat", "n2", 403},
           {"POST", "/v1/agents/" + bad + "/checkpoints", "n2", 403},
           {"GET", "/v1/scheduler/captures/" + bad, "admin", 404},
           {"GET", "/v1/" + bad, "admin", 404},
       }) {
    out.push_back({"utf8 path " + method + " " + path, method, path, "", token, want});
  }
  out.push_back({"utf8 path PUT tenant",
                 "PUT",
                 "/v1/tenants/" + bad,
                 "{}",
                 "admin",
                 400,
                 {},
                 "application/json",
                 "name"});
  // 2. Query parameters: each is named.
  for (const auto& [path, param, token] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"/v1/jobs", "tenant", "admin"},
           {"/v1/jobs", "phase", "admin"},
           {"/v1/jobs", "gpuType", "admin"},
           {"/v1/jobs", "after", "admin"},
           {"/v1/jobs", "limit", "admin"},
           {"/v1/audit", "after", "admin"},
           {"/v1/audit", "limit", "admin"},
           {"/v1/agents/n2/assignments", "since", "n2"},
           {"/v1/agents/n2/assignments", "waitMs", "n2"},
           {"/v1/jobs/1/logs", "rank", "admin"},
           {"/v1/jobs/1/logs", "attempt", "admin"},
           {"/v1/jobs/1/logs", "tailBytes", "admin"},
       }) {
    out.push_back({"utf8 query " + path + "?" + param,
                   "GET",
                   path + "?" + param + "=" + bad,
                   "",
                   token,
                   400,
                   {},
                   "",
                   param});
  }
  // 3. Headers. (X-Request-Id and others are never read.)
  const std::string job = job_base().dump();
  out.push_back({"utf8 Idempotency-Key",
                 "POST",
                 "/v1/jobs",
                 job,
                 "admin",
                 400,
                 {{"Idempotency-Key", kBad}},
                 "application/json",
                 "Idempotency-Key"});
  out.push_back({"control Idempotency-Key",
                 "POST",
                 "/v1/jobs",
                 job,
                 "admin",
                 400,
                 {{"Idempotency-Key", "a\tb"}},
                 "application/json",
                 "Idempotency-Key"});
  out.push_back({"utf8 Content-Type",
                 "POST",
                 "/v1/jobs",
                 job,
                 "admin",
                 400,
                 {},
                 std::string("application/") + kBad,
                 "Content-Type"});
  out.push_back({"utf8 bearer token",
                 "GET",
                 "/v1/jobs",
                 "",
                 "none",
                 401,
                 {{"Authorization", std::string("Bearer ") + kBad}}});
  out.push_back(
      {"utf8 authorization", "GET", "/v1/jobs", "", "none", 401, {{"Authorization", kBad}}});
  // 4. String fields of bodies (and keys of free-form mappings): the field is named.
  for (const auto& [where, path] : std::vector<std::pair<std::string, std::string>>{
           {"job", "name"},
           {"job", "tenant"},
           {"job", "priorityClass"},
           {"job", "resources.gpuTypes[0]"},
           {"job", "resources.memoryPerGpu"},
           {"job", "topology.pack"},
           {"job", "topology.mode"},
           {"job", "elastic.step"},
           {"job", "checkpoint.dir"},
           {"job", "maxRuntime"},
           {"job", "expectedRuntime"},
           {"job", "reservation"},
           {"job", "processes"},
           {"job", "command[0]"},
           {"job", "env.A"},
           {"job", "secretEnv.S"},
           {"job", "lineage.dataset"},
           {"job", "lineage.code"},
           {"job", "labels.team"},
           {"tenant", "parent"},
           {"node", "id"},
           {"node", "labels.region"},
           {"node", "labels.cluster"},
           {"node", "labels.spine"},
           {"node", "labels.leaf"},
           {"node", "labels.rack"},
           {"node", "labels.nvlinkRack"},
           {"node", "gpus[0].uuid"},
           {"node", "gpus[0].type"},
           {"node shortcut", "gpuType"},
           {"reservation", "id"},
           {"reservation", "tenant"},
           {"reservation", "gpuType"},
           {"reservation on nodes", "nodes[0]"},
           {"token", "role"},
           {"token", "tenant"},
           {"token", "node"},
           {"cancel", "reason"},
           {"join", "agentUrl"},
           {"join", "node.id"},
           {"join", "node.labels.rack"},
           {"join", "inventory.driver"},
           {"heartbeat", "agentUrl"},
           {"heartbeat", "gpus[0].uuid"},
           {"heartbeat", "workers[0].state"},
           {"checkpoint", "path"},
           {"checkpoint", "checksum"},
       }) {
    const Target& t = target(all, where);
    out.push_back({"utf8 " + where + " " + path,
                   t.method,
                   t.path,
                   with_raw(t.base, path, "\"x" + std::string(kBad) + "\""),
                   t.token,
                   400,
                   {},
                   "application/json",
                   path});
  }
  for (const auto& [where, path] :
       std::vector<std::pair<std::string, std::string>>{{"job", "env"},
                                                        {"job", "labels"},
                                                        {"tenant", "quotas"},
                                                        {"join", "inventory"},
                                                        {"job", ""}}) {
    const Target& t = target(all, where);
    out.push_back({"utf8 key " + where + " " + path,
                   t.method,
                   t.path,
                   with_raw_key(t.base, path, std::string(kBad)),
                   t.token,
                   400,
                   {},
                   "application/json",
                   path});
  }
  out.push_back({"utf8 yaml job",
                 "POST",
                 "/v1/jobs",
                 "name: x" + std::string(kBad) + "\nresources: {gpus: 1}\ncommand: [x]\n",
                 "admin",
                 400,
                 {},
                 "application/yaml",
                 ""});
  // 5. Control characters in free text (they would break a log line or a path).
  for (const auto& [where, path, value] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"cancel", "reason", "a\x01"},
           {"checkpoint", "path", "/ckpt/\nx"},
           {"checkpoint", "checksum", std::string("ab\0c", 4)},
           {"join", "agentUrl", "http://127.0.0.1:1/\x07"},
           {"join", "agentUrl", "http://127.0.0.1 :1"},
           {"heartbeat", "agentUrl", "http://a b:1"},
           {"heartbeat", "agentUrl", "ftp://127.0.0.1:1"},
           {"node", "gpus[0].uuid", std::string("GPU\0x", 5)},
       }) {
    const Target& t = target(all, where);
    json body = t.base;
    body[pointer(path)] = value;
    out.push_back({"control " + where + " " + path + "=" + json(value).dump(),
                   t.method,
                   t.path,
                   body.dump(),
                   t.token,
                   400,
                   {},
                   "application/json",
                   path});
  }
  return out;
}

std::vector<Hostile> numeric_cases(const HostileWorld& world) {
  const auto all = targets(world);
  std::vector<Hostile> out;
  // Each field with the values it refuses beyond kNeverIntegers (its own bounds), or, for
  // a field that takes fractions, its whole list.
  struct Field {
    std::string where;
    std::string path;
    std::vector<std::string> bad;
    bool integer = true;
  };
  const std::vector<Field> fields = {
      // The job spec (docs/jobspec.md).
      {"job", "resources.gpus", {"0", "-1", "16385"}},
      {"job", "resources.gpusPerNode", {"0", "-1", "73"}},
      {"job", "resources.cpusPerGpu", {"-1", "257"}},
      {"job",
       "resources.memoryPerGpu",
       {"0", "-1", "1.5", "99999999999999999999", "\"0Gi\"", "\"-8Gi\"", "\"9999999999999999Ti\"",
        "\"5Ti\""},
       false},
      {"job", "elastic.minGpus", {"0", "-8", "16385"}},
      {"job", "elastic.maxGpus", {"0", "-8", "16385"}},
      {"job",
       "elastic.step",
       {"0", "-8", "16385", "1.5", "99999999999999999999", "\"pow3\""},
       false},
      {"job", "checkpoint.intervalSeconds", {"0", "-1", "2592001"}},
      {"job", "checkpoint.restoreSeconds", {"-1", "2592001"}},
      {"job", "maxRestarts", {"-1", "101"}},
      {"job",
       "maxRuntime",
       {"\"0s\"", "\"-1h\"", "\"1.5h\"", "\"99999999999999999999d\"", "\"31d\"", "\"59s\"", "1",
        "\"12\""},
       false},
      {"job",
       "expectedRuntime",
       {"\"0s\"", "\"-1h\"", "\"1.5h\"", "\"99999999999999999999d\"", "\"25h\"", "1"},
       false},
      // Tenants: a weight, rates and quotas (in steps of a thousandth of a GPU) take
      // fractions; counts do not.
      {"tenant", "weight", {"0", "-1", "1000001", "1e400", "\"1\"", "true"}, false},
      {"tenant",
       "quotas.H100.guaranteed",
       {"-1", "2147483648", "1.0005", "1e400", "\"1\"", "true"},
       false},
      {"tenant",
       "quotas.H100.borrowLimit",
       {"-1", "2147483648", "1.0005", "1e400", "\"1\"", "true"},
       false},
      {"tenant",
       "defaultQuota.guaranteed",
       {"-1", "2147483648", "1.0005", "1e400", "\"1\"", "true"},
       false},
      {"tenant",
       "defaultQuota.borrowLimit",
       {"-1", "2147483648", "1.0005", "1e400", "\"1\"", "true"},
       false},
      {"tenant", "maxPendingJobs", {"-1", "10000001"}},
      {"tenant", "submitRatePerSecond", {"-1", "-0.5", "1000001", "1e400", "\"1\""}, false},
      {"tenant", "submitBurst", {"0", "0.5", "-1", "10000001", "1e400", "\"1\""}, false},
      // Nodes.
      {"node", "cpus", {"-1", "1048577"}},
      {"node", "memoryMib", {"-1", "1099511627777"}},
      {"node", "gpus[0].index", {"-1", "64"}},
      {"node", "gpus[0].nvlinkDomain", {"-1", "64"}},
      {"node", "gpus[0].numaNode", {"-1", "1025"}},
      {"node shortcut", "gpuCount", {"0", "-1", "65"}},
      // Reservations.
      {"reservation", "count", {"0", "-1", "1048577"}},
      {"reservation on nodes", "count", {"0", "1"}},
      {"reservation", "startMs", {"-1", "1125899906842625"}},
      {"reservation", "endMs", {"-1", "0", "1", "1125899906842625"}},
      // The agent protocol (docs/agent-protocol.md).
      {"join", "rackPowerCapW", {"-1", "10000001"}},
      {"join", "node.gpuCount", {"0", "-1", "65"}},
      {"join", "node.cpus", {"-1", "1048577"}},
      {"heartbeat", "epoch", {"0", "-1"}},
      {"heartbeat", "appliedVersion", {"-1"}},
      {"heartbeat", "gpus[0].index", {"-1", "64"}},
      {"heartbeat", "gpus[0].eccUncorrectable", {"-1"}},
      {"heartbeat", "gpus[0].xidErrors[0]", {"-1", "65536"}},
      {"heartbeat", "gpus[0].temperatureC", {"-274", "1001", "1e400", "\"40\""}, false},
      {"heartbeat", "gpus[0].powerW", {"-1", "100001", "1e400", "\"1\""}, false},
      {"heartbeat", "gpus[0].powerLimitW", {"-1", "100001", "\"1\""}, false},
      {"heartbeat", "gpus[0].present", {"1", "\"yes\""}, false},
      {"heartbeat", "gpus[0].remapFailed", {"0", "\"no\""}, false},
      {"heartbeat", "workers[0].job", {"0", "-1"}},
      {"heartbeat", "workers[0].attempt", {"0", "-1", "2147483648"}},
      {"heartbeat", "workers[0].rank", {"-1", "1048577"}},
      {"heartbeat", "workers[0].pid", {"-1", "2147483648"}},
      {"heartbeat", "workers[0].exitCode", {"-2", "256"}},
      {"heartbeat", "workers[0].signal", {"-1", "129"}},
      {"heartbeat", "workers[0].startedAtMs", {"-1", "1125899906842625"}},
      {"heartbeat", "workers[0].exitedAtMs", {"-1", "1125899906842625"}},
      {"checkpoint", "epoch", {"0", "-1"}},
      {"checkpoint", "job", {"0", "-1"}},
      {"checkpoint", "attempt", {"0", "-1", "2147483648"}},
      {"checkpoint", "rank", {"-1", "1048577"}},
      {"checkpoint", "step", {"-1"}},
      {"checkpoint", "bytes", {"-1"}},
  };
  for (const Field& f : fields) {
    const Target& t = target(all, f.where);
    std::vector<std::string> values = f.bad;
    if (f.integer) values.insert(values.end(), kNeverIntegers.begin(), kNeverIntegers.end());
    for (const std::string& v : values) {
      out.push_back({"number " + f.where + " " + f.path + "=" + v,
                     t.method,
                     t.path,
                     with_raw(t.base, f.path, v),
                     t.token,
                     400,
                     {},
                     "application/json",
                     f.path});
    }
  }
  // Query parameters that are numbers: ids, versions, limits, milliseconds, bytes.
  for (const auto& [path, param, token, bad] :
       std::vector<std::tuple<std::string, std::string, std::string, std::vector<std::string>>>{
           {"/v1/jobs",
            "limit",
            "admin",
            {"0", "-1", "1.5", "10001", "1e3", "99999999999999999999"}},
           {"/v1/jobs", "after", "admin", {"-1", "1.5", "99999999999999999999", "0x10"}},
           {"/v1/audit", "limit", "admin", {"0", "-1", "1.5", "10001"}},
           {"/v1/audit", "after", "admin", {"-1", "1.5", "99999999999999999999"}},
           {"/v1/agents/n2/assignments", "since", "n2", {"-2", "1.5", "99999999999999999999"}},
           {"/v1/agents/n2/assignments", "waitMs", "n2", {"-1", "1.5", "99999999999999999999"}},
           {"/v1/jobs/1/logs", "rank", "admin", {"-1", "1.5", "99999999999999999999"}},
           {"/v1/jobs/1/logs", "attempt", "admin", {"-1", "1.5", "99999999999999999999"}},
           {"/v1/jobs/1/logs", "tailBytes", "admin", {"-1", "1.5", "99999999999999999999"}},
       }) {
    for (const std::string& v : bad) {
      out.push_back({"number query " + path + "?" + param + "=" + v,
                     "GET",
                     path + "?" + param + "=" + v,
                     "",
                     token,
                     400,
                     {},
                     "",
                     param});
    }
  }
  return out;
}

}  // namespace corral::testing
