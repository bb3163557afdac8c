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

struct ReservationRow {
  core::ReservationId id;
  core::TenantId tenant;
  std::string spec_json;
  core::Time created_at;
};

class TenantRepo {
 public:
  virtual ~TenantRepo() = default;

  // Replaces the tenant's row.
  virtual core::Status put_tenant(const TenantRow& row) = 0;
  virtual core::Result<std::optional<TenantRow>> get_tenant(const core::TenantId& id) = 0;
  virtual core::Result<std::vector<TenantRow>> list_tenants() = 0;  // by name
  // Removes the tenant's row and its pending counter (the API checks it is unused).
  virtual core::Status delete_tenant(const core::TenantId& id) = 0;
  // AlreadyExists for a taken id.
  virtual core::Status insert_reservation(const ReservationRow& row) = 0;
  virtual core::Result<std::vector<ReservationRow>> list_reservations() = 0;  // by id
  virtual core::Status delete_reservation(const core::ReservationId& id) = 0;
};

}  // namespace corral::store
