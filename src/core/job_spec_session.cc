// The job spec's interactive session rules (docs/jobspec.md#session): priorityClass
// interactive and its `session` mapping.
#include <string>

#include <fmt/format.h>

#include "core/internal/spec_tree.h"
#include "core/internal/spec_validator.h"
#include "core/priority.h"
#include "core/units.h"

namespace corral::core::internal {
namespace {

// An idle timeout shorter than a coffee break reclaims sessions people are using; one
// longer than a week is no timeout.
constexpr Duration kMinIdleTimeout = seconds(60);
constexpr Duration kMaxIdleTimeout = seconds(7 * 24 * 3600);

}  // namespace

void Validator::read_session(const TreeNode* node) {
  const TreeNode* map = as_map(node, "session");
  if (map == nullptr) return;
  const FieldMap f = fields(*map, "session", {"idleTimeout"});
  SessionSpec session;
  if (const TreeNode* idle = f.get("idleTimeout")) {
    const std::string path = "session.idleTimeout";
    if (idle->kind != TreeKind::kString) {
      fail(path, fmt::format("must be a duration like 30m or 2h, got {}", describe(*idle)));
    } else if (const Result<Duration> d = parse_duration(idle->text); !d.ok()) {
      fail(path, d.status().message());
    } else if (*d < kMinIdleTimeout || *d > kMaxIdleTimeout) {
      fail(path, fmt::format("must be between {} and {}, got {}", format_duration(kMinIdleTimeout),
                             format_duration(kMaxIdleTimeout), quote(idle->text)));
    } else {
      session.idle_timeout = *d;
    }
  }
  spec_.session = session;
}

void Validator::check_session() {
  if (spec_.priority_class != kInteractiveClass) {
    if (spec_.session) {
      fail("session",
           fmt::format("needs priorityClass interactive, got \"{}\"", spec_.priority_class));
    }
    return;
  }
  // Its GPUs are the tenant's guaranteed ones and a person is using them: taking them
  // away is what the idle timeout is for, not preemption.
  if (preemptible_.value_or(false)) {
    fail("preemptible", "must be false for priority class \"interactive\", got true");
  }
  if (elastic_present_) {
    fail("elastic", "is not allowed for priority class \"interactive\" (a session has one size)");
  }
  if (spec_.array) {
    fail("array", "is not allowed for priority class \"interactive\" (a session is one job)");
  }
}

}  // namespace corral::core::internal
