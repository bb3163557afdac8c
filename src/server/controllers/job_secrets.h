// A job's secretEnv at rest: a JSON object of strings, sealed with the KeyRing (AES-GCM)
// before it is stored and opened only to hand it to the job's own workers (assignments).
// Responses mask it (core/job_spec_parse.h), logs never see it. A job without secretEnv
// stores "" and never needs a key.
//
// Thread safety: free functions; reseal_job_secrets runs its own transactions.
#pragma once

#include <map>
#include <string>

#include "core/result.h"
#include "server/base/key_ring.h"
#include "store/store.h"

namespace corral::server {

// "" for no secrets: nothing to seal, so nothing a key could ever fail to open.
std::string seal_job_secrets(const KeyRing& keys, const std::map<std::string, std::string>& env);
// The values seal_job_secrets sealed; text stored before sealing reads as it is, and ""
// as none.
core::Result<std::map<std::string, std::string>> open_job_secrets(const KeyRing& keys,
                                                                  const std::string& stored);

struct ResealOutcome {
  std::int64_t resealed = 0;
  // Jobs whose secrets this replica's keys cannot open (sealed under a key that neither
  // the database nor the key file holds): left as they are, and not assigned.
  std::int64_t unopened = 0;
  std::string first_unopened;  // "job 17: <why>", for the start's warning
};

// Seals again, under the current data key, every job's secrets stored under another key
// or in plain text (a store from before secrets were sealed, or from before data keys).
// At start, in batches.
core::Result<ResealOutcome> reseal_job_secrets(store::Store& store, const KeyRing& keys);

}  // namespace corral::server
