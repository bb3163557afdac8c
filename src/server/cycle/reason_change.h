// Whether a pending job's new reason is news: a job event is written when its reason
// changes in substance, not when only its figures move ("planned start 04:02 UTC (in
// 9m)" becoming "... (in 8m)" every minute, or "2 of 8 H100 free" becoming "3 of 8").
// The job's reason field always shows the latest figures; its events stay one per change.
//
// Thread safety: a pure function.
#pragma once

#include <string_view>

namespace corral::server {

// True when `was` and `now` differ other than in their figures: numbers (with the '.',
// ':' and ',' inside them), the units written against them, and durations of several
// parts ("1m 30s" and "59s" are one figure each).
bool reason_changed_in_substance(std::string_view was, std::string_view now);

}  // namespace corral::server
