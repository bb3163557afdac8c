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
    case PendingKind::kWaiting:
      return "waiting";
    case PendingKind::kReservation:
      return "reservation";
    case PendingKind::kDependency:
      return "dependency";
    case PendingKind::kArrayLimit:
      return "arrayLimit";
    case PendingKind::kSessionLimit:
      return "sessionLimit";
  }
  return "unknown";
}

bool out_of_line(PendingKind kind) {
  return kind == PendingKind::kUnschedulable || kind == PendingKind::kDependency ||
         kind == PendingKind::kArrayLimit || kind == PendingKind::kSessionLimit;
}

namespace {

void append_gpus(std::string& out, const std::vector<GpuRef>& gpus) {
  out += '[';
  for (size_t g = 0; g < gpus.size(); ++g) {
    if (g > 0) out += ',';
    out += "{\"node\":";
    append_string(out, gpus[g].node.value);
    out += cat(",\"index\":", gpus[g].index, "}");
  }
  out += ']';
}

// Appends `"key":[item,...]` with each item written by `write`.
template <typename T, typename Write>
void append_list(std::string& out, std::string_view key, const std::vector<T>& items, Write write) {
  out += '"';
  out += key;
  out += "\":[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ',';
    out += '{';
    write(items[i]);
    out += '}';
  }
  out += ']';
}

}  // namespace

std::string to_json(const Decisions& d) {
  std::string out = "{";
  append_list(out, "placements", d.placements, [&](const Placement& p) {
    out += cat("\"job\":", p.job.value, ",\"gpuType\":");
    append_string(out, p.gpu_type.value);
    out += ",\"gpus\":";
    append_gpus(out, p.gpus);
    out += cat(",\"borrowed\":", p.borrowed ? "true" : "false", ",\"packed\":");
    append_string(out, core::to_string(p.packed));
    if (!p.waits_for.empty()) {
      out += ",\"waitsFor\":[";
      for (size_t i = 0; i < p.waits_for.size(); ++i) {
        out += cat(i > 0 ? "," : "", p.waits_for[i].value);
      }
      out += ']';
    }
    if (p.reservation) {
      out += ",\"reservation\":";
      append_string(out, p.reservation->value);
    }
  });
  out += ',';
  append_list(out, "preemptions", d.preemptions, [&](const Preemption& p) {
    out += cat("\"victim\":", p.victim.value, ",\"forJob\":", p.for_job.value,
               ",\"graceMs\":", p.grace.count(), ",\"reason\":");
    append_string(out, p.reason);
  });
  out += ',';
  append_list(out, "resizes", d.resizes, [&](const Resize& r) {
    out += cat("\"job\":", r.job.value, ",\"fromGpus\":", r.from_gpus, ",\"toGpus\":", r.to_gpus,
               ",\"gpus\":");
    append_gpus(out, r.gpus);
    if (r.for_job) out += cat(",\"forJob\":", r.for_job->value);
    out += ",\"reason\":";
    append_string(out, r.reason);
  });
  out += ',';
  append_list(out, "plannedStarts", d.planned_starts, [&](const PlannedStart& p) {
    out += cat("\"job\":", p.job.value, ",\"atMs\":", core::to_ms(p.at),
               ",\"expectedMs\":", core::to_ms(p.expected), ",\"gpus\":");
    append_gpus(out, p.gpus);
  });
  out += ',';
  append_list(out, "pending", d.pending, [&](const Pending& p) {
    out += cat("\"job\":", p.job.value, ",\"position\":", p.position, ",\"kind\":");
    append_string(out, to_string(p.kind));
    out += ",\"reason\":";
    append_string(out, p.reason);
    if (p.start != core::Time{}) out += cat(",\"startMs\":", core::to_ms(p.start));
  });
  out += ',';
  append_list(out, "queue", d.queue, [&](const QueueEntry& q) {
    out += cat("\"job\":", q.job.value, ",\"standing\":");
    append_double(out, q.standing);
  });
  // Written only when there are some, so decisions without dependencies read as before.
  if (!d.abandoned.empty()) {
    out += ',';
    append_list(out, "abandoned", d.abandoned, [&](const Abandoned& a) {
      out += cat("\"job\":", a.job.value, ",\"reason\":");
      append_string(out, a.reason);
    });
  }
  out += '}';
  return out;
}

}  // namespace corral::sched
