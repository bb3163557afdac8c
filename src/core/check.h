// CORRAL_CHECK: a broken invariant is a bug, so it aborts with file and line in every
// build. Never use it to validate input (that is a Status). CORRAL_DCHECK is for
// expensive checks that only debug builds pay for.
#pragma once

namespace corral::core::detail {
[[noreturn]] void check_failed(const char* expr, const char* file, int line);
}  // namespace corral::core::detail

#define CORRAL_CHECK(cond)                                                        \
  do {                                                                            \
    if (!(cond)) ::corral::core::detail::check_failed(#cond, __FILE__, __LINE__); \
  } while (false)

#ifdef NDEBUG
#define CORRAL_DCHECK(cond) \
  do {                      \
  } while (false && (cond))
#else
#define CORRAL_DCHECK(cond) CORRAL_CHECK(cond)
#endif
