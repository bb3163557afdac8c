// Job spec parsing and validation: YAML or JSON text in, a fully normalized JobSpec (or
// every problem found) out; and the normalized JSON form back out.
//
// Used by the CLI (`corral validate`), the API server (submit) and the tests. The schema
// and every rule are documented in docs/jobspec.md, which must agree with this code.
// Neither yaml-cpp nor nlohmann-json appear here; no function throws.
//
// Thread safety: free functions without shared state; safe to call concurrently.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/job_spec.h"
#include "core/status.h"

namespace corral::core {

enum class SpecFormat {
  kYaml,  // YAML 1.2 (which also reads JSON documents)
  kJson,  // strict JSON
};

// Larger documents are refused before parsing; a real spec is a few KiB.
inline constexpr std::size_t kMaxSpecBytes = 1 << 20;

// Either a normalized spec or the full list of errors, never both. Each error's `path`
// (core::FieldError, status.h) names the field as the user wrote it
// ("resources.gpuTypes[1]", "env.RANK"); it is empty for the document as a whole (a
// syntax error, whose reason then names the line and column). core::invalid_fields()
// makes the Status that reports them all.
struct ParseOutcome {
  std::optional<JobSpec> spec;     // set iff errors is empty
  std::vector<FieldError> errors;  // in document order, then cross-field checks

  bool ok() const { return errors.empty(); }
};

// Parses and validates `text`. On success every default is filled in and `preemptible`
// is resolved from the priority class when the spec leaves it out. On failure returns
// every error found, not just the first. Never throws, for any input.
ParseOutcome parse_job_spec(std::string_view text, SpecFormat format);

// The normalized JSON form: camelCase names as in the input schema, every defaulted
// field written out, keys in schema order, and secretEnv values replaced by "***" (keys
// kept). Re-parses to an equal spec, apart from the masked secrets.
std::string job_spec_to_json(const JobSpec& spec);

// The mask written in place of every secretEnv value.
inline constexpr std::string_view kSecretMask = "***";

// [a-z0-9]([-a-z0-9]*[a-z0-9])?, any length: what a spec's tenant and region must be (the
// length is the caller's to bound). Tenants and simulated fleets' regions check the same.
bool is_dns_label(std::string_view s);

}  // namespace corral::core
