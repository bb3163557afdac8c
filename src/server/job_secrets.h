// A job's secretEnv at rest: a JSON object of strings, sealed with the KeyRing (AES-GCM)
// before it is stored and opened only to hand it to the job's own workers (assignments).
// Responses mask it (core/job_spec_parse.h), logs never see it.
//
// Thread safety: free functions; reseal_job_secrets runs its own transactions.
#pragma once

#include <map>
#include <string>

#include "core/result.h"
#include "server/key_ring.h"
#include "store/store.h"

namespace corral::server {

std::string seal_job_secrets(const KeyRing& keys, const std::map<std::string, std::string>& env);
// The values seal_job_secrets sealed; text stored before sealing reads as it is.
core::Result<std::map<std::string, std::string>> open_job_secrets(const KeyRing& keys,
                                                                  const std::string& stored);

// Seals again, under the current key, every job's secrets stored under an older key or
// in plain text (a store from before secrets were sealed). At start, in batches; how many.
core::Result<std::int64_t> reseal_job_secrets(store::Store& store, const KeyRing& keys);

}  // namespace corral::server
