// The few NVML types, constants and signatures the agent uses, declared here so that
// building Corral needs no NVML headers: the library is loaded at run time (dlopen).
// Values and layouts are from NVML's public API reference ("NVML API Reference Guide",
// docs.nvidia.com/deploy/nvml-api/, and nvml.h of the CUDA toolkit); the fake library
// in tests/agent/fake_nvml.cc includes this header, so both sides agree.
#pragma once

extern "C" {

typedef int nvmlReturn_t;  // enum nvmlReturn_enum
constexpr nvmlReturn_t NVML_SUCCESS = 0;
constexpr nvmlReturn_t NVML_ERROR_INVALID_ARGUMENT = 2;
constexpr nvmlReturn_t NVML_ERROR_NOT_SUPPORTED = 3;
constexpr nvmlReturn_t NVML_ERROR_TIMEOUT = 10;
constexpr nvmlReturn_t NVML_ERROR_GPU_IS_LOST = 15;

typedef struct nvmlDevice_st* nvmlDevice_t;
typedef struct nvmlEventSet_st* nvmlEventSet_t;

typedef struct {
  unsigned long long total;  // bytes
  unsigned long long free;
  unsigned long long used;
} nvmlMemory_t;

typedef struct {
  unsigned int gpu;     // percent of time a kernel ran
  unsigned int memory;  // percent of time memory was read or written
} nvmlUtilization_t;

// nvmlPciInfo_t (NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE = 16, ..._BUFFER_SIZE = 32).
typedef struct {
  char busIdLegacy[16];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  char busId[32];  // "00000000:18:00.0"
} nvmlPciInfo_t;

typedef struct {
  nvmlDevice_t device;
  unsigned long long eventType;
  unsigned long long eventData;  // the XID for nvmlEventTypeXidCriticalError
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
} nvmlEventData_t;

constexpr int NVML_TEMPERATURE_GPU = 0;              // nvmlTemperatureSensors_t
constexpr int NVML_MEMORY_ERROR_TYPE_CORRECTED = 0;  // nvmlMemoryErrorType_t
constexpr int NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1;
constexpr int NVML_VOLATILE_ECC = 0;     // nvmlEccCounterType_t
constexpr int NVML_FEATURE_ENABLED = 1;  // nvmlEnableState_t
constexpr unsigned long long nvmlEventTypeXidCriticalError = 0x8ULL;
constexpr unsigned int NVML_NVLINK_MAX_LINKS = 18;
constexpr int NVML_NVLINK_ERROR_COUNT = 4;  // DL_REPLAY, DL_RECOVERY, DL_CRC_FLIT, DL_CRC_DATA

// nvmlClocksThrottleReasons (bit masks).
constexpr unsigned long long nvmlClocksThrottleReasonSwPowerCap = 0x4ULL;
constexpr unsigned long long nvmlClocksThrottleReasonHwSlowdown = 0x8ULL;
constexpr unsigned long long nvmlClocksThrottleReasonSwThermalSlowdown = 0x20ULL;
constexpr unsigned long long nvmlClocksThrottleReasonHwThermalSlowdown = 0x40ULL;
constexpr unsigned long long nvmlClocksThrottleReasonHwPowerBrakeSlowdown = 0x80ULL;

// Signatures, for dlsym.
using nvmlInit_v2_fn = nvmlReturn_t (*)();
using nvmlShutdown_fn = nvmlReturn_t (*)();
using nvmlDeviceGetCount_v2_fn = nvmlReturn_t (*)(unsigned int*);
using nvmlDeviceGetHandleByIndex_v2_fn = nvmlReturn_t (*)(unsigned int, nvmlDevice_t*);
using nvmlDeviceGetUUID_fn = nvmlReturn_t (*)(nvmlDevice_t, char*, unsigned int);
using nvmlDeviceGetName_fn = nvmlReturn_t (*)(nvmlDevice_t, char*, unsigned int);
using nvmlDeviceGetMemoryInfo_fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlMemory_t*);
using nvmlDeviceGetPowerManagementLimit_fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*);
using nvmlDeviceGetPowerUsage_fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*);
using nvmlDeviceGetTemperature_fn = nvmlReturn_t (*)(nvmlDevice_t, int, unsigned int*);
using nvmlDeviceGetUtilizationRates_fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlUtilization_t*);
using nvmlDeviceGetCurrentClocksThrottleReasons_fn = nvmlReturn_t (*)(nvmlDevice_t,
                                                                      unsigned long long*);
using nvmlDeviceGetTotalEccErrors_fn = nvmlReturn_t (*)(nvmlDevice_t, int, int,
                                                        unsigned long long*);
using nvmlDeviceGetRetiredPagesPendingStatus_fn = nvmlReturn_t (*)(nvmlDevice_t, int*);
using nvmlDeviceGetRemappedRows_fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*, unsigned int*,
                                                      unsigned int*, unsigned int*);
using nvmlDeviceGetPciInfo_v3_fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlPciInfo_t*);
using nvmlDeviceGetNvLinkState_fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int, int*);
using nvmlDeviceGetNvLinkRemotePciInfo_v2_fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int,
                                                                nvmlPciInfo_t*);
using nvmlDeviceGetNvLinkErrorCounter_fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int, int,
                                                            unsigned long long*);
using nvmlEventSetCreate_fn = nvmlReturn_t (*)(nvmlEventSet_t*);
using nvmlDeviceRegisterEvents_fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned long long,
                                                     nvmlEventSet_t);
using nvmlEventSetWait_v2_fn = nvmlReturn_t (*)(nvmlEventSet_t, nvmlEventData_t*, unsigned int);
using nvmlEventSetFree_fn = nvmlReturn_t (*)(nvmlEventSet_t);

}  // extern "C"
