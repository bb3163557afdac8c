#include "agent/faults.h"

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

namespace corral::agent {
namespace {

using nlohmann::json;

template <typename T>
core::Status read_field(const json& obj, const std::string& path, const char* key,
                        std::optional<T>& out) {
  if (!obj.contains(key)) return core::ok_status();
  const json& v = obj[key];
  if constexpr (std::is_same_v<T, bool>) {
    if (!v.is_boolean()) return core::invalid_argument(path + "." + key, "must be true or false");
  } else if constexpr (std::is_integral_v<T>) {
    if (!v.is_number_integer())
      return core::invalid_argument(path + "." + key, "must be an integer");
  } else {
    if (!v.is_number()) return core::invalid_argument(path + "." + key, "must be a number");
  }
  out = v.get<T>();
  return core::ok_status();
}

}  // namespace

core::Result<Faults> parse_faults(const std::string& json_text) {
  json doc;
  try {
    doc = json::parse(json_text);
  } catch (const json::exception& e) {
    return core::invalid_argument("", std::string("not valid JSON: ") + e.what());
  }
  Faults faults;
  if (!doc.is_object()) return core::invalid_argument("", "must be an object with `gpus`");
  if (!doc.contains("gpus")) return faults;
  const json& gpus = doc["gpus"];
  if (!gpus.is_object()) return core::invalid_argument("gpus", "must be an object by GPU index");
  static const std::set<std::string> kKeys = {
      "xid",         "temperatureC",        "present",      "eccUncorrectable", "powerW",
      "remapFailed", "retiredPagesPending", "nvlinkErrors", "throttle"};
  for (const auto& [key, fault] : gpus.items()) {
    const std::string path = "gpus." + key;
    std::int32_t index = -1;
    try {
      std::size_t used = 0;
      index = std::stoi(key, &used);
      if (used != key.size() || index < 0) throw std::invalid_argument(key);
    } catch (const std::exception&) {
      return core::invalid_argument(path, "key must be a GPU index");
    }
    if (!fault.is_object()) return core::invalid_argument(path, "must be an object");
    for (const auto& [field, value] : fault.items()) {
      if (!kKeys.count(field)) return core::invalid_argument(path + "." + field, "unknown fault");
    }
    GpuFault f;
    CORRAL_RETURN_IF_ERROR(read_field(fault, path, "xid", f.xid));
    CORRAL_RETURN_IF_ERROR(read_field(fault, path, "temperatureC", f.temperature_c));
    CORRAL_RETURN_IF_ERROR(read_field(fault, path, "present", f.present));
    CORRAL_RETURN_IF_ERROR(read_field(fault, path, "eccUncorrectable", f.ecc_uncorrectable));
    CORRAL_RETURN_IF_ERROR(read_field(fault, path, "powerW", f.power_w));
    CORRAL_RETURN_IF_ERROR(read_field(fault, path, "remapFailed", f.remap_failed));
    CORRAL_RETURN_IF_ERROR(read_field(fault, path, "retiredPagesPending", f.retired_pages_pending));
    CORRAL_RETURN_IF_ERROR(read_field(fault, path, "nvlinkErrors", f.nvlink_errors));
    if (fault.contains("throttle")) {
      const json& t = fault["throttle"];
      std::vector<std::string> reasons;
      for (std::size_t i = 0; t.is_array() && i < t.size(); ++i) {
        if (!t[i].is_string()) break;
        reasons.push_back(t[i].get<std::string>());
      }
      if (!t.is_array() || reasons.size() != t.size()) {
        return core::invalid_argument(path + ".throttle", "must be a list of reason names");
      }
      f.throttle = std::move(reasons);
    }
    faults[index] = f;
  }
  return faults;
}

core::Result<Faults> read_faults_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    if (errno == ENOENT) return Faults{};
    return core::Status(core::StatusCode::kUnavailable, "cannot read faults file " + path);
  }
  std::stringstream text;
  text << in.rdbuf();
  auto faults = parse_faults(text.str());
  if (!faults.ok()) {
    const core::Status& s = faults.status();
    return core::invalid_argument(
        "--faults", path + ": " + (s.field().empty() ? "" : s.field() + ": ") + s.message());
  }
  return faults;
}

void apply_faults(const Faults& faults, std::vector<core::GpuHealth>& health) {
  for (core::GpuHealth& h : health) {
    const auto it = faults.find(h.index);
    if (it == faults.end()) continue;
    const GpuFault& f = it->second;
    if (f.xid &&
        std::find(h.xid_errors.begin(), h.xid_errors.end(), *f.xid) == h.xid_errors.end()) {
      h.xid_errors.push_back(*f.xid);
      std::sort(h.xid_errors.begin(), h.xid_errors.end());
    }
    if (f.temperature_c) h.temperature_c = *f.temperature_c;
    if (f.present) h.present = *f.present;
    if (f.ecc_uncorrectable) h.ecc_uncorrectable = *f.ecc_uncorrectable;
    if (f.power_w) h.power_w = *f.power_w;
    if (f.remap_failed) h.remap_failed = *f.remap_failed;
    if (f.retired_pages_pending) h.retired_pages_pending = *f.retired_pages_pending;
    if (f.nvlink_errors) h.nvlink_errors = *f.nvlink_errors;
    if (f.throttle) h.throttle = *f.throttle;
  }
}

void apply_faults(const Faults& faults, std::vector<core::TelemetrySample>& samples) {
  std::erase_if(samples, [&](const core::TelemetrySample& s) {
    const auto it = faults.find(s.gpu);
    return it != faults.end() && it->second.present == std::optional(false);
  });
  for (core::TelemetrySample& s : samples) {
    const auto it = faults.find(s.gpu);
    if (it == faults.end()) continue;
    const GpuFault& f = it->second;
    if (f.temperature_c) s.temperature_c = *f.temperature_c;
    if (f.ecc_uncorrectable) s.ecc_uncorrected = *f.ecc_uncorrectable;
    if (f.power_w) s.power_w = *f.power_w;
    if (f.throttle) s.throttle = *f.throttle;
  }
}

}  // namespace corral::agent
