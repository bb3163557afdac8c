// Parsing and printing of the human units that job specs and configs use:
// durations ("90s", "30m", "24h", "2d", "1h30m") and byte sizes ("120Gi", "512Mi",
// "80G", plain bytes). Errors say what was expected; the caller adds the field path.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/result.h"
#include "core/time.h"

namespace corral::core {

// Accepts one or more <integer><unit> parts, unit in ms|s|m|h|d, e.g. "1h30m".
Result<Duration> parse_duration(std::string_view text);
// The shortest exact form: 5400000ms -> "1h30m"; zero -> "0s".
std::string format_duration(Duration d);
// An instant as people read it, to the minute, in UTC: "2026-12-04 10:00 UTC". Pure
// calendar arithmetic (no time zone database, no clock), so the scheduler may call it.
std::string format_utc(Time t);
// An instant inside a text the server stores for people to read later (a job's reason, an
// event): "1733306400000 (ms since epoch)". Readers show it in their own zone with how
// far off it is then (the CLI's reason_text, the dashboard's reason()), so a planned
// start reads the same in a reason as in the queue, and never as a stale "in 9m".
inline constexpr std::string_view kInstantTag = " (ms since epoch)";
std::string instant_text(Time t);
// The forms people write an instant in, as UTC: "2026-12-01", "2026-12-01T06:30:00Z",
// "2026-12-01T06:30Z" (a trailing Z or none; no other offsets).
Result<Time> parse_utc(std::string_view text);

// Accepts <integer>[Ki|Mi|Gi|Ti|K|M|G|T]; returns mebibytes (rounded up).
Result<std::int64_t> parse_memory_mib(std::string_view text);
// 122880 -> "120Gi"; a whole Gi when exact, else Mi.
std::string format_memory_mib(std::int64_t mib);
// Thousandths of GPUs as people read them: 3000 -> "3", 3500 -> "3.5", 250 -> "0.25".
std::string format_gpu_milli(std::int64_t milli);
// A byte count as people read it: "512 B", "3.5 KiB", "12.0 MiB", "1.5 GiB", "2.0 TiB".
std::string format_bytes(std::int64_t bytes);

}  // namespace corral::core
