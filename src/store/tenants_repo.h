// TenantRepo: tenants (weight, parent, quotas, admission limits) and their reservations:
// desired state set by admins through the API, read by admission and the scheduler.
//
// One of the repositories store::Tx is made of (store.h).
// Thread safety: as Tx (used only by the thread running the transaction, only during it).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/ids.h"
#include "core/result.h"
#include "core/status.h"
#include "core/time.h"

namespace corral::store {

struct TenantRow {
  core::TenantId id;
  std::string config_json;  // weight, parent, quotas, admission limits
  core::Time updated_at;
};

// A tenant's submit-rate token bucket; the arithmetic is the server's (admission.h).
struct SubmitBucketRow {
  core::TenantId tenant;
  double tokens = 0;
  core::Time as_of;
};

struct ReservationRow {
  core::ReservationId id;
  core::TenantId tenant;
  std::string spec_json;
  core::Time created_at;
};

// How lock_tenants() holds the rows: PostgreSQL's row lock modes, named for their users.
enum class TenantLock {
  kSubmit,   // FOR KEY SHARE: submissions run side by side, and beside a recount
  kRecount,  // FOR NO KEY UPDATE: one recount of the tenant's GPUs at a time
             // (SchedulerRepo::lock_tenant_holdings), beside submissions
  kWrite,    // FOR UPDATE: a tenant write waits for, and holds off, both
};

class TenantRepo {
 public:
  virtual ~TenantRepo() = default;

  // Replaces the tenant's row.
  virtual core::Status put_tenant(const TenantRow& row) = 0;
  virtual core::Result<std::optional<TenantRow>> get_tenant(const core::TenantId& id) = 0;
  virtual core::Result<std::vector<TenantRow>> list_tenants() = 0;  // by name
  // Removes the tenant's row, its pending counter and its submit bucket (the API checks
  // it is unused).
  virtual core::Status delete_tenant(const core::TenantId& id) = 0;
  // Locks the rows of `tenants` until the transaction ends, in name order (so two
  // lockers never deadlock), in `mode`. A submission holds its tenant's row while it
  // checks that the tenant is a leaf; a tenant write holds the tenant's and its new
  // parent's while it checks that the parent has no job. So of a submission to T and a
  // write making T a parent, the second to lock sees the first's commit and is refused.
  // PostgreSQL; SQLite has one writer, which serializes them anyway.
  virtual core::Status lock_tenants(std::vector<core::TenantId> tenants, TenantLock mode) = 0;
  // The tenant's submit bucket, locked until the transaction ends (PostgreSQL): replicas
  // take from it one after the other. A tenant without one gets `fresh`, stored.
  virtual core::Result<SubmitBucketRow> lock_submit_bucket(const SubmitBucketRow& fresh) = 0;
  virtual core::Status put_submit_bucket(const SubmitBucketRow& row) = 0;
  // AlreadyExists for a taken id.
  virtual core::Status insert_reservation(const ReservationRow& row) = 0;
  virtual core::Result<std::vector<ReservationRow>> list_reservations() = 0;  // by id
  virtual core::Status delete_reservation(const core::ReservationId& id) = 0;
};

}  // namespace corral::store
