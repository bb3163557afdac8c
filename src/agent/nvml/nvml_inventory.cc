// The NVML adapter: libnvidia-ml loaded with dlopen at run time, so a build needs no
// NVML and a node without a driver still runs a simulated inventory.
//
// Discovery reads each GPU's identity, memory, power limit, PCI bus id and NVLink links.
// A link's remote end is either another GPU of this node (matched by PCI bus id) or an
// NVSwitch; GPUs that reach the same switch are peers. NUMA comes from sysfs
// (/sys/bus/pci/devices/BUSID/numa_node), which every NVML version agrees with.
// XIDs come from an NVML event set (nvmlEventTypeXidCriticalError), drained without
// waiting before each health read and remembered for the agent's lifetime.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <dlfcn.h>
#include <fstream>
#include <map>
#include <set>
#include <unistd.h>

#include "agent/inventory.h"
#include "agent/nvml/nvml_api.h"
#include "agent/topology.h"

namespace corral::agent {
namespace {

struct NvmlApi {
  nvmlInit_v2_fn init = nullptr;
  nvmlShutdown_fn shutdown = nullptr;
  nvmlDeviceGetCount_v2_fn get_count = nullptr;
  nvmlDeviceGetHandleByIndex_v2_fn get_handle = nullptr;
  nvmlDeviceGetUUID_fn get_uuid = nullptr;
  nvmlDeviceGetName_fn get_name = nullptr;
  nvmlDeviceGetMemoryInfo_fn get_memory = nullptr;
  nvmlDeviceGetPowerManagementLimit_fn get_power_limit = nullptr;
  nvmlDeviceGetPowerUsage_fn get_power_usage = nullptr;
  nvmlDeviceGetTemperature_fn get_temperature = nullptr;
  nvmlDeviceGetUtilizationRates_fn get_utilization = nullptr;
  nvmlDeviceGetCurrentClocksThrottleReasons_fn get_throttle = nullptr;
  nvmlDeviceGetTotalEccErrors_fn get_ecc = nullptr;
  nvmlDeviceGetRetiredPagesPendingStatus_fn get_retired_pending = nullptr;
  nvmlDeviceGetRemappedRows_fn get_remapped_rows = nullptr;
  nvmlDeviceGetPciInfo_v3_fn get_pci = nullptr;
  nvmlDeviceGetNvLinkState_fn get_nvlink_state = nullptr;
  nvmlDeviceGetNvLinkRemotePciInfo_v2_fn get_nvlink_remote = nullptr;
  nvmlDeviceGetNvLinkErrorCounter_fn get_nvlink_errors = nullptr;
  // Optional: XID events (absent in very old drivers).
  nvmlEventSetCreate_fn event_set_create = nullptr;
  nvmlDeviceRegisterEvents_fn register_events = nullptr;
  nvmlEventSetWait_v2_fn event_set_wait = nullptr;
  nvmlEventSetFree_fn event_set_free = nullptr;
};

// The sysfs form of NVML's bus id: "00000000:18:00.0" -> "0000:18:00.0", lower case.
std::string sysfs_bus_id(const std::string& nvml_bus_id) {
  std::string s =
      nvml_bus_id.size() > 12 ? nvml_bus_id.substr(nvml_bus_id.size() - 12) : nvml_bus_id;
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::int32_t numa_node_of(const std::string& bus_id) {
  std::ifstream in("/sys/bus/pci/devices/" + sysfs_bus_id(bus_id) + "/numa_node");
  int node = -1;
  if (in >> node && node >= 0) return node;
  return 0;  // single-socket machines report -1
}

class NvmlInventory final : public Inventory {
 public:
  NvmlInventory(void* lib, NvmlApi api) : lib_(lib), api_(api) {}
  ~NvmlInventory() override {
    if (events_ && api_.event_set_free) api_.event_set_free(events_);
    api_.shutdown();
    dlclose(lib_);
  }
  NvmlInventory(const NvmlInventory&) = delete;
  NvmlInventory& operator=(const NvmlInventory&) = delete;

  core::Result<NodeInventory> discover() override {
    unsigned int count = 0;
    if (const nvmlReturn_t rc = api_.get_count(&count); rc != NVML_SUCCESS) {
      return error("nvmlDeviceGetCount_v2", rc);
    }
    devices_.clear();
    NodeInventory inv{.source = "nvml", .cpus = host_cpus(), .memory_mib = host_memory_mib()};
    std::map<std::string, std::int32_t> index_of_bus;  // sysfs bus id -> GPU index
    for (unsigned int i = 0; i < count; ++i) {
      nvmlDevice_t dev = nullptr;
      if (const nvmlReturn_t rc = api_.get_handle(i, &dev); rc != NVML_SUCCESS) {
        return error("nvmlDeviceGetHandleByIndex_v2", rc);
      }
      devices_.push_back(dev);
      GpuInfo g{.index = static_cast<std::int32_t>(i)};
      char buf[96] = {};
      if (const nvmlReturn_t rc = api_.get_uuid(dev, buf, sizeof(buf)); rc != NVML_SUCCESS) {
        return error("nvmlDeviceGetUUID", rc);
      }
      g.uuid = buf;
      char name[96] = {};
      if (const nvmlReturn_t rc = api_.get_name(dev, name, sizeof(name)); rc != NVML_SUCCESS) {
        return error("nvmlDeviceGetName", rc);
      }
      g.model = name;
      nvmlMemory_t mem{};
      if (api_.get_memory(dev, &mem) == NVML_SUCCESS) {
        g.memory_mib = static_cast<std::int64_t>(mem.total / (1024 * 1024));
      }
      unsigned int limit_mw = 0;
      if (api_.get_power_limit(dev, &limit_mw) == NVML_SUCCESS) {
        g.power_limit_w = static_cast<std::int32_t>(limit_mw / 1000);
      }
      nvmlPciInfo_t pci{};
      if (api_.get_pci(dev, &pci) == NVML_SUCCESS) {
        g.pci_bus_id = sysfs_bus_id(pci.busId);
        g.numa_node = numa_node_of(pci.busId);
        index_of_bus[g.pci_bus_id] = g.index;
      }
      auto type = gpu_type_for_model(g.model, g.memory_mib);
      if (!type.ok()) return type.status();
      g.type = *type;
      inv.gpus.push_back(std::move(g));
    }
    // NVLink: direct GPU peers, and GPUs sharing a switch (remote bus id not a GPU).
    std::map<std::string, std::set<std::int32_t>> switch_members;
    std::vector<std::set<std::int32_t>> peers(inv.gpus.size());
    for (std::size_t i = 0; i < devices_.size(); ++i) {
      for (unsigned int link = 0; link < NVML_NVLINK_MAX_LINKS; ++link) {
        int active = 0;
        if (api_.get_nvlink_state(devices_[i], link, &active) != NVML_SUCCESS) continue;
        if (active != NVML_FEATURE_ENABLED) continue;
        nvmlPciInfo_t remote{};
        if (api_.get_nvlink_remote(devices_[i], link, &remote) != NVML_SUCCESS) continue;
        const std::string bus = sysfs_bus_id(remote.busId);
        const auto it = index_of_bus.find(bus);
        const auto self = static_cast<std::int32_t>(i);
        if (it != index_of_bus.end()) {
          if (it->second != self) peers[i].insert(it->second);
        } else {
          switch_members[bus].insert(self);
        }
      }
    }
    for (const auto& [bus, members] : switch_members) {
      for (const std::int32_t a : members) {
        for (const std::int32_t b : members) {
          if (a != b) peers[static_cast<std::size_t>(a)].insert(b);
        }
      }
    }
    for (std::size_t i = 0; i < inv.gpus.size(); ++i) {
      inv.gpus[i].nvlink_peers.assign(peers[i].begin(), peers[i].end());
    }
    CORRAL_RETURN_IF_ERROR(validate_inventory(inv));
    uuids_.clear();
    limits_.clear();
    for (const GpuInfo& g : inv.gpus) {
      uuids_.push_back(g.uuid);
      limits_.push_back(g.power_limit_w);
    }
    // XIDs seen so far stay remembered across re-discovery (the events are gone).
    if (xids_.size() != inv.gpus.size()) xids_.assign(inv.gpus.size(), {});
    register_xid_events();
    return inv;
  }

  core::Result<std::vector<core::GpuHealth>> read_health() override {
    if (devices_.empty()) {
      auto discovered = discover();
      if (!discovered.ok()) return discovered.status();
    }
    drain_xid_events();
    std::vector<core::GpuHealth> out;
    for (std::size_t i = 0; i < devices_.size(); ++i) {
      nvmlDevice_t dev = devices_[i];
      core::GpuHealth h{
          .index = static_cast<std::int32_t>(i), .uuid = uuids_[i], .power_limit_w = limits_[i]};
      h.xid_errors.assign(xids_[i].begin(), xids_[i].end());
      unsigned int temp = 0;
      const nvmlReturn_t trc = api_.get_temperature(dev, NVML_TEMPERATURE_GPU, &temp);
      if (trc == NVML_ERROR_GPU_IS_LOST) {
        h.present = false;
        out.push_back(std::move(h));
        continue;
      }
      if (trc == NVML_SUCCESS) h.temperature_c = static_cast<std::int32_t>(temp);
      unsigned int mw = 0;
      if (api_.get_power_usage(dev, &mw) == NVML_SUCCESS) h.power_w = mw / 1000.0;
      if (api_.get_power_limit(dev, &mw) == NVML_SUCCESS) {
        h.power_limit_w = static_cast<std::int32_t>(mw / 1000);
      }
      nvmlUtilization_t util{};
      if (api_.get_utilization(dev, &util) == NVML_SUCCESS) {
        h.sm_percent = static_cast<std::int32_t>(util.gpu);
      }
      nvmlMemory_t mem{};
      if (api_.get_memory(dev, &mem) == NVML_SUCCESS) {
        h.memory_used_mib = static_cast<std::int64_t>(mem.used / (1024 * 1024));
      }
      unsigned long long reasons = 0;
      if (api_.get_throttle(dev, &reasons) == NVML_SUCCESS) h.throttle = throttle_names(reasons);
      unsigned long long ecc = 0;
      if (api_.get_ecc(dev, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC, &ecc) ==
          NVML_SUCCESS) {
        h.ecc_uncorrectable = static_cast<std::int64_t>(ecc);
      }
      int pending = 0;
      if (api_.get_retired_pending(dev, &pending) == NVML_SUCCESS) {
        h.retired_pages_pending = pending == NVML_FEATURE_ENABLED;
      }
      unsigned int corr = 0, unc = 0, remap_pending = 0, failed = 0;
      if (api_.get_remapped_rows(dev, &corr, &unc, &remap_pending, &failed) == NVML_SUCCESS) {
        h.remap_failed = failed != 0;
      }
      for (unsigned int link = 0; link < NVML_NVLINK_MAX_LINKS; ++link) {
        int active = 0;
        if (api_.get_nvlink_state(dev, link, &active) != NVML_SUCCESS) continue;
        for (int counter = 0; counter < NVML_NVLINK_ERROR_COUNT; ++counter) {
          unsigned long long n = 0;
          if (api_.get_nvlink_errors(dev, link, counter, &n) == NVML_SUCCESS) {
            h.nvlink_errors += static_cast<std::int64_t>(n);
          }
        }
      }
      out.push_back(std::move(h));
    }
    return out;
  }

  // The same calls as read_health() where they overlap, plus the corrected ECC count; a
  // call a GPU does not support leaves its field 0. A lost GPU has no sample.
  core::Result<std::vector<core::TelemetrySample>> sample(
      std::int64_t now_ms, const std::set<std::int32_t>& /*busy: measured instead*/) override {
    if (devices_.empty()) {
      auto discovered = discover();
      if (!discovered.ok()) return discovered.status();
    }
    std::vector<core::TelemetrySample> out;
    for (std::size_t i = 0; i < devices_.size(); ++i) {
      nvmlDevice_t dev = devices_[i];
      core::TelemetrySample s{.gpu = static_cast<std::int32_t>(i), .time_ms = now_ms};
      unsigned int temp = 0;
      const nvmlReturn_t trc = api_.get_temperature(dev, NVML_TEMPERATURE_GPU, &temp);
      if (trc == NVML_ERROR_GPU_IS_LOST) continue;
      if (trc == NVML_SUCCESS) s.temperature_c = static_cast<std::int32_t>(temp);
      nvmlUtilization_t util{};
      if (api_.get_utilization(dev, &util) == NVML_SUCCESS) {
        s.utilization = std::min(100u, util.gpu) / 100.0;
      }
      nvmlMemory_t mem{};
      if (api_.get_memory(dev, &mem) == NVML_SUCCESS) {
        s.memory_used_mib = static_cast<std::int64_t>(mem.used / (1024 * 1024));
      }
      unsigned int mw = 0;
      if (api_.get_power_usage(dev, &mw) == NVML_SUCCESS) s.power_w = mw / 1000.0;
      unsigned long long reasons = 0;
      if (api_.get_throttle(dev, &reasons) == NVML_SUCCESS) s.throttle = throttle_names(reasons);
      unsigned long long ecc = 0;
      if (api_.get_ecc(dev, NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC, &ecc) ==
          NVML_SUCCESS) {
        s.ecc_corrected = static_cast<std::int64_t>(ecc);
      }
      if (api_.get_ecc(dev, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC, &ecc) ==
          NVML_SUCCESS) {
        s.ecc_uncorrected = static_cast<std::int64_t>(ecc);
      }
      out.push_back(std::move(s));
    }
    return out;
  }

  bool simulated() const override { return false; }

 private:
  static core::Status error(const char* call, nvmlReturn_t rc) {
    return core::Status(core::StatusCode::kUnavailable,
                        std::string(call) + " failed with NVML error " + std::to_string(rc));
  }

  static std::vector<std::string> throttle_names(unsigned long long reasons) {
    std::vector<std::string> out;
    if (reasons & nvmlClocksThrottleReasonSwPowerCap) out.emplace_back("sw_power_cap");
    if (reasons & nvmlClocksThrottleReasonHwSlowdown) out.emplace_back("hw_slowdown");
    if (reasons & nvmlClocksThrottleReasonSwThermalSlowdown)
      out.emplace_back("sw_thermal_slowdown");
    if (reasons & nvmlClocksThrottleReasonHwThermalSlowdown)
      out.emplace_back("hw_thermal_slowdown");
    if (reasons & nvmlClocksThrottleReasonHwPowerBrakeSlowdown) out.emplace_back("hw_power_brake");
    return out;
  }

  static std::int32_t host_cpus() {
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? static_cast<std::int32_t>(n) : 1;
  }
  static std::int64_t host_memory_mib() {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && page > 0 ? static_cast<std::int64_t>(pages) * page / (1024 * 1024) : 0;
  }

  void register_xid_events() {
    if (events_ || !api_.event_set_create || !api_.register_events || !api_.event_set_wait) return;
    if (api_.event_set_create(&events_) != NVML_SUCCESS) {
      events_ = nullptr;
      return;
    }
    for (nvmlDevice_t dev : devices_) {
      // Not every GPU supports events (NOT_SUPPORTED); health still reads without XIDs.
      (void)api_.register_events(dev, nvmlEventTypeXidCriticalError, events_);
    }
  }

  void drain_xid_events() {
    if (!events_) return;
    for (int n = 0; n < 1024; ++n) {  // bounded: a storm of events never stalls a heartbeat
      nvmlEventData_t data{};
      if (api_.event_set_wait(events_, &data, 0) != NVML_SUCCESS) return;
      if (data.eventType != nvmlEventTypeXidCriticalError) continue;
      const auto it = std::find(devices_.begin(), devices_.end(), data.device);
      if (it == devices_.end()) continue;
      xids_[static_cast<std::size_t>(it - devices_.begin())].insert(
          static_cast<std::int32_t>(data.eventData));
    }
  }

  void* lib_;
  NvmlApi api_;
  std::vector<nvmlDevice_t> devices_;
  std::vector<std::string> uuids_;
  std::vector<std::int32_t> limits_;
  std::vector<std::set<std::int32_t>> xids_;
  nvmlEventSet_t events_ = nullptr;
};

template <typename Fn>
bool resolve(void* lib, const char* name, Fn& fn, std::string& missing) {
  fn = reinterpret_cast<Fn>(dlsym(lib, name));
  if (!fn) missing += (missing.empty() ? "" : ", ") + std::string(name);
  return fn != nullptr;
}

}  // namespace

core::Result<std::unique_ptr<Inventory>> open_nvml_inventory() {
  const char* env = std::getenv("CORRAL_NVML_LIBRARY");
  const std::string path = env && *env ? env : "libnvidia-ml.so.1";
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* why = dlerror();
    return core::Status(core::StatusCode::kUnavailable,
                        "cannot load " + path + ": " + (why ? why : "unknown error"));
  }
  NvmlApi api;
  std::string missing;
  resolve(lib, "nvmlInit_v2", api.init, missing);
  resolve(lib, "nvmlShutdown", api.shutdown, missing);
  resolve(lib, "nvmlDeviceGetCount_v2", api.get_count, missing);
  resolve(lib, "nvmlDeviceGetHandleByIndex_v2", api.get_handle, missing);
  resolve(lib, "nvmlDeviceGetUUID", api.get_uuid, missing);
  resolve(lib, "nvmlDeviceGetName", api.get_name, missing);
  resolve(lib, "nvmlDeviceGetMemoryInfo", api.get_memory, missing);
  resolve(lib, "nvmlDeviceGetPowerManagementLimit", api.get_power_limit, missing);
  resolve(lib, "nvmlDeviceGetPowerUsage", api.get_power_usage, missing);
  resolve(lib, "nvmlDeviceGetTemperature", api.get_temperature, missing);
  resolve(lib, "nvmlDeviceGetUtilizationRates", api.get_utilization, missing);
  resolve(lib, "nvmlDeviceGetCurrentClocksThrottleReasons", api.get_throttle, missing);
  resolve(lib, "nvmlDeviceGetTotalEccErrors", api.get_ecc, missing);
  resolve(lib, "nvmlDeviceGetRetiredPagesPendingStatus", api.get_retired_pending, missing);
  resolve(lib, "nvmlDeviceGetRemappedRows", api.get_remapped_rows, missing);
  resolve(lib, "nvmlDeviceGetPciInfo_v3", api.get_pci, missing);
  resolve(lib, "nvmlDeviceGetNvLinkState", api.get_nvlink_state, missing);
  resolve(lib, "nvmlDeviceGetNvLinkRemotePciInfo_v2", api.get_nvlink_remote, missing);
  resolve(lib, "nvmlDeviceGetNvLinkErrorCounter", api.get_nvlink_errors, missing);
  if (!missing.empty()) {
    dlclose(lib);
    return core::Status(core::StatusCode::kUnavailable, path + " lacks NVML symbols: " + missing);
  }
  std::string optional_missing;  // XID events are optional
  resolve(lib, "nvmlEventSetCreate", api.event_set_create, optional_missing);
  resolve(lib, "nvmlDeviceRegisterEvents", api.register_events, optional_missing);
  resolve(lib, "nvmlEventSetWait_v2", api.event_set_wait, optional_missing);
  resolve(lib, "nvmlEventSetFree", api.event_set_free, optional_missing);
  if (const nvmlReturn_t rc = api.init(); rc != NVML_SUCCESS) {
    dlclose(lib);
    return core::Status(core::StatusCode::kUnavailable,
                        "nvmlInit_v2 failed with NVML error " + std::to_string(rc));
  }
  return std::unique_ptr<Inventory>(std::make_unique<NvmlInventory>(lib, api));
}

}  // namespace corral::agent
