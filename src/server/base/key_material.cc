#include "server/base/key_material.h"

#include <vector>

namespace corral::server {
namespace {

using core::Result;
using core::Status;

// The data key the first replica makes. A fixed id, so two replicas starting on one
// fresh database at once insert the same row and one of them wins.
constexpr std::string_view kFirstDataKey = "d1";

std::string fix(const std::string& key_file) {
  return "give every replica the key file of the replica that first started on this "
         "database: copy it to " +
         key_file + " (mode 0600) or point --key-file (security.keyFile) at it";
}

Result<std::vector<store::DataKeyRow>> list_data_keys(store::Store& store) {
  std::vector<store::DataKeyRow> rows;
  CORRAL_RETURN_IF_ERROR(store.read([&](store::Tx& tx) {
    CORRAL_ASSIGN_OR_RETURN(rows, tx.security().list_data_keys());
    return Status();
  }));
  return rows;
}

}  // namespace

Result<KeyRing> load_key_ring(store::Store& store, const std::string& key_file,
                              const core::Clock& clock) {
  CORRAL_ASSIGN_OR_RETURN(std::vector<store::DataKeyRow> rows, list_data_keys(store));

  // 1. The key file; made only for a database that has no key yet.
  auto file = KeyRing::from_file(key_file);
  if (!file.ok() && file.status().code() == core::StatusCode::kNotFound) {
    if (!rows.empty()) {
      return core::failed_precondition(
          "no key file at " + key_file + ", and this database's secrets are under data key " +
          rows.front().id + ", wrapped by key " + rows.front().kek_id + " (fingerprint " +
          rows.front().kek_fingerprint + "): " + fix(key_file));
    }
    const Status created = KeyRing::create_file(key_file);
    if (!created.ok() && created.code() != core::StatusCode::kAlreadyExists) return created;
    file = KeyRing::from_file(key_file);
  }
  if (!file.ok()) return file.status();
  KeyRing keys = *std::move(file);

  // 2. The first data key, on a fresh database.
  if (rows.empty()) {
    const std::string key = KeyRing::new_data_key();
    CORRAL_RETURN_IF_ERROR(store.transact([&](store::Tx& tx) {
      return tx.security()
          .insert_data_key({.id = std::string(kFirstDataKey),
                            .kek_id = keys.kek_id(),
                            .kek_fingerprint = keys.fingerprint(keys.kek_id()),
                            .wrapped = keys.wrap(key),
                            .created_at = clock.now()})
          .status();
    }));
    CORRAL_ASSIGN_OR_RETURN(rows, list_data_keys(store));  // ours, or a racer's
  }

  // 3. Unwrap each; 4. wrap again under the current file key where an older one did.
  std::vector<store::DataKeyRow> rewrapped;
  for (store::DataKeyRow& row : rows) {
    const std::string mine = keys.fingerprint(row.kek_id);
    auto key = mine == row.kek_fingerprint ? keys.unwrap(row.kek_id, row.wrapped)
                                           : Result<std::string>(core::not_found("no such key"));
    if (!key.ok()) {
      return core::failed_precondition(
          "the key file " + key_file + " holds " + keys.describe_file_keys() +
          ", but this database's data key " + row.id + " is wrapped by key " + row.kek_id +
          " (fingerprint " + row.kek_fingerprint + "), which it does not hold: " + fix(key_file));
    }
    if (row.kek_id != keys.kek_id()) {
      row.kek_id = keys.kek_id();
      row.kek_fingerprint = keys.fingerprint(row.kek_id);
      row.wrapped = keys.wrap(*key);
      rewrapped.push_back(row);
    }
    keys.add_data_key(row.id, *key);
  }
  if (!rewrapped.empty()) {
    const Status saved = store.transact([&](store::Tx& tx) {
      for (const auto& row : rewrapped) CORRAL_RETURN_IF_ERROR(tx.security().rewrap_data_key(row));
      return Status();
    });
    if (!saved.ok()) return saved;
  }
  return keys;
}

}  // namespace corral::server
