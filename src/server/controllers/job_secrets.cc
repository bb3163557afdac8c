#include "server/controllers/job_secrets.h"

#include <nlohmann/json.hpp>

namespace corral::server {

std::string seal_job_secrets(const KeyRing& keys, const std::map<std::string, std::string>& env) {
  if (env.empty()) return "";
  nlohmann::json object = nlohmann::json::object();
  for (const auto& [k, v] : env) object[k] = v;
  return keys.seal(object.dump());
}

core::Result<std::map<std::string, std::string>> open_job_secrets(const KeyRing& keys,
                                                                  const std::string& stored) {
  if (stored.empty()) return std::map<std::string, std::string>();
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

core::Result<ResealOutcome> reseal_job_secrets(store::Store& store, const KeyRing& keys) {
  constexpr std::int32_t kBatch = 500;
  const std::string current = "enc:v1:" + keys.current_id() + ":";
  ResealOutcome out;
  core::JobId after(0);
  while (true) {
    std::size_t listed = 0;
    ResealOutcome batch;
    core::JobId last = after;
    const core::Status sealed = store.transact([&](store::Tx& tx) {
      batch = {};
      CORRAL_ASSIGN_OR_RETURN(auto rows,
                              tx.jobs().list_job_secrets_without(current, after, kBatch));
      listed = rows.size();
      for (const auto& [job, stored] : rows) {
        last = job;
        auto text = keys.open(stored);
        if (!text.ok()) {
          // Not a reason to refuse the start: only this job waits (assignments.cc).
          if (batch.unopened++ == 0) {
            batch.first_unopened =
                "job " + std::to_string(job.value) + ": " + text.status().message();
          }
          continue;
        }
        CORRAL_RETURN_IF_ERROR(tx.jobs().replace_job_secrets(job, keys.seal(*text)));
        ++batch.resealed;
      }
      return core::Status();
    });
    if (!sealed.ok()) return sealed;
    out.resealed += batch.resealed;
    if (out.unopened == 0) out.first_unopened = batch.first_unopened;
    out.unopened += batch.unopened;
    after = last;
    if (listed < static_cast<std::size_t>(kBatch)) return out;
  }
}

}  // namespace corral::server
