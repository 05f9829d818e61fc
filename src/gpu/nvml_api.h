/* nvml_api: NVML's ABI as this project uses it, declared here so that no
 * vendor header is needed to build and one binary runs on every driver.
 * Layouts and constants follow the public nvml.h of the 12.x/13.x toolkits. */
#ifndef VRAM_GPU_NVML_API_H
#define VRAM_GPU_NVML_API_H

#include <stdint.h>

typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;

enum {
    NVML_SUCCESS = 0,
    NVML_ERROR_UNINITIALIZED = 1,
    NVML_ERROR_INVALID_ARGUMENT = 2,
    NVML_ERROR_NOT_SUPPORTED = 3,
    NVML_ERROR_NO_PERMISSION = 4,
    NVML_ERROR_NOT_FOUND = 6,
    NVML_ERROR_INSUFFICIENT_SIZE = 7,
    NVML_ERROR_DRIVER_NOT_LOADED = 9,
    NVML_ERROR_FUNCTION_NOT_FOUND = 13,
    NVML_ERROR_GPU_IS_LOST = 15,
    NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
    NVML_ERROR_UNKNOWN = 999,
};

/* usedGpuMemory when the driver cannot tell (Windows WDDM, no permission) */
#define NVML_VALUE_NOT_AVAILABLE 0xFFFFFFFFFFFFFFFFULL

#define NVML_STRUCT_VERSION(size, v) ((unsigned int)(size) | ((unsigned int)(v) << 24))

typedef struct {
    unsigned long long total, free, used; /* used includes the driver's reserve */
} nvmlMemory_v1_t;

typedef struct {
    unsigned int version; /* NVML_STRUCT_VERSION(sizeof, 2), not plain 2 */
    unsigned long long total, reserved, free, used;
} nvmlMemory_v2_t;

#define NVML_MEMORY_V2_VERSION NVML_STRUCT_VERSION(sizeof(nvmlMemory_v2_t), 2)

typedef struct {
    char busIdLegacy[16];
    unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];
} nvmlPciInfo_t;

typedef struct {
    unsigned int gpu, memory;
} nvmlUtilization_t;

/* nvmlClockType_t and nvmlPcieUtilCounter_t */
enum { NVML_CLOCK_GRAPHICS = 0, NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2 };
enum { NVML_PCIE_UTIL_TX_BYTES = 0, NVML_PCIE_UTIL_RX_BYTES = 1 };

/* One process's recent activity; timeStamp is the CPU time in
 * microseconds since the epoch at which the driver took the sample. */
typedef struct {
    unsigned int pid;
    unsigned long long timeStamp;
    unsigned int smUtil, memUtil, encUtil, decUtil;
} nvmlProcessUtilizationSample_t;

/* The three layouts the process lists have had. v1: 16 bytes. v2 (what
 * _v2 and _v3 write on current drivers): 24 bytes. Some 535-series drivers
 * wrote 32-byte records (with usedGpuCcProtectedMemory) through _v3. */
typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory;
} nvmlProcessInfo_v1_t;

typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId, computeInstanceId;
} nvmlProcessInfo_v2_t;

typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId, computeInstanceId;
    unsigned long long usedGpuCcProtectedMemory;
} nvmlProcessDetail_v1_t;

enum { NVML_PROCESS_MODE_COMPUTE = 0, NVML_PROCESS_MODE_GRAPHICS = 1, NVML_PROCESS_MODE_MPS = 2 };

typedef struct {
    unsigned int version; /* NVML_STRUCT_VERSION(sizeof, 1) */
    unsigned int mode;
    unsigned int numProcArrayEntries;
    nvmlProcessDetail_v1_t *procArray;
} nvmlProcessDetailList_v1_t;

#define NVML_PROCESS_DETAIL_LIST_V1_VERSION                                                        \
    NVML_STRUCT_VERSION(sizeof(nvmlProcessDetailList_v1_t), 1)

/* nvmlDeviceGetDriverModel (Windows only): the driver model, current and
 * pending. WDM is what nvidia-smi calls TCC. */
enum { NVML_DRIVER_WDDM = 0, NVML_DRIVER_WDM = 1, NVML_DRIVER_MCDM = 2 };

typedef nvmlReturn_t (*nvml_proclist_fn)(nvmlDevice_t, unsigned int *, void *);

/* Every entry point vram uses: name, return type, arguments. A missing one
 * is NULL and the field it feeds reads "n/a". */
#define NVML_FUNCS(X)                                                                              \
    X(nvmlInit_v2, nvmlReturn_t, (void))                                                           \
    X(nvmlInit, nvmlReturn_t, (void))                                                              \
    X(nvmlShutdown, nvmlReturn_t, (void))                                                          \
    X(nvmlErrorString, const char *, (nvmlReturn_t))                                               \
    X(nvmlSystemGetDriverVersion, nvmlReturn_t, (char *, unsigned int))                            \
    X(nvmlSystemGetNVMLVersion, nvmlReturn_t, (char *, unsigned int))                              \
    X(nvmlSystemGetCudaDriverVersion_v2, nvmlReturn_t, (int *))                                    \
    X(nvmlSystemGetProcessName, nvmlReturn_t, (unsigned int, char *, unsigned int))                \
    X(nvmlDeviceGetCount_v2, nvmlReturn_t, (unsigned int *))                                       \
    X(nvmlDeviceGetHandleByIndex_v2, nvmlReturn_t, (unsigned int, nvmlDevice_t *))                 \
    X(nvmlDeviceGetName, nvmlReturn_t, (nvmlDevice_t, char *, unsigned int))                       \
    X(nvmlDeviceGetUUID, nvmlReturn_t, (nvmlDevice_t, char *, unsigned int))                       \
    X(nvmlDeviceGetPciInfo_v3, nvmlReturn_t, (nvmlDevice_t, nvmlPciInfo_t *))                      \
    X(nvmlDeviceGetMinorNumber, nvmlReturn_t, (nvmlDevice_t, unsigned int *))                      \
    X(nvmlDeviceGetMemoryInfo, nvmlReturn_t, (nvmlDevice_t, nvmlMemory_v1_t *))                    \
    X(nvmlDeviceGetMemoryInfo_v2, nvmlReturn_t, (nvmlDevice_t, nvmlMemory_v2_t *))                 \
    X(nvmlDeviceGetUtilizationRates, nvmlReturn_t, (nvmlDevice_t, nvmlUtilization_t *))            \
    X(nvmlDeviceGetProcessUtilization, nvmlReturn_t,                                               \
      (nvmlDevice_t, nvmlProcessUtilizationSample_t *, unsigned int *, unsigned long long))        \
    X(nvmlDeviceGetEncoderUtilization, nvmlReturn_t, (nvmlDevice_t, unsigned int *, unsigned int *)) \
    X(nvmlDeviceGetDecoderUtilization, nvmlReturn_t, (nvmlDevice_t, unsigned int *, unsigned int *)) \
    X(nvmlDeviceGetClockInfo, nvmlReturn_t, (nvmlDevice_t, int, unsigned int *))                   \
    X(nvmlDeviceGetMaxClockInfo, nvmlReturn_t, (nvmlDevice_t, int, unsigned int *))                \
    X(nvmlDeviceGetPcieThroughput, nvmlReturn_t, (nvmlDevice_t, int, unsigned int *))              \
    X(nvmlDeviceGetPowerUsage, nvmlReturn_t, (nvmlDevice_t, unsigned int *))                       \
    X(nvmlDeviceGetEnforcedPowerLimit, nvmlReturn_t, (nvmlDevice_t, unsigned int *))               \
    X(nvmlDeviceGetTotalEnergyConsumption, nvmlReturn_t, (nvmlDevice_t, unsigned long long *))     \
    X(nvmlDeviceGetTemperature, nvmlReturn_t, (nvmlDevice_t, int, unsigned int *))                 \
    X(nvmlDeviceGetPerformanceState, nvmlReturn_t, (nvmlDevice_t, int *))                          \
    X(nvmlDeviceGetPersistenceMode, nvmlReturn_t, (nvmlDevice_t, int *))                           \
    X(nvmlDeviceGetComputeMode, nvmlReturn_t, (nvmlDevice_t, int *))                               \
    X(nvmlDeviceGetDisplayMode, nvmlReturn_t, (nvmlDevice_t, int *))                               \
    X(nvmlDeviceGetDisplayActive, nvmlReturn_t, (nvmlDevice_t, int *))                             \
    X(nvmlDeviceGetMigMode, nvmlReturn_t, (nvmlDevice_t, unsigned int *, unsigned int *))          \
    X(nvmlDeviceGetCurrPcieLinkGeneration, nvmlReturn_t, (nvmlDevice_t, unsigned int *))           \
    X(nvmlDeviceGetCurrPcieLinkWidth, nvmlReturn_t, (nvmlDevice_t, unsigned int *))                \
    X(nvmlDeviceGetFanSpeed, nvmlReturn_t, (nvmlDevice_t, unsigned int *))                         \
    X(nvmlDeviceGetDriverModel, nvmlReturn_t, (nvmlDevice_t, int *, int *))                        \
    X(nvmlDeviceGetRunningProcessDetailList, nvmlReturn_t,                                         \
      (nvmlDevice_t, nvmlProcessDetailList_v1_t *))                                                \
    X(nvmlDeviceGetComputeRunningProcesses_v3, nvmlReturn_t,                                       \
      (nvmlDevice_t, unsigned int *, void *))                                                      \
    X(nvmlDeviceGetComputeRunningProcesses_v2, nvmlReturn_t,                                       \
      (nvmlDevice_t, unsigned int *, void *))                                                      \
    X(nvmlDeviceGetComputeRunningProcesses, nvmlReturn_t, (nvmlDevice_t, unsigned int *, void *))  \
    X(nvmlDeviceGetGraphicsRunningProcesses_v3, nvmlReturn_t,                                      \
      (nvmlDevice_t, unsigned int *, void *))                                                      \
    X(nvmlDeviceGetGraphicsRunningProcesses_v2, nvmlReturn_t,                                      \
      (nvmlDevice_t, unsigned int *, void *))                                                      \
    X(nvmlDeviceGetGraphicsRunningProcesses, nvmlReturn_t, (nvmlDevice_t, unsigned int *, void *)) \
    X(nvmlDeviceGetMPSComputeRunningProcesses_v3, nvmlReturn_t,                                    \
      (nvmlDevice_t, unsigned int *, void *))                                                      \
    X(nvmlDeviceGetMPSComputeRunningProcesses_v2, nvmlReturn_t,                                    \
      (nvmlDevice_t, unsigned int *, void *))                                                      \
    X(nvmlDeviceGetMPSComputeRunningProcesses, nvmlReturn_t, (nvmlDevice_t, unsigned int *, void *))

#endif
