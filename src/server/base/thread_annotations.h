// Clang thread-safety annotations (-Wthread-safety), empty under other compilers.
// GUARDED_BY names the mutex a member needs; the build checks it under Clang.
#pragma once

#if defined(__clang__)
#define CORRAL_GUARDED_BY(x) __attribute__((guarded_by(x)))
#define CORRAL_EXCLUDES(...) __attribute__((locks_excluded(__VA_ARGS__)))
#else
#define CORRAL_GUARDED_BY(x)
#define CORRAL_EXCLUDES(...)
#endif
