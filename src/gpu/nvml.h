/* nvml: the one place that talks to NVIDIA's management library, loaded at
 * run time. Fills snapshot structs; degrades field by field on old drivers. */
#ifndef VRAM_GPU_NVML_H
#define VRAM_GPU_NVML_H

#include <stddef.h>

#include "core/snapshot.h"

struct nvml;

/* Loads the OS's NVML and initializes it: libnvidia-ml.so.1 (then
 * libnvidia-ml.so) on Linux (gpu/nvmlso.c), nvml.dll from the driver's
 * folders on Windows (win/winnvml.c). VRAM_ENODRIVER when the library is
 * absent or the driver does not answer. */
int nvml_open(struct nvml **out, char *err, size_t errlen);

/* An entry point of the loaded library by name, NULL when absent. */
typedef void *(*nvml_sym_fn)(void *lib, const char *name);
typedef void (*nvml_unload_fn)(void *lib);

/* What nvml_open does once the library is loaded: finds the entry points
 * with sym and initializes NVML. The nvml owns lib from then on (unload
 * closes it), on failure too. */
int nvml_attach(struct nvml **out, void *lib, nvml_sym_fn sym, nvml_unload_fn unload, char *err,
                size_t errlen);
void nvml_close(struct nvml *n);

unsigned nvml_count(const struct nvml *n);

/* Driver and NVML versions. */
void nvml_system(struct nvml *n, struct snap *s);

/* The CUDA driver's version through NVML (which loads libcuda.so.1 for
 * it: milliseconds), 0 when unknown. probe.c asks gpu/cudaver.h first. */
int nvml_cuda_version(struct nvml *n);

/* Fields that do not change while the driver runs: name, uuid, PCI, minor. */
void nvml_static(struct nvml *n, unsigned i, struct snap_gpu *g);

/* Memory: microseconds (5.6 us on an H200), a first sample's too. */
void nvml_memory(struct nvml *n, unsigned i, struct snap_gpu *g);

/* Utilization, power draw, temperature, P-state: 0.3 us each once the
 * driver has them at hand, but a process's first asking costs more (on an
 * H100, 2.6 ms for utilization and 1 ms for power), as the driver readies
 * its counters for it. */
void nvml_gauges(struct nvml *n, unsigned i, struct snap_gpu *g);

/* Clocks, the video encoder's and decoder's utilization: what a live view
 * shows beside memory, every interval. */
void nvml_meters(struct nvml *n, unsigned i, struct snap_gpu *g);

/* Bytes per second over GPU i's PCIe link each way, in KB/s: the driver
 * counts them for 20 ms a direction while the caller waits, so only a
 * thread of its own asks (probe/pcie.c); it may, since this reads nothing
 * another call writes. VRAM_EINPUT when the driver or the GPU has no such
 * counter, VRAM_EFAIL when it failed this time. */
int nvml_pcie_throughput(const struct nvml *n, unsigned i, unsigned *tx_kbs, unsigned *rx_kbs);

/* Power limit, persistence, compute mode, display, MIG, PCIe link, fan,
 * maximum clocks, driver model: the calls that cost up to 130 us each and
 * change rarely (bench/RESULTS.md), and milliseconds on a first sample,
 * all in turn. */
void nvml_slow(struct nvml *n, unsigned i, struct snap_gpu *g);

/* The same calls in parts that need nothing of each other, one or two
 * calls each, so that a sample may ask them on several threads at once
 * (NVML is thread-safe; probe/slowcalls.c): a part writes only its own
 * fields of g, never g->have, and returns the snap_have bits it got. */
enum nvml_part {
    NVML_PART_DRIVER_MODEL, /* Windows: WDDM, TCC or MCDM; `vram status` prints it */
    NVML_PART_DISPLAY,      /* display mode and active: printed too */
    NVML_PART_POWER_LIMIT,
    NVML_PART_PERSISTENCE,
    NVML_PART_COMPUTE_MODE,
    NVML_PART_MIG,
    NVML_PART_PCIE,
    NVML_PART_FAN,
    NVML_PART_MAX_CLOCKS,
    NVML_PARTS
};
unsigned nvml_slow_part(struct nvml *n, unsigned i, enum nvml_part part, struct snap_gpu *g);

/* The snap_have bits a part may set (to clear before its answer). */
unsigned nvml_part_have(enum nvml_part part);

/* Total energy: 3 ms per call on an H200, so only when asked for. */
void nvml_energy(struct nvml *n, unsigned i, struct snap_gpu *g);

/* For a process about to exit: skip nvmlShutdown (3.5 ms on an H200), the
 * driver releases a dead process's handles anyway. */
void nvml_skip_shutdown(struct nvml *n);

/* For a process that ends by _exit right after nvml_close: the shutdown
 * skipped and the library left loaded, its destructors unrun (they cost
 * what exit() costs more than _exit: 0.3 ms on an H100). */
void nvml_ending(struct nvml *n);

/* Compute, graphics and MPS process lists merged by pid into a new array
 * (caller frees). Only pid, types, used and used_known are filled. */
int nvml_procs(struct nvml *n, unsigned i, uint64_t total, struct snap_proc **out, size_t *nout);

/* One of the driver's utilization samples of a process: when it was taken
 * (microseconds since the epoch) and the process's share, in percent, of
 * the SMs, the memory controller, the encoder and the decoder. */
struct nvml_busy {
    uint32_t pid;
    uint64_t at_us;
    uint8_t sm, mem, enc, dec;
};

/* The driver's samples newer than since_us (0: all it keeps, a few
 * seconds), in a new array (caller frees). VRAM_EFAIL when the driver
 * keeps none. */
int nvml_activity(struct nvml *n, unsigned i, uint64_t since_us, struct nvml_busy **out,
                  size_t *nout);

/* The driver's name for a process, for processes /proc does not show us. */
int nvml_proc_name(struct nvml *n, unsigned pid, char *buf, size_t len);

#endif
