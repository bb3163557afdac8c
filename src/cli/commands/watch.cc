// run_watched (remote.h): -w on list commands, as `watch -n 2` or kubectl get -w.
#include <atomic>
#include <chrono>
#include <csignal>
#include <iostream>
#include <sstream>
#include <thread>
#include <unistd.h>

#include "cli/commands/remote.h"
#include "cli/commands/validate.h"

namespace corral::cli {
namespace {

std::atomic<bool> stop_requested{false};

extern "C" void on_stop_signal(int) { stop_requested.store(true); }

}  // namespace

int run_watched(const RemoteOptions& options, const std::function<int(std::ostream&)>& draw) {
  if (!options.watch) return draw(std::cout);
  stop_requested.store(false);
  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
  const bool tty = isatty(STDOUT_FILENO) == 1;
  for (bool first = true; !stop_requested.load(); first = false) {
    // Drawn whole before it is shown, so a slow answer never leaves half a screen.
    std::ostringstream frame;
    (void)draw(frame);  // a failed drawing printed its error; the next may succeed
    if (tty) {
      std::cout << "\033[H\033[2J";  // home, clear screen
    } else if (!first) {
      std::cout << "\n";
    }
    std::cout << frame.str() << std::flush;
    // Sleeps in short steps, so Ctrl-C ends the watch at once.
    for (int step = 0; step < 20 && !stop_requested.load(); ++step) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  return kExitOk;
}

}  // namespace corral::cli
