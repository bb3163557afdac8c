#include "server/job_secrets.h"

#include <nlohmann/json.hpp>

namespace corral::server {

std::string seal_job_secrets(const KeyRing& keys, const std::map<std::string, std::string>& env) {
  nlohmann::json object = nlohmann::json::object();
  for (const auto& [k, v] : env) object[k] = v;
  return keys.seal(object.dump());
}

core::Result<std::map<std::string, std::string>> open_job_secrets(const KeyRing& keys,
                                                                  const std::string& stored) {
  CORRAL_ASSIGN_OR_RETURN(const std::string text, keys.open(stored));
  const auto object = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!object.is_object()) {
    return core::Status(core::StatusCode::kDataLoss, "job secrets are not a JSON object");
  }
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : object.items()) {
    if (v.is_string()) out[k] = v.get<std::string>();
  }
  return out;
}

core::Result<std::int64_t> reseal_job_secrets(store::Store& store, const KeyRing& keys) {
  const std::string current = "enc:v1:" + keys.current_id() + ":";
  std::int64_t total = 0;
  while (true) {
    std::int64_t batch = 0;
    const core::Status sealed = store.transact([&](store::Tx& tx) {
      batch = 0;
      CORRAL_ASSIGN_OR_RETURN(auto rows, tx.list_job_secrets_without(current, 500));
      for (const auto& [job, stored] : rows) {
        CORRAL_ASSIGN_OR_RETURN(const std::string text, keys.open(stored));
        CORRAL_RETURN_IF_ERROR(tx.replace_job_secrets(job, keys.seal(text)));
        ++batch;
      }
      return core::Status();
    });
    if (!sealed.ok()) return sealed;
    total += batch;
    if (batch < 500) return total;
  }
}

}  // namespace corral::server
