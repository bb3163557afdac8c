// The agent's state dir, per cluster. A job id, attempt and rank name a worker only
// within one cluster (a corrald with a fresh store has its own job 1), so everything the
// agent keeps about workers lives under the id of the cluster that asked for them
// (protocol §1, the join answer's `clusterId`):
//
//   STATE_DIR/cluster-id            the id this state dir last joined (adopted at start)
//   STATE_DIR/clusters/ID/run/      the run records of that cluster's workers
//   STATE_DIR/clusters/ID/logs/     their logs
//   STATE_DIR/clusters/ID/work/     their working directories
//   STATE_DIR/run/                  run records from before cluster ids (owner unknown)
//
// Run records of any other cluster than the one joined are swept: their workers are
// stopped with no grace and their records deleted once they are gone.
//
// Thread safety: functions of the file system; sweep() needs the launcher's external
// synchronization.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "agent/launcher.h"
#include "core/status.h"

namespace corral::agent {

// 1..64 letters, digits or '-': an id safe to use as one path component. corrald makes
// 32 lowercase hex digits.
bool valid_cluster_id(const std::string& id);

// STATE_DIR/clusters/ID: the state dir a Launcher of that cluster's workers uses.
std::string cluster_dir(const std::string& state_dir, const std::string& cluster_id);

// The cluster id recorded in STATE_DIR/cluster-id, if it holds a valid one.
std::optional<std::string> read_joined_cluster(const std::string& state_dir);
core::Status write_joined_cluster(const std::string& state_dir, const std::string& cluster_id);

// The state dirs (Launcher::Options::state_dir) holding run records of clusters other
// than `cluster_id`: STATE_DIR/clusters/OTHER for each other id with a run/ dir, and
// STATE_DIR itself when the old layout's STATE_DIR/run exists. Sorted.
std::vector<std::string> other_clusters_dirs(const std::string& state_dir,
                                             const std::string& cluster_id);

// One pass over the workers `launcher` has records of: a live one is asked to stop with
// no grace (its supervisor SIGKILLs the group), a gone one has its records deleted.
// True when no record is left (the empty run/ dir is removed too); call again until then.
bool sweep(Launcher& launcher);

}  // namespace corral::agent
