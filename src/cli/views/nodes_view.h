// What `corral nodes` and `corral node NAME` print, as pure functions of GET /v1/nodes
// (or /v1/nodes/{id}) and a TimeStyle.
//
//   nodes  NODE STATE GPU GPUS ALLOC RACK LEAF HEALTH HEARTBEAT REASON
//          (wide adds SPINE, UTIL, TEMP, POWER before REASON)
//   node   the node's facts, then one row per GPU:
//          GPU HEALTH PROBLEM UTIL TEMP POWER MEMORY THROTTLE JOB
//
// A node's state is one of active, cordoned, draining, drained (draining with nothing
// left on it) and lost (its agent was fenced): the API's "state", or the same rule
// applied here to an older corrald's admin, allocated and agent.lost.
//
// Thread safety: safe for concurrent use (pure functions).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "cli/format/table.h"
#include "cli/format/time_text.h"

namespace corral::cli {

std::string node_state(const nlohmann::json& node);

Table nodes_table(const nlohmann::json& nodes, const TimeStyle& style, bool wide);

std::string node_text(const nlohmann::json& node, const TimeStyle& style, bool wide);

}  // namespace corral::cli
