// A set of node names as Slurm writes a hostlist: "dgx[01-04,07],login1". Names that
// share a prefix and end in numbers of one width fold into ranges; others stay as they
// are. Used by `corral jobs` (NODES) and reservations.
//
// Thread safety: safe for concurrent use (a pure function).
#pragma once

#include <string>
#include <vector>

namespace corral::cli {

// `names` (any order, repeats allowed) folded and sorted; "" for none.
std::string node_list_text(std::vector<std::string> names);

}  // namespace corral::cli
