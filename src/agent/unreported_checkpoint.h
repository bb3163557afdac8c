// The restore point of a worker whose earlier attempts wrote checkpoints but reported
// none (issue 38, item 4): a plain PyTorch script that saves into CORRAL_CHECKPOINT_DIR
// and never calls the agent's /local/checkpoint would otherwise get an empty
// CORRAL_RESTORE_FROM on every restart and silently train again from step 0.
//
// corrald chooses from reported checkpoints only (server/controllers/runs.h, restore_point): it
// never sees the workers' file systems. The agent does, so it falls back here, at launch, when
// corrald named none. The rule (docs/jobspec.md, "Checkpoints and restarts"):
//
//   - Only attempts after the first look: a new job never restores from files another
//     job left in the same directory.
//   - Candidates are the entries directly in the directory whose name is not a
//     temporary one (is_temporary_name): a writer saves under such a name and renames
//     it when done, which is atomic, so a final name means a whole checkpoint.
//   - A regular file is complete. A directory is complete when it holds a marker file,
//     `COMPLETE` (written by the worker last) or `.metadata` (written last by
//     torch.distributed.checkpoint, after every rank's shard): a directory filled in
//     place has its final name from the start, so its name alone proves nothing.
//   - Newest: the latest modification time of the file, or of the directory's marker
//     (the moment its writer finished); equal times go to the greater name, so
//     step-000200 wins over step-000100 written in the same clock tick.
//
// Thread safety: functions of the file system.
#pragma once

#include <string>
#include <string_view>

#include "core/agent_protocol.h"

namespace corral::agent {

// Names a writer uses before its checkpoint is whole: a leading "." or "tmp", or a
// ".tmp", ".temp", ".part", ".partial", ".incomplete" or "~" ending.
bool is_temporary_name(std::string_view name);

// The path of the newest complete checkpoint directly in `dir`; "" when there is none or
// `dir` cannot be read.
std::string newest_complete_checkpoint(const std::string& dir);

// CORRAL_RESTORE_FROM for `spec`: the checkpoint corrald named, else (after the first
// attempt, with a checkpoint dir) the newest complete one found there, else "".
std::string restore_from(const core::WorkerSpec& spec);

}  // namespace corral::agent
