// `corral-sim replay FILE... [--config FILE.yaml] [--check]`: decides captured
// scheduling cycles again (cycle/replay.h) and prints each one's decisions
// (sched::to_json), one line per file in the order given.
//
//   --config  applies the file's `scheduler:` section over each cycle's captured config:
//             last Tuesday's real queue under another policy.
//   --check   compares each replay with the decisions the capturing process made, byte
//             for byte, and names each file that differs and the first differing byte.
//
// Exit status: 0 done (with --check: every file identical); 1 a file (cycle or --config)
// could not be read or is invalid, which stops the run there, or with --check a file
// differs or holds no decisions; 2 usage error.
#pragma once

namespace corral::sim {

// argv[0] is "replay".
int replay_command(int argc, char** argv);

}  // namespace corral::sim
