// libFuzzer target for the captured-cycle parser (cycle/capture.h). Any input must come
// back as a cycle or an error (no crash, no sanitizer report, no exception), and a cycle
// must survive its own file: it re-parses, and writes the same text again.
// Run: scripts/fuzz.sh SECONDS captured_cycle
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/check.h"
#include "cycle/capture.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto cycle = corral::cycle::parse_captured_cycle(text);
  if (!cycle.ok()) {
    CORRAL_CHECK(cycle.status().code() == corral::core::StatusCode::kInvalidArgument);
    return 0;
  }
  const std::string file = corral::cycle::to_json(*cycle);
  const auto again = corral::cycle::parse_captured_cycle(file);
  CORRAL_CHECK(again.ok());
  CORRAL_CHECK(corral::cycle::to_json(*again) == file);
  return 0;
}
