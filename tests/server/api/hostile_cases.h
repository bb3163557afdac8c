// The hostile-input table of api_test.cc, the generated part: bytes that are not UTF-8 in
// every path parameter, query parameter, header and string field, and zero, negative,
// huge and non-integer values in every numeric field of every body and query, each with
// the status and the error field it must get. api_test.cc sends them to a real corrald
// and checks that nothing changed.
//
// Thread safety: plain functions and data.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace corral::testing {

struct Hostile {
  std::string name;
  std::string method;
  std::string path;
  std::string body;
  // "admin", "none", "bad", "basic", "member" (tenant nlp), "agent" (minted for node n1),
  // "join" (the join token), "n2" (the token node n2's agent got when it joined)
  std::string token;
  int want;
  std::map<std::string, std::string> headers = {};
  std::string content_type = "application/json";
  // With a 400: the error's field must be this ("-": any, for whole-request refusals).
  std::string field = "-";
};

// What the generated cases build on: node n2's agent joined with this epoch; job 1
// exists (tenant default, on node n1); tenant nlp exists.
struct HostileWorld {
  std::int64_t n2_epoch = 1;
};

// Invalid UTF-8 (and control characters, where free text goes) in every path parameter,
// query parameter, header and string field.
std::vector<Hostile> utf8_cases(const HostileWorld& world);

// Zero (where it makes no sense), negative, huge (past int64, past uint64, past the
// field's maximum), fractional and quoted values in every numeric field.
std::vector<Hostile> numeric_cases(const HostileWorld& world);

}  // namespace corral::testing
