// corral-supervise: the per-worker supervisor on its own, without the agent around it.
// The agent starts one per worker (launcher.h); a binary that loads only the C++ runtime
// starts in about a fifth of the time corral-agent's re-exec takes (which loads HTTP,
// TLS and YAML libraries it never uses here), and that start is paid once per worker.
// `corral-agent --supervise ...` remains the same thing, for installs without this file.
#include <cstdio>
#include <cstring>

#include "agent/launcher.h"

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--supervise") == 0) {
    return corral::agent::supervise_main(argc - 1, argv + 1);
  }
  std::fprintf(stderr, "usage: corral-supervise --supervise ... (started by corral-agent)\n");
  return 2;
}
