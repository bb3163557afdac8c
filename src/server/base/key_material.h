// The keys of one database, shared by every replica (docs/security.md, "Several
// replicas"): data keys live in the database wrapped under the key file's current key,
// and each replica is given that key file. corrald calls load_key_ring() at start, before
// anything opens a secret.
//
// Thread safety: a free function; it runs its own transactions.
#pragma once

#include <string>

#include "core/clock.h"
#include "core/result.h"
#include "server/base/key_ring.h"
#include "store/store.h"

namespace corral::server {

// This replica's KeyRing: the key file at `key_file` and the database's data keys.
//   1. No file: created (one new random key) when the database holds no data key yet,
//      as on the first start of the first replica; otherwise refused.
//   2. No data key yet: data key `d1` is made and stored, wrapped under the file's
//      current key. Of two replicas doing so at once one wins; the other reads it back.
//   3. Every data key is unwrapped with the file key that wrapped it. A file without
//      that key, or with another key of that name, is refused.
//   4. A data key wrapped under an older line of the file than the first is wrapped
//      again under the first (a key-file rotation).
// A refusal is FailedPrecondition, one line naming both keys' fingerprints, `key_file`
// and how to fix it.
core::Result<KeyRing> load_key_ring(store::Store& store, const std::string& key_file,
                                    const core::Clock& clock);

}  // namespace corral::server
