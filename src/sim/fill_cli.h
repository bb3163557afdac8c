// `corral-sim fill --nodes CSV --pods CSV [--placement NAME]... [--seeds N] [--shuffle]
// [--inflate X] [--out DIR]`: FGD's fill experiment (sim/fill.h) with each share rule
// named (sharePlacement's values; default: all four), printing per rule the share of GPU
// capacity unallocated when the arrived request reaches 100% of the fleet and at the
// end, the median over the seeds. --out also writes each run's curve as fill.csv.
//
// Exit status: 0 done; 1 a file could not be read or a run failed; 2 usage error.
#pragma once

namespace corral::sim {

// argv[0] is "fill".
int fill_command(int argc, char** argv);

}  // namespace corral::sim
