// A captured scheduling cycle: the exact input of one decide() call (the snapshot
// input, the config and `now`), and what the capturing process decided. corrald writes
// these files on request; `corral-sim replay` reads them and decides again, to answer
// "why was my job preempted" on the real queue, or to try another config on it.
//
// The file is one JSON object (docs/scheduling.md#replaying-a-cycle):
//
//   {"format": "corral-cycle", "version": 1, "source": "...", "nowMs": ...,
//    "config": {the knobs, by their YAML names}, "input": {gpuTypes, nodes, racks,
//    tenants, usage, reservations, running, pending}, "decisions": "<to_json(Decisions)>"}
//
// Every field of every struct reachable from SnapshotInput and SchedulerConfig is
// written; field_count asserts in capture.cc break the build when a struct gains a field
// the codec does not cover. Times are integer milliseconds, enums their names, doubles
// exact (parse(to_json(c)) == c, bit for bit).
//
// Thread safety: stateless functions over value types.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/result.h"
#include "core/time.h"
#include "sched/config.h"
#include "sched/snapshot.h"

namespace corral::cycle {

// The version this build writes and the only one it reads. A change that gives an
// existing key another meaning bumps it; a new key with a default does not (a missing
// key reads as the field's default, so older files still read). Version 2: quotas in
// thousandths of a GPU (guaranteedMilli, borrowLimitMilli), for shares of a GPU.
inline constexpr std::int32_t kCaptureFormatVersion = 2;

struct CapturedCycle {
  sched::SnapshotInput input;
  sched::SchedulerConfig config;
  core::Time now;
  // What the capturing process decided: sched::to_json(Decisions), byte for byte, so a
  // replay can be compared with it. May be empty (nothing to compare with).
  std::string decisions_json;
  // Who captured it, for people: e.g. "corrald shard default epoch 3 cycle 1234".
  std::string source;
};

// The file's text: one line of JSON, ending in a newline.
std::string to_json(const CapturedCycle& cycle);

// Reads a file written by to_json(). InvalidArgument names the JSON path of the first
// bad field (`input.running[3].gpus[0].index: must be an integer, got "x"`), an unknown
// field, or a version this build does not read. Does not validate the snapshot input
// as a whole: sched::build_snapshot() does that.
core::Result<CapturedCycle> parse_captured_cycle(std::string_view text);

}  // namespace corral::cycle
