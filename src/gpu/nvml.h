/* nvml: the one place that talks to NVIDIA's management library, loaded at
 * run time. Fills snapshot structs; degrades field by field on old drivers. */
#ifndef VRAM_GPU_NVML_H
#define VRAM_GPU_NVML_H

#include <stddef.h>

#include "core/snapshot.h"

struct nvml;

/* Loads libnvidia-ml.so.1 (then libnvidia-ml.so) and initializes it.
 * VRAM_ENODRIVER when the library is absent or the driver does not answer. */
int nvml_open(struct nvml **out, char *err, size_t errlen);
void nvml_close(struct nvml *n);

unsigned nvml_count(const struct nvml *n);

/* Driver, NVML and CUDA versions. */
void nvml_system(struct nvml *n, struct snap *s);

/* Fields that do not change while the driver runs: name, uuid, PCI, minor. */
void nvml_static(struct nvml *n, unsigned i, struct snap_gpu *g);

/* Memory, utilization, power, temperature and modes: the cheap calls. */
void nvml_dynamic(struct nvml *n, unsigned i, struct snap_gpu *g);

/* Fan speed: slow on some boards, so sampled less often. */
void nvml_fan(struct nvml *n, unsigned i, struct snap_gpu *g);

/* Compute, graphics and MPS process lists merged by pid into a new array
 * (caller frees). Only pid, types, used and used_known are filled. */
int nvml_procs(struct nvml *n, unsigned i, uint64_t total, struct snap_proc **out,
               size_t *nout);

/* The driver's name for a process, for processes /proc does not show us. */
int nvml_proc_name(struct nvml *n, unsigned pid, char *buf, size_t len);

#endif
