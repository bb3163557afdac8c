#include "core/check.h"

#include <cstdio>
#include <cstdlib>

namespace corral::core::detail {

void check_failed(const char* expr, const char* file, int line) {
  std::fprintf(stderr, "CHECK failed: %s at %s:%d\n", expr, file, line);
  std::fflush(stderr);
  std::abort();
}

}  // namespace corral::core::detail
