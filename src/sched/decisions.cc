#include "sched/decisions.h"

#include <charconv>

#include "sched/internal/text.h"

namespace corral::sched {
namespace {

using detail::cat;

// JSON string with the escapes RFC 8259 requires.
void append_string(std::string& out, std::string_view s) {
  out += '"';
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          static constexpr char kHex[] = "0123456789abcdef";
          out += "\\u00";
          out += kHex[(c >> 4) & 0xf];
          out += kHex[c & 0xf];
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

// The shortest text that reads back as the same double: deterministic across runs.
void append_double(std::string& out, double v) {
  char buf[32];
  const auto result = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, result.ptr);
}

}  // namespace

std::string_view to_string(PendingKind kind) {
  switch (kind) {
    case PendingKind::kQuota:
      return "quota";
    case PendingKind::kCapacity:
      return "capacity";
    case PendingKind::kTopology:
      return "topology";
    case PendingKind::kPower:
      return "power";
    case PendingKind::kUnschedulable:
      return "unschedulable";
  }
  return "unknown";
}

std::string to_json(const Decisions& d) {
  std::string out = "{\"placements\":[";
  for (size_t i = 0; i < d.placements.size(); ++i) {
    const Placement& p = d.placements[i];
    if (i > 0) out += ',';
    out += cat("{\"job\":", p.job.value, ",\"gpuType\":");
    append_string(out, p.gpu_type.value);
    out += ",\"gpus\":[";
    for (size_t g = 0; g < p.gpus.size(); ++g) {
      if (g > 0) out += ',';
      out += "{\"node\":";
      append_string(out, p.gpus[g].node.value);
      out += cat(",\"index\":", p.gpus[g].index, "}");
    }
    out += cat("],\"borrowed\":", p.borrowed ? "true" : "false", ",\"packed\":");
    append_string(out, core::to_string(p.packed));
    out += '}';
  }
  out += "],\"pending\":[";
  for (size_t i = 0; i < d.pending.size(); ++i) {
    const Pending& p = d.pending[i];
    if (i > 0) out += ',';
    out += cat("{\"job\":", p.job.value, ",\"position\":", p.position, ",\"kind\":");
    append_string(out, to_string(p.kind));
    out += ",\"reason\":";
    append_string(out, p.reason);
    out += '}';
  }
  out += "],\"queue\":[";
  for (size_t i = 0; i < d.queue.size(); ++i) {
    if (i > 0) out += ',';
    out += cat("{\"job\":", d.queue[i].job.value, ",\"standing\":");
    append_double(out, d.queue[i].standing);
    out += '}';
  }
  out += "]}";
  return out;
}

}  // namespace corral::sched
