// A fake libnvidia-ml for tests: exports the NVML symbols corral-agent resolves, with a
// fixed DGX-H100-like node (8 GPUs, each with 4 NVLinks to 4 NVSwitch chips) and some
// bad health, so the real dlopen adapter (nvml_inventory.cc) runs in CI.
//   GPU 2: 3 uncorrectable ECC errors    GPU 5: 91 °C, thermal + power-cap throttling
//   GPU 6: a row-remap failure           GPU 7: fell off the bus (GPU_IS_LOST)
//   GPU 4: one XID 79 event, then no more events
//   GPU 3: 12 corrected ECC errors (telemetry only)
#include <cstdio>
#include <cstring>

#include "agent/nvml/nvml_api.h"

namespace {

constexpr unsigned kGpus = 8;
constexpr unsigned kLinksPerGpu = 4;
const unsigned kBus[kGpus] = {0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb};
int g_devices[kGpus];  // handles point here
int g_event_set;
bool g_xid_delivered = false;
bool g_initialized = false;

int index_of(nvmlDevice_t d) {
  for (unsigned i = 0; i < kGpus; ++i) {
    if (reinterpret_cast<void*>(d) == &g_devices[i]) return static_cast<int>(i);
  }
  return -1;
}

void fill_pci(nvmlPciInfo_t* pci, unsigned bus) {
  std::memset(pci, 0, sizeof(*pci));
  pci->bus = bus;
  std::snprintf(pci->busId, sizeof(pci->busId), "00000000:%02X:00.0", bus);
  std::snprintf(pci->busIdLegacy, sizeof(pci->busIdLegacy), "0000:%02X:00.0", bus);
}

}  // namespace

#define CHECK_DEV(d)         \
  const int i = index_of(d); \
  if (!g_initialized || i < 0) return NVML_ERROR_INVALID_ARGUMENT

extern "C" {

nvmlReturn_t nvmlInit_v2() {
  g_initialized = true;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlShutdown() {
  g_initialized = false;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) {
  *count = kGpus;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  if (index >= kGpus) return NVML_ERROR_INVALID_ARGUMENT;
  *device = reinterpret_cast<nvmlDevice_t>(&g_devices[index]);
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char* uuid, unsigned int length) {
  CHECK_DEV(d);
  std::snprintf(uuid, length, "GPU-fa4e0000-0000-0000-0000-00000000000%d", i);
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char* name, unsigned int length) {
  CHECK_DEV(d);
  std::snprintf(name, length, "NVIDIA H100 80GB HBM3");
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t* memory) {
  CHECK_DEV(d);
  memory->total = 81559ULL * 1024 * 1024;
  memory->used = (1000ULL + static_cast<unsigned long long>(i)) * 1024 * 1024;
  memory->free = memory->total - memory->used;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t d, unsigned int* limit) {
  CHECK_DEV(d);
  *limit = 700000;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned int* power) {
  CHECK_DEV(d);
  *power = 412500;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned int* temp) {
  CHECK_DEV(d);
  if (sensor != NVML_TEMPERATURE_GPU) return NVML_ERROR_INVALID_ARGUMENT;
  if (i == 7) return NVML_ERROR_GPU_IS_LOST;
  *temp = i == 5 ? 91 : 60 + static_cast<unsigned>(i);
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t* util) {
  CHECK_DEV(d);
  util->gpu = 10U * static_cast<unsigned>(i);
  util->memory = 5;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t d, unsigned long long* r) {
  CHECK_DEV(d);
  *r = i == 5 ? (nvmlClocksThrottleReasonSwPowerCap | nvmlClocksThrottleReasonHwThermalSlowdown)
              : 0x1ULL /* GpuIdle: not reported */;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t d, int type, int counter,
                                         unsigned long long* count) {
  CHECK_DEV(d);
  if (counter != NVML_VOLATILE_ECC) return NVML_ERROR_INVALID_ARGUMENT;
  if (type == NVML_MEMORY_ERROR_TYPE_CORRECTED) {
    *count = i == 3 ? 12 : 0;
  } else if (type == NVML_MEMORY_ERROR_TYPE_UNCORRECTED) {
    *count = i == 2 ? 3 : 0;
  } else {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t d, int* pending) {
  CHECK_DEV(d);
  *pending = 0;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t d, unsigned int* corr, unsigned int* unc,
                                       unsigned int* pending, unsigned int* failure) {
  CHECK_DEV(d);
  *corr = 0;
  *unc = i == 6 ? 1 : 0;
  *pending = 0;
  *failure = i == 6 ? 1 : 0;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t* pci) {
  CHECK_DEV(d);
  fill_pci(pci, kBus[i]);
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t d, unsigned int link, int* active) {
  CHECK_DEV(d);
  if (link >= NVML_NVLINK_MAX_LINKS) return NVML_ERROR_INVALID_ARGUMENT;
  if (link >= kLinksPerGpu) return NVML_ERROR_NOT_SUPPORTED;
  *active = NVML_FEATURE_ENABLED;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t d, unsigned int link,
                                                 nvmlPciInfo_t* pci) {
  CHECK_DEV(d);
  if (link >= kLinksPerGpu) return NVML_ERROR_NOT_SUPPORTED;
  fill_pci(pci, 0xc0 + link);  // link k goes to NVSwitch k
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetNvLinkErrorCounter(nvmlDevice_t d, unsigned int link, int counter,
                                             unsigned long long* value) {
  CHECK_DEV(d);
  if (link >= kLinksPerGpu || counter >= NVML_NVLINK_ERROR_COUNT) return NVML_ERROR_NOT_SUPPORTED;
  *value = i == 1 ? 2 : 0;  // GPU 1: 2 per counter per link = 32
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t* set) {
  *set = reinterpret_cast<nvmlEventSet_t>(&g_event_set);
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t d, unsigned long long types, nvmlEventSet_t) {
  CHECK_DEV(d);
  return types == nvmlEventTypeXidCriticalError ? NVML_SUCCESS : NVML_ERROR_NOT_SUPPORTED;
}
nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t, nvmlEventData_t* data, unsigned int) {
  if (g_xid_delivered) return NVML_ERROR_TIMEOUT;
  g_xid_delivered = true;
  std::memset(data, 0, sizeof(*data));
  data->device = reinterpret_cast<nvmlDevice_t>(&g_devices[4]);
  data->eventType = nvmlEventTypeXidCriticalError;
  data->eventData = 79;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t) { return NVML_SUCCESS; }

}  // extern "C"
