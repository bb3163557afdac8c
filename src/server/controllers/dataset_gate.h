// The dataset gate (docs/datasets.md): a job is admitted only on dataset versions that
// exist and that its tenant may read, and it is scheduled only while every one of them
// has passed its quality checks. A version that is pending or quarantined holds the job
// pending with a reason that names it; a quarantine while the job runs is recorded in
// its events. The hold is applied where the cycle's snapshot is read
// (StoreView::held), the same place as a restart backoff, so decide() never
// sees a held job.
//
// Thread safety: stateless functions over the caller's transaction.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/dataset.h"
#include "core/job_spec.h"
#include "core/result.h"
#include "core/time.h"
#include "server/base/model_json.h"
#include "server/controllers/lifecycle.h"
#include "store/store.h"

namespace corral::server {

// The reason a job waits on `v`: "held: dataset webtext@v12 is quarantined (pii found)".
std::string dataset_hold_reason(const core::DatasetRef& ref, core::QualityStatus status,
                                const std::string& why);

// Whether a version in `status` holds a job of a tenant with `policy`: anything but
// passed does, except pending where the tenant allows it.
bool holds_job(core::QualityStatus status, const DatasetPolicy& policy);

// Each readable tenant's dataset policy, by name (stored_documents.h); a tenant missing from
// the map, unreadable or gone, has the default policy.
std::map<std::string, DatasetPolicy> dataset_policies(const std::vector<store::TenantRow>& tenants);

// The pending jobs the gate holds now: list_dataset_holds() under the policy of each of
// `tenants` (the transaction's list_tenants(), which the caller has already read).
core::Result<std::vector<store::DatasetHold>> current_holds(
    store::DatasetRepo& datasets, const std::vector<store::TenantRow>& tenants);

// At submission: every lineage.datasets[i] exists and is visible to the spec's tenant,
// else InvalidArgument naming it (an invisible version reads as unknown: nothing of
// another tenant's data leaks). Returns the hold reason of the first version that holds
// the job under `policy` (its tenant's), or "" when none does.
core::Result<std::string> check_job_datasets(store::DatasetRepo& datasets,
                                             const core::JobSpec& spec,
                                             const DatasetPolicy& policy);

// After `v`'s status moved (it holds the new status): each pending job admitted on it is
// held with its reason or, when nothing holds it any more, released to the scheduler;
// each running one gets an event and, when `v` was quarantined and its tenant's policy
// says stopOnQuarantine, is asked to checkpoint and stop (then the gate holds it).
// Returns how many jobs it touched.
core::Result<std::int64_t> apply_dataset_status(store::Tx& tx, const LifecycleContext& ctx,
                                                const core::DatasetVersion& v);

}  // namespace corral::server
