#include "server/base/spec_cache.h"

#include <functional>
#include <string>

#include "core/job_spec_parse.h"

namespace corral::server {

SpecCache::SpecCache(std::size_t capacity, std::atomic<std::int64_t>* decode_counter)
    : capacity_(capacity > 0 ? capacity : 1), decode_counter_(decode_counter) {}

core::Result<SpecCache::Decoded> SpecCache::decode(core::JobId job, std::string_view spec_json) {
  core::ParseOutcome parsed = core::parse_job_spec(spec_json, core::SpecFormat::kJson);
  if (!parsed.ok()) {
    return core::Status(core::StatusCode::kDataLoss, "job " + std::to_string(job.value) +
                                                         ": its stored spec does not parse: " +
                                                         to_string(parsed.errors.front()));
  }
  if (decode_counter_ != nullptr) decode_counter_->fetch_add(1, std::memory_order_relaxed);
  ++decodes_;
  return Decoded{.text_hash = std::hash<std::string_view>{}(spec_json),
                 .text_size = spec_json.size(),
                 .spec = std::make_shared<const core::JobSpec>(std::move(*parsed.spec))};
}

void SpecCache::adopt(core::JobId job, Decoded decoded) {
  std::lock_guard lock(mu_);
  Decoded& entry = specs_[job.value];
  // When two threads raced on one text, the first one's stays (both are equal); a new
  // text replaces the old entry.
  if (entry.spec == nullptr || entry.text_hash != decoded.text_hash ||
      entry.text_size != decoded.text_size) {
    entry = std::move(decoded);
  }
  while (specs_.size() > capacity_) specs_.erase(specs_.begin());
}

core::Result<std::shared_ptr<const core::JobSpec>> SpecCache::get(core::JobId job,
                                                                  std::string_view spec_json) {
  const std::size_t hash = std::hash<std::string_view>{}(spec_json);
  {
    std::lock_guard lock(mu_);
    const auto it = specs_.find(job.value);
    if (it != specs_.end() && it->second.text_hash == hash &&
        it->second.text_size == spec_json.size()) {
      return it->second.spec;
    }
  }
  CORRAL_ASSIGN_OR_RETURN(Decoded decoded, decode(job, spec_json));
  std::shared_ptr<const core::JobSpec> spec = decoded.spec;
  adopt(job, std::move(decoded));
  return spec;
}

void SpecCache::forget(core::JobId job) {
  std::lock_guard lock(mu_);
  specs_.erase(job.value);
}

std::size_t SpecCache::size() const {
  std::lock_guard lock(mu_);
  return specs_.size();
}

std::int64_t SpecCache::decodes() const { return decodes_.load(); }

}  // namespace corral::server
