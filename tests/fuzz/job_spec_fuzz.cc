// libFuzzer target for the job spec parser. Any input, in either format, must come
// back as a spec or a list of errors (no crash, no sanitizer report, no exception),
// and a spec must survive its own normalized JSON: it re-parses, equal apart from
// the masked secrets.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/check.h"
#include "core/job_spec_parse.h"

namespace {

void check_one(std::string_view text, corral::core::SpecFormat format) {
  using corral::core::SpecFormat;
  const corral::core::ParseOutcome outcome = corral::core::parse_job_spec(text, format);
  CORRAL_CHECK(outcome.ok() == outcome.spec.has_value());
  if (!outcome.ok()) return;
  const std::string json = corral::core::job_spec_to_json(*outcome.spec);
  const corral::core::ParseOutcome again = corral::core::parse_job_spec(json, SpecFormat::kJson);
  CORRAL_CHECK(again.ok());
  corral::core::JobSpec expected = *outcome.spec;
  for (auto& [key, value] : expected.secret_env) value = std::string(corral::core::kSecretMask);
  CORRAL_CHECK(*again.spec == expected);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  check_one(text, corral::core::SpecFormat::kYaml);
  check_one(text, corral::core::SpecFormat::kJson);
  return 0;
}
